//! Matching responses to requests on a message pipe (stdio, legacy SSE).
//!
//! Ids are scoped per sender: the server's request id 1 and the client's id 1 coexist, so only
//! *responses* are matched against our pending map; server requests go to `events`.
//!
//! Notifications: progress goes to the request whose token it names. Any other notification names
//! no request on a pipe (stdio has no place for "related to"). On a connection of one legacy
//! session it goes to `events`, and the session's open streams carry it. On a connection shared
//! by stateless (2026-07-28) requests ([`IdMode::Remap`]) there are no such streams: a
//! notification related to a request rides on that request's response stream, so it goes to the
//! request in flight here — the newest, when several are — in the order the server wrote it
//! (before the response), and is dropped when none is. A frame of a 2026 `subscriptions/listen`
//! stream is the exception that does name its request: its `_meta` subscription id is the listen
//! request's id — on the wire, ours — so it goes to that request, with the client's id put back.
//! `events` still gets a copy, for the gateway's own watchers (`tools/list_changed` invalidates
//! the tool catalog).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use portcullis_wire::{error_code, method, Kind, Message, RequestId};
use serde_json::Value;

use super::UpstreamError;

/// Whether ids pass through or are rewritten (a connection shared by several clients).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdMode {
    Passthrough,
    Remap,
}

struct Pending {
    reply: crate::queue::Sender<Message>,
    /// The client's own id when remapped.
    original: Option<RequestId>,
    progress_token: Option<String>,
    /// Order of registration: the newest pending request has the largest.
    seq: u64,
}

pub(super) struct Correlator {
    pending: Mutex<HashMap<RequestId, Pending>>,
    events: crate::queue::Sender<Message>,
    ids: IdMode,
    next_id: AtomicU64,
    next_seq: AtomicU64,
}

impl Correlator {
    pub(super) fn new(ids: IdMode, events: crate::queue::Sender<Message>) -> Self {
        Self {
            pending: Mutex::new(HashMap::new()),
            events,
            ids,
            next_id: AtomicU64::new(1),
            next_seq: AtomicU64::new(0),
        }
    }

    /// Registers a request; returns the message to write (remapped if needed) and its replies.
    /// Refused, rather than sent, when its answer could reach the wrong client: a request the
    /// pipe already carries under the same id, or one that cannot be given an id of ours.
    pub(super) fn register(&self, msg: Message) -> Result<(Message, crate::queue::Receiver<Message>), UpstreamError> {
        let (reply, rx) = crate::queue::exchange();
        let Some(id) = msg.id().cloned() else {
            return Err(UpstreamError::Refused(
                "a request without an id cannot be matched to its answer".into(),
            ));
        };
        let progress_token = progress_token_of(&msg);
        let (wire_msg, key, original) = match self.ids {
            IdMode::Passthrough => (msg, id, None),
            IdMode::Remap => {
                let new_id = RequestId::number(self.next_id.fetch_add(1, Ordering::Relaxed));
                let remapped = msg
                    .with_id(&new_id)
                    .map_err(|e| UpstreamError::Refused(format!("cannot give the request an id of its own: {e}")))?;
                (remapped, new_id, Some(id))
            }
        };
        let mut pending = self.lock();
        if pending.contains_key(&key) {
            return Err(UpstreamError::Refused(format!(
                "request id {key} is already waiting for an answer on this connection"
            )));
        }
        pending.insert(
            key,
            Pending {
                reply,
                original,
                progress_token,
                seq: self.next_seq.fetch_add(1, Ordering::Relaxed),
            },
        );
        Ok((wire_msg, rx))
    }

    /// Stops waiting for `wire_id`; whether it was still pending.
    pub(super) fn forget(&self, wire_id: &RequestId) -> bool {
        self.lock().remove(wire_id).is_some()
    }

    /// Routes one message read from the upstream.
    pub(super) fn dispatch(&self, msg: Message) {
        match msg.kind() {
            Kind::Response { id: Some(id), .. } => {
                let pending = self.lock().remove(id);
                match pending {
                    Some(p) => {
                        let msg = match &p.original {
                            // A response always has an id to swap; should that ever fail, the
                            // client gets an error under its own id, never the wire id.
                            Some(original) => msg.with_id(original).unwrap_or_else(|e| {
                                let text =
                                    format!("[portcullis] the server's answer could not be given back its id: {e}");
                                Message::error_response(Some(original), error_code::INTERNAL_ERROR, &text)
                            }),
                            None => msg,
                        };
                        let _ = p.reply.send(msg);
                    }
                    None => {
                        tracing::debug!(%id, "response to no pending request (late after a cancel?)");
                    }
                }
            }
            Kind::Notification { method } if &**method == method::PROGRESS => {
                if let Some(token) = progress_token_of(&msg) {
                    let pending = self.lock();
                    if let Some(p) = pending.values().find(|p| p.progress_token.as_deref() == Some(&token)) {
                        let _ = p.reply.send(msg);
                        return;
                    }
                }
                let _ = self.events.send(msg);
            }
            Kind::Notification { .. } if self.ids == IdMode::Remap => {
                if let Some(wire_id) = subscription_id_of(&msg) {
                    self.to_subscription(&wire_id, &msg);
                    let _ = self.events.send(msg);
                    return;
                }
                let newest = self.lock().values().max_by_key(|p| p.seq).map(|p| p.reply.clone());
                match newest {
                    Some(reply) => {
                        let _ = reply.send(msg.clone());
                    }
                    None => tracing::debug!(
                        method = msg.method().unwrap_or_default(),
                        "server notification while no request is in flight on the shared connection; dropped"
                    ),
                }
                let _ = self.events.send(msg);
            }
            _ => {
                let _ = self.events.send(msg);
            }
        }
    }

    /// A listen-stream frame goes to the listen request it names (the wire id), carrying the
    /// client's own id instead; a frame naming no request in flight is dropped.
    fn to_subscription(&self, wire_id: &RequestId, msg: &Message) {
        let target = self.lock().get(wire_id).map(|p| (p.reply.clone(), p.original.clone()));
        let Some((reply, original)) = target else {
            tracing::debug!(%wire_id, "listen frame for no request in flight; dropped");
            return;
        };
        let frame = match original {
            Some(original) => with_subscription_id(msg, &original),
            None => Some(msg.clone()),
        };
        match frame {
            Some(frame) => {
                let _ = reply.send(frame);
            }
            None => tracing::warn!(%wire_id, "listen frame whose subscription id could not be given back; dropped"),
        }
    }

    /// Answers one pending request (by its wire id) with an error.
    pub(super) fn fail(&self, wire_id: &RequestId, reason: &str) {
        let Some(p) = self.lock().remove(wire_id) else {
            return;
        };
        let id = p.original.unwrap_or_else(|| wire_id.clone());
        let _ = p
            .reply
            .send(Message::error_response(Some(&id), error_code::INTERNAL_ERROR, reason));
    }

    /// The upstream is gone: answer everything still pending with an error.
    pub(super) fn fail_all(&self, reason: &str) {
        let drained: Vec<_> = self.lock().drain().collect();
        for (wire_id, p) in drained {
            let id = p.original.unwrap_or(wire_id);
            let _ = p
                .reply
                .send(Message::error_response(Some(&id), error_code::INTERNAL_ERROR, reason));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Pending>> {
        // A panic while holding this lock cannot leave the map inconsistent (single inserts/removes).
        self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `params._meta[subscriptionId]` of a listen-stream frame, as a request id.
fn subscription_id_of(msg: &Message) -> Option<RequestId> {
    let value = msg.params::<Value>().ok()?;
    RequestId::from_value(value.get("_meta")?.get(method::META_SUBSCRIPTION_ID)?)
}

/// The frame with its subscription id replaced by `id`.
fn with_subscription_id(msg: &Message, id: &RequestId) -> Option<Message> {
    let mut value = msg.to_value().ok()?;
    *value
        .get_mut("params")?
        .get_mut("_meta")?
        .get_mut(method::META_SUBSCRIPTION_ID)? = id.to_value();
    Message::from_value(&value).ok()
}

/// `params.progressToken` of a progress notification, or `params._meta.progressToken` of a
/// request, as JSON text (a `null` token is a token). Read without building the rest of `params`:
/// on a forwarded `tools/call` that is its arguments, which the gate read once already.
fn progress_token_of(msg: &Message) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Token {
        #[serde(default, rename = "progressToken", deserialize_with = "present")]
        token: Option<Value>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(default, rename = "progressToken", deserialize_with = "present")]
        token: Option<Value>,
        /// Kept as text and read on its own, so a `_meta` that is not an object only means no
        /// token there.
        #[serde(default, rename = "_meta", borrow)]
        meta: Option<&'a serde_json::value::RawValue>,
    }
    #[derive(serde::Deserialize)]
    struct P<'a> {
        #[serde(borrow)]
        params: Params<'a>,
    }
    let P { params } = serde_json::from_slice::<P<'_>>(msg.bytes()).ok()?;
    let token = match params.token {
        Some(token) => token,
        None => serde_json::from_str::<Token>(params.meta?.get()).ok()?.token?,
    };
    Some(token.to_string())
}

/// A member that is there, whatever its value (`null` included): `Some`. Absent: `None`, by
/// `#[serde(default)]`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_token_is_read_where_each_kind_of_message_carries_it() {
        let token = |params: &str| {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m/x","params":{params}}}"#);
            progress_token_of(&Message::parse(text).unwrap())
        };
        let cases = [
            (
                r#"{"name":"t","arguments":{"a":[1]},"_meta":{"progressToken":"p"}}"#,
                Some(r#""p""#),
            ),
            (r#"{"name":"t","_meta":{"progressToken":7,"other":{}}}"#, Some("7")),
            (r#"{"name":"t","_meta":{"progressToken":null}}"#, Some("null")),
            (
                r#"{"progressToken":"top","_meta":{"progressToken":"meta"}}"#,
                Some(r#""top""#),
            ),
            (r#"{"progressToken":"top","_meta":5}"#, Some(r#""top""#)),
            (r#"{"name":"t","_meta":{}}"#, None),
            (r#"{"name":"t","_meta":null}"#, None),
            (r#"{"name":"t"}"#, None),
            ("null", None),
        ];
        for (params, want) in cases {
            assert_eq!(token(params).as_deref(), want, "{params}");
        }
    }

    fn msg(text: &str) -> Message {
        Message::parse(text.to_owned()).unwrap()
    }

    #[tokio::test]
    async fn responses_route_to_their_request_and_server_requests_to_events() {
        let (events_tx, mut events) = crate::queue::upstream_events();
        let c = Correlator::new(IdMode::Passthrough, events_tx);
        let (_, mut rx) = c
            .register(msg(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}}"#,
            ))
            .unwrap();
        c.dispatch(msg(r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}"#));
        c.dispatch(msg(
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#,
        ));
        c.dispatch(msg(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert_eq!(
            events.recv().await.unwrap().method(),
            Some("sampling/createMessage"),
            "a server request with the same id is not a response"
        );
        assert_eq!(rx.recv().await.unwrap().method(), Some("notifications/progress"));
        assert!(rx.recv().await.unwrap().is_response());
    }

    #[tokio::test]
    async fn remapped_ids_are_restored() {
        let (events_tx, _events) = crate::queue::upstream_events::<Message>();
        let c = Correlator::new(IdMode::Remap, events_tx);
        let (wire, mut rx) = c
            .register(msg(r#"{"jsonrpc":"2.0","id":"client-7","method":"ping"}"#))
            .unwrap();
        let wire_id = wire.id().unwrap().clone();
        assert_ne!(wire_id.as_json(), "\"client-7\"");
        c.dispatch(msg(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
            wire_id.as_json()
        )));
        assert_eq!(rx.recv().await.unwrap().id().unwrap().as_json(), "\"client-7\"");
    }

    #[tokio::test]
    async fn fail_all_answers_pending_requests() {
        let (events_tx, _events) = crate::queue::upstream_events::<Message>();
        let c = Correlator::new(IdMode::Passthrough, events_tx);
        let (_, mut rx) = c
            .register(msg(
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}"#,
            ))
            .unwrap();
        c.fail_all("upstream exited");
        let reply = rx.recv().await.unwrap();
        assert!(matches!(reply.kind(), Kind::Response { is_error: true, .. }));
        assert!(String::from_utf8_lossy(reply.bytes()).contains("upstream exited"));
    }

    /// A shared (stateless) pipe: a notification naming no request goes to the newest request in
    /// flight, before that request's response; none in flight, only `events` sees it.
    #[tokio::test]
    async fn on_a_shared_pipe_unrelated_notifications_ride_on_the_newest_request() {
        let (events_tx, mut events) = crate::queue::upstream_events();
        let c = Correlator::new(IdMode::Remap, events_tx);
        let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
        c.dispatch(msg(log));
        assert_eq!(events.recv().await.unwrap().method(), Some("notifications/message"));
        let (_, mut older) = c
            .register(msg(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#))
            .unwrap();
        let (wire, mut newer) = c
            .register(msg(r#"{"jsonrpc":"2.0","id":"b","method":"ping"}"#))
            .unwrap();
        c.dispatch(msg(log));
        c.dispatch(msg(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
            wire.id().unwrap().as_json()
        )));
        assert_eq!(newer.recv().await.unwrap().method(), Some("notifications/message"));
        assert_eq!(newer.recv().await.unwrap().id().unwrap().as_json(), "\"b\"");
        assert!(
            futures::FutureExt::now_or_never(older.recv()).is_none(),
            "the older request got nothing"
        );
        assert_eq!(events.recv().await.unwrap().method(), Some("notifications/message"));
    }

    /// Regression (interop matrix): a 2026 listen stream through a stdio upstream never saw its
    /// acknowledgement — its frames name the listen request by our wire id, and went to the newest
    /// request (a tool call made while listening) under that id.
    #[tokio::test]
    async fn listen_frames_go_to_their_listen_request_under_the_clients_id() {
        let (events_tx, mut events) = crate::queue::upstream_events();
        let c = Correlator::new(IdMode::Remap, events_tx);
        let (listen, mut stream) = c
            .register(msg(
                r#"{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{}}"#,
            ))
            .unwrap();
        let (_, mut call) = c
            .register(msg(
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"announce"}}"#,
            ))
            .unwrap();
        let frame = |method: &str, id: &str| {
            msg(&format!(
                r#"{{"jsonrpc":"2.0","method":"{method}","params":{{"_meta":{{"{}":{id}}}}}}}"#,
                method::META_SUBSCRIPTION_ID
            ))
        };
        let wire = listen.id().unwrap().as_json().to_owned();
        c.dispatch(frame("notifications/subscriptions/acknowledged", &wire));
        c.dispatch(frame("notifications/tools/list_changed", &wire));
        c.dispatch(frame("notifications/tools/list_changed", "987654"));
        for expected in [
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed",
        ] {
            let got = stream.recv().await.unwrap().to_value().unwrap();
            assert_eq!(got["method"], expected);
            assert_eq!(
                got["params"]["_meta"][method::META_SUBSCRIPTION_ID],
                "listen-1",
                "{got}"
            );
        }
        assert!(
            futures::FutureExt::now_or_never(call.recv()).is_none(),
            "the call made while listening got none of the stream's frames"
        );
        assert!(
            futures::FutureExt::now_or_never(stream.recv()).is_none(),
            "a frame naming no request is dropped"
        );
        for _ in 0..3 {
            assert!(events.recv().await.is_some(), "the gateway's watchers see every frame");
        }
    }

    /// Two requests with one id on one pipe would share one answer: the second is refused.
    #[tokio::test]
    async fn a_second_request_with_a_pending_id_is_refused() {
        let (events_tx, _events) = crate::queue::upstream_events::<Message>();
        let c = Correlator::new(IdMode::Passthrough, events_tx);
        let _first = c
            .register(msg(r#"{"jsonrpc":"2.0","id":"\u0061","method":"ping"}"#))
            .unwrap();
        let Err(err) = c.register(msg(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#)) else {
            panic!("the same id by value must be refused");
        };
        assert!(matches!(err, UpstreamError::Refused(_)), "{err}");
        assert!(c.forget(&RequestId::from_value(&serde_json::json!("a")).unwrap()));
        assert!(c.register(msg(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#)).is_ok());
    }
}
