//! `portcullis connect` over HTTP: the fallback for a gateway that names no local socket in
//! gateway.json (a platform without one). Relays every line to the gateway's MCP endpoint.
//!
//! No policy lives here; the gateway decides. Messages are POSTed strictly in the order they
//! were read, each after the previous one's response headers arrived (the gateway sends them as
//! soon as it has dispatched the message), so a cancel can never overtake its request. Answers
//! stream back to stdout as they come. stdout carries protocol bytes only.

use std::sync::{Arc, Mutex};

use bytes::BytesMut;
use futures::StreamExt;
use portcullis_wire::codec::encode_line;
use portcullis_wire::{error_code, method, LineDecoder, Message, SseDecoder};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use portcullis_config::gateway_file::GatewayFile;
use portcullis_gateway::http::mcp::{RefusalCode, RELAY_HEADER, SESSION_HEADER};

const MAX_LINE: usize = portcullis_wire::MAX_MESSAGE;
/// After the client's end of input, how long the answers still streaming may take (the
/// gateway's default call timeout and longest hold; the gateway bounds each call itself).
const FINISH_WITHIN: std::time::Duration = std::time::Duration::from_secs(
    portcullis_config::config::DEFAULT_CALL_TIMEOUT_SECS + portcullis_config::config::DEFAULT_MAX_HOLD_SECS,
);

#[derive(Debug, thiserror::Error)]
pub(super) enum RelayError {
    #[error("the gateway at {url} is not answering: {source}")]
    Unreachable { url: String, source: reqwest::Error },
    #[error("the gateway has no server named {0:?}")]
    UnknownServer(String),
    #[error("the gateway refused the token in gateway.json (is it from another gateway?)")]
    Unauthorized,
}

struct Relay {
    client: reqwest::Client,
    url: String,
    token: String,
    relay_id: String,
    session: Mutex<Option<String>>,
    out: mpsc::UnboundedSender<Message>,
}

pub(super) async fn run<R, W>(file: &GatewayFile, server: &str, stdin: R, stdout: W) -> Result<(), RelayError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let client = reqwest::Client::builder().no_proxy().build().unwrap_or_default();
    let url = file.server_url(server);
    check_gateway(&client, &url, server, &file.token).await?;
    // Unbounded like the client's stdout it feeds: the gateway's answers come at most one per
    // request the client sent (plus the server's own messages, which the gateway's per-stream
    // queue already bounds), and a relay that blocked here would stall the client's requests.
    let (out, out_rx) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_stdout(stdout, out_rx));
    let relay = Arc::new(Relay {
        client,
        url,
        token: file.token.clone(),
        relay_id: format!("{:016x}", rand::random::<u64>()),
        session: Mutex::new(None),
        out,
    });
    let mut answers = JoinSet::new();
    relay.pump_stdin(stdin, &mut answers).await;
    // stdin ended: the answers still streaming are written before the session ends.
    let finished = tokio::time::timeout(FINISH_WITHIN, async { while answers.join_next().await.is_some() {} });
    if finished.await.is_err() {
        tracing::warn!("answers still streaming {FINISH_WITHIN:?} after the client's end of input");
    }
    answers.abort_all();
    relay.end_session().await;
    drop(relay);
    let _ = writer.await;
    Ok(())
}

/// A probe before relaying: a GET without a session tells whether the token works and the server
/// exists (an unknown one is a 404 whose body names [`RefusalCode::UnknownServer`]).
async fn check_gateway(client: &reqwest::Client, url: &str, server: &str, token: &str) -> Result<(), RelayError> {
    let response = client
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .map_err(|source| RelayError::Unreachable {
            url: url.to_owned(),
            source,
        })?;
    match response.status() {
        reqwest::StatusCode::UNAUTHORIZED => Err(RelayError::Unauthorized),
        reqwest::StatusCode::NOT_FOUND => {
            let body: serde_json::Value = response.json().await.unwrap_or_default();
            match body.get("code").map(|code| serde_json::from_value(code.clone())) {
                Some(Ok(RefusalCode::UnknownServer)) => Err(RelayError::UnknownServer(server.to_owned())),
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

impl Relay {
    async fn pump_stdin<R: AsyncRead + Unpin>(self: &Arc<Self>, mut stdin: R, answers: &mut JoinSet<()>) {
        let mut decoder = LineDecoder::new(MAX_LINE);
        let mut buf = BytesMut::with_capacity(64 * 1024);
        loop {
            loop {
                match decoder.decode(&mut buf) {
                    Ok(Some(line)) => match parse_client_line(line.clone()) {
                        Ok(msg) => self.forward(msg, answers).await,
                        Err((code, e)) => {
                            let text = format!("[portcullis] {e}");
                            let id = portcullis_wire::message::refusal_id(&line);
                            let _ = self.out.send(Message::error_response(id.as_ref(), code, &text));
                        }
                    },
                    Ok(None) => break,
                    Err(e) => {
                        let text = format!("[portcullis] {e}");
                        let _ = self
                            .out
                            .send(Message::error_response(None, error_code::PARSE_ERROR, &text));
                    }
                }
            }
            match stdin.read_buf(&mut buf).await {
                // A last line without its newline still counts.
                Ok(0) | Err(_) if !buf.is_empty() => buf.extend_from_slice(b"\n"),
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    }

    /// POSTs one message and hands its answer stream to a task in `answers`; returns once
    /// headers arrived.
    async fn forward(self: &Arc<Self>, msg: Message, answers: &mut JoinSet<()>) {
        let session = self.session.lock().ok().and_then(|s| s.clone());
        let mut request = self
            .client
            .post(&self.url)
            .bearer_auth(&self.token)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header(RELAY_HEADER, &self.relay_id)
            .body(msg.bytes().clone());
        if let Some(session) = &session {
            request = request.header(SESSION_HEADER, session);
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => return self.answer_error(&msg, &format!("[portcullis] the gateway is not answering: {e}")),
        };
        if msg.method() == Some(method::INITIALIZE) {
            if let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
                if let Ok(mut s) = self.session.lock() {
                    *s = Some(id.to_owned());
                }
                self.clone().open_event_stream(id.to_owned());
            }
        }
        let status = response.status();
        if status == reqwest::StatusCode::ACCEPTED {
            return;
        }
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let relay = self.clone();
        answers.spawn(async move {
            if is_sse {
                if !relay.copy_sse(response, msg.id()).await {
                    relay.answer_error(
                        &msg,
                        "[portcullis] the gateway ended the answer's stream without the answer",
                    );
                }
            } else {
                let body = response.bytes().await.unwrap_or_default();
                match Message::parse(body) {
                    Ok(reply) => relay.answer(&msg, reply),
                    Err(_) => relay.answer_error(&msg, &format!("[portcullis] the gateway answered HTTP {status}")),
                }
            }
        });
    }

    /// Writes the gateway's answer to `request`. A refusal of the HTTP request itself (an unknown
    /// session, a body it could not read) carries no id; the client is waiting on its request's,
    /// so it gets it.
    fn answer(&self, request: &Message, reply: Message) {
        let reply = match (reply.id(), request.id()) {
            (None, Some(id)) if reply.is_response() => reply.with_id(id).unwrap_or(reply),
            _ => reply,
        };
        let _ = self.out.send(reply);
    }

    /// Copies the messages of an SSE answer stream; whether the response with id `answers` (if
    /// any) was among them.
    async fn copy_sse(&self, response: reqwest::Response, answers: Option<&portcullis_wire::RequestId>) -> bool {
        let mut decoder = SseDecoder::new(MAX_LINE);
        let mut body = response.bytes_stream();
        let mut answered = answers.is_none();
        while let Some(Ok(chunk)) = body.next().await {
            let Ok(events) = decoder.feed(&chunk) else {
                return answered;
            };
            for event in events.into_iter().filter(portcullis_wire::SseEvent::is_message) {
                if let Ok(msg) = Message::parse(event.data.into_bytes()) {
                    answered |= msg.is_response() && msg.id() == answers;
                    let _ = self.out.send(msg);
                }
            }
        }
        answered
    }

    /// Server-initiated messages of a legacy session.
    fn open_event_stream(self: Arc<Self>, session: String) {
        tokio::spawn(async move {
            let response = self
                .client
                .get(&self.url)
                .bearer_auth(&self.token)
                .header(ACCEPT, "text/event-stream")
                .header(SESSION_HEADER, session)
                .send()
                .await;
            if let Ok(response) = response {
                if response.status().is_success() {
                    self.copy_sse(response, None).await;
                }
            }
        });
    }

    fn answer_error(&self, msg: &Message, text: &str) {
        if msg.is_request() {
            let _ = self
                .out
                .send(Message::error_response(msg.id(), error_code::INTERNAL_ERROR, text));
        } else {
            tracing::warn!("{text}");
        }
    }

    async fn end_session(&self) {
        let session = self.session.lock().ok().and_then(|s| s.clone());
        if let Some(session) = session {
            let request = self
                .client
                .delete(&self.url)
                .bearer_auth(&self.token)
                .header(SESSION_HEADER, session);
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), request.send()).await;
        }
    }
}

/// One line from the client: within the limits ([`portcullis_gateway::limits`]), then a JSON-RPC message.
fn parse_client_line(line: bytes::Bytes) -> Result<Message, (i64, String)> {
    portcullis_gateway::limits::check_client_message(&line).map_err(|e| (error_code::PARSE_ERROR, e))?;
    Message::parse(line).map_err(|e| (e.code(), e.to_string()))
}

async fn write_stdout<W: AsyncWrite + Unpin>(mut stdout: W, mut rx: mpsc::UnboundedReceiver<Message>) {
    while let Some(msg) = rx.recv().await {
        if stdout.write_all(&encode_line(msg.bytes())).await.is_err() || stdout.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relay() -> (Relay, mpsc::UnboundedReceiver<Message>) {
        let (out, rx) = mpsc::unbounded_channel();
        let relay = Relay {
            client: reqwest::Client::new(),
            url: String::new(),
            token: String::new(),
            relay_id: String::new(),
            session: Mutex::new(None),
            out,
        };
        (relay, rx)
    }

    fn call(id: u64) -> Message {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo"}}}}"#);
        Message::parse(line.into_bytes()).expect("a request")
    }

    #[test]
    fn a_refusal_without_an_id_reaches_the_client_under_its_requests_id() {
        let (relay, mut rx) = relay();
        let request = call(2);
        relay.answer(
            &request,
            Message::error_response(None, error_code::INVALID_REQUEST, "[portcullis] unknown session"),
        );
        let got = rx.try_recv().expect("an answer");
        assert_eq!(got.id(), request.id());
        assert!(std::str::from_utf8(got.bytes()).unwrap().contains("unknown session"));
    }

    #[test]
    fn an_answer_with_its_own_id_passes_as_it_came() {
        let (relay, mut rx) = relay();
        let reply = Message::response(call(3).id().unwrap(), &serde_json::json!({"content": []}));
        relay.answer(&call(3), reply.clone());
        assert_eq!(rx.try_recv().expect("an answer").bytes(), reply.bytes());
    }
}
