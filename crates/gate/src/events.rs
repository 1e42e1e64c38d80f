//! What the gateway announces to observers (log, control API, desktop app).

use portcullis_audit::{DecidedBy, Decision, FaultKind};
use serde::Serialize;

use crate::held_calls::pending::{PendingApproval, Scope};

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type")]
pub enum GatewayEvent {
    /// A call is held for a person's decision.
    ApprovalRequested {
        approval: Box<PendingApproval>,
    },
    /// A held call's deadline moved (a person asked for more time): `approval` carries the new
    /// `expires_at`, so every window and `GET /control/events` show the same deadline.
    ApprovalExtended {
        approval: Box<PendingApproval>,
    },
    /// A held call ended: approved, rejected, timed_out or cancelled (or denied by the gateway
    /// when the last approver left).
    ApprovalResolved {
        id: String,
        decision: Decision,
        decided_by: DecidedBy,
        scope: Option<Scope>,
    },
    PolicyReloaded {
        server: String,
    },
    /// A changed policy file was invalid; the last good policy stays in force.
    PolicyRejected {
        server: String,
        problems: Vec<String>,
    },
    /// Approvals were paused (every new held call is denied) or resumed.
    PauseChanged {
        paused: bool,
    },
    AuditAppended {
        id: i64,
        server: String,
        tool: String,
        decision: Decision,
        /// Which kind of request the row records (the viewer's kind filter).
        method: portcullis_audit::Method,
    },
    /// The audit database stopped or started accepting writes. While `ok` is false every
    /// `tools/call` is refused; `condition` says why (`locked`, `full`, `read_only` or `error`).
    AuditHealth {
        ok: bool,
        condition: Option<FaultKind>,
        error: Option<String>,
    },
}
