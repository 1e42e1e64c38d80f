//! Shared by the resource-bound tests (`bounds_*.rs`): a gateway in this process in front of
//! `tests/e2e/peers/flood_server.py`, a small legacy MCP client, and the figures they measure.
//! Each test is its own binary, so the process's memory is that one test's.

#![allow(dead_code, clippy::unwrap_used)] // not every test uses every helper

use std::path::{Path, PathBuf};
use std::time::Duration;

use portcullis_config::config::Config;
use portcullis_keeper::Keeper;
use serde_json::{json, Value};

pub(crate) const MB: u64 = 1024 * 1024;

pub(crate) fn flood_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/e2e/peers/flood_server.py")
}

pub(crate) struct Running {
    pub url: String,
    pub token: String,
    pub base: String,
}

/// A gateway with one stdio server `flood`, everything allowed, and `limits`.
pub(crate) async fn start(dir: &Path, limits: Value) -> Running {
    std::fs::create_dir_all(dir.join("policies")).unwrap();
    std::fs::write(dir.join("policies/flood.json"), r#"{"version":"1","default":"allow"}"#).unwrap();
    let config = json!({
        "listen": "127.0.0.1:0",
        "limits": limits,
        "mcpServers": { "flood": { "command": "python3", "args": [flood_server()] } }
    });
    let config = Config::from_str(&config.to_string(), &dir.join("portcullis.json")).unwrap();
    let data = dir.join("data");
    let gateway = Keeper::open(config, &data).unwrap();
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    Running {
        url: file.server_url("flood"),
        token: file.token,
        base: file.url,
    }
}

pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

impl Running {
    pub(crate) fn post(&self, http: &reqwest::Client, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        let mut request = http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .json(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request
    }

    /// `initialize`: the session id, or the JSON-RPC error text.
    pub(crate) async fn initialize(&self, http: &reqwest::Client) -> Result<String, String> {
        let body = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "bounds-test", "version": "1" } } });
        let response = self.post(http, None, &body).send().await.map_err(|e| e.to_string())?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_owned());
        let reply = first_message(&response.text().await.map_err(|e| e.to_string())?);
        match (session, reply.get("error")) {
            (Some(session), None) => Ok(session),
            (_, Some(error)) => Err(error["message"].as_str().unwrap_or_default().to_owned()),
            (None, None) => Err(format!("no session and no error: {reply}")),
        }
    }

    /// A `tools/call` on `session`; the result's first text.
    pub(crate) async fn call(&self, http: &reqwest::Client, session: &str, id: u64, tool: &str, args: Value) -> String {
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": { "name": tool, "arguments": args } });
        let response = self.post(http, Some(session), &body).send().await.unwrap();
        let text = response.text().await.unwrap();
        let reply = last_message(&text);
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no result text in {reply}"))
            .to_owned()
    }
}

fn messages(body: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

fn first_message(body: &str) -> Value {
    messages(body).into_iter().next().unwrap_or(Value::Null)
}

fn last_message(body: &str) -> Value {
    messages(body).into_iter().last().unwrap_or(Value::Null)
}

/// This process's resident memory, in bytes (the gateway runs in it).
pub(crate) fn rss() -> u64 {
    status_kb("VmRSS:") * 1024
}

/// This process's peak resident memory, in bytes.
pub(crate) fn peak_rss() -> u64 {
    status_kb("VmHWM:") * 1024
}

fn status_kb(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// Child processes of this process running `flood_server.py`.
pub(crate) fn flood_children() -> usize {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1));
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            ppid == Some(me.as_str()) && String::from_utf8_lossy(&cmdline).contains("flood_server.py")
        })
        .count()
}

pub(crate) fn mb(bytes: u64) -> f64 {
    bytes as f64 / MB as f64
}
