//! How a held call ends, as the gate and whoever holds it (the keeper's broker, or a data
//! plane's mirror of the keeper's) both speak of it.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::{oneshot, watch};

use super::pending::{PendingApproval, Scope};

/// How a held call ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    Approved(Scope),
    /// Approved once, to run with these arguments instead of the agent's (already decided
    /// again by the policy, the keeper's `PersonSide::choose`).
    Edited(Value),
    Rejected {
        reason: Option<String>,
        always: bool,
    },
    TimedOut,
    Cancelled {
        why: String,
    },
    /// The last approver left and none came back: fail closed.
    Orphaned,
    /// The keeper that held it stopped, and it could not be asked again of another (`why`):
    /// fail closed. Only a data plane ends a call so; it never crosses the keeper link.
    Lost {
        why: String,
    },
}

impl Resolution {
    /// The audit vocabulary: (decision, decided_by).
    pub fn audit(&self) -> (portcullis_audit::Decision, portcullis_audit::DecidedBy) {
        use portcullis_audit::{DecidedBy, Decision};
        match self {
            Self::Approved(_) | Self::Edited(_) => (Decision::Approved, DecidedBy::User),
            Self::Rejected { .. } => (Decision::Rejected, DecidedBy::User),
            Self::TimedOut => (Decision::TimedOut, DecidedBy::Timeout),
            Self::Cancelled { .. } => (Decision::Cancelled, DecidedBy::Client),
            Self::Orphaned | Self::Lost { .. } => (Decision::Denied, DecidedBy::Gateway),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecideError {
    #[error("no pending approval {0}")]
    Unknown(String),
    #[error("approval {id} was already decided ({how})")]
    AlreadyDecided { id: String, how: String },
}

/// A held call's deadline after the holder's `extend`.
#[derive(Debug, Clone)]
pub struct Extended {
    /// The call as now listed, with the new `expires_at` / `expires_at_ms`.
    pub approval: PendingApproval,
    /// The extension was cut short by `approval.max_hold_secs`.
    pub clamped: bool,
}

/// A call waiting for its resolution.
pub struct Ticket {
    pub id: String,
    pub resolution: oneshot::Receiver<Resolution>,
    /// How long after it was held the call times out: starts at its timeout, moved by
    /// the holder's `extend`.
    pub deadline: watch::Receiver<Duration>,
}

/// Moves a held call's deadline `by` later, never past `max_hold` from when it was held (a
/// deadline already beyond that is kept, never shortened): the copy a person sees and the timer
/// the waiting call follows. The keeper's broker and a data plane's mirror of it both do this.
pub fn move_deadline(
    approval: &mut PendingApproval,
    deadline: &watch::Sender<Duration>,
    by: Duration,
    max_hold: Duration,
) -> Extended {
    let current = *deadline.borrow();
    let wanted = current.saturating_add(by);
    let new = wanted.min(max_hold).max(current);
    approval.expires_at_ms = approval
        .requested_at_ms
        .saturating_add(i64::try_from(new.as_millis()).unwrap_or(i64::MAX));
    approval.expires_at = crate::clock::rfc3339(approval.expires_at_ms);
    let _ = deadline.send(new);
    Extended {
        approval: approval.clone(),
        clamped: new < wanted,
    }
}

/// The effective timeout of a held call: policy entry, else policy file, else config.
pub fn timeout(policy_secs: Option<u64>, config_secs: u64) -> Duration {
    Duration::from_secs(policy_secs.unwrap_or(config_secs).max(1))
}
