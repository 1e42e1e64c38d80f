//! What the crate's unit tests build the same way.

use portcullis_gate::held_calls::pending::{ClientInfo, HeldBy, PendingApproval, RiskBasis};
use portcullis_policy::{Risk, RuleRef, ToolClass};

/// A `tools/call` of `tool` on `fs` by `client`, held by the file's default: a write of medium
/// risk, guessed. Tests change the fields they are about.
pub(crate) fn pending_approval(tool: &str, client: &str, arguments: serde_json::Value) -> PendingApproval {
    PendingApproval {
        id: "1".into(),
        server: "fs".into(),
        method: portcullis_audit::Method::ToolsCall,
        tool: tool.into(),
        asks: Default::default(),
        title: None,
        description: None,
        annotations: None,
        risk: ToolClass::Write,
        risk_level: Risk::Medium,
        risk_basis: RiskBasis::Guessed,
        reason: None,
        asked_by: "the default of fs.json (no entry names write_file)".into(),
        input_schema: None,
        arguments_json: arguments.to_string(),
        arguments,
        session: "s".into(),
        client: ClientInfo {
            name: Some(client.into()),
            version: None,
        },
        rule: HeldBy::Policy(RuleRef::Default),
        requested_at: String::new(),
        requested_at_ms: 0,
        expires_at: String::new(),
        expires_at_ms: 0,
        request_id: "1".into(),
        pin_change: None,
        asked_before: false,
        answer: None,
    }
}
