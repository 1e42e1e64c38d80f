//! The running keeper: the data plane of its own HTTP entry ([`Plane`]), the person's side of
//! every held call ([`PersonSide`]: the broker, grants, the pause, a person's choice), the token
//! clients present, and the local socket data planes link to.

use std::path::Path;
use std::sync::{Arc, Mutex};

use portcullis_config::config::{Config, ServerConfig};
use portcullis_config::gateway_file;
use portcullis_gate::events::GatewayEvent;
use portcullis_gate::held_calls::HeldCalls;
use portcullis_gate::upstream::monitor::ServerMonitor;
use portcullis_gate::{local_socket, Plane};
use tokio::sync::broadcast;

use crate::broker::ApprovalBroker;
use crate::choose::PersonSide;
use crate::link_serve::RecordWithdrawn;

mod audit_follow;
mod handle;
// Its server is a Python script; the Windows build's tests run under Wine without Python.
#[cfg(test)]
#[cfg(unix)]
mod read_once_tests;
mod serve;
#[cfg(feature = "test-support")]
mod testing;

pub use handle::{GateExplanation, Health};
pub use serve::running_gateway;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Plane(#[from] portcullis_gate::StartError),
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
    LocalSocket(local_socket::BindError),
}

pub struct Keeper {
    /// The gate of the keeper's own HTTP sessions, with their upstreams.
    plane: Arc<Plane>,
    /// The person's side of held calls: the broker, grants, the pause and what a choice writes.
    person: PersonSide,
    token: String,
    /// The local socket [`Keeper::bind`] made, until [`Keeper::serve`] takes it.
    local: Mutex<Option<local_socket::Listener>>,
}

impl Keeper {
    /// Opens the audit database and loads the policies; starts nothing yet.
    pub fn open(config: Config, data_dir: &Path) -> Result<Arc<Self>, StartError> {
        let events = portcullis_gate::event_channel();
        let broker = ApprovalBroker::shared(events.clone());
        let plane = Plane::open(config, data_dir, events, broker.clone())?;
        let person = PersonSide::new(plane.gate().clone(), broker);
        Ok(Arc::new(Self {
            plane,
            person,
            token: portcullis_gate::new_token(),
            local: Mutex::new(None),
        }))
    }

    /// The data plane of the keeper's HTTP entry (and of relay connections on its socket).
    pub fn plane(&self) -> &Arc<Plane> {
        &self.plane
    }

    /// The config in force (the file as loaded, with servers added or changed since).
    pub fn config(&self) -> Arc<Config> {
        self.plane.config()
    }

    /// Each upstream's health (the monitor's own connection per server).
    pub fn servers(&self) -> &ServerMonitor {
        self.plane.servers()
    }

    /// Adds or replaces a server at run time ([`Plane::set_server`]).
    pub async fn set_server(&self, name: &str, server: ServerConfig) {
        self.plane.set_server(name, server).await;
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// Completes when the keeper begins to stop.
    pub fn stopping(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.plane.stopping()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<GatewayEvent> {
        self.plane.subscribe()
    }

    pub fn has_server(&self, server: &str) -> bool {
        self.plane.has_server(server)
    }

    pub fn transport(&self, server: &str) -> Option<&'static str> {
        self.plane.transport(server)
    }

    /// The keeper's side of held calls, which data planes ask over their keeper link, and how a
    /// call whose data plane went away is recorded.
    pub(crate) fn keeper_side(&self) -> (Arc<dyn HeldCalls>, RecordWithdrawn) {
        let gate = self.plane.gate().clone();
        let record: RecordWithdrawn = Arc::new(move |approval, why| {
            let gate = gate.clone();
            Box::pin(async move { gate.record_withdrawn(approval, why).await })
        });
        (self.person.broker().clone(), record)
    }
}
