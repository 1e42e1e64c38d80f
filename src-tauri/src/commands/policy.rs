//! `read_policy`, `validate_policy`, `save_policy`: the policy editor's file, validated by the
//! policy crate, written atomically and reloaded by the gateway's policy store.

use std::sync::Arc;

use portcullis_policy::Policy;
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use crate::host::{Host, Running};
use crate::ipc::{IpcError, IpcResult};

#[derive(Debug, Serialize, TS)]
pub struct PolicyFile {
    /// `None`: the server has no policy file (every call asks a person).
    pub text: Option<String>,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(rename = "PolicyProblem")]
pub struct Problem {
    /// JSON path in the gateway's syntax (`$`, `$.tools["vm_start"].action`).
    pub path: String,
    pub message: String,
}

#[derive(Debug, Serialize, TS)]
#[ts(rename = "ValidationResult")]
pub struct Validation {
    pub problems: Vec<Problem>,
}

fn known(running: &Running, server: &str) -> IpcResult<std::path::PathBuf> {
    if !running.gateway.has_server(server) {
        return Err(IpcError::unknown_server(server));
    }
    Ok(running.gateway.gate().policies.path(server))
}

#[tauri::command(rename_all = "snake_case")]
pub async fn read_policy(host: State<'_, Arc<Host>>, server: String) -> IpcResult<PolicyFile> {
    let running = host.running().await?;
    let path = known(&running, &server)?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(IpcError::new(
                "policy_unreadable",
                format!("cannot read {}: {e}", path.display()),
            ))
        }
    };
    Ok(PolicyFile {
        text,
        path: path.display().to_string(),
    })
}

/// Every problem of `text` as a policy (empty: valid).
pub fn problems(text: &str, source: &str) -> Vec<Problem> {
    match Policy::from_json_str(text, source) {
        Ok(_) => Vec::new(),
        Err(e) => e
            .problems
            .into_iter()
            .map(|p| Problem {
                path: p.path,
                message: p.message,
            })
            .collect(),
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn validate_policy(host: State<'_, Arc<Host>>, server: String, text: String) -> IpcResult<Validation> {
    let running = host.running().await?;
    let path = known(&running, &server)?;
    Ok(Validation {
        problems: problems(&text, &path.display().to_string()),
    })
}

/// Writes a valid policy atomically and reloads it at once (the file watcher would too, a
/// moment later); an invalid one is not written and its problems come back.
#[tauri::command(rename_all = "snake_case")]
pub async fn save_policy(host: State<'_, Arc<Host>>, server: String, text: String) -> IpcResult<Validation> {
    let running = host.running().await?;
    let path = known(&running, &server)?;
    let problems = problems(&text, &path.display().to_string());
    if !problems.is_empty() {
        return Ok(Validation { problems });
    }
    // Under the file's lock, so a decision's "always" write is not interleaved with this save.
    let policy_file = portcullis_atomic_file::Options::new(portcullis_atomic_file::Permissions::KeepOrShared);
    portcullis_atomic_file::lock(&path)
        .and_then(|locked| locked.write(text.as_bytes(), policy_file))
        .map_err(|e| IpcError::new("policy_write_failed", format!("cannot write {}: {e}", path.display())))?;
    running.gateway.gate().policies.reload(&server);
    tracing::info!(server, path = %path.display(), "policy saved from the editor");
    Ok(Validation { problems })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_carry_the_gateway_json_path() {
        assert!(problems(r#"{"version": "1", "default": "deny"}"#, "x.json").is_empty());
        let p = problems(r#"{"version": "1", "tools": {"a": {"action": "maybe"}}}"#, "x.json");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].path.starts_with("$.tools[\"a\"]"), "{p:?}");
        let p = problems("{", "x.json");
        assert_eq!(p[0].path, "$");
    }
}
