//! A gate for this crate's own tests: one server, `srv`, with nobody to ask about held calls
//! (the keeper's broker, and the tests of what a person decides, are in `crates/keeper`).

use std::sync::Arc;

use futures::future::BoxFuture;
use portcullis_audit::AuditWriter;
use tokio::sync::broadcast;

use super::{Gate, Holding};
use crate::audit_log::AuditLog;
use crate::held_calls::pending::PendingApproval;
use crate::held_calls::{Asked, AtOnce, DecideError, Extended, HeldCalls, LiveSession, Question, Resolution};
use crate::pins::PinStore;
use crate::policy_store::PolicyStore;

/// No keeper: every call the policy holds is refused at once, as when no approver runs.
struct NobodyToAsk;

impl HeldCalls for NobodyToAsk {
    fn ask(&self, _: Question) -> BoxFuture<'_, Asked> {
        Box::pin(async { Asked::AtOnce(AtOnce::NoApprover) })
    }
    fn end(&self, _: &str, _: Resolution) {}
    fn extend(&self, id: &str, _: std::time::Duration, _: std::time::Duration) -> Result<Extended, DecideError> {
        Err(DecideError::Unknown(id.to_owned()))
    }
    fn pending(&self, _: &str) -> Option<PendingApproval> {
        None
    }
    fn withdraw_session(&self, _: &str) {}
    fn withdraw_request(&self, _: &str, _: &str) -> bool {
        false
    }
    fn announce(&self, _: LiveSession) {}
}

/// A gate over `srv`, whose policy file holds `policy`, writing to `writer`.
pub(super) fn gate_with(dir: &tempfile::TempDir, policy: &str, writer: AuditWriter) -> Arc<Gate> {
    let policies = dir.path().join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(policies.join("srv.json"), policy).unwrap();
    let (events, _) = broadcast::channel(64);
    let holding = Holding {
        held: Arc::new(NobodyToAsk),
        approval_timeout_secs: 30,
        max_hold_secs: 600,
    };
    Arc::new(Gate::new(
        Arc::new(PolicyStore::load(&policies, ["srv".to_owned()], events.clone())),
        AuditLog::new(writer),
        PinStore::open(dir.path()).unwrap(),
        portcullis_wire::canonical::ArgumentDigester::new([9; 32]),
        events,
        holding,
    ))
}

/// [`gate_with`] an in-memory audit database.
pub(super) fn gate_with_policy(dir: &tempfile::TempDir, policy: &str) -> Arc<Gate> {
    gate_with(dir, policy, AuditWriter::open_in_memory().unwrap())
}
