//! `getting_started` and `try_held_call`: the first screen of a new install. It says, client by
//! client, what is routed through this gateway and which routed server still has no policy
//! (`portcullis_clients::progress`), shows the exact command that routes the next client, and —
//! only when the config serves the demo's notes server (a source checkout's `scripts/demo.sh`
//! configures it; a package never offers repository scripts) — makes one call to its harmless
//! `write_note` tool over the gateway's own MCP endpoint, as any client would, so the person sees
//! a held call's prompt and decides it.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use portcullis_clients::progress::{policies_dir, progress};
use portcullis_config::gateway_file::GatewayFile;
use portcullis_config::paths::{self, ProcessEnv};
use serde::Serialize;
use serde_json::{json, Value};
use tauri::State;
use ts_rs::TS;

use crate::commands::clients::portcullis_binary;
use crate::host::Host;
use crate::ipc::{IpcError, IpcResult};

/// The demo's notes server, by its config name; the try-out is offered only when it is configured.
pub const DEMO_SERVER: &str = "demo-notes";
const DEMO_TOOL: &str = "write_note";
/// The longest a held call may wait: the gateway's own `approval.max_hold_secs` ends it sooner.
const CALL_DEADLINE: Duration = Duration::from_secs(3600);
const PROTOCOL: &str = "2025-06-18";

/// One client, as the first screen and the tray say it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ClientSetup {
    pub id: String,
    pub name: String,
    /// E.g. "Claude Code: routed, 1 server, policy written", "Claude Desktop: not routed (2 servers)".
    pub line: String,
    /// It has a config file (readable or not).
    pub found: bool,
    /// `portcullis.json` servers its routed entries reach.
    pub routed: Vec<String>,
    /// Routed servers with no policy file: every call to them asks.
    pub without_policy: Vec<String>,
    /// `clients install` has servers of it to route.
    pub can_route: bool,
}

/// What the first screen shows.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct GettingStarted {
    /// Routes a client's servers through Portcullis: for `suggested_client` when there is one,
    /// else with `CLIENT` as a placeholder.
    pub install_command: String,
    /// The first client found with servers not routed yet; `None` when every client found is
    /// routed, or none was found.
    pub suggested_client: Option<String>,
    /// Every client Portcullis knows, found or not.
    pub clients: Vec<ClientSetup>,
    /// Where the policy files are.
    pub policies_dir: String,
    /// What a client launches for one server (`SERVER` is a placeholder).
    pub connect_command: String,
    /// The demo server to try a held call on, when the config has it.
    pub demo_server: Option<String>,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn getting_started(host: State<'_, Arc<Host>>) -> IpcResult<GettingStarted> {
    host.running().await?;
    Ok(started(&host, &ProcessEnv))
}

/// `getting_started` with the environment given (tests inject theirs).
pub fn started(host: &Host, env: &dyn paths::Environment) -> GettingStarted {
    let config = host.running_now().map(|r| r.config());
    let bin = portcullis_binary(env).map_or_else(|_| "portcullis".to_owned(), |p| quote(&p));
    let flags = path_flags(host, env);
    let clients = client_setup(host, env);
    // Claude Code first: the client a newcomer with a terminal most likely has.
    let suggested = ["claude-code", "claude-desktop", "cursor", "vscode"]
        .into_iter()
        .find(|id| clients.iter().any(|c| c.id == *id && c.can_route))
        .map(str::to_owned);
    GettingStarted {
        install_command: format!(
            "{bin} clients install {}{flags}",
            suggested.as_deref().unwrap_or("CLIENT")
        ),
        suggested_client: suggested,
        clients,
        policies_dir: policies_dir(&host.paths.config).display().to_string(),
        connect_command: format!("{bin} connect SERVER{flags}"),
        demo_server: config
            .is_some_and(|c| c.servers.contains_key(DEMO_SERVER))
            .then(|| DEMO_SERVER.to_owned()),
    }
}

/// Every client's routing and policy state, read from the files (the CLI may have changed them).
pub fn client_setup(host: &Host, env: &dyn paths::Environment) -> Vec<ClientSetup> {
    let Ok(places) = crate::commands::clients::places(env) else {
        return Vec::new();
    };
    progress(&places, &host.paths.data_dir, &host.paths.config)
        .into_iter()
        .map(|p| ClientSetup {
            id: p.client.id().to_owned(),
            name: p.client.name().to_owned(),
            line: p.line(),
            found: p.found(),
            can_route: p.can_route(),
            routed: p.routed,
            without_policy: p.without_policy,
        })
        .collect()
}

/// ` --config FILE --data-dir DIR` for what differs from the defaults, so the command finds this
/// gateway and this config from any shell.
fn path_flags(host: &Host, env: &dyn paths::Environment) -> String {
    let mut flags = String::new();
    if host.paths.config != std::path::absolute(paths::config_file(None, env)).unwrap_or_default() {
        flags += &format!(" --config {}", quote(&host.paths.config));
    }
    if host.paths.data_dir != std::path::absolute(paths::data_dir(None, env)).unwrap_or_default() {
        flags += &format!(" --data-dir {}", quote(&host.paths.data_dir));
    }
    flags
}

/// A path as a POSIX shell word: as is when it is plain, else in single quotes.
fn quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c)) {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Calls the demo's `write_note` through the gateway and returns the tool's answer (the call is
/// held until the person decides it in the prompt).
#[tauri::command(rename_all = "snake_case")]
pub async fn try_held_call(host: State<'_, Arc<Host>>) -> IpcResult<String> {
    let running = host.running().await?;
    if !running.config().servers.contains_key(DEMO_SERVER) {
        return Err(IpcError::unknown_server(DEMO_SERVER));
    }
    let token = GatewayFile::read(&host.paths.data_dir)
        .map_err(|e| IpcError::new("no_gateway", e.to_string()))?
        .token;
    let client = McpClient::open(&format!("{}/mcp/{DEMO_SERVER}", running.url), &token).await?;
    let stamp = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let arguments = json!({
        "title": format!("first-held-call-{stamp}"),
        "text": "Written by Portcullis's \"Try a held call\": the call waited for your decision.",
    });
    let result = client
        .request("tools/call", json!({ "name": DEMO_TOOL, "arguments": arguments }))
        .await?;
    Ok(tool_text(&result))
}

/// The text a `tools/call` answer carries (a denial's reason included), or the JSON-RPC error.
fn tool_text(answer: &Value) -> String {
    if let Some(error) = answer.get("error") {
        return error["message"].as_str().unwrap_or("the call failed").to_owned();
    }
    let content = answer["result"]["content"].as_array().cloned().unwrap_or_default();
    let texts: Vec<&str> = content.iter().filter_map(|c| c["text"].as_str()).collect();
    texts.join("\n")
}

/// A minimal MCP client of the initialize era over Streamable HTTP: one session, answers as JSON
/// or as an SSE stream.
struct McpClient {
    http: reqwest::Client,
    url: String,
    token: String,
    session: String,
}

impl McpClient {
    async fn open(url: &str, token: &str) -> IpcResult<Self> {
        // No proxy: the gateway is on loopback, and a proxy from the environment would see the token.
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(CALL_DEADLINE)
            .build()
            .map_err(|e| IpcError::internal("cannot make an HTTP client", &e))?;
        let mut client = Self {
            http,
            url: url.to_owned(),
            token: token.to_owned(),
            session: String::new(),
        };
        let init = json!({
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": { "name": "portcullis-desktop-try", "version": env!("CARGO_PKG_VERSION") },
        });
        let reply = client
            .post(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
            .await?;
        client.session = reply
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| IpcError::new("demo_failed", "the gateway opened no MCP session"))?
            .to_owned();
        client
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(client)
    }

    async fn post(&self, body: Value) -> IpcResult<reqwest::Response> {
        let mut req = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if !self.session.is_empty() {
            req = req
                .header("Mcp-Session-Id", &self.session)
                .header("MCP-Protocol-Version", PROTOCOL);
        }
        let reply = req
            .send()
            .await
            .map_err(|e| IpcError::new("demo_failed", e.to_string()))?;
        if !reply.status().is_success() {
            return Err(IpcError::new(
                "demo_failed",
                format!("the gateway answered {}", reply.status()),
            ));
        }
        Ok(reply)
    }

    async fn request(&self, method: &str, params: Value) -> IpcResult<Value> {
        let reply = self
            .post(json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}))
            .await?;
        let sse = reply
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let body = reply
            .text()
            .await
            .map_err(|e| IpcError::new("demo_failed", e.to_string()))?;
        let answer = if sse {
            sse_answer(&body)
        } else {
            serde_json::from_str(&body).ok()
        };
        answer.ok_or_else(|| IpcError::new("demo_failed", "the gateway's answer could not be read"))
    }
}

/// The response (an `id` and a `result` or `error`) among an SSE stream's `data:` lines.
fn sse_answer(body: &str) -> Option<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some() && (m.get("result").is_some() || m.get("error").is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_only_when_a_shell_needs_it() {
        assert_eq!(quote(Path::new("/usr/bin/portcullis")), "/usr/bin/portcullis");
        assert_eq!(quote(Path::new("/home/a b/it's")), r"'/home/a b/it'\''s'");
    }

    #[test]
    fn the_answer_is_found_in_json_and_in_an_event_stream() {
        let ok = json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "wrote x"}]}});
        assert_eq!(tool_text(&ok), "wrote x");
        let err = json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -1, "message": "no"}});
        assert_eq!(tool_text(&err), "no");
        let stream = format!(
            "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}}\n\ndata: {ok}\n\n"
        );
        assert_eq!(sse_answer(&stream), Some(ok));
        assert_eq!(sse_answer("data: not json\n"), None);
    }
}
