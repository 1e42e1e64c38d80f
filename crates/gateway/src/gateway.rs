//! The running gateway: its config, its sessions and upstreams, the HTTP and local-socket
//! endpoints, and the decision point ([`crate::gate::Gate`]) they share.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use portcullis_audit::AuditWriter;
use portcullis_config::config::{self, Config, ServerConfig};
use portcullis_config::gateway_file;
use rand::RngCore;
use tokio::sync::broadcast;

use crate::audit_log::AuditLog;
use crate::events::GatewayEvent;
use crate::gate::Gate;
use crate::pins::{PinError, PinStore};
use crate::policy_store::PolicyStore;
use crate::session::Session;
use crate::upstream::monitor::ServerMonitor;
use crate::{digest_key, local_socket, queue, session_caps};

mod audit_follow;
mod handle;
mod serve;
mod sessions;
#[cfg(feature = "test-support")]
mod testing;

pub use handle::Health;

pub use serve::running_gateway;

pub const AUDIT_FILE: &str = "audit.db";

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
    /// The person's side of held calls: the broker, grants, the pause and what a choice writes.
    person: crate::choose::PersonSide,
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
    /// Hot reload of the policy files, for as long as the gateway lives.
    _watch: crate::policy_store::Watch,
}

impl Gateway {
    /// Opens the audit database and loads the policies; starts nothing yet.
    pub fn open(config: Config, data_dir: &Path) -> Result<Arc<Self>, StartError> {
        Self::open_with(config, data_dir, None)
    }

    /// A data plane (`portcullis connect`): the gate for `config`'s servers in this process,
    /// asking `held` (the keeper, over its link) about the calls a person must decide.
    pub fn open_data_plane(
        config: Config,
        data_dir: &Path,
        held: Arc<dyn crate::held_calls::HeldCalls>,
    ) -> Result<Arc<Self>, StartError> {
        Self::open_with(config, data_dir, Some(held))
    }

    fn open_with(
        config: Config,
        data_dir: &Path,
        held: Option<Arc<dyn crate::held_calls::HeldCalls>>,
    ) -> Result<Arc<Self>, StartError> {
        create_private_dir(data_dir)?;
        queue::set_stream_bytes(config.limits.stream_buffer_bytes);
        let pins = PinStore::open(data_dir)?;
        let digester = digest_key::load_or_create(data_dir)?;
        // A database that cannot be written does not stop the gateway: every call is refused
        // with the reason until it can be, and it recovers without a restart.
        let writer = AuditWriter::open_fail_closed(&data_dir.join(AUDIT_FILE))?;
        // Room for a burst (a policy write settling many held calls, a flood of audited calls) while
        // a subscriber is busy; one that still falls behind gets `Lagged` and re-reads the state.
        let (events, _) = broadcast::channel(1024);
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
        let broker = crate::approval::ApprovalBroker::shared(events.clone());
        let gate = Arc::new(Gate::new(
            policies,
            AuditLog::new(writer),
            pins,
            digester,
            events.clone(),
            crate::gate::Holding {
                held: held.unwrap_or_else(|| broker.clone()),
                approval_timeout_secs: config.approval_timeout_secs,
                max_hold_secs: config.max_hold_secs,
            },
        ));
        let person = crate::choose::PersonSide::new(gate.clone(), broker);
        for (name, server) in &config.servers {
            gate.set_places(name, crate::places::of_server(server));
        }
        Ok(Arc::new(Self {
            monitor: ServerMonitor::new(&config.servers, gate.clone()),
            config: RwLock::new(Arc::new(config)),
            token: new_token(),
            gate,
            person,
            sessions: Mutex::new(HashMap::new()),
            session_caps: session_caps::SessionCaps::default(),
            stateless: tokio::sync::Mutex::new(HashMap::new()),
            events,
            stopping: tokio_util::sync::CancellationToken::new(),
            local: Mutex::new(None),
            _watch: watch,
        }))
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

    pub fn token(&self) -> &str {
        &self.token
    }

    /// Completes when the gateway begins to stop.
    pub fn stopping(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.stopping.clone().cancelled_owned()
    }

    pub(crate) fn stopping_token(&self) -> tokio_util::sync::CancellationToken {
        self.stopping.clone()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<GatewayEvent> {
        self.events.subscribe()
    }

    /// The keeper's side of held calls, which data planes ask over their keeper link.
    pub(crate) fn keeper_side(
        &self,
    ) -> (
        Arc<dyn crate::held_calls::HeldCalls>,
        crate::held_calls::link::RecordWithdrawn,
    ) {
        let gate = self.gate.clone();
        let record: crate::held_calls::link::RecordWithdrawn = Arc::new(move |approval, why| {
            let gate = gate.clone();
            Box::pin(async move { gate.record_withdrawn(approval, why).await })
        });
        (self.person.broker().clone(), record)
    }

    pub fn has_server(&self, server: &str) -> bool {
        self.config().servers.contains_key(server)
    }

    pub fn transport(&self, server: &str) -> Option<&'static str> {
        self.config().servers.get(server).map(config::ServerConfig::transport)
    }
}

fn new_token() -> String {
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
