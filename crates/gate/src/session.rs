//! A downstream session: one client's conversation with one upstream server, and the routing
//! of every message between them.
//!
//! - A legacy client (it sent `initialize`) gets its own session and its own upstream connection
//!   — for stdio servers its own child process, because a legacy stdio server serves exactly one
//!   client session.
//! - Stateless (2026-07-28) requests for a server share one upstream connection, with ids
//!   remapped on stdio so concurrent clients cannot collide.
//!
//! Requests are answered on their own response stream ([`Reply`]); server-initiated messages
//! (sampling, elicitation, roots, logging …) go to an [`Outlets`] choice of open streams.
//!
//! A `tools/call` held for a person ([`held`]) is answered as a task of the gateway's own when the
//! client takes tasks ([`tasks`]), and a 2026-era held call whose stream broke can be re-issued
//! and join its pending approval ([`reattach`]).

mod held;
mod in_flight;
mod input_requests;
mod mirror;
mod outlets;
// Its server is a Python script: Unix only (the Windows build's tests run under Wine, with no Python).
mod reattach;
mod reply;
mod server_asks;
mod task_answers;
mod tasks;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use portcullis_wire::message::ToolCallParams;
use portcullis_wire::{error_code, method, Message, RequestId};
use serde_json::Value;
use tracing::Instrument;

use crate::gate::{door, Caller, Gate, Verdict};
use crate::held_calls::pending::ClientInfo;
use crate::queue;
use crate::upstream::Upstream;

use in_flight::{InFlight, Ticket};
use outlets::Outlets;
use reply::{Finish, PendingReply};

/// How the agent session key of a `portcullis connect` relay over HTTP begins (the rest is a
/// random id the relay chose: unguessable by others).
pub const RELAY_SESSION_PREFIX: &str = "relay:";

/// How a request is answered.
pub enum Reply {
    /// One JSON body.
    Json(Message),
    /// One JSON body under the upstream's own (non-2xx) HTTP status: its JSON-RPC error as it
    /// sent it (2026 era).
    JsonStatus(u16, Message),
    /// An SSE stream of messages, ending after the response.
    Sse(queue::Receiver<Message>),
    /// Everything about the request goes to the context's [`RequestContext::sink`], which was
    /// given; nothing more to do here.
    Sent,
    /// No answer: the sender cancelled the request (the HTTP entry ends the POST with 202).
    Cancelled,
}

/// What the HTTP layer knows about a request beyond its body.
#[derive(Default)]
pub struct RequestContext {
    pub caller: Caller,
    /// Open an SSE stream at once, whatever the upstream chose (the `connect` relay needs headers
    /// right away to keep message order).
    pub stream_now: bool,
    /// The client accepts `text/event-stream`.
    pub accepts_sse: bool,
    /// A connection's own outgoing queue (the local socket, [`crate::local_conn`]): a streamed
    /// answer goes straight into it instead of a stream of its own, and the request ends when it
    /// closes. Refusals and other immediate answers still come back as [`Reply::Json`].
    pub sink: Option<queue::Sender<Message>>,
}

pub struct Session {
    pub id: Arc<str>,
    pub server: Arc<str>,
    /// Shared by stateless (2026-07-28) requests rather than owned by one client.
    pub stateless: bool,
    upstream: Upstream,
    gate: Arc<Gate>,
    client: Mutex<(Option<String>, Option<String>)>,
    outlets: Arc<Outlets>,
    /// When the client last did anything (ms since the epoch), for the idle reaper.
    last_seen_ms: AtomicI64,
    /// The client's requests in flight, per sender: crossed answers and stray cancels refused.
    in_flight: Arc<InFlight>,
    /// How long a forwarded `tools/call` may go unanswered (config `call_timeout_secs`).
    call_timeout: Duration,
    /// The tasks the gateway minted for this session's held calls.
    tasks: tasks::TaskBoard,
    /// Held 2026-era calls a re-issued request can join.
    reattach: reattach::Reattach,
    /// The `session` span (server, session id): every request's span is its child, so a log line
    /// about the session or one of its calls need not name them.
    span: tracing::Span,
    /// The server's requests passed to the client, until it answers ([`server_asks`]).
    asks: server_asks::ServerAsks,
    /// Refused MRTR input requests, answered in the retry ([`input_requests`]).
    refused_inputs: input_requests::RefusedInputs,
    /// How the results of the upstream's own tasks are inspected ([`task_answers`]).
    task_answers: task_answers::TaskAnswers,
}

impl Session {
    pub fn new(
        id: Arc<str>,
        server: Arc<str>,
        stateless: bool,
        upstream: Upstream,
        gate: Arc<Gate>,
        mut events: queue::Receiver<Message>,
        call_timeout: Duration,
    ) -> Arc<Self> {
        let span = tracing::info_span!("session", server = %server, session = %id);
        if stateless {
            // Shared by 2026 requests, which never say who they are: listed with no client.
            gate.announce_session(&id, &server, ClientInfo::default());
        }
        let session = Arc::new(Self {
            id: id.clone(),
            server: server.clone(),
            stateless,
            upstream,
            gate: gate.clone(),
            client: Mutex::new((None, None)),
            outlets: Arc::default(),
            last_seen_ms: AtomicI64::new(crate::clock::now_ms()),
            in_flight: Arc::default(),
            call_timeout,
            tasks: tasks::TaskBoard::default(),
            reattach: reattach::Reattach::default(),
            span: span.clone(),
            asks: server_asks::ServerAsks::default(),
            refused_inputs: input_requests::RefusedInputs::default(),
            task_answers: task_answers::TaskAnswers::default(),
        });
        // The pump holds the session weakly: its upstream's channel must not keep it alive.
        let pump = Arc::downgrade(&session);
        let pump_task = async move {
            while let Some(msg) = events.recv().await {
                if msg.method() == Some(method::TOOLS_LIST_CHANGED) {
                    gate.forget_session_tools(&server, &id);
                }
                // A shared stateless connection has no streams of its own: what belongs to a
                // request already rode on its response stream (see `upstream::correlator`).
                if stateless {
                    continue;
                }
                match pump.upgrade() {
                    Some(session) => session.screen_event(msg),
                    None => break,
                }
            }
            // The session's upstream is gone: what it was told of the tools goes with it.
            gate.forget_session_tools(&server, &id);
        };
        tokio::spawn(pump_task.instrument(span));
        session
    }

    pub fn is_alive(&self) -> bool {
        self.upstream.is_alive()
    }

    /// Notes client activity.
    pub fn touch(&self) {
        self.last_seen_ms.store(crate::clock::now_ms(), Ordering::Relaxed);
    }

    /// No client activity for `idle_ms` and no stream open to it: the client is gone.
    pub fn is_abandoned(&self, now_ms: i64, idle_ms: i64) -> bool {
        now_ms - self.last_seen_ms.load(Ordering::Relaxed) > idle_ms && !self.outlets.any_open()
    }

    /// The client name and version it gave at initialize.
    pub fn client(&self) -> (Option<String>, Option<String>) {
        self.client.lock().map(|c| c.clone()).unwrap_or_default()
    }

    pub async fn close(&self) {
        self.gate.withdraw_session(&self.id);
        self.upstream.close().await;
    }

    /// A notification or a response from the client: pass it on. A cancel is the caller's own
    /// business only: it withdraws a held call or names a forwarded one by its wire id.
    pub async fn send(&self, msg: Message, caller: &Caller) -> Result<(), crate::upstream::UpstreamError> {
        self.answered(&msg);
        if msg.method() == Some(method::CANCELLED) {
            return match self.route_cancel(msg, caller) {
                Some(cancel) => self.upstream.send(cancel).await,
                None => Ok(()),
            };
        }
        self.upstream.send(msg).await
    }

    /// What a client's `notifications/cancelled` becomes upstream, if anything.
    fn route_cancel(&self, cancel: Message, caller: &Caller) -> Option<Message> {
        let request_id = cancelled_request(&cancel)?;
        let Some(sender) = self.sender(caller) else {
            // A stateless client's identity is self-reported: its cancel could name another
            // agent's call. It cancels by closing its response stream instead.
            self.span
                .in_scope(|| tracing::debug!("cancel from a stateless HTTP client ignored"));
            return None;
        };
        // Marked first: whatever answer the request would get from now on is withheld.
        let wire_id = self.in_flight.cancel(&sender, &request_id)?;
        if self.gate.withdraw_request(&caller.session, request_id.as_json()) {
            // Still held: the upstream never saw the request, so its cancel stays here too.
            return None;
        }
        match wire_id {
            Some(wire_id) if wire_id != request_id => Some(with_request_id(&cancel, &wire_id)),
            Some(_) => Some(cancel),
            // Not sent upstream yet: it is answered with nothing and recorded as cancelled.
            None => None,
        }
    }

    /// Whose id space a request's id belongs to ([`in_flight`]): `None` for stateless HTTP
    /// clients, whose identity cannot be trusted.
    fn sender(&self, caller: &Caller) -> Option<Arc<str>> {
        if !self.stateless {
            return Some(self.id.clone());
        }
        caller
            .session
            .starts_with(RELAY_SESSION_PREFIX)
            .then(|| Arc::from(caller.session.as_str()))
    }

    /// Starts tracking a request; the error is the client's answer.
    fn track(&self, id: &RequestId, caller: &Caller) -> Result<Option<Ticket>, Reply> {
        let Some(sender) = self.sender(caller) else {
            return Ok(None);
        };
        self.in_flight.begin(&sender, id).map(Some).map_err(|refused| {
            let text = format!("[portcullis] {refused}");
            Reply::Json(Message::error_response(Some(id), error_code::INVALID_REQUEST, &text))
        })
    }

    /// Opens the standalone stream for server-initiated messages (HTTP GET).
    pub fn open_event_stream(&self) -> queue::Receiver<Message> {
        self.outlets.open_get(&self.id)
    }

    /// A request from the client: police it if it is `tools/call`, forward it, answer it — in
    /// its `request` span (the JSON-RPC id; for a `tools/call` the tool and the decision once
    /// known), under the session's. Tasks the request spawns carry the span on.
    pub async fn request(self: &Arc<Self>, msg: Message, ctx: RequestContext) -> Reply {
        let id = msg.id().map_or("none", RequestId::as_json);
        let span = tracing::info_span!(
            parent: &self.span,
            "request",
            id = %id,
            tool = tracing::field::Empty,
            decision = tracing::field::Empty,
        );
        self.route(msg, ctx).instrument(span).await
    }

    async fn route(self: &Arc<Self>, msg: Message, ctx: RequestContext) -> Reply {
        let Some(id) = msg.id().cloned() else {
            return Reply::Json(Message::error_response(
                None,
                error_code::INVALID_REQUEST,
                "request without id",
            ));
        };
        let ticket = match self.track(&id, &ctx.caller) {
            Ok(ticket) => ticket,
            Err(reply) => return reply,
        };
        let mut finish = Finish::Plain;
        match msg.method() {
            Some(method::TOOLS_CALL) => return self.tools_call(msg, id, ticket, ctx).await,
            Some(name) if tasks::is_task_method(name) => {
                if let Some(task) = self.tasks.named_by(&msg) {
                    return self.answer_task(&task, name, &id, ticket).await;
                }
                if name == method::TASKS_RESULT {
                    // An upstream task's result is its call's answer: inspected as that would be.
                    let mut pending = PendingReply::new(self.clone(), id, ticket, None);
                    pending.answer_check = self.task_answers.check_for(&msg);
                    return pending.forward(msg, &ctx).await;
                }
            }
            Some(method::TOOLS_LIST) => finish = Finish::FilterHidden,
            Some(method::RESOURCES_LIST) => finish = Finish::FilterEntries(&crate::tools_filter::RESOURCES),
            Some(method::RESOURCES_TEMPLATES_LIST) => finish = Finish::FilterEntries(&crate::tools_filter::TEMPLATES),
            Some(method::PROMPTS_LIST) => finish = Finish::FilterEntries(&crate::tools_filter::PROMPTS),
            Some(method::INITIALIZE) => self.remember_client(&msg),
            Some(name) => {
                if let Some(door) = door::client_door(name) {
                    return self.door_request(msg, door, id, ticket, ctx).await;
                }
            }
            None => {}
        }
        let mut pending = PendingReply::new(self.clone(), id, ticket, None);
        pending.finish = finish;
        pending.forward(msg, &ctx).await
    }

    /// A `tools/call`: read once (the call and what this session reads of its params), then
    /// joined to the held call it re-issues, or decided by the gate and forwarded, refused or
    /// held.
    async fn tools_call(
        self: &Arc<Self>,
        msg: Message,
        id: RequestId,
        ticket: Option<Ticket>,
        ctx: RequestContext,
    ) -> Reply {
        let (call, params) = match self.gate.read_call(&self.server, &msg, &id) {
            Ok(read) => read,
            Err(e) => {
                let text = format!("invalid tools/call params: {e}");
                return Reply::Json(Message::error_response(Some(&id), error_code::INVALID_PARAMS, &text));
            }
        };
        tracing::Span::current().record("tool", call.tool.as_str());
        let msg = self.with_refused_inputs(msg, params.request_state.as_ref(), &ctx.caller);
        let reattach = self.reattach_key(&call, &params, &ctx.caller);
        let (msg, ticket) = match self.rejoin(msg, &id, ticket, &ctx, &params, reattach.as_ref()) {
            Ok(reply) => return reply,
            Err(back) => *back,
        };
        let forwarded = match self.gate.decide(call, &ctx.caller).await {
            Verdict::Forward(f) => f,
            Verdict::Refuse(result) => {
                let result = self.refusal_answer(&params, result);
                return Reply::answer(in_flight::answer(ticket, Message::response(&id, &result)));
            }
            Verdict::Hold(hold) => {
                let call = held::HeldCall { msg, params, reattach };
                return self.held(hold, call, id, ticket, &ctx).await;
            }
        };
        PendingReply::new(self.clone(), id, ticket, Some(forwarded))
            .forward(msg, &ctx)
            .await
    }

    /// A `resources/read`, `resources/subscribe` or `prompts/get`: read once, decided by the gate
    /// at its door, and forwarded, refused with a JSON-RPC error (these methods have no `isError`
    /// result) or held like a tool call.
    async fn door_request(
        self: &Arc<Self>,
        msg: Message,
        method: portcullis_audit::Method,
        id: RequestId,
        ticket: Option<Ticket>,
        ctx: RequestContext,
    ) -> Reply {
        let (call, read) = match self.gate.read_door(&self.server, method, &msg, &id) {
            Ok(read) => read,
            Err(e) => {
                let text = format!("[portcullis] invalid {method} params: {e}");
                return Reply::Json(Message::error_response(Some(&id), error_code::INVALID_PARAMS, &text));
            }
        };
        tracing::Span::current().record("tool", call.tool.as_str());
        let msg = self.with_refused_inputs(msg, read.request_state.as_ref(), &ctx.caller);
        let forwarded = match self.gate.decide(call, &ctx.caller).await {
            Verdict::Forward(f) => f,
            Verdict::Refuse(result) => {
                return Reply::answer(in_flight::answer(ticket, door::refusal_error(&id, &result)));
            }
            Verdict::Hold(hold) => {
                let params = ToolCallParams::of_door(read.subject, read.meta);
                let call = held::HeldCall {
                    msg,
                    params,
                    reattach: None,
                };
                return self.held(hold, call, id, ticket, &ctx).await;
            }
        };
        PendingReply::new(self.clone(), id, ticket, Some(forwarded))
            .forward(msg, &ctx)
            .await
    }

    fn remember_client(&self, msg: &Message) {
        let Ok(params) = msg.params::<Value>() else {
            return;
        };
        let info = params.get("clientInfo");
        let field = |k: &str| info.and_then(|i| i.get(k)).and_then(Value::as_str).map(str::to_owned);
        if let Ok(mut client) = self.client.lock() {
            *client = (field("name"), field("version"));
        }
        let client = ClientInfo {
            name: field("name"),
            version: field("version"),
        };
        self.gate.announce_session(&self.id, &self.server, client);
    }

    /// Removes hidden tools from a `tools/list` page ([`crate::tools_filter`]).
    fn filter_hidden(&self, response: Message) -> Message {
        self.gate.filter_listed(&self.server, &self.id, response)
    }
}

/// The request a `notifications/cancelled` names.
fn cancelled_request(cancel: &Message) -> Option<RequestId> {
    let params = cancel.params::<Value>().ok()?;
    RequestId::from_value(params.get("requestId")?)
}

/// `cancel` naming `wire_id` instead: the same notification, as the shared upstream knows it.
fn with_request_id(cancel: &Message, wire_id: &RequestId) -> Message {
    let mut params = cancel.params::<Value>().unwrap_or(Value::Null);
    if let Some(map) = params.as_object_mut() {
        map.insert("requestId".into(), wire_id.to_value());
    }
    Message::notification(method::CANCELLED, &params)
}

/// Who sends `msg` on `session`, given its relay id if any: the keeper's HTTP relay header, or
/// the id the gateway gave a local-socket connection ([`crate::local_conn`]).
pub fn caller_for(session: &Session, relay: Option<&str>, msg: &Message) -> Caller {
    if !session.stateless {
        let (client_name, client_version) = session.client();
        return Caller {
            session: session.id.to_string(),
            client_name,
            client_version,
        };
    }
    let (client_name, client_version) = client_info(msg);
    let session_key = match (relay, &client_name) {
        (Some(relay), _) => format!("{}{relay}", crate::session::RELAY_SESSION_PREFIX),
        (None, Some(name)) => format!("stateless:{name}/{}", client_version.as_deref().unwrap_or("?")),
        (None, None) => "stateless:anonymous".to_owned(),
    };
    Caller {
        session: session_key,
        client_name,
        client_version,
    }
}

/// `_meta["io.modelcontextprotocol/clientInfo"]`'s name and version (each when a string): read
/// without building the rest of `params` (a call's arguments are read once, by the gate).
pub fn client_info(msg: &Message) -> (Option<String>, Option<String>) {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Meta>,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        // The constant `method::META_CLIENT_INFO`, which an attribute cannot name.
        #[serde(rename = "io.modelcontextprotocol/clientInfo")]
        info: Option<Info>,
    }
    #[derive(serde::Deserialize)]
    struct Info {
        name: Option<Value>,
        version: Option<Value>,
    }
    let Ok(Params {
        meta: Some(Meta { info: Some(info) }),
    }) = msg.params::<Params>()
    else {
        return (None, None);
    };
    let text = |v: Option<Value>| match v {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    (text(info.name), text(info.version))
}
