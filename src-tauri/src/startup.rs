//! Starting and stopping the hosted gateway: retried until it runs (a fixed config file, a
//! stopped `portcullis serve`), with the main window opened on the reason meanwhile; stopped
//! cleanly when the app quits.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use portcullis_config::gateway_file::GatewayFile;
use tauri::async_runtime::JoinHandle;
use tauri::{AppHandle, Manager, Runtime};
use tokio::sync::oneshot;

use crate::host::{Host, Phase, Running};
use crate::windows;

/// How often a failed start is tried again.
const RETRY: Duration = Duration::from_secs(2);
/// How long quitting waits for the gateway to drain and stop its upstreams.
const STOP_WAIT: Duration = Duration::from_secs(6);

/// The serving gateway's stop switch and task.
type Served = (oneshot::Sender<()>, JoinHandle<std::io::Result<()>>);

/// Managed state: the gateway being served, if it is.
#[derive(Default)]
pub struct Serving(Mutex<Option<Served>>);

/// Starts the gateway, trying again until it runs.
pub fn spawn<R: Runtime>(app: AppHandle<R>) {
    tauri::async_runtime::spawn(async move {
        let host = app.state::<Arc<Host>>().inner().clone();
        let mut failed_before = false;
        let mut last_error = String::new();
        loop {
            match host.start().await {
                Ok((running, listener)) => {
                    let events = running.gateway.subscribe();
                    crate::events::spawn(app.clone(), running.clone(), events);
                    let (stop, stopped) = oneshot::channel::<()>();
                    let gateway = running.gateway.clone();
                    let task = tauri::async_runtime::spawn(gateway.serve(listener, async {
                        let _ = stopped.await;
                    }));
                    *lock(&app.state::<Serving>()) = Some((stop, task));
                    tracing::info!(url = running.url, "gateway ready");
                    // Connect the server monitor now: its tool lists give the prompt each tool's
                    // title and description from the first held call, and the Servers view its
                    // state without a wait.
                    let monitor = running.gateway.clone();
                    tauri::async_runtime::spawn(async move { monitor.servers().reports(Duration::ZERO).await });
                    let broken = broken_policies(&running);
                    host.set_phase(Phase::Running(running));
                    if failed_before {
                        windows::reload_main(&app);
                    }
                    if !broken.is_empty() {
                        tracing::error!(?broken, "invalid policy files: their servers refuse every call");
                        windows::show_main(&app, Some("servers"));
                    }
                    return;
                }
                Err(e) => {
                    let message = e.to_string();
                    if message != last_error {
                        tracing::error!(code = e.code(), "{message}");
                        last_error = message;
                    }
                    host.set_phase(Phase::Failed(Arc::new(e)));
                    if !failed_before {
                        failed_before = true;
                        windows::show_main(&app, None);
                    }
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    });
}

fn lock(serving: &Serving) -> std::sync::MutexGuard<'_, Option<Served>> {
    serving.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn broken_policies(running: &Running) -> Vec<String> {
    running
        .config()
        .servers
        .keys()
        .filter(|s| running.gateway.policy_broken(s).is_some())
        .cloned()
        .collect()
}

/// Stops serving (bounded), the monitoring connections, and removes `gateway.json`.
pub fn shutdown<R: Runtime>(app: &AppHandle<R>) {
    let host = app.state::<Arc<Host>>().inner().clone();
    let serving = lock(&app.state::<Serving>()).take();
    tauri::async_runtime::block_on(async {
        if let Some((stop, task)) = serving {
            let _ = stop.send(());
            if tokio::time::timeout(STOP_WAIT, task).await.is_err() {
                tracing::warn!("the gateway did not stop in time");
            }
        }
        if let Some(running) = host.running_now() {
            running.gateway.servers().close_all().await;
        }
    });
    GatewayFile::remove_if_ours(&host.paths.data_dir);
    tracing::info!("portcullis-desktop stopped");
}
