//! The app's own connection to each upstream server, for the Servers and Policies views.
//!
//! The gateway has no per-server connection to report on: every client session owns its own
//! upstream (a legacy stdio server serves one session). So the app keeps one monitoring
//! connection per server, opened the first time a view asks, through the gateway's own
//! [`Upstream`] transports: `initialize`, then `tools/list` (every page, unfiltered, so the policy
//! editor also sees hidden tools). Its state, tool count and stderr tail are what the Servers
//! view shows; "restart" reconnects it. The tool list is also taught to the gateway's catalog, so
//! the prompt can show titles and descriptions before any client has listed the tools.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use portcullis_gateway::config::ServerConfig;
use portcullis_gateway::upstream::{IdMode, Upstream};
use portcullis_gateway::Gateway;
use portcullis_wire::{error_code, method, Message};
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch, Mutex as AsyncMutex};

/// How long a server gets to answer `initialize` and list its tools.
const HANDSHAKE: Duration = Duration::from_secs(30);
/// Most `tools/list` pages read from one server.
const MAX_PAGES: usize = 50;
const PROTOCOL_VERSION: &str = "2025-06-18";

#[derive(Clone)]
pub enum Status {
    /// Not connected yet (no view has asked).
    Stopped,
    Starting,
    Running {
        upstream: Upstream,
        tools: Arc<Vec<Value>>,
    },
    Failed {
        message: String,
        stderr_tail: Vec<String>,
    },
}

pub struct Probe {
    server: String,
    config: ServerConfig,
    status: watch::Sender<Status>,
    /// One connect or restart at a time.
    connecting: AsyncMutex<()>,
}

pub struct Probes {
    gateway: Arc<Gateway>,
    servers: BTreeMap<String, Arc<Probe>>,
}

impl Probes {
    pub fn new(gateway: Arc<Gateway>) -> Self {
        let servers = gateway
            .config()
            .servers
            .iter()
            .map(|(name, config)| {
                let probe = Probe {
                    server: name.clone(),
                    config: config.clone(),
                    status: watch::channel(Status::Stopped).0,
                    connecting: AsyncMutex::new(()),
                };
                (name.clone(), Arc::new(probe))
            })
            .collect();
        Self { gateway, servers }
    }

    pub fn get(&self, server: &str) -> Option<&Arc<Probe>> {
        self.servers.get(server)
    }

    pub fn all(&self) -> impl Iterator<Item = &Arc<Probe>> {
        self.servers.values()
    }

    /// Starts the connection if nothing has yet; waits up to `wait` for it to settle.
    pub async fn ensure(&self, probe: &Arc<Probe>, wait: Duration) -> Status {
        if matches!(*probe.status.borrow(), Status::Stopped) {
            let (probe2, gateway) = (probe.clone(), self.gateway.clone());
            tokio::spawn(async move { probe2.connect(&gateway).await });
        }
        let mut rx = probe.status.subscribe();
        let settled = async move {
            rx.wait_for(|s| !matches!(s, Status::Stopped | Status::Starting))
                .await
                .map(|s| s.clone())
        };
        match tokio::time::timeout(wait, settled).await {
            Ok(Ok(status)) => status,
            _ => probe.status(),
        }
    }

    /// Closes the connection and opens a new one; waits for the outcome.
    pub async fn restart(&self, probe: &Arc<Probe>) -> Status {
        probe.close().await;
        probe.connect(&self.gateway).await;
        probe.status()
    }

    /// Stops every connection (their child processes) before the app exits.
    pub async fn close_all(&self) {
        futures::future::join_all(self.servers.values().map(|p| p.close())).await;
    }
}

impl Probe {
    pub fn server(&self) -> &str {
        &self.server
    }

    pub fn transport(&self) -> &'static str {
        self.config.transport()
    }

    pub fn status(&self) -> Status {
        self.status.borrow().clone()
    }

    async fn close(&self) {
        let _one = self.connecting.lock().await;
        let old = self.status.send_replace(Status::Stopped);
        if let Status::Running { upstream, .. } = old {
            upstream.close().await;
        }
    }

    async fn connect(self: &Arc<Self>, gateway: &Gateway) {
        let _one = self.connecting.lock().await;
        if !matches!(*self.status.borrow(), Status::Stopped | Status::Failed { .. }) {
            return;
        }
        self.status.send_replace(Status::Starting);
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let upstream = match Upstream::connect(&self.server, &self.config, IdMode::Remap, events_tx).await {
            Ok(u) => u,
            Err(e) => {
                self.fail(e.to_string(), Vec::new());
                return;
            }
        };
        let listed = tokio::time::timeout(HANDSHAKE, handshake(&upstream)).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            Ok(Err(message)) => {
                let tail = stderr_tail(&upstream);
                upstream.close().await;
                self.fail(message, tail);
                return;
            }
            Err(_) => {
                let tail = stderr_tail(&upstream);
                upstream.close().await;
                self.fail(
                    format!(
                        "no answer to initialize and tools/list within {} s",
                        HANDSHAKE.as_secs()
                    ),
                    tail,
                );
                return;
            }
        };
        gateway.gate().catalog.learn(&self.server, &tools);
        tracing::info!(server = self.server, tools = tools.len(), "monitoring connection up");
        self.status.send_replace(Status::Running {
            upstream: upstream.clone(),
            tools: Arc::new(tools),
        });
        tokio::spawn(serve_events(Arc::downgrade(self), upstream, events_rx));
    }

    fn fail(&self, message: String, stderr_tail: Vec<String>) {
        tracing::warn!(server = self.server, "monitoring connection failed: {message}");
        self.status.send_replace(Status::Failed { message, stderr_tail });
    }

    /// Re-reads the tool list after `notifications/tools/list_changed`.
    async fn relist(&self, upstream: &Upstream) {
        if let Ok(Ok(tools)) = tokio::time::timeout(HANDSHAKE, list_tools(upstream)).await {
            self.status.send_if_modified(|s| match s {
                Status::Running { tools: t, .. } => {
                    *t = Arc::new(tools);
                    true
                }
                _ => false,
            });
        }
    }
}

/// The last lines a stdio server wrote to stderr (HTTP servers have none).
pub fn stderr_tail(upstream: &Upstream) -> Vec<String> {
    match upstream {
        Upstream::Stdio(child) => child.stderr_tail(),
        Upstream::Http(_) | Upstream::Sse(_) => Vec::new(),
    }
}

/// Answers what the server asks of this client (it declared no capabilities) and follows tool
/// list changes, until the connection ends.
async fn serve_events(probe: std::sync::Weak<Probe>, upstream: Upstream, mut events: mpsc::UnboundedReceiver<Message>) {
    while let Some(msg) = events.recv().await {
        let Some(probe) = probe.upgrade() else { return };
        if msg.method() == Some(method::TOOLS_LIST_CHANGED) {
            probe.relist(&upstream).await;
        } else if let (true, Some(id)) = (msg.is_request(), msg.id()) {
            let answer = if msg.method() == Some(method::PING) {
                Message::response(id, &json!({}))
            } else {
                Message::error_response(
                    Some(id),
                    error_code::METHOD_NOT_FOUND,
                    "the Portcullis monitor offers no client features",
                )
            };
            let _ = upstream.send(answer).await;
        }
    }
}

async fn handshake(upstream: &Upstream) -> Result<Vec<Value>, String> {
    let init = json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": { "name": "portcullis-desktop", "version": env!("CARGO_PKG_VERSION") },
    });
    call(upstream, 0, method::INITIALIZE, &init).await?;
    let initialized = Message::notification(method::INITIALIZED, &json!({}));
    upstream.send(initialized).await.map_err(|e| e.to_string())?;
    list_tools(upstream).await
}

async fn list_tools(upstream: &Upstream) -> Result<Vec<Value>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 1..=MAX_PAGES {
        let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({ "cursor": c }));
        let result = call(upstream, page as u64, method::TOOLS_LIST, &params).await?;
        if let Some(list) = result.get("tools").and_then(Value::as_array) {
            tools.extend(list.iter().cloned());
        }
        cursor = result.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    Ok(tools)
}

/// One request; its result, or the error's text.
async fn call(upstream: &Upstream, id: u64, method: &str, params: &Value) -> Result<Value, String> {
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    let msg = Message::from_value(&body).map_err(|e| e.to_string())?;
    let mut exchange = upstream.request(msg, &[]).await.map_err(|e| e.to_string())?;
    while let Some(reply) = exchange.messages.recv().await {
        if !reply.is_response() {
            continue;
        }
        let value = reply.to_value().map_err(|e| e.to_string())?;
        if let Some(error) = value.get("error") {
            let text = error.get("message").and_then(Value::as_str).unwrap_or("error");
            return Err(format!("{method} failed: {text}"));
        }
        return Ok(value.get("result").cloned().unwrap_or(Value::Null));
    }
    Err(format!("the server closed the connection before answering {method}"))
}
