//! `generate_policy`: "Generate starter policy" in the Policies view, the app's side of
//! `portcullis policy init`. Lists what the server offers (tools, and the resources, templates and
//! prompts it declares) over a connection of its own (`portcullis_gate::upstream::list_tools`),
//! classifies them (`starter_policy_for`) and returns the text
//! for the person to review in the editor. It writes nothing: Save goes through `save_policy`.
//! A server that already has a policy file is refused, so a generated policy never replaces a
//! hand-written one unseen.

use std::sync::Arc;
use std::time::Duration;

use portcullis_config::config::ServerConfig;
use portcullis_gate::upstream::list_tools::list_offered;
use portcullis_policy::starter::{starter_policy_for, ClassifiedTool};
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use crate::host::Host;
use crate::ipc::{IpcError, IpcResult};

/// How long the server gets to start and list its tools (`policy init`'s default).
const LIST_DEADLINE: Duration = Duration::from_secs(60);
/// The `clientInfo.name` the server sees on the listing connection.
const CLIENT_NAME: &str = "portcullis-desktop-policy-init";

/// One tool as the starter policy classified it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct StarterTool {
    pub name: String,
    /// `read`, `write`, `execute`, `delete` or `unknown`.
    pub class: String,
    /// `low`, `medium`, `high` or `critical`.
    pub risk: String,
    /// What the policy does with it: `allow`, `allow, 10/60s`, `require_approval`.
    pub rule: String,
}

/// A generated policy, not yet written.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct StarterPolicyText {
    pub text: String,
    pub tools: Vec<StarterTool>,
    /// Tools left out (no name, listed twice), with why.
    pub skipped: Vec<String>,
}

fn word(v: serde_json::Value) -> String {
    v.as_str().unwrap_or("unknown").to_owned()
}

fn starter_tool(t: &ClassifiedTool) -> StarterTool {
    StarterTool {
        name: t.name.clone(),
        class: word(serde_json::json!(t.class)),
        risk: word(serde_json::json!(t.risk)),
        rule: t.rule.to_string(),
    }
}

#[tauri::command(rename_all = "snake_case")]
pub async fn generate_policy(host: State<'_, Arc<Host>>, server: String) -> IpcResult<StarterPolicyText> {
    let running = host.running().await?;
    let config = running.gateway.config();
    let Some(server_config) = config.servers.get(&server) else {
        return Err(IpcError::unknown_server(&server));
    };
    let path = running.gateway.policy_path(&server);
    if path.exists() {
        return Err(IpcError::new(
            "policy_exists",
            format!(
                "{} already exists; edit it, or move it away to generate a starter policy",
                path.display()
            ),
        ));
    }
    let starter = starter_for(&server, server_config)
        .await
        .map_err(|message| IpcError::new("list_tools_failed", message))?;
    tracing::info!(
        server,
        tools = starter.tools.len(),
        "starter policy generated for review"
    );
    Ok(starter)
}

/// The starter policy of one configured server, from its live tool list: the app's side of
/// `policy init`, used by "Generate starter policy" and by a client's install. On failure, why
/// (with the last line the server wrote on stderr).
pub(crate) async fn starter_for(server: &str, config: &ServerConfig) -> Result<StarterPolicyText, String> {
    let listing = list_offered(server, config, CLIENT_NAME, LIST_DEADLINE)
        .await
        .map_err(|e| {
            let mut message = format!("cannot list the tools of {server:?}: {}", e.message);
            if let Some(last) = e.stderr_tail.last() {
                message.push_str(&format!(" (server stderr: {last})"));
            }
            message
        })?;
    let starter = starter_policy_for(&listing.offered).map_err(|e| format!("the generated policy is invalid: {e}"))?;
    Ok(StarterPolicyText {
        text: starter.text,
        tools: starter.tools.iter().map(starter_tool).collect(),
        skipped: starter.skipped,
    })
}
