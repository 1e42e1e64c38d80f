//! Matching responses to requests on a message pipe (stdio, legacy SSE).
//!
//! Ids are scoped per sender: the server's request id 1 and the client's id 1 coexist, so only
//! *responses* are matched against our pending map; server requests go to `events`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use portcullis_wire::{error_code, method, Kind, Message, RequestId};
use serde_json::Value;

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
}

pub struct Correlator {
    pending: Mutex<HashMap<RequestId, Pending>>,
    events: crate::queue::Sender<Message>,
    ids: IdMode,
    next_id: AtomicU64,
}

impl Correlator {
    pub fn new(ids: IdMode, events: crate::queue::Sender<Message>) -> Self {
        Self {
            pending: Mutex::new(HashMap::new()),
            events,
            ids,
            next_id: AtomicU64::new(1),
        }
    }

    /// Registers a request; returns the message to write (remapped if needed) and its replies.
    pub fn register(&self, msg: Message) -> (Message, crate::queue::Receiver<Message>) {
        let (reply, rx) = crate::queue::exchange();
        let Some(id) = msg.id().cloned() else {
            drop(reply);
            return (msg, rx);
        };
        let progress_token = progress_token_of(&msg);
        let (wire_msg, key, original) = match self.ids {
            IdMode::Passthrough => (msg, id, None),
            IdMode::Remap => {
                let new_id = RequestId::number(self.next_id.fetch_add(1, Ordering::Relaxed));
                let remapped = msg.with_id(&new_id).unwrap_or(msg);
                (remapped, new_id, Some(id))
            }
        };
        self.lock().insert(
            key,
            Pending {
                reply,
                original,
                progress_token,
            },
        );
        (wire_msg, rx)
    }

    /// The id this request has on the wire (after remapping), for cancellation.
    pub fn wire_id(&self, client_id: &RequestId) -> Option<RequestId> {
        let pending = self.lock();
        pending
            .iter()
            .find(|(k, p)| p.original.as_ref().unwrap_or(k) == client_id)
            .map(|(k, _)| k.clone())
    }

    pub fn forget(&self, wire_id: &RequestId) {
        self.lock().remove(wire_id);
    }

    /// Routes one message read from the upstream.
    pub fn dispatch(&self, msg: Message) {
        match msg.kind() {
            Kind::Response { id: Some(id), .. } => {
                let pending = self.lock().remove(id);
                match pending {
                    Some(p) => {
                        let msg = match &p.original {
                            Some(original) => msg.with_id(original).unwrap_or(msg),
                            None => msg,
                        };
                        let _ = p.reply.send(msg);
                    }
                    None => {
                        tracing::debug!(%id, "response to no pending request (late after a cancel?)")
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
            _ => {
                let _ = self.events.send(msg);
            }
        }
    }

    /// Answers one pending request (by its wire id) with an error.
    pub fn fail(&self, wire_id: &RequestId, reason: &str) {
        let Some(p) = self.lock().remove(wire_id) else {
            return;
        };
        let id = p.original.unwrap_or_else(|| wire_id.clone());
        let _ = p
            .reply
            .send(Message::error_response(Some(&id), error_code::INTERNAL_ERROR, reason));
    }

    /// The upstream is gone: answer everything still pending with an error.
    pub fn fail_all(&self, reason: &str) {
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

/// `params._meta.progressToken` of a request, or `params.progressToken` of a progress notification,
/// as JSON text.
fn progress_token_of(msg: &Message) -> Option<String> {
    let value = msg.params::<Value>().ok()?;
    let token = value
        .get("progressToken")
        .or_else(|| value.get("_meta")?.get("progressToken"))?;
    Some(token.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str) -> Message {
        Message::parse(text.to_owned()).unwrap()
    }

    #[tokio::test]
    async fn responses_route_to_their_request_and_server_requests_to_events() {
        let (events_tx, mut events) = crate::queue::upstream_events();
        let c = Correlator::new(IdMode::Passthrough, events_tx);
        let (_, mut rx) = c.register(msg(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p"}}}"#,
        ));
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
        let (wire, mut rx) = c.register(msg(r#"{"jsonrpc":"2.0","id":"client-7","method":"ping"}"#));
        let wire_id = wire.id().unwrap().clone();
        assert_ne!(wire_id.as_json(), "\"client-7\"");
        assert_eq!(
            c.wire_id(&RequestId::from_value(&serde_json::json!("client-7")).unwrap()),
            Some(wire_id.clone())
        );
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
        let (_, mut rx) = c.register(msg(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#));
        c.fail_all("upstream exited");
        let reply = rx.recv().await.unwrap();
        assert!(matches!(reply.kind(), Kind::Response { is_error: true, .. }));
        assert!(String::from_utf8_lossy(reply.bytes()).contains("upstream exited"));
    }
}
