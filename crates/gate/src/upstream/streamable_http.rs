//! An upstream reached over Streamable HTTP, in either era.
//!
//! Legacy servers mint `Mcp-Session-Id` on the initialize reply; we echo it (and
//! `MCP-Protocol-Version`) afterwards and open the optional `GET` stream for server-initiated
//! messages. Modern (2026-07-28) requests carry their version in `_meta`; for those we set the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers from the body, which stays the source
//! of truth. `Mcp-Param-*` headers come written from the body too, in either era (the session
//! writes them from the tool's schema and the call's arguments; nothing the client sent is copied).
//! Each request's answer is JSON or an SSE stream; we report which, so the downstream can mirror it.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use futures::StreamExt;
use portcullis_wire::{error_code, method, mirror, Message, RequestId, SseDecoder};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use serde_json::Value;
use tokio::task::JoinHandle;

use super::{Exchange, Framing, UpstreamError};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const MAX_EVENT: usize = portcullis_wire::MAX_MESSAGE;

pub struct StreamableHttp {
    server: String,
    url: String,
    client: reqwest::Client,
    headers: HeaderMap,
    session: Mutex<SessionState>,
    events: crate::queue::Sender<Message>,
    get_stream: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Default, Clone)]
struct SessionState {
    id: Option<String>,
    protocol_version: Option<String>,
}

impl StreamableHttp {
    pub fn new(
        server: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
        events: crate::queue::Sender<Message>,
    ) -> Self {
        Self {
            server: server.to_owned(),
            url: url.to_owned(),
            client: http_client(),
            headers: header_map(headers),
            session: Mutex::new(SessionState::default()),
            events,
            get_stream: Mutex::new(None),
        }
    }

    pub async fn request(&self, msg: Message, param_headers: &[(String, String)]) -> Result<Exchange, UpstreamError> {
        let id = msg.id().cloned();
        // Each request has its own response stream here: ids go through as the client wrote them.
        let wire_id = id
            .clone()
            .ok_or_else(|| UpstreamError::Refused("a request without an id".into()))?;
        let is_initialize = msg.method() == Some(method::INITIALIZE);
        let response = self.post(&msg, param_headers).await?;
        if is_initialize {
            if let Some(session) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
                self.state().id = Some(session.to_owned());
            }
        }
        let (tx, messages) = crate::queue::exchange();
        let status = response.status();
        if !status.is_success() {
            let expired = status == reqwest::StatusCode::NOT_FOUND && self.state().id.is_some();
            let body = read_capped(response, MAX_EVENT).await.unwrap_or_default();
            // The upstream's JSON-RPC answer passes through as that answer, whatever status carried
            // it (a 2026 server says "no such method" as HTTP 404 with -32601); only a body that is
            // not one becomes the gateway's own error.
            let own = Message::parse(body.clone()).ok();
            if let Some(answer) = own.filter(|m| m.is_response() && m.id() == id.as_ref()) {
                let _ = tx.send(answer);
                return Ok(Exchange {
                    framing: Some(Framing::Json),
                    wire_id,
                    messages,
                    status: modern_headers(&msg).map(|_| status.as_u16()),
                });
            }
            let body = String::from_utf8_lossy(&body);
            let text = if expired {
                format!(
                    "[portcullis] upstream {:?} no longer knows this session (HTTP 404)",
                    self.server
                )
            } else {
                format!(
                    "[portcullis] upstream {:?} answered HTTP {status}: {}",
                    self.server,
                    truncate(&body, 300)
                )
            };
            let _ = tx.send(Message::error_response(id.as_ref(), error_code::INTERNAL_ERROR, &text));
            return Ok(Exchange {
                framing: Some(Framing::Json),
                wire_id,
                messages,
                status: None,
            });
        }
        let framing = if is_event_stream(response.headers()) {
            Framing::Sse
        } else {
            Framing::Json
        };
        match framing {
            Framing::Json => {
                let reply = match read_capped(response, MAX_EVENT).await {
                    Ok(body) => Message::parse(body).map_err(|e| e.to_string()),
                    Err(e) => Err(e),
                };
                let reply = reply.unwrap_or_else(|e| {
                    let text = format!("[portcullis] upstream {:?} sent an invalid response: {e}", self.server);
                    Message::error_response(id.as_ref(), error_code::INTERNAL_ERROR, &text)
                });
                if is_initialize {
                    self.after_initialize(&reply);
                }
                let _ = tx.send(reply);
            }
            Framing::Sse => {
                let ctx = StreamContext {
                    server: self.server.clone(),
                    id,
                    tx,
                };
                let stream = response.bytes_stream();
                if is_initialize {
                    // The session needs the negotiated version before anything else is sent.
                    let reply = read_sse(stream, ctx).await;
                    if let Some(reply) = reply {
                        self.after_initialize(&reply);
                    }
                } else {
                    tokio::spawn(read_sse(stream, ctx));
                }
            }
        }
        Ok(Exchange {
            framing: Some(framing),
            wire_id,
            messages,
            status: None,
        })
    }

    pub async fn send(&self, msg: Message) -> Result<(), UpstreamError> {
        let response = self.post(&msg, &[]).await?;
        if !response.status().is_success() {
            return Err(UpstreamError::Http(format!(
                "HTTP {} for a {}",
                response.status(),
                msg.method().unwrap_or("response")
            )));
        }
        Ok(())
    }

    /// Gives up on `id`. The caller has dropped the request's response stream, which is the whole
    /// of cancellation for a 2026-07-28 server; a server that went through `initialize` (legacy
    /// era) also gets `notifications/cancelled`.
    pub async fn cancel(&self, id: &RequestId, reason: &str) {
        if self.state().protocol_version.is_none() {
            return;
        }
        let cancel = Message::notification(
            method::CANCELLED,
            &serde_json::json!({ "requestId": id.to_value(), "reason": reason }),
        );
        if let Err(e) = self.send(cancel).await {
            tracing::debug!(server = self.server, error = %e, "cancel not delivered");
        }
    }

    pub async fn close(&self) {
        if let Some(task) = self.get_stream.lock().ok().and_then(|mut g| g.take()) {
            task.abort();
        }
        let state = self.state().clone();
        if let Some(session) = state.id {
            let mut request = self
                .client
                .delete(&self.url)
                .headers(self.headers.clone())
                .header(SESSION_HEADER, session);
            if let Some(version) = &state.protocol_version {
                request = request.header(VERSION_HEADER, version);
            }
            let _ = tokio::time::timeout(Duration::from_secs(2), request.send()).await;
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn post(
        &self,
        msg: &Message,
        param_headers: &[(String, String)],
    ) -> Result<reqwest::Response, UpstreamError> {
        let state = self.state().clone();
        let mut request = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json");
        if let Some(session) = &state.id {
            request = request.header(SESSION_HEADER, session);
        }
        for (name, value) in param_headers {
            request = request.header(name.as_str(), value.as_str());
        }
        if let Some(modern) = modern_headers(msg) {
            request = request.headers(modern);
        } else if let Some(version) = &state.protocol_version {
            request = request.header(VERSION_HEADER, version);
        }
        request
            .body(msg.bytes().clone())
            .send()
            .await
            .map_err(|e| UpstreamError::Http(format!("{:?} at {}: {e}", self.server, self.url)))
    }

    fn after_initialize(&self, reply: &Message) {
        let version = reply
            .to_value()
            .ok()
            .and_then(|v| v.get("result")?.get("protocolVersion")?.as_str().map(str::to_owned));
        self.state().protocol_version = version;
        if self.state().id.is_some() {
            self.open_get_stream();
        }
    }

    /// The optional standalone stream for server-initiated messages (legacy sessions only).
    fn open_get_stream(&self) {
        let state = self.state().clone();
        let mut request = self
            .client
            .get(&self.url)
            .headers(self.headers.clone())
            .header(ACCEPT, "text/event-stream");
        if let Some(session) = &state.id {
            request = request.header(SESSION_HEADER, session);
        }
        if let Some(version) = &state.protocol_version {
            request = request.header(VERSION_HEADER, version);
        }
        let events = self.events.clone();
        let server = self.server.clone();
        let task = tokio::spawn(async move {
            let response = match request.send().await {
                Ok(r) if r.status().is_success() && is_event_stream(r.headers()) => r,
                Ok(r) => {
                    tracing::debug!(server, status = %r.status(), "upstream offers no GET stream");
                    return;
                }
                Err(e) => {
                    tracing::debug!(server, error = %e, "upstream GET stream failed");
                    return;
                }
            };
            let mut decoder = SseDecoder::new(MAX_EVENT);
            let mut body = response.bytes_stream();
            while let Some(Ok(chunk)) = body.next().await {
                let Ok(decoded) = decoder.feed(&chunk) else {
                    break;
                };
                for event in decoded.into_iter().filter(portcullis_wire::SseEvent::is_message) {
                    if let Ok(msg) = Message::parse(event.data.into_bytes()) {
                        let _ = events.send(msg);
                    }
                }
            }
        });
        if let Ok(mut slot) = self.get_stream.lock() {
            *slot = Some(task);
        }
    }
}

struct StreamContext {
    server: String,
    id: Option<RequestId>,
    tx: crate::queue::Sender<Message>,
}

/// Reads one response stream until the response to `id` arrives; returns that response.
async fn read_sse<S>(mut body: S, ctx: StreamContext) -> Option<Message>
where
    S: futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin,
{
    let mut decoder = SseDecoder::new(MAX_EVENT);
    loop {
        // Nobody waits for this answer any more (client gone, call timed out): drop the stream,
        // which for a 2026-07-28 server is the cancellation.
        let chunk = tokio::select! {
            () = ctx.tx.closed() => return None,
            chunk = body.next() => chunk,
        };
        let Some(Ok(chunk)) = chunk else { break };
        let events = match decoder.feed(&chunk) {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(server = ctx.server, error = %e, "upstream SSE stream refused");
                break;
            }
        };
        for event in events.into_iter().filter(portcullis_wire::SseEvent::is_message) {
            let Ok(msg) = Message::parse(event.data.into_bytes()) else {
                continue;
            };
            let done = msg.is_response() && msg.id() == ctx.id.as_ref();
            let _ = ctx.tx.send(msg.clone());
            if done {
                return Some(msg);
            }
        }
    }
    let text = format!(
        "[portcullis] upstream {:?} closed the response stream before answering",
        ctx.server
    );
    let _ = ctx.tx.send(Message::error_response(
        ctx.id.as_ref(),
        error_code::INTERNAL_ERROR,
        &text,
    ));
    None
}

/// A response body of at most `max` bytes: a server cannot make the gateway buffer more than one
/// message's worth (the body of a longer one is not read on).
async fn read_capped(response: reqwest::Response, max: usize) -> Result<bytes::Bytes, String> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(format!("response body larger than {max} bytes; not read"));
    }
    let mut body = bytes::BytesMut::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        if body.len() + chunk.len() > max {
            return Err(format!("response body larger than {max} bytes; not read"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// 2026-07-28 routing headers, mirrored from the body.
fn modern_headers(msg: &Message) -> Option<HeaderMap> {
    let method = msg.method()?;
    let params: Value = msg.params().ok()?;
    let version = params.get("_meta")?.get(method::META_PROTOCOL_VERSION)?.as_str()?;
    let mut headers = HeaderMap::new();
    headers.insert(VERSION_HEADER, HeaderValue::from_str(version).ok()?);
    headers.insert(mirror::METHOD_HEADER, HeaderValue::from_str(method).ok()?);
    if let Some(name) = mirror::mirrored_name(method, &params) {
        // Written from the body, never copied from the client: the body is what was decided.
        if let Ok(value) = HeaderValue::from_str(&mirror::encode_header_value(name)) {
            headers.insert(mirror::NAME_HEADER, value);
        }
    }
    Some(headers)
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

pub(super) fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default()
}

pub(super) fn header_map(headers: &BTreeMap<String, String>) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        match (HeaderName::try_from(name.as_str()), HeaderValue::from_str(value)) {
            (Ok(name), Ok(value)) => {
                map.insert(name, value);
            }
            _ => tracing::warn!(header = name, "invalid upstream header in config; not sent"),
        }
    }
    map
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}
