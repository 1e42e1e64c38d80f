//! `list_servers`, `restart_server`, `list_tools`: each upstream as the app's monitoring
//! connection sees it ([`crate::probe`]) and the health of its policy.

use std::sync::Arc;
use std::time::Duration;

use portcullis_gateway::policy_store::InForce;
use portcullis_gateway::risk::{self, Risk};
use serde::Serialize;
use serde_json::Value;
use tauri::State;

use crate::host::{Host, Running};
use crate::ipc::{IpcError, IpcResult};
use crate::probe::{self, Status};

/// How long the server list waits for connections being opened; later polls show them.
const LIST_WAIT: Duration = Duration::from_secs(3);
/// How long the tool list waits for a server to start (npx may download first).
const TOOLS_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug, Serialize)]
pub struct ServerStatus {
    pub name: String,
    pub transport: &'static str,
    /// `running`, `stopped` (not connected yet) or `error`.
    pub state: &'static str,
    pub tool_count: Option<usize>,
    pub stderr_tail: Vec<String>,
    pub policy: PolicyHealth,
}

#[derive(Debug, Serialize)]
pub struct PolicyHealth {
    /// `ok`, `missing` (every call asks a person) or `invalid`.
    pub state: &'static str,
    pub problems: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ToolInfo {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub annotations: Option<Value>,
    pub risk: Risk,
}

fn policy_health(host: &Host, running: &Running, server: &str) -> PolicyHealth {
    let policies = &running.gateway.gate().policies;
    match policies.get(server) {
        Some(InForce::Broken(why)) => PolicyHealth {
            state: "invalid",
            problems: vec![why.to_string()],
        },
        _ => match host.rejected_problems(server) {
            Some(mut problems) => {
                problems.push("The last valid version of the file stays in force until this is fixed.".into());
                PolicyHealth {
                    state: "invalid",
                    problems,
                }
            }
            None if policies.path(server).exists() => PolicyHealth {
                state: "ok",
                problems: Vec::new(),
            },
            None => PolicyHealth {
                state: "missing",
                problems: Vec::new(),
            },
        },
    }
}

fn status_view(status: &Status) -> (&'static str, Option<usize>, Vec<String>) {
    match status {
        Status::Stopped | Status::Starting => ("stopped", None, Vec::new()),
        Status::Running { upstream, tools } if upstream.is_alive() => {
            ("running", Some(tools.len()), probe::stderr_tail(upstream))
        }
        Status::Running { upstream, tools } => {
            let mut tail = probe::stderr_tail(upstream);
            tail.push("[portcullis] the server exited; press Restart".into());
            ("error", Some(tools.len()), tail)
        }
        Status::Failed { message, stderr_tail } => {
            let mut tail = stderr_tail.clone();
            tail.push(format!("[portcullis] {message}"));
            ("error", None, tail)
        }
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_servers(host: State<'_, Arc<Host>>) -> IpcResult<Vec<ServerStatus>> {
    let running = host.running().await?;
    let statuses = futures::future::join_all(running.probes.all().map(|p| running.probes.ensure(p, LIST_WAIT))).await;
    Ok(running
        .probes
        .all()
        .zip(statuses)
        .map(|(probe, status)| {
            let (state, tool_count, stderr_tail) = status_view(&status);
            ServerStatus {
                name: probe.server().to_owned(),
                transport: probe.transport(),
                state,
                tool_count,
                stderr_tail,
                policy: policy_health(&host, &running, probe.server()),
            }
        })
        .collect())
}

/// Reconnects the app's monitoring connection. Client sessions keep theirs: each owns its
/// upstream, and a new session always starts a fresh one.
#[tauri::command(rename_all = "snake_case")]
pub async fn restart_server(host: State<'_, Arc<Host>>, server: String) -> IpcResult<()> {
    let running = host.running().await?;
    let probe = running
        .probes
        .get(&server)
        .ok_or_else(|| IpcError::unknown_server(&server))?;
    match running.probes.restart(probe).await {
        Status::Failed { message, .. } => Err(IpcError::new(
            "server_failed",
            format!("{server} did not start: {message}"),
        )),
        _ => Ok(()),
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_tools(host: State<'_, Arc<Host>>, server: String) -> IpcResult<Vec<ToolInfo>> {
    let running = host.running().await?;
    let probe = running
        .probes
        .get(&server)
        .ok_or_else(|| IpcError::unknown_server(&server))?;
    match running.probes.ensure(probe, TOOLS_WAIT).await {
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

fn tool_info(tool: &Value) -> Option<ToolInfo> {
    let name = tool.get("name")?.as_str()?.to_owned();
    let text = |k: &str| tool.get(k).and_then(Value::as_str).map(str::to_owned);
    let annotations = tool.get("annotations").filter(|a| a.is_object()).cloned();
    let title = text("title").or_else(|| annotations.as_ref()?.get("title")?.as_str().map(str::to_owned));
    let description = text("description");
    let risk = risk::classify(&name, description.as_deref(), annotations.as_ref());
    Some(ToolInfo {
        name,
        title,
        description,
        annotations,
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
        assert_eq!(t.risk, Risk::Delete);
        assert!(tool_info(&serde_json::json!({"description": "no name"})).is_none());
    }
}
