//! The Portcullis gateway: an MCP proxy that decides every `tools/call` by policy.
//!
//! Follow one call through the files:
//! 1. [`http`] — the loopback endpoint checks Host, Origin and token, parses the body
//!    ([`portcullis_wire::Message`]) and finds the [`session::Session`]; or [`local_conn`] — a
//!    `portcullis connect` connection on the local socket ([`local_socket`]: the platform part),
//!    which checks the hello's token and drives the same session API, one message per line;
//! 2. [`session`] — `tools/call` goes to the [`gate`], everything else straight on;
//! 3. [`gate`] — policy ([`policy_store`]) → rate limit ([`rate_limit`]) → changed tool
//!    ([`pins`]) → approval ([`approval`]) → audit row committed ([`audit_log`]) → forward or refuse;
//! 4. [`upstream`] — the child process / Streamable HTTP / legacy SSE connection; the answer
//!    flows back through the session, which completes the audit row.
//!
//! Invariants: nothing but `tools/call` and `tools/list` is inspected or changed; a call is
//! forwarded only after its decision row is committed; when in doubt (no policy, no audit, no
//! approver) a call is refused with a `[portcullis]` tool error.

pub mod approval;
pub mod audit_log;
pub mod digest_key;
pub mod events;
pub mod gate;
pub mod http;
pub mod limits;
pub mod listed_tool;
pub mod local_conn;
pub mod local_socket;
pub mod pins;
pub mod policy_store;
pub mod queue;
pub mod rate_limit;
pub mod risk;
pub mod session;
pub mod session_caps;
pub mod starter_policy;
pub mod tool_catalog;
pub mod tools_filter;
pub mod upstream;

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use portcullis_audit::AuditWriter;
use portcullis_config::config::{self, Config, ServerConfig};
use portcullis_config::gateway_file::{self, GatewayFile};
use rand::RngCore;
use tokio::net::TcpListener;
use tokio::sync::broadcast;

use crate::approval::ApprovalBroker;
use crate::audit_log::AuditLog;
use crate::events::GatewayEvent;
use crate::gate::Gate;
use crate::pins::{PinError, PinStore, ToolPin};
use crate::policy_store::PolicyStore;
use crate::rate_limit::RateLimits;
use crate::upstream::monitor::ServerMonitor;
use crate::session::Session;
use crate::tool_catalog::ToolCatalog;
use crate::upstream::{IdMode, Upstream, UpstreamError};

pub const AUDIT_FILE: &str = "audit.db";

/// A session with no request and no open stream for this long is ended.
const SESSION_IDLE_MS: i64 = 30 * 60 * 1000;

/// How long open connections get to finish after a shutdown signal.
const SHUTDOWN_DRAIN: std::time::Duration = std::time::Duration::from_secs(3);

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error("cannot create data dir {path}: {source}")]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error("cannot open the audit database: {0}")]
    Audit(#[from] portcullis_audit::AuditError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("a gateway is already running (pid {pid}, {url}); stop it first")]
    AlreadyRunning { pid: u32, url: String },
    #[error(transparent)]
    GatewayFile(#[from] gateway_file::GatewayFileError),
    #[error(transparent)]
    Pins(#[from] PinError),
    #[error(transparent)]
    DigestKey(#[from] digest_key::DigestKeyError),
    #[error(transparent)]
    LocalSocket(local_socket::BindError),
}

pub struct Gateway {
    /// Replaced whole when a server is added or changed at run time ([`Gateway::set_server`]).
    config: RwLock<Arc<Config>>,
    token: String,
    gate: Arc<Gate>,
    monitor: ServerMonitor,
    sessions: Mutex<HashMap<Arc<str>, Arc<Session>>>,
    /// Slots of the legacy sessions open or opening (limits.max_sessions*).
    session_caps: session_caps::SessionCaps,
    stateless: tokio::sync::Mutex<HashMap<String, Arc<Session>>>,
    events: broadcast::Sender<GatewayEvent>,
    /// Cancelled when the gateway begins to stop; long-lived streams end on it.
    stopping: tokio_util::sync::CancellationToken,
    /// The local socket [`Gateway::bind`] made, until [`Gateway::serve`] takes it.
    local: Mutex<Option<local_socket::Listener>>,
    _watcher: Option<notify::RecommendedWatcher>,
}

impl Gateway {
    /// Opens the audit database and loads the policies; starts nothing yet.
    pub fn open(config: Config, data_dir: &Path) -> Result<Arc<Self>, StartError> {
        create_private_dir(data_dir)?;
        queue::set_stream_bytes(config.limits.stream_buffer_bytes);
        let pins = PinStore::open(data_dir)?;
        let digester = digest_key::load_or_create(data_dir)?;
        // A database that cannot be written does not stop the gateway: every call is refused
        // with the reason until it can be, and it recovers without a restart.
        let writer = AuditWriter::open_fail_closed(&data_dir.join(AUDIT_FILE))?;
        let (events, _) = broadcast::channel(1024);
        let health_events = events.clone();
        writer.on_health_change(Box::new(move |fault| {
            let _ = health_events.send(GatewayEvent::AuditHealth {
                ok: fault.is_none(),
                condition: fault.map(|f| f.kind.as_str().to_owned()),
                error: fault.map(portcullis_audit::AuditFault::summary),
            });
        }));
        let policies = Arc::new(PolicyStore::load(
            &config.policies_dir,
            config.servers.keys().cloned(),
            events.clone(),
        ));
        let watcher = policies.watch();
        let gate = Arc::new(Gate {
            policies,
            rate_limits: RateLimits::default(),
            audit: AuditLog::new(writer),
            approvals: Arc::new(ApprovalBroker::new(events.clone())),
            catalog: ToolCatalog::default(),
            pins,
            events: events.clone(),
            approval_timeout_secs: config.approval_timeout_secs,
            max_hold_secs: config.max_hold_secs,
            digester,
        });
        Ok(Arc::new(Self {
            monitor: ServerMonitor::new(&config.servers, gate.clone()),
            config: RwLock::new(Arc::new(config)),
            token: new_token(),
            gate,
            sessions: Mutex::new(HashMap::new()),
            session_caps: session_caps::SessionCaps::default(),
            stateless: tokio::sync::Mutex::new(HashMap::new()),
            events,
            stopping: tokio_util::sync::CancellationToken::new(),
            local: Mutex::new(None),
            _watcher: watcher,
        }))
    }

    /// The decision point: policies, approvals, audit (the desktop app uses it in-process).
    pub fn gate(&self) -> &Arc<Gate> {
        &self.gate
    }

    /// The config in force (the file as loaded, with servers added or changed since).
    pub fn config(&self) -> Arc<Config> {
        self.config
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Each upstream's health (the monitor's own connection per server).
    pub fn servers(&self) -> &ServerMonitor {
        &self.monitor
    }

    /// Adds or replaces a server at run time (the config file was edited): new sessions and
    /// stateless calls use `server` from now on, its policy file is loaded, and its monitor
    /// connection is reopened. Sessions already open keep their upstream until they end.
    pub async fn set_server(&self, name: &str, server: ServerConfig) {
        {
            let mut config = self.config.write().unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut next = Config::clone(&config);
            next.servers.insert(name.to_owned(), server.clone());
            *config = Arc::new(next);
        }
        self.gate.policies.add_server(name);
        if let Some(shared) = self.stateless.lock().await.remove(name) {
            shared.close().await;
        }
        self.monitor.replace(name, &server).await;
        tracing::info!(
            server = name,
            transport = server.transport(),
            "server configured at run time"
        );
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// Completes when the gateway begins to stop.
    pub fn stopping(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.stopping.clone().cancelled_owned()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<GatewayEvent> {
        self.events.subscribe()
    }

    /// Every pinned tool, with its pending change if the server changed it (control API, desktop).
    pub fn tool_pins(&self) -> Vec<ToolPin> {
        self.gate.pins.list()
    }

    /// The pinned tools whose servers changed them; their calls are held until accepted.
    pub fn changed_tools(&self) -> Vec<ToolPin> {
        self.gate.pins.changed()
    }

    /// Trusts the changed definition of `tool`; with `digest`, only if that is still the change
    /// the person reviewed (`PinChange::new_digest`).
    pub fn accept_tool(&self, server: &str, tool: &str, digest: Option<&str>) -> Result<ToolPin, PinError> {
        self.gate.pins.accept(server, tool, digest)
    }

    pub fn has_server(&self, server: &str) -> bool {
        self.config().servers.contains_key(server)
    }

    pub fn transport(&self, server: &str) -> Option<&'static str> {
        self.config().servers.get(server).map(config::ServerConfig::transport)
    }

    /// Serves HTTP on `listener` until `shutdown` completes, then stops every upstream.
    pub async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        raise_fd_limit();
        let app = http::router(self.clone());
        let pruner = {
            let gateway = self.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
                loop {
                    tick.tick().await;
                    gateway.gate.rate_limits.prune();
                    gateway.reap_idle_sessions().await;
                }
            })
        };
        let stopping = self.stopping.clone();
        tokio::spawn(async move {
            shutdown.await;
            stopping.cancel();
        });
        let limits = self.config().limits;
        let local = self
            .local
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .map(|listener| tokio::spawn(local_conn::serve(self.clone(), listener, self.stopping.clone())));
        let server = async {
            http::accept::serve(listener, app, limits, self.stopping.clone()).await;
            Ok(())
        };
        // Event subscribers and held calls keep connections open; give them a bounded drain.
        let drained = async {
            self.stopping.cancelled().await;
            tokio::time::sleep(SHUTDOWN_DRAIN).await;
            tracing::warn!("connections still open after {SHUTDOWN_DRAIN:?}; closing them");
            Ok(())
        };
        let result = tokio::select! {
            r = server => r,
            r = drained => r,
        };
        pruner.abort();
        if let Some(local) = local {
            // Its connections end on `stopping` at once; bounded all the same.
            let _ = tokio::time::timeout(SHUTDOWN_DRAIN, local).await;
        }
        self.stop_all().await;
        result
    }

    /// Binds the configured address, writes `gateway.json`, returns the listener and its URL.
    pub async fn bind(&self, data_dir: &Path) -> Result<(TcpListener, GatewayFile), StartError> {
        if let Some(running) = running_gateway(data_dir).await {
            return Err(StartError::AlreadyRunning {
                pid: running.pid,
                url: running.url,
            });
        }
        let addr = self.config().listen;
        if !addr.ip().is_loopback() {
            // Only with "allow_remote": true (the config refuses it otherwise). Say so loudly.
            tracing::warn!(
                "LISTENING ON {addr}, NOT LOOPBACK (\"allow_remote\": true): anyone who can reach this \
                 address and holds the token can call every configured server"
            );
        }
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Listen { addr, source })?;
        let local = listener
            .local_addr()
            .map_err(|source| StartError::Listen { addr, source })?;
        let socket = self.bind_local(data_dir)?;
        let file = GatewayFile {
            url: format!("http://{local}"),
            token: self.token.clone(),
            pid: std::process::id(),
            socket,
        };
        file.write(data_dir)?;
        Ok((listener, file))
    }

    /// Makes the local socket for `portcullis connect`. Something at its path that is not a stale
    /// socket of ours stops the start; a platform without local sockets (or a path too long for
    /// one) leaves `connect` on HTTP, with a warning.
    fn bind_local(&self, data_dir: &Path) -> Result<Option<PathBuf>, StartError> {
        let path = data_dir.join(local_socket::SOCKET_FILE);
        match local_socket::Listener::bind(&path) {
            Ok(listener) => {
                *self.local.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(listener);
                Ok(Some(path))
            }
            Err(e @ (local_socket::BindError::NotOurs { .. } | local_socket::BindError::InUse { .. })) => {
                Err(StartError::LocalSocket(e))
            }
            Err(e) => {
                tracing::warn!("{e}; `portcullis connect` will relay over HTTP");
                Ok(None)
            }
        }
    }

    pub fn session(&self, server: &str, id: &str) -> Option<Arc<Session>> {
        let sessions = self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let session = sessions.get(id).filter(|s| &*s.server == server).cloned();
        if let Some(s) = &session {
            s.touch();
        }
        session
    }

    /// Ends sessions whose clients vanished without a `DELETE` (a killed client), so their
    /// upstream children do not pile up.
    async fn reap_idle_sessions(&self) {
        let now = gate::now_ms();
        let idle: Vec<Arc<str>> = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .filter(|s| s.is_abandoned(now, SESSION_IDLE_MS))
            .map(|s| s.id.clone())
            .collect();
        for id in idle {
            tracing::info!(session = %id, "ending idle session");
            self.end_session(&id).await;
        }
    }

    /// A new legacy session with its own upstream connection, if the session limits allow one.
    pub async fn open_session(&self, server: &str) -> Result<Arc<Session>, UpstreamError> {
        let limits = self.config().limits;
        if let Err(why) = self.session_caps.take(server, &limits) {
            tracing::warn!(server, "session refused: {why}");
            return Err(UpstreamError::Full(why));
        }
        let id: Arc<str> = Arc::from(new_token());
        let session = match self.connect(server, id.clone(), false, IdMode::Passthrough).await {
            Ok(session) => session,
            Err(e) => {
                self.session_caps.release(server);
                return Err(e);
            }
        };
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, session.clone());
        tracing::info!(server, session = %session.id, "session opened");
        Ok(session)
    }

    /// The shared connection for stateless requests; restarted if it died.
    pub async fn stateless_session(&self, server: &str) -> Result<Arc<Session>, UpstreamError> {
        let mut shared = self.stateless.lock().await;
        if let Some(session) = shared.get(server).filter(|s| s.is_alive()) {
            return Ok(session.clone());
        }
        let id: Arc<str> = Arc::from(format!("stateless:{server}"));
        let session = self.connect(server, id, true, IdMode::Remap).await?;
        shared.insert(server.to_owned(), session.clone());
        Ok(session)
    }

    async fn connect(
        &self,
        server: &str,
        id: Arc<str>,
        stateless: bool,
        ids: IdMode,
    ) -> Result<Arc<Session>, UpstreamError> {
        let config = self
            .config()
            .servers
            .get(server)
            .cloned()
            .ok_or_else(|| UpstreamError::Gone(server.to_owned()))?;
        let (events_tx, events_rx) = queue::upstream_events();
        let upstream = Upstream::connect(server, &config, ids, events_tx).await?;
        Ok(Session::new(
            id,
            Arc::from(server),
            stateless,
            upstream,
            self.gate.clone(),
            events_rx,
            self.config().call_timeout(server),
        ))
    }

    pub async fn end_session(&self, id: &str) {
        let session = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id);
        if let Some(session) = session {
            self.session_caps.release(&session.server);
            tracing::info!(server = %session.server, session = id, "session ended");
            session.close().await;
        }
    }

    async fn stop_all(&self) {
        let sessions: Vec<_> = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain()
            .map(|(_, s)| s)
            .collect();
        let shared: Vec<_> = self.stateless.lock().await.drain().map(|(_, s)| s).collect();
        let stops = sessions.iter().chain(shared.iter()).map(|s| s.close());
        futures::future::join_all(stops).await;
        self.monitor.close_all().await;
    }
}

/// A gateway already answering from this data dir, if any.
pub async fn running_gateway(data_dir: &Path) -> Option<GatewayFile> {
    let file = GatewayFile::read(data_dir).ok()?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(std::time::Duration::from_secs(2))
        .build()
        .ok()?;
    let response = client
        .get(format!("{}/health", file.url))
        .bearer_auth(&file.token)
        .send()
        .await
        .ok()?;
    response.status().is_success().then_some(file)
}

fn new_token() -> String {
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn create_private_dir(dir: &Path) -> Result<(), StartError> {
    let err = |source| StartError::DataDir {
        path: dir.to_owned(),
        source,
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(err)
}

/// Every held call and open stream is a socket, and each legacy stdio session a child with three
/// pipes: the common soft limit of 1024 descriptors would cap the gateway at a few hundred
/// concurrent calls. Raise the soft limit to the hard one (bounded), as servers usually do.
fn raise_fd_limit() {
    #[cfg(unix)]
    {
        use nix::sys::resource::{getrlimit, setrlimit, Resource};
        const WANTED: u64 = 65_536;
        let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
            return;
        };
        let target = hard.min(WANTED);
        if soft < target {
            match setrlimit(Resource::RLIMIT_NOFILE, target, hard) {
                Ok(()) => tracing::debug!(from = soft, to = target, "raised the open-file limit"),
                Err(e) => tracing::warn!(soft, error = %e, "cannot raise the open-file limit"),
            }
        }
    }
}
