//! The decision on one `tools/call`: policy → rate limit → approval → audit row, committed
//! before anything is forwarded or answered.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use portcullis_audit::{DecidedBy, Decision, NewDecision, Outcome};
use portcullis_policy::Action;
use portcullis_wire::{canonical, gate_result, Message, RequestId};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::approval::{ApprovalBroker, ApprovalOutcome};
use crate::audit_log::AuditLog;
use crate::events::GatewayEvent;
use crate::policy_store::{InForce, PolicyStore};
use crate::rate_limit::RateLimits;

/// Who is calling: the agent session and what the client says it is.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The agent session rate limits and session grants are counted by (see README, "Sessions").
    pub session: String,
    pub client_name: Option<String>,
    pub client_version: Option<String>,
}

/// One call as the gate sees it.
pub struct Call<'a> {
    pub server: &'a str,
    pub tool: &'a str,
    pub arguments: &'a Value,
    pub request_id: &'a RequestId,
    /// 2026-07-28 request: refusals carry `resultType`.
    pub modern: bool,
}

pub enum Verdict {
    /// Forward the call; complete the audit row with [`Forwarded::finish`] when it returns.
    Forward(Forwarded),
    /// Answer the client with this result instead of forwarding.
    Refuse(Value),
}

pub struct Forwarded {
    audit: AuditLog,
    row_id: i64,
    started: Instant,
}

impl Forwarded {
    /// Records the upstream's answer on the decision row.
    pub fn finish(self, response: &Message) {
        let outcome = outcome_of(response);
        let ms = i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        self.audit.complete(self.row_id, outcome, ms);
    }

    /// The client went away before the answer.
    pub fn abandon(self) {
        let ms = i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        self.audit.complete(self.row_id, Outcome::Cancelled, ms);
    }
}

pub struct Gate {
    pub policies: Arc<PolicyStore>,
    pub rate_limits: RateLimits,
    pub audit: AuditLog,
    pub approvals: ApprovalBroker,
    pub events: broadcast::Sender<GatewayEvent>,
}

/// A decision before it is recorded.
struct Ruling {
    decision: Decision,
    decided_by: DecidedBy,
    rule: Option<String>,
    reason: Option<String>,
    /// What the agent reads when the call is not forwarded.
    message: Option<String>,
}

impl Gate {
    pub async fn decide(&self, call: &Call<'_>, caller: &Caller) -> Verdict {
        let in_force = self.policies.get(call.server);
        let ruling = self.rule(call, caller, in_force).await;
        let redact = match self.policies.get(call.server) {
            Some(InForce::Policy(p)) => p.redact_keys().to_vec(),
            _ => Vec::new(),
        };
        let row = NewDecision {
            time_ms: now_ms(),
            session: caller.session.clone(),
            client_name: caller.client_name.clone(),
            client_version: caller.client_version.clone(),
            server: call.server.to_owned(),
            tool: call.tool.to_owned(),
            arguments: call.arguments.clone(),
            arguments_digest: canonical::digest(call.arguments),
            decision: ruling.decision,
            decided_by: ruling.decided_by,
            rule: ruling.rule.clone(),
            reason: ruling.reason.clone(),
            wait_ms: None,
            request_id: Some(call.request_id.as_json().to_owned()),
            extra_redact_keys: redact,
        };
        tracing::info!(server = call.server, tool = call.tool, decision = ?ruling.decision, rule = ?ruling.rule, "tools/call decided");
        let row_id = match self.audit.record(row).await {
            Ok(id) => id,
            Err(e) => {
                tracing::error!(error = %e, "audit write failed; refusing the call");
                let text = format!("the audit log cannot be written ({e}); the call was not forwarded");
                return Verdict::Refuse(gate_result::refusal(&text, call.modern));
            }
        };
        let _ = self.events.send(GatewayEvent::AuditAppended {
            id: row_id,
            server: call.server.to_owned(),
            tool: call.tool.to_owned(),
            decision: ruling.decision.to_string(),
        });
        match ruling.message {
            None => Verdict::Forward(Forwarded { audit: self.audit.clone(), row_id, started: Instant::now() }),
            Some(text) => Verdict::Refuse(gate_result::refusal(&text, call.modern)),
        }
    }

    async fn rule(&self, call: &Call<'_>, caller: &Caller, in_force: Option<InForce>) -> Ruling {
        let tool = call.tool;
        let policy = match in_force {
            Some(InForce::Policy(policy)) => policy,
            Some(InForce::Broken(why)) => {
                return refused(Decision::Denied, DecidedBy::Gateway, None, why.to_string(), why.to_string());
            }
            None => {
                let why = format!("server {:?} is not configured", call.server);
                return refused(Decision::Denied, DecidedBy::Gateway, None, why.clone(), why);
            }
        };
        let eval = policy.evaluate(tool, call.arguments);
        let rule = eval.rule.clone();
        match eval.action {
            Action::Hide => refused(
                Decision::Hidden,
                DecidedBy::Policy,
                Some(rule.clone()),
                "hidden by policy".into(),
                format!("tool {tool:?} is hidden by policy (rule {rule}) and cannot be called"),
            ),
            Action::Deny => {
                let reason = eval.reason.clone().unwrap_or_else(|| "denied by policy".into());
                let text = format!("call to {tool:?} denied by policy rule {rule}: {reason}");
                refused(Decision::Denied, DecidedBy::Policy, Some(rule), reason, text)
            }
            Action::Allow => match (eval.rate_limit, eval.entry.as_deref()) {
                (Some(limit), Some(entry)) => match self.rate_limits.check(call.server, entry, limit, &caller.session) {
                    Ok(()) => allowed(rule),
                    Err(wait) => {
                        let retry = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                        let reason = format!(
                            "rate limit of {} calls per {} s reached for this session",
                            limit.max, limit.window_secs
                        );
                        let text = format!("call to {tool:?} refused: {reason} (rule {rule}); retry in {retry} s");
                        refused(Decision::RateLimited, DecidedBy::Policy, Some(rule), reason, text)
                    }
                },
                _ => allowed(rule),
            },
            Action::RequireApproval => match self.approvals.hold().await {
                ApprovalOutcome::NoApprover => {
                    let reason = "requires approval, but no approver is running".to_owned();
                    let text = format!(
                        "call to {tool:?} requires approval (rule {rule}), but no approver is running \
                         (open the Portcullis app or run `portcullis approvals watch`); the call was not forwarded"
                    );
                    refused(Decision::Denied, DecidedBy::Gateway, Some(rule), reason, text)
                }
            },
        }
    }
}

fn allowed(rule: String) -> Ruling {
    Ruling { decision: Decision::Allowed, decided_by: DecidedBy::Policy, rule: Some(rule), reason: None, message: None }
}

fn refused(decision: Decision, decided_by: DecidedBy, rule: Option<String>, reason: String, message: String) -> Ruling {
    Ruling { decision, decided_by, rule, reason: Some(reason), message: Some(message) }
}

/// ok / tool error / failure, from the upstream's response.
fn outcome_of(response: &Message) -> Outcome {
    if matches!(response.kind(), portcullis_wire::Kind::Response { is_error: true, .. }) {
        return Outcome::Failure;
    }
    #[derive(serde::Deserialize)]
    struct R {
        result: Option<IsError>,
    }
    #[derive(serde::Deserialize)]
    struct IsError {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    match serde_json::from_slice::<R>(response.bytes()) {
        Ok(R { result: Some(IsError { is_error: true }) }) => Outcome::ToolError,
        Ok(_) => Outcome::Ok,
        Err(_) => Outcome::Failure,
    }
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
