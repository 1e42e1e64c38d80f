//! The deprecated HTTP+SSE transport: `GET` the SSE URL, wait for the `endpoint` event, then POST
//! each message to that endpoint; every response arrives on the one SSE stream.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use portcullis_wire::{method, Message, RequestId, SseDecoder};
use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::correlator::{Correlator, IdMode};
use super::streamable_http::{header_map, http_client};
use super::{Exchange, UpstreamError};

const ENDPOINT_WAIT: Duration = Duration::from_secs(10);

pub struct LegacySse {
    server: String,
    endpoint: String,
    client: reqwest::Client,
    headers: HeaderMap,
    correlator: Arc<Correlator>,
    alive: Arc<AtomicBool>,
    reader: JoinHandle<()>,
}

impl LegacySse {
    pub async fn connect(
        server: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
        events: crate::queue::Sender<Message>,
    ) -> Result<Self, UpstreamError> {
        let client = http_client();
        let headers = header_map(headers);
        let response = client
            .get(url)
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| UpstreamError::Http(format!("{server:?} at {url}: {e}")))?;
        if !response.status().is_success() {
            return Err(UpstreamError::Http(format!(
                "{server:?} at {url}: HTTP {}",
                response.status()
            )));
        }
        let base = response.url().clone();
        let correlator = Arc::new(Correlator::new(IdMode::Passthrough, events));
        let alive = Arc::new(AtomicBool::new(true));
        let (endpoint_tx, endpoint_rx) = oneshot::channel();
        let reader = tokio::spawn(read_stream(
            server.to_owned(),
            response.bytes_stream(),
            correlator.clone(),
            alive.clone(),
            endpoint_tx,
        ));
        let endpoint = match tokio::time::timeout(ENDPOINT_WAIT, endpoint_rx).await {
            Ok(Ok(path)) => base
                .join(&path)
                .map_err(|e| UpstreamError::Http(format!("bad endpoint {path:?}: {e}")))?,
            _ => {
                reader.abort();
                return Err(UpstreamError::Http(format!(
                    "{server:?} at {url}: no endpoint event within {ENDPOINT_WAIT:?}"
                )));
            }
        };
        Ok(Self {
            server: server.to_owned(),
            endpoint: endpoint.to_string(),
            client,
            headers,
            correlator,
            alive,
            reader,
        })
    }

    pub async fn request(&self, msg: Message) -> Result<Exchange, UpstreamError> {
        let (wire_msg, messages) = self.correlator.register(msg)?;
        let wire_id = wire_msg.id().cloned().unwrap_or_else(|| RequestId::number(0));
        if let Err(e) = self.post(&wire_msg).await {
            self.correlator.forget(&wire_id);
            return Err(e);
        }
        Ok(Exchange {
            framing: None,
            wire_id,
            messages,
            status: None,
        })
    }

    pub async fn send(&self, msg: Message) -> Result<(), UpstreamError> {
        self.post(&msg).await
    }

    /// Stops waiting for the request sent as `id`; the server is not told.
    pub fn forget(&self, id: &RequestId) {
        self.correlator.forget(id);
    }

    pub async fn cancel(&self, id: &RequestId, reason: &str) {
        if !self.correlator.forget(id) {
            return;
        }
        let cancel = Message::notification(
            method::CANCELLED,
            &serde_json::json!({ "requestId": id.to_value(), "reason": reason }),
        );
        let _ = self.post(&cancel).await;
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    pub fn close(&self) {
        self.reader.abort();
        self.alive.store(false, Ordering::Release);
    }

    async fn post(&self, msg: &Message) -> Result<(), UpstreamError> {
        if !self.is_alive() {
            return Err(UpstreamError::Gone(self.server.clone()));
        }
        let response = self
            .client
            .post(&self.endpoint)
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(msg.bytes().clone())
            .send()
            .await
            .map_err(|e| UpstreamError::Http(format!("{:?}: {e}", self.server)))?;
        if !response.status().is_success() {
            return Err(UpstreamError::Http(format!(
                "{:?}: HTTP {}",
                self.server,
                response.status()
            )));
        }
        Ok(())
    }
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

async fn read_stream<S>(
    server: String,
    mut body: S,
    correlator: Arc<Correlator>,
    alive: Arc<AtomicBool>,
    endpoint: oneshot::Sender<String>,
) where
    S: futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin,
{
    let mut endpoint = Some(endpoint);
    let mut decoder = SseDecoder::new(16 * 1024 * 1024);
    while let Some(Ok(chunk)) = body.next().await {
        let Ok(events) = decoder.feed(&chunk) else {
            break;
        };
        for event in events {
            if event.event.as_deref() == Some("endpoint") {
                if let Some(tx) = endpoint.take() {
                    let _ = tx.send(event.data);
                }
            } else if event.is_message() {
                match Message::parse(event.data.into_bytes()) {
                    Ok(msg) => correlator.dispatch(msg),
                    Err(e) => {
                        tracing::warn!(server, error = %e, "invalid message on upstream SSE stream");
                    }
                }
            }
        }
    }
    alive.store(false, Ordering::Release);
    correlator.fail_all(&format!(
        "[portcullis] upstream {server:?} closed its SSE stream before answering"
    ));
}
