//! `list_approvals`, `decide_approval`, `undo_policy_write`.

use std::sync::Arc;

use portcullis_gateway::approval::{DecideError, PendingApproval, Scope};
use portcullis_gateway::gate::{Choice, ChoiceError, Gate};
use portcullis_gateway::policy_store::{PolicyWrite, UndoError};
use serde::{Deserialize, Serialize};
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

/// What a decision did besides deciding the call: the other held calls it settled, the grant it
/// made, and the policy write an "always" made (offer its undo while `undo_until_ms` lasts).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "DecisionAnswer")]
pub struct DecisionAnswer {
    pub also_settled: Vec<String>,
    pub grant: Option<String>,
    pub policy_write: Option<PolicyWrite>,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn decide_approval(host: State<'_, Arc<Host>>, id: String, choice: ChoiceArg) -> IpcResult<DecisionAnswer> {
    let running = host.running().await?;
    decide(running.gateway.gate(), &id, choice.into())
}

/// A person's decision, from any of the app's surfaces (prompt, main window, notification).
pub fn decide(gate: &Gate, id: &str, choice: Choice) -> IpcResult<DecisionAnswer> {
    match gate.choose(id, choice) {
        Ok(decided) => {
            let approval = &decided.approval;
            let also = decided.also_settled.len();
            tracing::info!(id, server = approval.server, tool = approval.tool, also_settled = also, "decided in the app");
            Ok(DecisionAnswer {
                also_settled: decided.also_settled,
                grant: decided.grant,
                policy_write: decided.policy_write,
            })
        }
        Err(ChoiceError::Decide(e @ DecideError::Unknown(_))) => Err(IpcError::new("unknown_approval", e.to_string())),
        Err(ChoiceError::Decide(e @ DecideError::AlreadyDecided { .. })) => {
            Err(IpcError::new("already_decided", e.to_string()))
        }
        Err(e @ ChoiceError::Policy(_)) => Err(IpcError::new("policy_write_failed", e.to_string())),
        Err(e @ ChoiceError::Invalid(_)) => Err(IpcError::new("invalid_choice", e.to_string())),
    }
}

/// Takes back the policy write of an "always" decision (`DecisionAnswer.policy_write.write_id`),
/// within 30 s and only if the file was not changed since. Error codes: `unknown_write`,
/// `undo_expired`, `policy_changed_since`, `policy_write_failed`.
#[tauri::command(rename_all = "snake_case")]
pub async fn undo_policy_write(host: State<'_, Arc<Host>>, write_id: String) -> IpcResult<PolicyWrite> {
    let running = host.running().await?;
    running.gateway.gate().undo_policy_write(&write_id).map_err(|e| {
        let code = match e {
            UndoError::Unknown(_) => "unknown_write",
            UndoError::Expired(_) => "undo_expired",
            UndoError::Changed { .. } => "policy_changed_since",
            UndoError::Io { .. } => "policy_write_failed",
        };
        IpcError::new(code, e.to_string())
    })
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
