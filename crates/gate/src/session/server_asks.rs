//! What a legacy server asks of the client — `sampling/createMessage` (spend the user's model on
//! its prompt), `elicitation/create` (ask the person for data, or to open a URL), `roots/list`
//! (learn the user's folders) — decided at the gate like a client's request before the client
//! sees it ([`Session::screen`]).
//!
//! - **Allowed** (or approved by a person): recorded, then passed to the client where it was
//!   going; the client's answer completes the row ([`Session::answered`]).
//! - **Refused**: recorded, and answered to the server as a client that says no would answer
//!   ([`refusal_to_server`]); the client never sees it, and the call that caused it goes on.
//!
//! A request that rides on a response stream is decided in place, so it keeps its place in that
//! stream (the exchange waits meanwhile, as the server does for the answer); one that comes on
//! the session's own channel is decided in a task of its own, so nothing else waits behind it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use portcullis_audit::Method;
use portcullis_wire::{error_code, Message, RequestId};
use serde_json::{json, Value};
use tracing::Instrument;

use super::Session;
use crate::gate::{door, Forwarded};

/// The server's requests passed to the client and not answered yet, by the server's id: each
/// holds its audit row open until the client answers.
#[derive(Default)]
pub(super) struct ServerAsks {
    open: Mutex<HashMap<RequestId, Forwarded>>,
}

impl ServerAsks {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Forwarded>> {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How a client that says no answers the server: sampling with the error clients give for a
/// rejected request (the spec's example, code -1), elicitation with `decline` (a result: the
/// server reads the person's "no" and goes on), roots with a JSON-RPC error.
pub(super) fn refusal_to_server(method: Method, id: &RequestId, refusal: &Value) -> Message {
    match method {
        Method::ElicitationCreate => Message::response(id, &json!({ "action": "decline" })),
        Method::SamplingCreateMessage => Message::error_response(Some(id), -1, &door::refusal_text(refusal)),
        _ => door::refusal_error(id, refusal),
    }
}

impl Session {
    /// A message from the server on a request's response stream: a request the gate decides is
    /// decided here, and comes back only when it may go on to the client; anything else comes
    /// back at once.
    pub(super) async fn screen(self: &Arc<Self>, msg: Message) -> Option<Message> {
        match asked(&msg) {
            Some(method) => self.decide_server_request(msg, method).await,
            None => Some(msg),
        }
    }

    /// A message from the server on the session's own channel: as [`Session::screen`], with a
    /// decided request delivered from a task of its own.
    pub(super) fn screen_event(self: &Arc<Self>, msg: Message) {
        let Some(method) = asked(&msg) else {
            self.outlets.deliver(msg, &self.id);
            return;
        };
        let session = self.clone();
        let decide = async move {
            if let Some(msg) = session.decide_server_request(msg, method).await {
                session.outlets.deliver(msg, &session.id);
            }
        };
        tokio::spawn(decide.instrument(self.span.clone()));
    }

    /// Decides one of the server's requests: `Some` to pass it to the client, `None` when it was
    /// refused and the server already has its answer.
    async fn decide_server_request(self: &Arc<Self>, msg: Message, method: Method) -> Option<Message> {
        let id = msg.id()?.clone();
        let caller = super::caller_for(self, None, &msg);
        let call = match self.gate.read_server_request(&self.server, method, &msg, &id) {
            Ok(call) => call,
            Err(e) => {
                let text = format!("[portcullis] the request could not be read ({e}); it was not passed to the client");
                self.answer_server(Message::error_response(Some(&id), error_code::INVALID_PARAMS, &text))
                    .await;
                return None;
            }
        };
        let settled = self.gate.decide_to_the_end(call, &caller).await;
        match settled {
            Ok(forwarded) => {
                self.asks.lock().insert(id, forwarded);
                Some(msg)
            }
            Err(refusal) => {
                self.answer_server(refusal_to_server(method, &id, &refusal)).await;
                None
            }
        }
    }

    async fn answer_server(&self, answer: Message) {
        if let Err(e) = self.upstream.send(answer).await {
            tracing::debug!(error = %e, "the refusal of a server request could not be sent");
        }
    }

    /// The client's answer to one of the server's requests passed to it: its row is completed.
    pub(super) fn answered(&self, msg: &Message) {
        if !msg.is_response() {
            return;
        }
        let Some(id) = msg.id() else {
            return;
        };
        if let Some(forwarded) = self.asks.lock().remove(id) {
            forwarded.finish(msg);
        }
    }
}

/// The decided method `msg` asks, if it is a request the gate decides.
fn asked(msg: &Message) -> Option<Method> {
    if !msg.is_request() {
        return None;
    }
    msg.method().and_then(door::server_door)
}
