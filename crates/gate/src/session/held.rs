//! A `tools/call` held for a person, answered one of three ways:
//! - as a task of the gateway's own, when the client takes tasks ([`super::tasks`]);
//! - on a stream opened at once, so progress can flow while a person decides — a 2026-era call
//!   whose stream breaks can be re-issued and joins the same approval ([`super::reattach`]);
//! - as one JSON body, for a client that takes nothing else.
//!
//! The call is forwarded only once approved.

use std::sync::Arc;
use std::time::Duration;

use portcullis_wire::message::{TaskAsk, ToolCallParams};
use portcullis_wire::{error_code, Message, RequestId};
use serde_json::Value;
use tracing::Instrument;

use super::in_flight::{self, Ticket};
use super::reattach::{self, Waiter};
use super::reply::PendingReply;
use super::tasks::{self, GatewayTask, TaskState};
use super::{Reply, RequestContext, Session};
use crate::gate::{door, Call, Caller, Hold, ProgressSink};
use crate::queue;

/// What the session keeps of a `tools/call` the gate holds: the request to forward once
/// approved, its params as read with the call, and where a re-issue could join it.
pub(super) struct HeldCall {
    pub msg: Message,
    pub params: ToolCallParams,
    pub reattach: Option<reattach::Key>,
}

impl Session {
    /// A held call: as a task when the client takes one, else on a stream (or JSON).
    pub(super) async fn held(
        self: &Arc<Self>,
        hold: Box<Hold>,
        call: HeldCall,
        id: RequestId,
        ticket: Option<Ticket>,
        ctx: &RequestContext,
    ) -> Reply {
        let HeldCall {
            msg,
            params,
            reattach: key,
        } = call;
        // Only a tool call can become a task: the other doors' results have no task form.
        let ask = params
            .task_ask()
            .filter(|_| msg.method() == Some(portcullis_wire::method::TOOLS_CALL));
        if let Some(ask) = ask {
            if let Some(task) = self.mint_held_task(&hold, &params.name, ask) {
                return self.held_as_task(hold, msg, id, ticket, task);
            }
        }
        if !ctx.accepts_sse {
            return self.held_json(hold, msg, id, ticket, ctx.caller.clone()).await;
        }
        let (tx, rx) = match &ctx.sink {
            Some(sink) => (sink.clone(), None),
            None => {
                let (tx, rx) = queue::client_stream("held call stream");
                (tx, Some(rx))
            }
        };
        let progress = params
            .progress_token()
            .cloned()
            .map(|token| ProgressSink { token, tx: tx.clone() });
        let waiter = Waiter { msg, id, tx, ticket };
        let session = self.clone();
        let wait = async move {
            let (end, waiter) = match key {
                Some(key) => match session.reattach.register(key.clone(), waiter) {
                    Ok(slot) => {
                        let end = hold.wait(progress, slot.abandoned()).await;
                        (end, session.reattach.finish(&key, slot))
                    }
                    Err(waiter) => wait_on_stream(hold, progress, *waiter).await,
                },
                None => wait_on_stream(hold, progress, waiter).await,
            };
            session.after_stream_hold(end, waiter).await;
        };
        tokio::spawn(wait.in_current_span());
        rx.map_or(Reply::Sent, Reply::Sse)
    }

    /// Where a held call that a re-issue could join is registered: 2026-era calls of stateless
    /// clients, whose broken stream is otherwise the end of the call. Keyed by the digest read
    /// with the call.
    pub(super) fn reattach_key(&self, call: &Call, params: &ToolCallParams, caller: &Caller) -> Option<reattach::Key> {
        if !self.stateless || !params.is_modern() {
            return None;
        }
        Some(reattach::Key {
            caller: caller.session.clone(),
            tool: call.tool.clone(),
            digest: call.arguments_digest(self.gate.digester()).into_owned(),
        })
    }

    /// A 2026-era `tools/call` that re-issues a held call whose stream broke joins it: one
    /// prompt, and the decision answers this request. `Err` gives the request back to be gated.
    pub(super) fn rejoin(
        &self,
        msg: Message,
        id: &RequestId,
        ticket: Option<Ticket>,
        ctx: &RequestContext,
        params: &ToolCallParams,
        key: Option<&reattach::Key>,
    ) -> Result<Reply, Box<(Message, Option<Ticket>)>> {
        let key = key.filter(|_| ctx.accepts_sse && params.task_ask().is_none());
        let Some(key) = key else {
            return Err(Box::new((msg, ticket)));
        };
        let (tx, rx) = match &ctx.sink {
            Some(sink) => (sink.clone(), None),
            None => {
                let (tx, rx) = queue::client_stream("re-attached held call stream");
                (tx, Some(rx))
            }
        };
        let waiter = Waiter {
            msg,
            id: id.clone(),
            tx,
            ticket,
        };
        match self.reattach.join(key, waiter) {
            Ok(()) => Ok(rx.map_or(Reply::Sent, Reply::Sse)),
            Err(waiter) => Err(Box::new((waiter.msg, waiter.ticket))),
        }
    }

    /// The hold of a streamed call ended: forward the approved call into the (latest) waiter's
    /// stream, or answer with the refusal, or nothing if it was withdrawn.
    async fn after_stream_hold(self: Arc<Self>, end: crate::gate::HoldEnd, waiter: Waiter) {
        let Waiter { msg, id, tx, ticket } = waiter;
        let msg = match approved_call(msg, end.edited.as_ref()) {
            Ok(call) => call,
            Err(answer) => {
                if let Ok(f) = end.settled {
                    f.abandon();
                }
                let _ = tx.send(answer);
                return;
            }
        };
        match end.settled {
            // Approved while nobody waited (a stream closed in its re-attach grace): not
            // forwarded, since no one would get the answer; recorded as cancelled.
            Ok(f) if tx.is_closed() => f.abandon(),
            Ok(f) => {
                let mut pending = PendingReply::new(self.clone(), id, ticket, Some(f));
                let sent = tokio::select! {
                    // The client closed the stream before the upstream took the call: `Drop`
                    // gives the request up.
                    () = tx.closed() => return,
                    sent = pending.send_upstream(msg) => sent,
                };
                match sent {
                    Ok(exchange) => pending.stream_into(exchange, tx, None),
                    Err(Some(answer)) => {
                        let _ = tx.send(answer);
                    }
                    Err(None) => {}
                }
            }
            // A withdrawn request gets no answer (MCP: do not respond to a cancelled request);
            // the stream just ends.
            Err(_) if end.withdrawn => {}
            Err(result) => {
                if let Some(answer) = in_flight::answer(ticket, refusal(&msg, &id, &result)) {
                    let _ = tx.send(answer);
                }
            }
        }
    }

    /// A held call from a client that takes JSON only: no progress, but the wait still runs in
    /// its own task, so a client that hangs up withdraws the call and the decision is recorded.
    async fn held_json(
        self: &Arc<Self>,
        hold: Box<Hold>,
        msg: Message,
        id: RequestId,
        ticket: Option<Ticket>,
        caller: Caller,
    ) -> Reply {
        let (mut tx, rx) = tokio::sync::oneshot::channel();
        let session = self.clone();
        let wait = async move {
            let end = hold.wait(None, tx.closed()).await;
            let msg = match (approved_call(msg, end.edited.as_ref()), &end.settled) {
                (Ok(call), _) => call,
                (Err(answer), _) => {
                    if let Ok(f) = end.settled {
                        f.abandon();
                    }
                    let _ = tx.send(Reply::Json(answer));
                    return;
                }
            };
            let reply = match end.settled {
                Ok(f) => {
                    let ctx = RequestContext {
                        caller,
                        stream_now: false,
                        accepts_sse: false,
                        sink: None,
                    };
                    let forward = PendingReply::new(session, id, ticket, Some(f)).forward(msg, &ctx);
                    tokio::select! {
                        reply = forward => reply,
                        // The client hung up while the approved call ran: dropping the forward
                        // gives the request up (the pending reply's `Drop`, the row `cancelled`).
                        () = tx.closed() => return,
                    }
                }
                Err(_) if end.withdrawn => Reply::Cancelled,
                Err(result) => Reply::answer(in_flight::answer(ticket, refusal(&msg, &id, &result))),
            };
            let _ = tx.send(reply);
        };
        tokio::spawn(wait.in_current_span());
        rx.await.unwrap_or_else(|_| {
            let text = "[portcullis] the held call ended without an answer";
            Reply::Json(Message::error_response(None, error_code::INTERNAL_ERROR, text))
        })
    }

    /// A task for a held call, if the board has room. The hold then lasts up to
    /// `approval.max_hold_secs`: the client no longer waits on a request, so its timeout is not
    /// the limit; the prompt shows the new deadline.
    fn mint_held_task(&self, hold: &Hold, tool: &str, ask: TaskAsk) -> Option<Arc<GatewayTask>> {
        let max_hold = self.gate.max_hold();
        let label = format!("{}/{tool}", self.server);
        let task = self.tasks.mint(
            ask,
            label,
            hold.id().to_owned(),
            max_hold.saturating_add(self.call_timeout),
            TaskState::Held,
        )?;
        if let Err(e) = self.gate.extend(hold.id(), max_hold) {
            tracing::debug!(error = %e, "held call decided before it became a task");
        }
        Some(task)
    }

    /// Answers the held call with its task at once; the hold, and the approved call, run on.
    fn held_as_task(
        self: &Arc<Self>,
        hold: Box<Hold>,
        msg: Message,
        id: RequestId,
        ticket: Option<Ticket>,
        task: Arc<GatewayTask>,
    ) -> Reply {
        let created = task.created(self.hold_deadline(&task));
        tracing::info!(task = task.id, approval = hold.id(), "held call answered with a task");
        let session = self.clone();
        let run = async move {
            let cancel = task.cancel.clone();
            let end = hold.wait(None, async move { cancel.cancelled().await }).await;
            session.run_task(end, msg, &task).await;
            session.announce(&task);
        };
        tokio::spawn(run.in_current_span());
        Reply::answer(in_flight::answer(ticket, Message::response(&id, &created)))
    }

    /// The decision completes the task: the approved call's real result, or the refusal.
    async fn run_task(self: &Arc<Self>, end: crate::gate::HoldEnd, msg: Message, task: &GatewayTask) {
        let call = approved_call(msg, end.edited.as_ref()).and_then(|msg| {
            let msg = match task.ask() {
                TaskAsk::Legacy => Ok(msg),
                TaskAsk::Extension => msg.without_task_ask(),
            };
            msg.and_then(|m| m.with_id(&task.wire_id())).map_err(|e| {
                let text = format!("[portcullis] the approved call could not be built ({e}); it was not forwarded");
                Message::error_response(None, error_code::INTERNAL_ERROR, &text)
            })
        });
        match (end.settled, call) {
            (Ok(f), Ok(msg)) => {
                task.set(TaskState::Running);
                self.announce(task);
                let pending = PendingReply::new(self.clone(), task.wire_id(), None, Some(f));
                let Some(answer) = pending.answer_for_task(msg, task.cancel.clone()).await else {
                    return;
                };
                match tasks::upstream_task(&answer) {
                    Some(upstream_id) => self.follow_upstream_task(task, &upstream_id).await,
                    None => task.finish_with(&answer),
                }
            }
            (Ok(f), Err(answer)) => {
                f.abandon();
                task.finish_with(&answer);
            }
            (Err(_), _) if end.withdrawn => task.set(TaskState::Cancelled("the approval was withdrawn".into())),
            (Err(result), _) => task.set(TaskState::Completed(result)),
        }
    }

    /// The approved call became the upstream's own task (2025-11-25): its `tasks/result`, within
    /// the call timeout, completes the gateway's task.
    async fn follow_upstream_task(self: &Arc<Self>, task: &GatewayTask, upstream_id: &str) {
        let id = RequestId::from_value(&Value::String(format!("{}:result", task.id)))
            .unwrap_or_else(|| RequestId::number(0));
        let Some(request) = tasks::result_request(&id, upstream_id) else {
            return;
        };
        let mut pending = PendingReply::new(self.clone(), id.clone(), None, None);
        pending.answer_check = self.task_answers.check_of(upstream_id);
        let waited =
            tokio::time::timeout(self.call_timeout, pending.answer_for_task(request, task.cancel.clone())).await;
        match waited {
            Ok(Some(answer)) => task.finish_with(&answer),
            Ok(None) => {}
            Err(_) => {
                let text = format!(
                    "[portcullis] the upstream's task {upstream_id} gave no result within {} s (the call timeout)",
                    self.call_timeout.as_secs()
                );
                task.finish_with(&Message::error_response(Some(&id), error_code::INTERNAL_ERROR, &text));
            }
        }
    }

    /// Tells a legacy session a task's status changed (`notifications/tasks/status`).
    fn announce(&self, task: &GatewayTask) {
        if self.stateless {
            return;
        }
        if let Some(note) = task.status_note() {
            self.outlets.deliver(note, &self.id);
        }
    }

    /// The deadline of the approval a task waits on, while it waits.
    fn hold_deadline(&self, task: &GatewayTask) -> Option<i64> {
        self.gate.pending(task.approval()).map(|a| a.expires_at_ms)
    }

    /// A `tasks/*` request about one of the gateway's own tasks. `tasks/cancel` withdraws the
    /// approval (recorded as `cancelled` by the client) or gives the running call up.
    pub(super) async fn answer_task(
        &self,
        task: &GatewayTask,
        request: &str,
        id: &RequestId,
        ticket: Option<Ticket>,
    ) -> Reply {
        if request == portcullis_wire::method::TASKS_CANCEL {
            let why = "the client cancelled the task".to_owned();
            self.gate.cancel_held(task.approval(), why);
        }
        let given_up = ticket.as_ref().map(Ticket::cancellation).unwrap_or_default();
        let answer = task.answer(request, id, self.hold_deadline(task), given_up).await;
        match answer {
            Some(answer) => Reply::answer(in_flight::answer(ticket, answer)),
            None => Reply::Cancelled,
        }
    }

    /// The answer to a refused call: the refusal, or for a client that asked for a task
    /// (2025-11-25, where the answer must be a task) a task already completed with it.
    pub(super) fn refusal_answer(&self, params: &ToolCallParams, refusal: Value) -> Value {
        if params.task_ask() != Some(TaskAsk::Legacy) {
            return refusal;
        }
        let label = format!("{}/{}", self.server, params.name);
        let done = TaskState::Completed(refusal.clone());
        match self
            .tasks
            .mint(TaskAsk::Legacy, label, String::new(), Duration::ZERO, done)
        {
            Some(task) => task.created(None),
            None => refusal,
        }
    }
}

/// The answer to a held request that was refused: the refusal result for a tool call, a
/// JSON-RPC error for the other doors ([`door::refusal_answer`]).
fn refusal(msg: &Message, id: &RequestId, result: &Value) -> Message {
    match msg.method().and_then(door::client_door) {
        Some(method) => door::refusal_answer(method, id, result),
        None => Message::response(id, result),
    }
}

/// Waits on a held call whose stream is its only waiter: closing it withdraws the call.
async fn wait_on_stream(
    hold: Box<Hold>,
    progress: Option<ProgressSink>,
    waiter: Waiter,
) -> (crate::gate::HoldEnd, Waiter) {
    let watcher = waiter.tx.clone();
    (hold.wait(progress, async move { watcher.closed().await }).await, waiter)
}

/// The call to forward once approved: as it came, or with the arguments a person edited. Headers
/// that mirror the arguments (`Mcp-Param-*`) are written from the call as forwarded
/// ([`super::mirror`]), so an edited call carries the edited values; the gate checked the edit
/// (`Gate::check_edit`), including that it reads back strictly.
/// `Err` is the client's answer: the edit could not be applied (unreachable after `check_edit`),
/// and the agent's own call must not run instead.
fn approved_call(msg: Message, edited: Option<&Value>) -> Result<Message, Message> {
    let Some(arguments) = edited else {
        return Ok(msg);
    };
    msg.with_arguments(arguments).map_err(|e| {
        tracing::error!(error = %e, "edited arguments could not be applied; the call is not forwarded");
        let text = format!("[portcullis] the call approved with edits could not be built ({e}); it was not forwarded");
        Message::error_response(msg.id(), error_code::INTERNAL_ERROR, &text)
    })
}
