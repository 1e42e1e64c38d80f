//! One data plane: the gate for a config's servers in this process, with its sessions and
//! upstreams. `portcullis connect` runs one for its stdio client (`local_conn::serve_stdio`); the
//! keeper runs one for its HTTP entry. Held calls are asked of whatever [`HeldCalls`] it is given:
//! the keeper's broker in the keeper, the keeper over its link in `connect`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use portcullis_audit::AuditWriter;
use portcullis_config::config::{self, Config, ServerConfig};
use tokio::sync::broadcast;

use crate::audit_log::AuditLog;
use crate::events::GatewayEvent;
use crate::gate::{Gate, Holding};
use crate::held_calls::HeldCalls;
use crate::pins::{PinError, PinStore};
use crate::policy_store::PolicyStore;
use crate::session::Session;
use crate::upstream::monitor::ServerMonitor;
use crate::{digest_key, queue, session_caps};

mod sessions;

pub const AUDIT_FILE: &str = "audit.db";

/// Why a data plane could not open.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error("cannot create data dir {path}: {source}")]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error("cannot open the audit database: {0}")]
    Audit(#[from] portcullis_audit::AuditError),
    #[error(transparent)]
    Pins(#[from] PinError),
    #[error(transparent)]
    DigestKey(#[from] digest_key::DigestKeyError),
}

/// Where a new plane's events go: the keeper's UI and control API subscribe to them.
pub fn event_channel() -> broadcast::Sender<GatewayEvent> {
    // Room for a burst (a policy write settling many held calls, a flood of audited calls) while
    // a subscriber is busy; one that still falls behind gets `Lagged` and re-reads the state.
    broadcast::channel(1024).0
}

pub struct Plane {
    /// Replaced whole when a server is added or changed at run time ([`Plane::set_server`]).
    config: RwLock<Arc<Config>>,
    gate: Arc<Gate>,
    monitor: ServerMonitor,
    sessions: Mutex<HashMap<Arc<str>, Arc<Session>>>,
    /// Slots of the legacy sessions open or opening (limits.max_sessions*).
    session_caps: session_caps::SessionCaps,
    stateless: tokio::sync::Mutex<HashMap<String, Arc<Session>>>,
    events: broadcast::Sender<GatewayEvent>,
    /// Cancelled when the plane begins to stop; long-lived streams end on it.
    stopping: tokio_util::sync::CancellationToken,
    /// Hot reload of the policy files, for as long as the plane lives.
    _watch: crate::policy_store::Watch,
}

impl Plane {
    /// Opens the audit database and loads the policies; starts nothing yet. Held calls are asked
    /// of `held`; `events` carries what the plane announces.
    pub fn open(
        config: Config,
        data_dir: &Path,
        events: broadcast::Sender<GatewayEvent>,
        held: Arc<dyn HeldCalls>,
    ) -> Result<Arc<Self>, StartError> {
        create_private_dir(data_dir)?;
        queue::set_stream_bytes(config.limits.stream_buffer_bytes);
        let pins = PinStore::open(data_dir)?;
        let digester = digest_key::load_or_create(data_dir)?;
        // A database that cannot be written does not stop the plane: every call is refused
        // with the reason until it can be, and it recovers without a restart.
        let writer = AuditWriter::open_fail_closed(&data_dir.join(AUDIT_FILE))?;
        let health_events = events.clone();
        writer.on_health_change(Box::new(move |fault| {
            let _ = health_events.send(GatewayEvent::AuditHealth {
                ok: fault.is_none(),
                condition: fault.map(|f| f.kind),
                error: fault.map(portcullis_audit::AuditFault::summary),
            });
        }));
        let policies = Arc::new(PolicyStore::load(
            &config.policies_dir,
            config.servers.keys().cloned(),
            events.clone(),
        ));
        let watch = policies.watch();
        let holding = Holding {
            held,
            approval_timeout_secs: config.approval_timeout_secs,
            max_hold_secs: config.max_hold_secs,
        };
        let gate = Arc::new(
            Gate::new(policies, AuditLog::new(writer), pins, digester, events.clone(), holding)
                .with_answer_excerpt(config.limits.answer_excerpt_bytes),
        );
        for (name, server) in &config.servers {
            gate.set_places(name, crate::places::of_server(server));
        }
        Ok(Arc::new(Self {
            monitor: ServerMonitor::new(&config.servers, gate.clone()),
            config: RwLock::new(Arc::new(config)),
            gate,
            sessions: Mutex::new(HashMap::new()),
            session_caps: session_caps::SessionCaps::default(),
            stateless: tokio::sync::Mutex::new(HashMap::new()),
            events,
            stopping: tokio_util::sync::CancellationToken::new(),
            _watch: watch,
        }))
    }

    /// The decision point this plane's sessions share.
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
        self.gate.set_places(name, crate::places::of_server(&server));
        self.gate.add_server(name);
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

    /// Completes when the plane begins to stop.
    pub fn stopping(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.stopping.clone().cancelled_owned()
    }

    pub fn stopping_token(&self) -> tokio_util::sync::CancellationToken {
        self.stopping.clone()
    }

    /// Stops a plane that serves no listener (`connect`): its sessions end and every upstream it
    /// started is stopped.
    pub async fn stop(&self) {
        self.stopping.cancel();
        self.stop_all().await;
    }

    /// Where the plane announces what happens (the keeper adds its own events).
    pub fn events(&self) -> &broadcast::Sender<GatewayEvent> {
        &self.events
    }

    pub fn subscribe(&self) -> broadcast::Receiver<GatewayEvent> {
        self.events.subscribe()
    }

    pub fn has_server(&self, server: &str) -> bool {
        self.config().servers.contains_key(server)
    }

    pub fn transport(&self, server: &str) -> Option<&'static str> {
        self.config().servers.get(server).map(config::ServerConfig::transport)
    }
}

/// A new random id, 192 bits in hex: session ids here, the keeper's token.
pub fn new_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
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
