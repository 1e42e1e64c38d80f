//! Starting and stopping: binding the TCP endpoint and the local socket, `gateway.json`, the
//! serve loop with its bounded drain, and finding a gateway already running.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use portcullis_config::gateway_file::GatewayFile;
use tokio::net::TcpListener;

use super::StartError;
use crate::Keeper;
use crate::{http, local_accept};
use portcullis_gate::local_socket;

/// How long open connections get to finish after a shutdown signal.
const SHUTDOWN_DRAIN: std::time::Duration = std::time::Duration::from_secs(3);

impl Keeper {
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
                    gateway.plane.gate().prune_rate_limits();
                    gateway.plane.reap_idle_sessions().await;
                }
            })
        };
        let stopping = self.plane.stopping_token();
        tokio::spawn(async move {
            shutdown.await;
            stopping.cancel();
        });
        super::audit_follow::start(&self);
        let limits = self.config().limits;
        let local = self
            .local
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .map(|listener| tokio::spawn(local_accept::serve(self.clone(), listener, self.plane.stopping_token())));
        let server = async {
            http::accept::serve(listener, app, limits, self.plane.stopping_token()).await;
            Ok(())
        };
        // Event subscribers and held calls keep connections open; give them a bounded drain.
        let drained = async {
            self.plane.stopping_token().cancelled().await;
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
        self.plane.stop_all().await;
        result
    }

    /// Stops a keeper that serves no listener (a test's): its sessions end and every upstream
    /// it started is stopped.
    pub async fn stop(&self) {
        self.plane.stop().await;
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
            config: Some(self.config().file.clone()),
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
