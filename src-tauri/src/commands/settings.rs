//! `get_settings`, `set_settings`, `get_paused`, `set_paused`.

use std::sync::Arc;

use tauri::State;

use crate::host::Host;
use crate::ipc::{IpcError, IpcResult};
use crate::settings::{Settings, SettingsError};

/// The approval timeout `portcullis.json` sets, which the settings show unless they override it.
async fn config_timeout(host: &Host) -> u64 {
    match host.running().await {
        Ok(running) => running.config_timeout_secs,
        Err(_) => portcullis_gateway::config::DEFAULT_APPROVAL_TIMEOUT_SECS,
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn get_settings(host: State<'_, Arc<Host>>) -> IpcResult<Settings> {
    Ok(host.settings.get(config_timeout(&host).await))
}

/// Saves the settings. Notifications and theme apply at once; a new default approval timeout
/// applies from the next start (the gateway reads it once).
#[tauri::command(rename_all = "snake_case")]
pub async fn set_settings(host: State<'_, Arc<Host>>, settings: Settings) -> IpcResult<()> {
    let timeout = config_timeout(&host).await;
    host.settings.set(&settings, timeout).map_err(|e| match e {
        SettingsError::Timeout => IpcError::new("invalid_settings", e.to_string()),
        SettingsError::Write { .. } => IpcError::internal("cannot save the settings", &e),
    })?;
    host.nudge();
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
