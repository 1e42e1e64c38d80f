//! An rmcp client driven line by line, so a test can act between calls (stop a gateway, say).
//!
//! After the handshake it prints `{"ready": {"protocolVersion", "era", "serverName", "serverVersion"}}`.
//! Then each stdin line is a command, answered by one stdout line:
//! - `{"op": "tools"}` → `{"tools": [Tool, ...]}` (every page, as rmcp parsed them);
//! - `{"op": "call", "name": N, "arguments": {...}}` → `{"result": CallToolResult}`, or
//!   `{"error": "..."}` when the call failed at the protocol level.
//!
//! The end of stdin ends the session and closes the server's stdin (rmcp's own shutdown).

use std::io::Write as _;

use anyhow::{bail, Context as _};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientServiceExt as _, RoleClient};
use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt as _;

/// The name the gateway's audit records for this client.
const CLIENT_NAME: &str = "portcullis-e2e-rmcp";

struct Client;

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new(CLIENT_NAME, "1.0.0"))
    }
}

type Session = RunningService<RoleClient, Client>;

pub(crate) async fn run(args: &[String]) -> anyhow::Result<()> {
    let (lifecycle, command) = parse(args)?;
    let mut child = tokio::process::Command::new(&command[0]);
    child.args(&command[1..]);
    let transport = TokioChildProcess::new(child).with_context(|| format!("cannot launch {}", command[0]))?;
    let session = Client
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .context("the MCP handshake failed")?;
    emit(&json!({ "ready": ready(&session) }))?;

    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let command: Value = serde_json::from_str(&line).with_context(|| format!("not JSON: {line}"))?;
        emit(&answer(&session, &command).await?)?;
    }
    session.cancel().await?;
    Ok(())
}

fn parse(args: &[String]) -> anyhow::Result<(ClientLifecycleMode, &[String])> {
    let Some(split) = args.iter().position(|a| a == "--") else {
        bail!("client: the server's command goes after `--`");
    };
    let (options, command) = (&args[..split], &args[split + 1..]);
    if command.is_empty() {
        bail!("client: no command after `--`");
    }
    let lifecycle = match options {
        [] => auto(),
        [flag, value] if flag == "--lifecycle" && value == "auto" => auto(),
        [flag, value] if flag == "--lifecycle" && value == "initialize" => ClientLifecycleMode::Initialize,
        other => bail!("client: unknown options {other:?}"),
    };
    Ok((lifecycle, command))
}

/// What a dual-era client does: probe with `server/discover`, fall back to `initialize`.
fn auto() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

fn ready(session: &Session) -> Value {
    let info = session.peer_info();
    let version = info.as_ref().map(|i| i.protocol_version.to_string());
    let server = info.as_ref().and_then(|i| i.server_info.clone());
    let era = if version.as_deref() == Some(ProtocolVersion::V_2026_07_28.as_str()) {
        "modern"
    } else {
        "legacy"
    };
    json!({
        "protocolVersion": version,
        "era": era,
        "serverName": server.as_ref().map(|s| s.name.clone()),
        "serverVersion": server.map(|s| s.version),
    })
}

async fn answer(session: &Session, command: &Value) -> anyhow::Result<Value> {
    match command["op"].as_str() {
        Some("tools") => Ok(match session.list_all_tools().await {
            Ok(tools) => json!({ "tools": tools }),
            Err(e) => json!({ "error": e.to_string() }),
        }),
        Some("call") => {
            let name = command["name"].as_str().context("call: `name` is required")?.to_owned();
            let mut params = CallToolRequestParams::new(name);
            if let Some(arguments) = command["arguments"].as_object() {
                params = params.with_arguments(arguments.clone());
            }
            Ok(match session.call_tool(params).await {
                Ok(result) => json!({ "result": result }),
                Err(e) => json!({ "error": e.to_string() }),
            })
        }
        _ => bail!("unknown command {command}"),
    }
}

fn emit(value: &Value) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}
