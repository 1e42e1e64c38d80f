//! `portcullis connect` to a server the gateway does not have: a clear error and exit 1 at once,
//! over the local socket and over the HTTP fallback alike — the relay reads the gateway's typed
//! refusal (`unknown_server`) and does not wait for a gateway that will never accept it. Run as the
//! real binaries: `portcullis serve` and `portcullis connect`.

#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");
/// Well under the 30 s the relay waits for a gateway that refuses it for a passing reason.
const WITHIN: Duration = Duration::from_secs(10);

/// `portcullis serve` with one server, `known`, once it says it is ready; its log is read on
/// (`keep_log`) or its stderr closed.
async fn serve(dir: &Path, keep_log: bool) -> Child {
    let config = dir.join("portcullis.json");
    let servers = json!({ "listen": "127.0.0.1:0", "mcpServers": { "known": { "command": "true" } } });
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut child = Command::new(BIN)
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let ready = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("ready on") {
                return;
            }
        }
        panic!("portcullis serve ended before it was ready");
    };
    tokio::time::timeout(WITHIN, ready)
        .await
        .expect("portcullis serve is ready in time");
    if keep_log {
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    }
    child
}

/// `portcullis connect SERVER --data-dir DIR` with no input: its exit code and stderr, in time.
async fn connect(server: &str, data_dir: &Path) -> (Option<i32>, String) {
    let run = Command::new(BIN)
        .args(["connect", server, "--data-dir"])
        .arg(data_dir)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(WITHIN, run)
        .await
        .expect("connect gives up on an unknown server at once")
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn connect_to_an_unknown_server_is_a_clear_error_on_both_transports() {
    let dir = tempfile::tempdir().unwrap();
    let _gateway = serve(dir.path(), true).await;
    let data = dir.path().join("data");

    let (code, stderr) = connect("nope", &data).await;
    assert_eq!(code, Some(1), "over the local socket: {stderr}");
    assert!(
        stderr.contains("no server named \"nope\""),
        "says which name is unknown: {stderr}"
    );

    // The same gateway, found through a gateway.json that names no socket: the HTTP fallback.
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(data.join("gateway.json")).unwrap()).unwrap();
    assert!(
        file.as_object_mut().unwrap().remove("socket").is_some(),
        "the gateway has a local socket"
    );
    let http_only = dir.path().join("http-only");
    std::fs::create_dir(&http_only).unwrap();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    std::io::Write::write_all(
        &mut options.open(http_only.join("gateway.json")).unwrap(),
        file.to_string().as_bytes(),
    )
    .unwrap();
    let (code, stderr) = connect("nope", &http_only).await;
    assert_eq!(code, Some(1), "over HTTP: {stderr}");
    assert!(
        stderr.contains("no server named \"nope\""),
        "says which name is unknown: {stderr}"
    );
}

/// Found by the test above: with its stderr closed (by a launcher that went away), the gateway's
/// log fallback panicked the connection's task at the first warning, so the refusal never came and
/// `connect` waited 30 s for a gateway instead.
#[tokio::test]
async fn a_gateway_whose_stderr_was_closed_still_refuses_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let _gateway = serve(dir.path(), false).await;
    let (code, stderr) = connect("nope", &dir.path().join("data")).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("no server named \"nope\""), "{stderr}");
}
