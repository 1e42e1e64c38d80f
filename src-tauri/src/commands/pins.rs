//! `list_changed_tools`, `accept_tool`: the gateway's tool pins (`portcullis_gate::pins`) for
//! the Policies view. A tool whose server changed its definition since it was pinned has every
//! call held until a person accepts the new definition, here or with `portcullis tools accept`.

use std::sync::Arc;

use portcullis_gate::pins::{PinChange, PinError, ToolPin};
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use crate::host::Host;
use crate::ipc::{IpcError, IpcResult};

/// A pinned tool the server now describes differently.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ChangedTool {
    pub server: String,
    pub tool: String,
    /// The pinned digest (the definition calls were allowed under).
    pub digest: String,
    pub pinned_at: String,
    pub change: PinChange,
}

impl ChangedTool {
    fn from_pin(pin: ToolPin) -> Option<Self> {
        Some(Self {
            change: pin.change?,
            server: pin.server,
            tool: pin.tool,
            digest: pin.digest,
            pinned_at: pin.pinned_at,
        })
    }
}

/// The IPC error of a refused acceptance: `code` says which case the UI is in.
pub fn pin_error(e: &PinError) -> IpcError {
    let code = match e {
        PinError::UnknownTool { .. } => "unknown_tool",
        PinError::NotChanged { .. } => "tool_not_changed",
        PinError::Stale { .. } => "tool_changed_again",
        PinError::Read { .. } | PinError::Invalid { .. } | PinError::Write { .. } => "pins_write_failed",
    };
    IpcError::new(code, e.to_string())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_changed_tools(host: State<'_, Arc<Host>>) -> IpcResult<Vec<ChangedTool>> {
    let running = host.running().await?;
    Ok(running
        .gateway
        .changed_tools()
        .into_iter()
        .filter_map(ChangedTool::from_pin)
        .collect())
}

/// Trusts the changed definition the person reviewed: `digest` is its `new_digest`, so a tool
/// that changed again meanwhile is refused (`tool_changed_again`) rather than trusted unseen.
#[tauri::command(rename_all = "snake_case")]
pub async fn accept_tool(host: State<'_, Arc<Host>>, server: String, tool: String, digest: String) -> IpcResult<()> {
    let running = host.running().await?;
    if !running.gateway.has_server(&server) {
        return Err(IpcError::unknown_server(&server));
    }
    running
        .gateway
        .accept_tool(&server, &tool, Some(&digest))
        .map_err(|e| pin_error(&e))?;
    tracing::info!(server, tool, digest, "changed tool accepted from the app");
    Ok(())
}
