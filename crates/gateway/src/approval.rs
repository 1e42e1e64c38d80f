//! The approval broker interface: where `require_approval` calls go to wait for a person.
//!
//! Until an approver is attached (the desktop app or `portcullis approvals watch`), held calls are
//! refused fail-closed, and the agent is told that no approver is running.

/// What became of a held call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalOutcome {
    /// No one can decide right now.
    NoApprover,
}

#[derive(Default)]
pub struct ApprovalBroker {}

impl ApprovalBroker {
    pub async fn hold(&self) -> ApprovalOutcome {
        ApprovalOutcome::NoApprover
    }
}
