//! Each configured upstream's health, for people: is it running, how many tools, what did it
//! last write to stderr — the desktop app's Servers view and `GET /control/servers`.
//!
//! The gateway has no per-server connection to report on: every client session owns its own
//! upstream (a legacy stdio server serves one session). So the monitor keeps one connection per
//! server of its own, opened the first time someone asks, through the same [`Upstream`]
//! transports: `initialize`, then `tools/list` (every page, unfiltered, so a policy editor also
//! sees hidden tools). "Restart" reconnects it. The tool list is also taught to the gate's
//! catalog, so an approval prompt can show titles and descriptions before any client has listed
//! the tools.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use portcullis_config::config::ServerConfig;
use portcullis_wire::{method, Message};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{watch, Mutex as AsyncMutex};

use super::list_tools::{self, stderr_tail};
use super::{IdMode, Upstream};
use crate::gate::Gate;

/// How long a server gets to answer `initialize` and list its tools.
const HANDSHAKE: Duration = Duration::from_secs(30);

/// The monitor connection's state.
#[derive(Clone)]
pub enum Status {
    /// Not connected yet (nobody has asked).
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

/// One server's health as people see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerReport {
    pub name: String,
    #[cfg_attr(feature = "ts", ts(type = "'stdio' | 'http' | 'sse'"))]
    pub transport: &'static str,
    /// `running`, `stopped` (not connected yet) or `error`.
    #[cfg_attr(feature = "ts", ts(type = "'running' | 'stopped' | 'error'"))]
    pub state: &'static str,
    pub tool_count: Option<usize>,
    /// The server's last stderr lines, then what went wrong (`[portcullis] ...`), if anything.
    pub stderr_tail: Vec<String>,
}

pub struct Probe {
    server: String,
    config: ServerConfig,
    status: watch::Sender<Status>,
    /// One connect or restart at a time.
    connecting: AsyncMutex<()>,
}

pub struct ServerMonitor {
    gate: Arc<Gate>,
    probes: RwLock<BTreeMap<String, Arc<Probe>>>,
}

impl ServerMonitor {
    pub fn new(servers: &BTreeMap<String, ServerConfig>, gate: Arc<Gate>) -> Self {
        let probes = servers
            .iter()
            .map(|(name, config)| (name.clone(), Probe::new(name, config)))
            .collect();
        Self {
            gate,
            probes: RwLock::new(probes),
        }
    }

    pub fn get(&self, server: &str) -> Option<Arc<Probe>> {
        self.read().get(server).cloned()
    }

    /// Every server's probe, by name.
    pub fn all(&self) -> Vec<Arc<Probe>> {
        self.read().values().cloned().collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<Probe>>> {
        self.probes.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts the connection if nothing has yet; waits up to `wait` for it to settle.
    pub async fn ensure(&self, probe: &Arc<Probe>, wait: Duration) -> Status {
        if matches!(*probe.status.borrow(), Status::Stopped) {
            let (probe2, gate) = (probe.clone(), self.gate.clone());
            tokio::spawn(async move { probe2.connect(&gate).await });
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
        probe.connect(&self.gate).await;
        probe.status()
    }

    /// Every server's report, waiting up to `wait` for connections being opened.
    pub async fn reports(&self, wait: Duration) -> Vec<ServerReport> {
        let probes = self.all();
        let statuses = futures::future::join_all(probes.iter().map(|p| self.ensure(p, wait))).await;
        probes.iter().zip(statuses).map(|(p, s)| p.report(&s)).collect()
    }

    /// A server added or changed at run time: its old connection is closed, the next question
    /// opens one with `config`.
    pub async fn replace(&self, server: &str, config: &ServerConfig) {
        let old = self
            .probes
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(server.to_owned(), Probe::new(server, config));
        if let Some(old) = old {
            old.close().await;
        }
    }

    /// Stops every connection (their child processes).
    pub async fn close_all(&self) {
        futures::future::join_all(self.all().iter().map(|p| p.close())).await;
    }
}

impl Probe {
    fn new(server: &str, config: &ServerConfig) -> Arc<Self> {
        Arc::new(Self {
            server: server.to_owned(),
            config: config.clone(),
            status: watch::channel(Status::Stopped).0,
            connecting: AsyncMutex::new(()),
        })
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    pub fn transport(&self) -> &'static str {
        self.config.transport()
    }

    pub fn status(&self) -> Status {
        self.status.borrow().clone()
    }

    /// `status` as people see it.
    pub fn report(&self, status: &Status) -> ServerReport {
        let (state, tool_count, stderr_tail) = match status {
            Status::Stopped | Status::Starting => ("stopped", None, Vec::new()),
            Status::Running { upstream, tools } if upstream.is_alive() => {
                ("running", Some(tools.len()), stderr_tail(upstream))
            }
            Status::Running { upstream, tools } => {
                let mut tail = stderr_tail(upstream);
                tail.push("[portcullis] the server exited; press Restart".into());
                ("error", Some(tools.len()), tail)
            }
            Status::Failed { message, stderr_tail } => {
                let mut tail = stderr_tail.clone();
                tail.push(format!("[portcullis] {message}"));
                ("error", None, tail)
            }
        };
        ServerReport {
            name: self.server.clone(),
            transport: self.transport(),
            state,
            tool_count,
            stderr_tail,
        }
    }

    async fn close(&self) {
        let _one = self.connecting.lock().await;
        let old = self.status.send_replace(Status::Stopped);
        if let Status::Running { upstream, .. } = old {
            upstream.close().await;
        }
    }

    async fn connect(self: &Arc<Self>, gate: &Gate) {
        let _one = self.connecting.lock().await;
        if !matches!(*self.status.borrow(), Status::Stopped | Status::Failed { .. }) {
            return;
        }
        self.status.send_replace(Status::Starting);
        let (events_tx, events_rx) = crate::queue::upstream_events();
        let upstream = match Upstream::connect(&self.server, &self.config, IdMode::Remap, events_tx).await {
            Ok(u) => u,
            Err(e) => {
                self.fail(e.to_string(), Vec::new());
                return;
            }
        };
        let tools = match tokio::time::timeout(HANDSHAKE, handshake(&upstream)).await {
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
                let secs = HANDSHAKE.as_secs();
                self.fail(format!("no answer to initialize and tools/list within {secs} s"), tail);
                return;
            }
        };
        gate.learn_server_tools(&self.server, &tools);
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
        if let Ok(Ok(tools)) = tokio::time::timeout(HANDSHAKE, list_tools::list_all_pages(upstream)).await {
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

/// Answers what the server asks of this client (it declared no capabilities) and follows tool
/// list changes, until the connection ends.
async fn serve_events(probe: std::sync::Weak<Probe>, upstream: Upstream, mut events: crate::queue::Receiver<Message>) {
    while let Some(msg) = events.recv().await {
        let Some(probe) = probe.upgrade() else { return };
        if msg.method() == Some(method::TOOLS_LIST_CHANGED) {
            probe.relist(&upstream).await;
        } else {
            list_tools::answer_server_request(&upstream, &msg).await;
        }
    }
}

/// The monitor's handshake and first list, with the same code as `policy init`.
async fn handshake(upstream: &Upstream) -> Result<Vec<Value>, String> {
    list_tools::handshake(upstream, "portcullis-monitor").await?;
    list_tools::list_all_pages(upstream).await
}
