//! The gateway hosted in this process: its start (the same config and data dir as
//! `portcullis serve`), its phase (starting, running, failed with a message for the person), and
//! the app-wide switches the commands and the tray share.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use portcullis_audit::AuditStore;
use portcullis_config::config::{Config, ConfigError};
use portcullis_keeper::ApproverGuard;
use portcullis_keeper::{Keeper, StartError};
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};

use crate::args::Paths;
use crate::ipc::{IpcError, IpcResult};
use crate::settings::{Autostart, SettingsStore};

/// How long a command waits for the gateway to finish starting.
const START_WAIT: Duration = Duration::from_secs(15);

pub struct Host {
    pub paths: Paths,
    pub settings: SettingsStore,
    /// Start at login; tests point it at a temporary config dir.
    pub autostart: Autostart,
    paused: AtomicBool,
    phase: watch::Sender<Phase>,
    /// Woken when something the tray and the prompt show may have changed.
    changed: Notify,
}

#[derive(Clone)]
pub enum Phase {
    Starting,
    Running(Arc<Running>),
    Failed(Arc<StartupError>),
}

/// A started gateway and what the commands use of it.
pub struct Running {
    pub gateway: Arc<Keeper>,
    pub audit: Arc<AuditStore>,
    pub url: String,
    /// The approval timeout `portcullis.json` sets (the settings may override it).
    pub config_timeout_secs: u64,
    /// Held for the app's life: with it, held calls wait for a person instead of being refused.
    _approver: ApproverGuard,
}

impl Running {
    pub fn config(&self) -> Arc<Config> {
        self.gateway.config()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("There is no config file at {0}. Route a client through Portcullis to create it (`portcullis clients install claude-desktop`, or cursor, claude-code, vscode), write one (see docs/configuration.md), or start Portcullis with --config FILE; it starts as soon as the file is there.")]
    NoConfig(PathBuf),
    #[error("The config file is invalid: {0}. Portcullis starts the gateway as soon as the file is fixed.")]
    Config(ConfigError),
    #[error("Another Portcullis gateway is already running for this data dir (pid {pid}, {url}), and it is not a `portcullis serve` this app can stop (or it did not stop in time). Stop it and Portcullis takes over.")]
    AlreadyRunning { pid: u32, url: String },
    #[error("The gateway could not start: {0}. Portcullis tries again every few seconds.")]
    Start(StartError),
}

impl StartupError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoConfig(_) => "no_config",
            Self::Config(_) => "invalid_config",
            Self::AlreadyRunning { .. } => "already_running",
            Self::Start(_) => "gateway_failed",
        }
    }
}

impl Host {
    pub fn new(paths: Paths) -> Self {
        let settings = SettingsStore::load(&paths.data_dir);
        Self {
            paths,
            settings,
            autostart: Autostart::new(Box::new(portcullis_config::paths::ProcessEnv)),
            paused: AtomicBool::new(false),
            phase: watch::channel(Phase::Starting).0,
            changed: Notify::new(),
        }
    }

    /// Asks the app to redraw the tray and re-check the prompt.
    pub fn nudge(&self) {
        self.changed.notify_one();
    }

    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    pub fn phase(&self) -> Phase {
        self.phase.borrow().clone()
    }

    pub fn set_phase(&self, phase: Phase) {
        self.phase.send_replace(phase);
        self.nudge();
    }

    /// The running gateway, waiting for a start in progress; the start's failure otherwise.
    pub async fn running(&self) -> IpcResult<Arc<Running>> {
        let mut rx = self.phase.subscribe();
        let settled = tokio::time::timeout(START_WAIT, rx.wait_for(|p| !matches!(p, Phase::Starting))).await;
        let phase = match settled {
            Ok(Ok(phase)) => phase.clone(),
            _ => {
                return Err(IpcError::new(
                    "starting",
                    "The gateway is still starting; try again in a moment.",
                ))
            }
        };
        match phase {
            Phase::Running(running) => Ok(running),
            Phase::Failed(e) => Err(IpcError::new(e.code(), format!("Portcullis is not running: {e}"))),
            Phase::Starting => Err(IpcError::new("starting", "The gateway is still starting.")),
        }
    }

    pub fn running_now(&self) -> Option<Arc<Running>> {
        match &*self.phase.borrow() {
            Phase::Running(r) => Some(r.clone()),
            _ => None,
        }
    }

    /// The gateway's pause switch; before it runs (or after a failed start), the switch it will
    /// start with.
    pub fn paused(&self) -> bool {
        match self.running_now() {
            Some(running) => running.gateway.paused(),
            None => self.paused.load(Ordering::Acquire),
        }
    }

    /// Pauses or resumes approvals in the gateway (which denies new held calls while paused and
    /// announces the change); remembered for a gateway that starts later.
    pub fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::Release);
        if let Some(running) = self.running_now() {
            running.gateway.set_paused(paused);
        }
        self.nudge();
    }

    /// Loads the config, checks that no other gateway serves this data dir, opens the gateway
    /// and binds its endpoint. Serving is the caller's (it owns the shutdown signal).
    pub async fn start(&self) -> Result<(Arc<Running>, TcpListener), StartupError> {
        let Paths { config, data_dir } = &self.paths;
        let mut config = match Config::load(config) {
            Ok(c) => c,
            Err(ConfigError::Read { path, source }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Err(StartupError::NoConfig(path))
            }
            Err(e) => return Err(StartupError::Config(e)),
        };
        if let Some(running) = portcullis_keeper::running_gateway(data_dir).await {
            // A `portcullis serve` hands over; anything else is reported.
            if !crate::takeover::stop_serve(data_dir, running.pid).await {
                return Err(StartupError::AlreadyRunning {
                    pid: running.pid,
                    url: running.url,
                });
            }
        }
        let config_timeout_secs = config.approval_timeout_secs;
        if let Some(secs) = self.settings.timeout_override() {
            config.approval_timeout_secs = secs;
        }
        let gateway = Keeper::open(config, data_dir).map_err(StartupError::Start)?;
        gateway.set_paused(self.paused.load(Ordering::Acquire));
        let (listener, file) = gateway.bind(data_dir).await.map_err(|e| match e {
            StartError::AlreadyRunning { pid, url } => StartupError::AlreadyRunning { pid, url },
            e => StartupError::Start(e),
        })?;
        let audit_path = data_dir.join(portcullis_gate::AUDIT_FILE);
        let audit = AuditStore::open(&audit_path)
            .map_err(|e| StartupError::Start(StartError::Plane(portcullis_gate::StartError::Audit(e))))?;
        let approver = gateway.attach_approver();
        let running = Running {
            gateway,
            audit: Arc::new(audit),
            url: file.url,
            config_timeout_secs,
            _approver: approver,
        };
        Ok((Arc::new(running), listener))
    }
}
