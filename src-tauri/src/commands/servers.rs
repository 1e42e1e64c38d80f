//! `list_servers`, `restart_server`, `list_tools`: each upstream as the gateway's server monitor
//! sees it ([`portcullis_gate::upstream::monitor`]) and the health of its policy.

use std::sync::Arc;
use std::time::Duration;

use portcullis_policy::{guess, ToolClass};
use serde::Serialize;
use serde_json::Value;
use tauri::State;
use ts_rs::TS;

use crate::host::{Host, Running};
use crate::ipc::{IpcError, IpcResult};
use portcullis_config::config::edit::{self as server_config, EntryProblem, ServerEntry};
use portcullis_gate::held_calls::LiveSession;
use portcullis_gate::policy_store::PolicySource;
use portcullis_gate::upstream::monitor::{ServerReport, Status};

/// How long the server list waits for connections being opened; later polls show them.
const LIST_WAIT: Duration = Duration::from_secs(3);
/// How long the tool list waits for a server to start (npx may download first).
const TOOLS_WAIT: Duration = Duration::from_secs(30);

/// A server's health (the gateway's report) and its policy's.
#[derive(Debug, Serialize, TS)]
pub struct ServerStatus {
    #[serde(flatten)]
    #[ts(flatten)]
    pub server: ServerReport,
    pub policy: PolicyHealth,
    /// The clients connected to it now, oldest first: through `portcullis connect` (each a
    /// process of its own, announced over its keeper link) or this app's HTTP entry.
    pub sessions: Vec<LiveSession>,
}

#[derive(Debug, Serialize, TS)]
pub struct PolicyHealth {
    /// `ok`, `missing` (every call asks a person) or `invalid`.
    #[ts(type = "'ok' | 'missing' | 'invalid'")]
    pub state: &'static str,
    pub problems: Vec<String>,
}

/// One tool as its server lists it, with the class Portcullis guesses: a row of the Policies view.
#[derive(Debug, Serialize, TS)]
pub struct ServerTool {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    #[ts(type = "Record<string, unknown> | null")]
    pub annotations: Option<Value>,
    /// The tool's `inputSchema` as listed (the policy editor offers its properties as the
    /// arguments a rule's condition can read).
    #[ts(type = "Record<string, unknown> | null")]
    pub input_schema: Option<Value>,
    pub risk: ToolClass,
}

/// The policy in force for `server`, as the gateway holds it: when the file on disk is not
/// what is enforced, the problems say why and what is enforced instead.
fn policy_health(running: &Running, server: &str) -> PolicyHealth {
    let Some(state) = running.gateway.policy_state(server) else {
        return PolicyHealth {
            state: "missing",
            problems: Vec::new(),
        };
    };
    let state_problems = state.problems;
    let (state, consequence) = match state.source {
        PolicySource::File => ("ok", None),
        PolicySource::NoFile => ("missing", None),
        PolicySource::LastGood => (
            "invalid",
            Some("The file on disk is not in force: the last valid version stays in force until this is fixed."),
        ),
        PolicySource::None => (
            "invalid",
            Some("No valid version was ever loaded: every call of this server is refused until the file is fixed."),
        ),
    };
    let mut problems = state_problems;
    problems.extend(consequence.map(str::to_owned));
    PolicyHealth { state, problems }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_servers(host: State<'_, Arc<Host>>) -> IpcResult<Vec<ServerStatus>> {
    let running = host.running().await?;
    let reports = running.gateway.servers().reports(LIST_WAIT).await;
    let live = running.gateway.live_sessions();
    Ok(reports
        .into_iter()
        .map(|server| ServerStatus {
            policy: policy_health(&running, &server.name),
            sessions: live.iter().filter(|s| s.server == server.name).cloned().collect(),
            server,
        })
        .collect())
}

/// Reconnects the gateway's monitor connection. Client sessions keep theirs: each owns its
/// upstream, and a new session always starts a fresh one.
#[tauri::command(rename_all = "snake_case")]
pub async fn restart_server(host: State<'_, Arc<Host>>, server: String) -> IpcResult<()> {
    let running = host.running().await?;
    let monitor = running.gateway.servers();
    let probe = monitor.get(&server).ok_or_else(|| IpcError::unknown_server(&server))?;
    match monitor.restart(&probe).await {
        Status::Failed { message, .. } => Err(IpcError::new(
            "server_failed",
            format!("{server} did not start: {message}"),
        )),
        _ => Ok(()),
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_tools(host: State<'_, Arc<Host>>, server: String) -> IpcResult<Vec<ServerTool>> {
    let running = host.running().await?;
    let monitor = running.gateway.servers();
    let probe = monitor.get(&server).ok_or_else(|| IpcError::unknown_server(&server))?;
    match monitor.ensure(&probe, TOOLS_WAIT).await {
        Status::Running { tools, .. } => Ok(tools.iter().filter_map(tool_info).collect()),
        Status::Failed { message, .. } => Err(IpcError::new(
            "server_not_running",
            format!("{server} is not running: {message}"),
        )),
        Status::Stopped | Status::Starting => Err(IpcError::new(
            "server_not_running",
            format!("{server} has not answered yet; try again in a moment"),
        )),
    }
}

/// The `mcpServers` entry of `server` as the form edits it (`None`: not in the file as a
/// command or URL entry).
#[tauri::command(rename_all = "snake_case")]
pub async fn read_server(host: State<'_, Arc<Host>>, server: String) -> IpcResult<Option<ServerEntry>> {
    let path = &host.paths.config;
    let text = std::fs::read_to_string(path)
        .map_err(|e| IpcError::new("config_unreadable", format!("cannot read {}: {e}", path.display())))?;
    Ok(server_config::read_entry(&text, &server))
}

/// Adds or replaces the `mcpServers` entry `name`: checked, written atomically (every other key
/// of the file kept), then applied to the running gateway — new sessions use it at once. Its
/// problems come back instead when it is not valid (nothing is written).
#[tauri::command(rename_all = "snake_case")]
pub async fn save_server(host: State<'_, Arc<Host>>, name: String, entry: ServerEntry) -> IpcResult<Vec<EntryProblem>> {
    let running = host.running().await?;
    let path = host.paths.config.clone();
    // The lock is held from the read to the write: two saves at once both land.
    let locked = portcullis_atomic_file::lock(&path)
        .map_err(|e| IpcError::new("config_write_failed", format!("cannot lock {}: {e}", path.display())))?;
    let text = locked
        .read_to_string()
        .and_then(|text| text.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
        .map_err(|e| IpcError::new("config_unreadable", format!("cannot read {}: {e}", path.display())))?;
    let (text, server) = match server_config::with_entry(&text, &path, &name, &entry) {
        Ok(done) => done,
        Err(problems) => return Ok(problems),
    };
    // portcullis.json may hold tokens in env or headers: it keeps its mode, a new one is private.
    let config_file = portcullis_atomic_file::Options::new(portcullis_atomic_file::Permissions::KeepOrPrivate);
    locked
        .write(text.as_bytes(), config_file)
        .map_err(|e| IpcError::new("config_write_failed", format!("cannot write {}: {e}", path.display())))?;
    running.gateway.set_server(&name, server).await;
    tracing::info!(server = name, path = %path.display(), "server entry saved from the Servers view");
    Ok(Vec::new())
}

fn tool_info(tool: &Value) -> Option<ServerTool> {
    let name = tool.get("name")?.as_str()?.to_owned();
    let text = |k: &str| tool.get(k).and_then(Value::as_str).map(str::to_owned);
    let annotations = tool.get("annotations").filter(|a| a.is_object()).cloned();
    let title = text("title").or_else(|| annotations.as_ref()?.get("title")?.as_str().map(str::to_owned));
    let description = text("description");
    let input_schema = tool.get("inputSchema").filter(|s| s.is_object()).cloned();
    let risk = guess::tool_class(&name, description.as_deref(), annotations.as_ref());
    Some(ServerTool {
        name,
        title,
        description,
        annotations,
        input_schema,
        risk,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_info_takes_the_title_from_annotations_when_the_tool_has_none() {
        let t = tool_info(&serde_json::json!({
            "name": "delete_file", "description": "Deletes a file",
            "annotations": {"title": "Delete", "destructiveHint": true}
        }))
        .unwrap();
        assert_eq!(t.title.as_deref(), Some("Delete"));
        assert_eq!(t.risk, ToolClass::Delete);
        assert!(tool_info(&serde_json::json!({"description": "no name"})).is_none());
    }

    #[test]
    fn tool_info_keeps_the_input_schema_for_the_rule_builder() {
        let schema = serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let t = tool_info(&serde_json::json!({"name": "read_file", "inputSchema": schema})).unwrap();
        assert_eq!(t.input_schema, Some(schema));
        let t = tool_info(&serde_json::json!({"name": "x", "inputSchema": "not an object"})).unwrap();
        assert_eq!(t.input_schema, None, "a schema that is not an object is not offered");
    }
}
