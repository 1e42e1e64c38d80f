//! `list_approvals`, `decide_approval`.

use std::sync::Arc;

use portcullis_gateway::approval::{DecideError, PendingApproval, Scope};
use portcullis_gateway::gate::{Choice, ChoiceError, Gate};
use serde::Deserialize;
use tauri::State;

use crate::host::Host;
use crate::ipc::{IpcError, IpcResult};

#[tauri::command(rename_all = "snake_case")]
pub async fn list_approvals(host: State<'_, Arc<Host>>) -> IpcResult<Vec<PendingApproval>> {
    let running = host.running().await?;
    Ok(running.gateway.gate().approvals.pending())
}

/// `{approve: "once" | "session" | "always"}` or `{deny: {reason, always}}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[ts(rename = "ApprovalChoice")]
pub enum ChoiceArg {
    Approve(Scope),
    Deny {
        #[serde(default)]
        reason: Option<String>,
        #[serde(default)]
        always: bool,
    },
}

impl From<ChoiceArg> for Choice {
    fn from(arg: ChoiceArg) -> Self {
        match arg {
            ChoiceArg::Approve(scope) => Choice::Approve(scope),
            ChoiceArg::Deny { reason, always } => Choice::Deny { reason, always },
        }
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn decide_approval(host: State<'_, Arc<Host>>, id: String, choice: ChoiceArg) -> IpcResult<()> {
    let running = host.running().await?;
    decide(running.gateway.gate(), &id, choice.into())
}

/// A person's decision, from any of the app's surfaces (prompt, main window, notification).
pub fn decide(gate: &Gate, id: &str, choice: Choice) -> IpcResult<()> {
    match gate.choose(id, choice) {
        Ok(decided) => {
            let approval = &decided.approval;
            let also = decided.also_settled.len();
            tracing::info!(id, server = approval.server, tool = approval.tool, also_settled = also, "decided in the app");
            Ok(())
        }
        Err(ChoiceError::Decide(e @ DecideError::Unknown(_))) => Err(IpcError::new("unknown_approval", e.to_string())),
        Err(ChoiceError::Decide(e @ DecideError::AlreadyDecided { .. })) => {
            Err(IpcError::new("already_decided", e.to_string()))
        }
        Err(e @ ChoiceError::Policy(_)) => Err(IpcError::new("policy_write_failed", e.to_string())),
        Err(e @ ChoiceError::Invalid(_)) => Err(IpcError::new("invalid_choice", e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_as_the_ui_sends_them() {
        let parse = |v: serde_json::Value| serde_json::from_value::<ChoiceArg>(v).map(Choice::from);
        assert_eq!(
            parse(serde_json::json!({"approve": "session"})).unwrap(),
            Choice::Approve(Scope::Session)
        );
        assert_eq!(
            parse(serde_json::json!({"deny": {"reason": "no", "always": true}})).unwrap(),
            Choice::Deny {
                reason: Some("no".into()),
                always: true
            }
        );
        assert_eq!(
            parse(serde_json::json!({"deny": {"reason": null, "always": false}})).unwrap(),
            Choice::Deny {
                reason: None,
                always: false
            }
        );
        assert!(parse(serde_json::json!({"approve": "forever"})).is_err());
        assert!(parse(serde_json::json!({"allow": "once"})).is_err());
    }
}
