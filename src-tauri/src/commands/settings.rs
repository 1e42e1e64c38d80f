//! `get_settings`, `set_settings`, `get_paused`, `set_paused`, `get_autostart`, `set_autostart`.

use std::sync::Arc;

use tauri::{AppHandle, Emitter, Runtime, State};

use crate::host::Host;
use crate::ipc::{IpcError, IpcResult};
use crate::settings::{Settings, SettingsError};
use portcullis_config::autostart::AutostartError;

/// The approval timeout `portcullis.json` sets, which the settings show unless they override it.
async fn config_timeout(host: &Host) -> u64 {
    match host.running().await {
        Ok(running) => running.config_timeout_secs,
        Err(_) => portcullis_config::config::DEFAULT_APPROVAL_TIMEOUT_SECS,
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn get_settings(host: State<'_, Arc<Host>>) -> IpcResult<Settings> {
    Ok(host.settings.get(config_timeout(&host).await))
}

/// The event every window hears when the settings change (an open prompt follows the theme).
pub const SETTINGS_CHANGED: &str = "SettingsChanged";

/// Saves the settings. Notifications and theme apply at once, in every open window; a new
/// default approval timeout applies from the next start (the gateway reads it once).
#[tauri::command(rename_all = "snake_case")]
pub async fn set_settings<R: Runtime>(
    app: AppHandle<R>,
    host: State<'_, Arc<Host>>,
    settings: Settings,
) -> IpcResult<()> {
    let timeout = config_timeout(&host).await;
    host.settings.set(&settings, timeout).map_err(|e| match e {
        SettingsError::Timeout => IpcError::new("invalid_settings", e.to_string()),
        SettingsError::Write { .. } => IpcError::internal("cannot save the settings", &e),
    })?;
    host.nudge();
    if let Err(e) = app.emit(SETTINGS_CHANGED, &settings) {
        tracing::warn!(error = %e, "cannot tell the open windows that the settings changed");
    }
    Ok(())
}

/// While paused, the gateway denies every new held call at once ("Portcullis is paused").
#[tauri::command(rename_all = "snake_case")]
pub async fn set_paused(host: State<'_, Arc<Host>>, paused: bool) -> IpcResult<()> {
    host.set_paused(paused);
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn get_paused(host: State<'_, Arc<Host>>) -> IpcResult<bool> {
    Ok(host.paused())
}

/// Whether Portcullis starts at login (the app's setting, or `portcullis serve --install-autostart`).
#[tauri::command(rename_all = "snake_case")]
pub async fn get_autostart(host: State<'_, Arc<Host>>) -> IpcResult<bool> {
    host.autostart.enabled().map_err(|e| autostart_error(&e))
}

/// On: the app starts at login (replacing a `serve` entry of ours); off: nothing does.
#[tauri::command(rename_all = "snake_case")]
pub async fn set_autostart(host: State<'_, Arc<Host>>, enabled: bool) -> IpcResult<()> {
    host.autostart.set(enabled).map_err(|e| autostart_error(&e))
}

fn autostart_error(e: &AutostartError) -> IpcError {
    match e {
        AutostartError::Unsupported => IpcError::new("unsupported", e.to_string()),
        AutostartError::NotOurs { .. } | AutostartError::NoConfigDir => {
            IpcError::new("autostart_refused", e.to_string())
        }
        AutostartError::Io { .. } => IpcError::internal("cannot change start at login", e),
    }
}
