//! A call waiting at the gate for a person.
//!
//! While it waits it sends progress notifications (when the client gave a progress token) so
//! clients that honour them keep waiting; it ends on the person's decision, its deadline
//! (fail-closed: denied), or the client leaving. The decision row is committed before the call
//! is forwarded or answered.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use portcullis_wire::{method, Message};
use serde_json::{json, Value};

use super::{refused, Call, Caller, Forwarded, Gate, Ruling};
use crate::clock::rfc3339;
use crate::held_calls::pending::{ClientInfo, HeldBy, PendingApproval, Scope};
use crate::held_calls::Effect;
use crate::held_calls::{Asked, AtOnce, Question};
use crate::held_calls::{Resolution, Ticket};
use portcullis_audit::{DecidedBy, Decision};

/// How often a waiting client hears that the call is still held.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// How a hold ended: forward, or refuse with this result. `withdrawn`: the client cancelled or
/// left, so nobody is waiting for the refusal.
pub struct HoldEnd {
    pub settled: Result<Forwarded, Value>,
    pub withdrawn: bool,
    /// The arguments a person approved instead of the agent's: the forwarded call carries these.
    pub edited: Option<Value>,
}

/// Where progress notifications for a held call go.
pub struct ProgressSink {
    pub token: Value,
    pub tx: crate::queue::Sender<Message>,
}

pub struct Hold {
    gate: Arc<Gate>,
    call: Call,
    caller: Caller,
    rule: HeldBy,
    timeout: Duration,
    started: Instant,
    ticket: Ticket,
}

impl Hold {
    /// Asks about a call a person must decide ([`crate::held_calls`]): held, or decided at once
    /// (a grant, the pause, nobody to ask) with the ruling to record.
    pub(super) async fn ask(
        gate: Arc<Gate>,
        call: Call,
        caller: Caller,
        rule: HeldBy,
        timeout: Duration,
        pin_change: Option<crate::pins::PinChange>,
    ) -> Result<Self, (Call, Ruling)> {
        let changed = pin_change.as_ref().map(|change| change.fields.join(", "));
        let approval = gate.pending_approval(&call, &caller, &rule, timeout, pin_change);
        let question = Question {
            digest: call.arguments_digest(&gate.digester).into_owned(),
            places: gate.places(&call.server),
            approval,
        };
        match gate.held.ask(question).await {
            Asked::Held(ticket) => Ok(Self {
                gate,
                call,
                caller,
                rule,
                timeout,
                started: Instant::now(),
                ticket,
            }),
            Asked::AtOnce(at_once) => {
                let ruling = at_once_ruling(at_once, &call, &rule, changed.as_deref());
                Err((call, ruling))
            }
        }
    }

    pub fn id(&self) -> &str {
        &self.ticket.id
    }

    /// Waits for the resolution; `client_gone` completes if the client stops listening.
    pub async fn wait(self, progress: Option<ProgressSink>, client_gone: impl Future<Output = ()>) -> HoldEnd {
        let Self {
            gate,
            call,
            caller,
            rule,
            timeout,
            started,
            ticket,
        } = self;
        let shown = &call;
        let tick = progress.as_ref().map(|sink| {
            move |step: u64, left: u64| {
                let _ = sink.tx.send(progress_note(&sink.token, step, shown, left));
            }
        });
        let (resolved, timeout) = wait_for_person(&*gate.held, ticket, started, timeout, client_gone, tick).await;
        if matches!(
            resolved,
            Resolution::Approved(_) | Resolution::Edited(_) | Resolution::Rejected { .. }
        ) {
            // A person's "always" may have written the policy file in another process (the
            // keeper): in force before the next call, not when the file watcher gets to it.
            gate.policies.reload_if_changed(&call.server);
        }
        let wait_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let ruling = ruling_for(&resolved, &call, &rule, timeout);
        let withdrawn = matches!(resolved, Resolution::Cancelled { .. });
        let mut call = call;
        let edited = match resolved {
            Resolution::Edited(arguments) => {
                // The row records what runs, and what the agent asked for beside it.
                call.original_arguments = Some(std::mem::replace(&mut call.arguments, arguments.clone()));
                call.arguments_text = None;
                Some(arguments)
            }
            _ => None,
        };
        HoldEnd {
            settled: gate.settle(call, &caller, ruling, Some(wait_ms)).await,
            withdrawn,
            edited,
        }
    }
}

/// Waits for the resolution of a held request (a call, or an answer): the person's decision,
/// its deadline (which a person may move) or `client_gone`, each of which ends it at the holder.
/// `tick(step, seconds left)` runs every [`PROGRESS_EVERY`] while it waits. Returns how it ended
/// and the timeout in force at the end.
pub(super) async fn wait_for_person(
    held: &dyn crate::held_calls::HeldCalls,
    ticket: Ticket,
    started: Instant,
    timeout: Duration,
    client_gone: impl Future<Output = ()>,
    mut tick: Option<impl FnMut(u64, u64)>,
) -> (Resolution, Duration) {
    let id = ticket.id.clone();
    let mut resolution = ticket.resolution;
    // The deadline, counted from `started`, moves when a person extends it.
    let mut moved = ticket.deadline;
    let mut timeout = (*moved.borrow_and_update()).max(timeout);
    let deadline = tokio::time::sleep_until(tokio::time::Instant::from_std(started + timeout));
    tokio::pin!(deadline, client_gone);
    let mut ticks = tokio::time::interval(PROGRESS_EVERY);
    let mut step = 0u64;
    let (mut timed_out, mut gone) = (false, false);
    let resolved = loop {
        tokio::select! {
            biased;
            r = &mut resolution => break r.unwrap_or(Resolution::Cancelled { why: "the gateway stopped".into() }),
            () = &mut deadline, if !timed_out => {
                timed_out = true;
                held.end(&id, Resolution::TimedOut);
            }
            Ok(()) = moved.changed(), if !timed_out => {
                timeout = *moved.borrow_and_update();
                deadline.as_mut().reset(tokio::time::Instant::from_std(started + timeout));
            }
            () = &mut client_gone, if !gone => {
                gone = true;
                held.end(&id, Resolution::Cancelled { why: "the client closed the request".into() });
            }
            _ = ticks.tick(), if tick.is_some() => {
                step += 1;
                if let Some(tick) = tick.as_mut() {
                    tick(step, timeout.saturating_sub(started.elapsed()).as_secs());
                }
            }
        }
    };
    (resolved, timeout)
}

impl Gate {
    /// What the person is shown about a held call (its `id` is given when it is held).
    pub(super) fn pending_approval(
        &self,
        call: &Call,
        caller: &Caller,
        rule: &HeldBy,
        timeout: Duration,
        pin_change: Option<crate::pins::PinChange>,
    ) -> PendingApproval {
        let asking = self.asking(call, caller, rule, pin_change.as_ref());
        let info = asking.info;
        let now = crate::clock::now_ms();
        let expires = now + i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX);
        PendingApproval {
            id: String::new(),
            server: call.server.clone(),
            method: call.method,
            tool: call.tool.clone(),
            asks: crate::held_calls::asks(
                call.method,
                &call.server,
                &call.tool,
                caller.client_name.as_deref(),
                &call.arguments,
            ),
            risk: asking.class,
            risk_level: asking.risk_level,
            risk_basis: asking.risk_basis,
            reason: asking.reason,
            asked_by: asking.asked_by,
            input_schema: info.input_schema,
            title: info.title,
            description: info.description,
            annotations: info.annotations,
            arguments: call.arguments.clone(),
            arguments_json: call.arguments_json(),
            session: caller.session.clone(),
            client: ClientInfo {
                name: caller.client_name.clone(),
                version: caller.client_version.clone(),
            },
            rule: rule.clone(),
            requested_at: rfc3339(now),
            requested_at_ms: now,
            expires_at: rfc3339(expires),
            expires_at_ms: expires,
            request_id: call.request_id.as_json().to_owned(),
            pin_change,
            asked_before: false,
            answer: None,
        }
    }
}

/// The ruling on a call decided without asking anyone; the texts say what a person can do.
/// `changed`: the fields of a changed tool that differ, for a call held because of them.
fn at_once_ruling(at_once: AtOnce, call: &Call, rule: &HeldBy, changed: Option<&str>) -> Ruling {
    let tool = &call.tool;
    let rule_text = rule.to_string();
    match at_once {
        AtOnce::Grant(found) => match found.effect {
            Effect::Allow => Ruling {
                decision: Decision::Approved,
                decided_by: DecidedBy::User,
                rule: Some(rule_text),
                reason: Some(format!(
                    "approved earlier for {} (grant {})",
                    if found.session_scoped {
                        "this session"
                    } else {
                        "every session"
                    },
                    found.id
                )),
                message: None,
            },
            Effect::Deny => {
                let why = found.reason.unwrap_or_else(|| "denied by the user".to_owned());
                let text = format!(
                    "call to {tool:?} was denied by the user earlier (grant {}): {why}; the call was not forwarded",
                    found.id
                );
                refused(Decision::Rejected, DecidedBy::User, Some(rule_text), why, text)
            }
        },
        AtOnce::ChangeApproved => Ruling {
            decision: Decision::Approved,
            decided_by: DecidedBy::User,
            rule: Some(rule_text),
            reason: Some("changed definition approved earlier for this session".into()),
            message: None,
        },
        AtOnce::Paused => {
            let reason = "Portcullis is paused".to_owned();
            let text = format!(
                "Portcullis is paused: call to {tool:?} requires approval (rule {rule_text}) and was denied \
                 without asking anyone; the call was not forwarded (resume in the Portcullis app)"
            );
            refused(Decision::Denied, DecidedBy::Gateway, Some(rule_text), reason, text)
        }
        AtOnce::NoApprover => no_approver_ruling(call, rule, changed),
        AtOnce::Unreachable { why } => {
            let reason = format!("requires approval, but Portcullis could not be reached to ask: {why}");
            let text = format!(
                "call to {tool:?} requires approval (rule {rule_text}), but Portcullis could not be reached \
                 to ask a person ({why}); the call was not forwarded (start the Portcullis app or run \
                 `portcullis serve`, then retry)"
            );
            refused(Decision::Denied, DecidedBy::Gateway, Some(rule_text), reason, text)
        }
    }
}

fn no_approver_ruling(call: &Call, rule: &HeldBy, changed: Option<&str>) -> Ruling {
    let (tool, rule_text) = (&call.tool, rule.to_string());
    let (reason, text) = match (rule, changed) {
        (HeldBy::PinChanged, Some(fields)) => (
            format!("tool changed since it was pinned ({fields}); needs approval, but no approver is running"),
            format!(
                "call to {tool:?} is held because server {server:?} changed the tool since it was first seen \
                     ({fields}), but no approver is running; the call was not forwarded (a person can accept the \
                     change with `portcullis tools accept {server} {tool}`)",
                server = call.server,
            ),
        ),
        _ => (
            "requires approval, but no approver is running".to_owned(),
            format!(
                "call to {tool:?} requires approval (rule {rule_text}), but no approver is running \
                 (open the Portcullis app or run `portcullis approvals watch`); the call was not forwarded"
            ),
        ),
    };
    refused(Decision::Denied, DecidedBy::Gateway, Some(rule_text), reason, text)
}

fn ruling_for(resolution: &Resolution, call: &Call, rule: &HeldBy, timeout: Duration) -> Ruling {
    let (decision, decided_by) = resolution.audit();
    let tool = &call.tool;
    let (reason, message) = match resolution {
        Resolution::Approved(scope) => (Some(format!("approved ({})", scope_text(*scope))), None),
        Resolution::Edited(_) => (Some("approved with edited arguments".to_owned()), None),
        Resolution::Rejected { reason, .. } => {
            let text = match reason {
                Some(r) => format!("call to {tool:?} was denied by the user: {r}"),
                None => format!("call to {tool:?} was denied by the user"),
            };
            (reason.clone().or_else(|| Some("denied by the user".into())), Some(text))
        }
        Resolution::TimedOut => {
            let reason = format!("no decision within {} s", timeout.as_secs());
            let text = format!("call to {tool:?} needed approval (rule {rule}) but {reason}; it was denied");
            (Some(reason), Some(text))
        }
        Resolution::Cancelled { why } => (
            Some(why.clone()),
            Some(format!("call to {tool:?} was withdrawn: {why}")),
        ),
        Resolution::Orphaned => {
            let reason = "no approver is running any more".to_owned();
            let text = format!("call to {tool:?} needed approval (rule {rule}) but {reason}; it was denied");
            (Some(reason), Some(text))
        }
        Resolution::Lost { why } => {
            let text = format!("call to {tool:?} needed approval (rule {rule}) but {why}; it was denied");
            (Some(why.clone()), Some(text))
        }
    };
    Ruling {
        decision,
        decided_by,
        rule: Some(rule.to_string()),
        reason,
        message,
    }
}

fn scope_text(scope: Scope) -> &'static str {
    match scope {
        Scope::Once => "once",
        Scope::Session => "for this session",
        Scope::Always => "always",
    }
}

fn progress_note(token: &Value, step: u64, call: &Call, left_secs: u64) -> Message {
    Message::notification(
        method::PROGRESS,
        &json!({
            "progressToken": token,
            "progress": step,
            "message": format!("waiting for approval in Portcullis: {}/{} ({left_secs} s left)", call.server, call.tool),
        }),
    )
}
