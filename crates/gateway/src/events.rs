//! What the gateway announces to observers (log, control API, desktop app).

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type")]
pub enum GatewayEvent {
    PolicyReloaded { server: String },
    /// A changed policy file was invalid; the last good policy stays in force.
    PolicyRejected { server: String, problems: Vec<String> },
    AuditAppended { id: i64, server: String, tool: String, decision: String },
}
