//! `list_approvals`, `decide_approval`, `undo_policy_write`, `extend_approval`,
//! `dry_run_approval`, `list_grants`, `revoke_grant`: the held calls, a person's answers to them,
//! and the standing grants those answers left in force. The choice's wire form is [`crate::commands::choice::ChoiceArg`].

use std::sync::Arc;
use std::time::Duration;

use portcullis_gate::held_calls::pending::PendingApproval;
use portcullis_gate::held_calls::DecideError;
use portcullis_gate::policy_store::{PolicyWrite, UndoError};
use portcullis_keeper::choose::dry_run::DryRun;
use portcullis_keeper::choose::{Choice, ChoiceError};
use portcullis_keeper::standing::Listed;
use portcullis_keeper::Keeper;
use serde::Serialize;
use serde_json::Value;
use tauri::State;

use crate::commands::choice::ChoiceArg;
use crate::host::Host;
use crate::ipc::{IpcError, IpcResult};

#[tauri::command(rename_all = "snake_case")]
pub async fn list_approvals(host: State<'_, Arc<Host>>) -> IpcResult<Vec<PendingApproval>> {
    let running = host.running().await?;
    Ok(running.gateway.pending_approvals())
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
    let choice = choice.into_choice()?;
    decide(&running.gateway, &id, choice)
}

/// A person's decision, from any of the app's surfaces (prompt, main window, notification).
pub fn decide(gateway: &Keeper, id: &str, choice: Choice) -> IpcResult<DecisionAnswer> {
    match gateway.choose(id, choice) {
        Ok(decided) => {
            let approval = &decided.approval;
            let also = decided.also_settled.len();
            tracing::info!(
                id,
                server = approval.server,
                tool = approval.tool,
                also_settled = also,
                "decided in the app"
            );
            Ok(DecisionAnswer {
                also_settled: decided.also_settled,
                grant: decided.grant,
                policy_write: decided.policy_write,
            })
        }
        Err(e) => Err(choice_error(e)),
    }
}

/// Takes back the policy write of an "always" decision (`DecisionAnswer.policy_write.write_id`),
/// within 30 s and only if the file was not changed since. Error codes: `unknown_write`,
/// `undo_expired`, `policy_changed_since`, `policy_write_failed`.
#[tauri::command(rename_all = "snake_case")]
pub async fn undo_policy_write(host: State<'_, Arc<Host>>, write_id: String) -> IpcResult<PolicyWrite> {
    let running = host.running().await?;
    running.gateway.undo_policy_write(&write_id).map_err(|e| {
        let code = match e {
            UndoError::Unknown(_) => "unknown_write",
            UndoError::Expired(_) => "undo_expired",
            UndoError::Changed { .. } => "policy_changed_since",
            UndoError::Io { .. } => "policy_write_failed",
        };
        IpcError::new(code, e.to_string())
    })
}

/// The standing grants in force (the same list as `GET /control/grants`).
#[tauri::command(rename_all = "snake_case")]
pub async fn list_grants(host: State<'_, Arc<Host>>) -> IpcResult<Vec<Listed>> {
    let running = host.running().await?;
    Ok(running.gateway.standing_grants())
}

/// Ends a standing grant at once: later calls it covered are decided by the policy again.
/// Error code `unknown_grant` when it is not in force (expired, revoked, or its session ended).
#[tauri::command(rename_all = "snake_case")]
pub async fn revoke_grant(host: State<'_, Arc<Host>>, id: String) -> IpcResult<()> {
    let running = host.running().await?;
    if running.gateway.revoke_grant(&id) {
        tracing::info!(grant = id, "grant revoked in the app");
        Ok(())
    } else {
        Err(IpcError::new(
            "unknown_grant",
            format!("no grant {id} is in force (expired, revoked, or its session ended)"),
        ))
    }
}

fn choice_error(e: ChoiceError) -> IpcError {
    match e {
        ChoiceError::Decide(e) => decide_error(e),
        e @ ChoiceError::Policy(_) => IpcError::new("policy_write_failed", e.to_string()),
        e @ ChoiceError::Invalid(_) => IpcError::new("invalid_choice", e.to_string()),
    }
}

fn decide_error(e: DecideError) -> IpcError {
    match e {
        e @ DecideError::Unknown(_) => IpcError::new("unknown_approval", e.to_string()),
        e @ DecideError::AlreadyDecided { .. } => IpcError::new("already_decided", e.to_string()),
    }
}

/// A held call's new deadline.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "ExtendResult")]
pub struct Extended {
    pub approval: PendingApproval,
    /// The gateway's `approval.max_hold_secs` cut the extension short: no more time can be had.
    pub clamped: bool,
}

/// At most this much is added by one request (the gateway bounds the total by `max_hold_secs`).
const MAX_EXTEND_SECS: u64 = 3600;

/// More time to decide: the deadline moves `by_secs` later, bounded by `approval.max_hold_secs`
/// from when the call was held. Every window hears `ApprovalExtended`.
#[tauri::command(rename_all = "snake_case")]
pub async fn extend_approval(host: State<'_, Arc<Host>>, id: String, by_secs: u64) -> IpcResult<Extended> {
    if by_secs == 0 || by_secs > MAX_EXTEND_SECS {
        return Err(IpcError::new(
            "invalid_extension",
            format!("an extension is 1 to {MAX_EXTEND_SECS} seconds, not {by_secs}"),
        ));
    }
    let running = host.running().await?;
    let extended = running
        .gateway
        .extend_approval(&id, Duration::from_secs(by_secs))
        .map_err(decide_error)?;
    Ok(Extended {
        approval: extended.approval,
        clamped: extended.clamped,
    })
}

/// What a choice would write and how many earlier audited calls it would have matched.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "DryRunResult")]
pub struct DryRunView {
    /// `approve` or `deny`.
    pub decision: String,
    /// `grant` (in memory), `policy` (a rule in the server's policy file), `pin` or `nothing`.
    pub writes: String,
    #[ts(type = "Record<string, unknown> | null")]
    pub grant: Option<Value>,
    /// The `tools` key and entry to be written, when `writes` is `policy`.
    #[ts(type = "Record<string, unknown> | null")]
    pub rule: Option<Value>,
    pub matched: usize,
    pub compared: usize,
    pub limit: usize,
    /// Compared rows whose value the rule reads was redacted in the audit.
    pub redacted: usize,
}

impl From<DryRun> for DryRunView {
    fn from(d: DryRun) -> Self {
        Self {
            decision: d.decision.to_owned(),
            writes: d.writes.to_owned(),
            grant: d.grant,
            rule: d.rule,
            matched: d.matched,
            compared: d.compared,
            limit: d.limit,
            redacted: d.redacted,
        }
    }
}

/// A dry run of `choice`: decides nothing, the call stays pending. The audit is read off the
/// async threads.
#[tauri::command(rename_all = "snake_case")]
pub async fn dry_run_approval(host: State<'_, Arc<Host>>, id: String, choice: ChoiceArg) -> IpcResult<DryRunView> {
    let running = host.running().await?;
    let choice = choice.into_choice()?;
    let gateway = running.gateway.clone();
    let planned = tauri::async_runtime::spawn_blocking(move || gateway.dry_run(&id, &choice))
        .await
        .map_err(|e| IpcError::new("dry_run_failed", e.to_string()))?;
    planned.map(DryRunView::from).map_err(choice_error)
}
