//! The one seam between a gate and the keeper: how a call the policy holds for a person is asked.
//!
//! A gate runs wherever a client's bytes arrive; only the keeper can ask a person (it owns the
//! prompt, the approvers, the standing grants and the pause). So the gate asks through
//! [`HeldCalls`], which has two implementations:
//! - in-process (the keeper's approval broker, `crates/keeper/src/broker/in_process.rs`): the
//!   keeper's own HTTP sessions ask its broker directly;
//! - remote: a data plane (`portcullis connect`) asks the keeper over the local socket.
//!
//! An answer comes at once when nobody needs to be asked (a standing grant, "for this session"
//! on a changed tool, the pause, nobody to ask), else as a [`Ticket`] the gate waits on. The gate
//! keeps everything else: the policy, the continuation of a call already approved, the audit
//! row, the deadline, the client leaving.

mod answer;
pub mod link;
pub mod pending;
pub mod remote;
mod words;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use portcullis_policy::Places;

pub use answer::{move_deadline, timeout, DecideError, Extended, Resolution, Ticket};
use pending::PendingApproval;
pub use words::{answer_asks, asks, asks_of, Asks};

/// What the gate asks about one held call.
pub struct Question {
    /// What the person is shown; its `id` is given by whoever holds it.
    pub approval: PendingApproval,
    /// The keyed digest of the arguments (grants for "this exact call").
    pub digest: String,
    /// Where the server resolves paths (grants with path conditions).
    pub places: Arc<Places>,
}

/// Decided without asking a person.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AtOnce {
    /// A standing grant covers the call (allow or deny).
    Grant(Found),
    /// "For this session" on this very definition of a changed tool, given earlier.
    ChangeApproved,
    /// Approvals are paused: every call that would be held is denied.
    Paused,
    /// Nobody runs who could decide (no app, no `approvals watch`).
    NoApprover,
    /// The keeper could not be reached or started (a data plane's link).
    Unreachable { why: String },
}

pub enum Asked {
    AtOnce(AtOnce),
    /// Held: the person's decision (or the keeper's) arrives on the ticket.
    Held(Ticket),
}

/// What a grant answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Allow,
    Deny,
}

/// What a standing grant says about one call.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Found {
    pub id: String,
    pub effect: Effect,
    pub reason: Option<String>,
    /// The grant is this session's, not every session's.
    pub session_scoped: bool,
}

/// One client session on one server, as its gate announced it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LiveSession {
    pub session: String,
    pub server: String,
    /// What the client said it is at `initialize` (nothing for a 2026 stateless session).
    pub client: pending::ClientInfo,
    /// `connect` (a data plane of its own) or `http` (the keeper's HTTP entry).
    pub via: String,
    /// The process that runs its gate.
    pub pid: u32,
    pub since_ms: i64,
}

/// Where a gate asks about held calls (see the module doc).
pub trait HeldCalls: Send + Sync {
    /// Asks about a call: decided at once, or held.
    fn ask(&self, question: Question) -> BoxFuture<'_, Asked>;
    /// Ends a held call from the gate's side (its deadline passed, its client withdrew it).
    /// A call already decided stays decided.
    fn end(&self, id: &str, resolution: Resolution);
    /// Moves a held call's deadline `by` later, at most `max_hold` after it was held.
    fn extend(&self, id: &str, by: Duration, max_hold: Duration) -> Result<Extended, DecideError>;
    /// The held call `id`, while it waits.
    fn pending(&self, id: &str) -> Option<PendingApproval>;
    /// The session ended: its held calls are withdrawn and its grants end.
    fn withdraw_session(&self, session: &str);
    /// The client cancelled request `request_id` (its JSON text); `true` if it was still held.
    fn withdraw_request(&self, session: &str, request_id: &str) -> bool;
    /// A session began (or its client said who it is): the keeper lists it until
    /// [`Self::withdraw_session`]. `via` and `pid` are filled in here.
    fn announce(&self, session: LiveSession);
}
