//! Wire rules in front of a stdio upstream, in-process: the gateway's HTTP entry to
//! `tests/peers/scripted_server.py` (standard-library Python), which records what it receives.
//! - a request its sender cancelled gets no answer, and its POST ends at the cancel;
//! - 2026 era: notifications the server sends during a request reach that request's stream;
//! - 2026 era: a client that closes its response stream, or hangs up on a JSON answer, cancels.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use std::path::{Path, PathBuf};
use std::time::Duration;

use portcullis_config::config::Config;
use portcullis_keeper::Keeper;
use serde_json::{json, Value};

const MODERN: &str = "2026-07-28";
/// Every wait in these tests is bounded by this.
const WAIT: Duration = Duration::from_secs(10);

struct Running {
    url: String,
    token: String,
    log: PathBuf,
}

async fn start(dir: &Path) -> Running {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/scripted_server.py");
    let log = dir.join("server.log");
    std::fs::create_dir_all(dir.join("policies")).unwrap();
    std::fs::write(
        dir.join("policies/scripted.json"),
        r#"{"version":"1","default":"allow"}"#,
    )
    .unwrap();
    let config = json!({ "listen": "127.0.0.1:0", "mcpServers": { "scripted": {
        "command": "python3", "args": [script], "env": { "SCRIPTED_LOG": log } } } });
    let config = Config::from_str(&config.to_string(), &dir.join("portcullis.json")).unwrap();
    let data = dir.join("data");
    let gateway = Keeper::open(config, &data).unwrap();
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    Running {
        url: file.server_url("scripted"),
        token: file.token,
        log,
    }
}

impl Running {
    fn post(&self, body: &Value, session: Option<&str>) -> reqwest::RequestBuilder {
        let mut request = reqwest::Client::new()
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .json(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request
    }

    /// A legacy session: initialize + initialized; its id.
    async fn legacy_session(&self) -> String {
        let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
        let response = self.post(&init, None).send().await.unwrap();
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        assert!(response.text().await.unwrap().contains("scripted"));
        let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        let status = self.post(&initialized, Some(&session)).send().await.unwrap().status();
        assert_eq!(status, 202);
        session
    }

    /// Waits (bounded) until the server's log has a line containing `needle`; that line.
    async fn server_logged(&self, needle: &str) -> String {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            if let Some(line) = text.lines().find(|l| l.contains(needle)) {
                return line.to_owned();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the server never logged {needle:?}; its log: {text:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn call(id: Value, tool: &str, marker: &str, modern: bool) -> Value {
    let mut params = json!({ "name": tool, "arguments": { "marker": marker } });
    if modern {
        params["_meta"] = json!({ "io.modelcontextprotocol/protocolVersion": MODERN,
                                  "io.modelcontextprotocol/clientCapabilities": {} });
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
}

/// The JSON-RPC messages of a body, whether it is JSON or an SSE stream.
fn messages(body: &str) -> Vec<Value> {
    if let Ok(one) = serde_json::from_str::<Value>(body) {
        return vec![one];
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// Legacy era: the client cancels a forwarded call. The server is told, the POST ends at once with
/// no answer, and when the session ends nothing is answered either ("exited before answering"
/// used to arrive on the still-open POST at DELETE, and mcp 1.x clients failed on close).
#[tokio::test]
async fn a_cancelled_legacy_request_gets_no_answer_and_its_post_ends_at_the_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let gw = start(dir.path()).await;
    let session = gw.legacy_session().await;
    let pending = {
        let request = gw.post(&call(json!(5), "slow", "c1", false), Some(&session));
        tokio::spawn(async move {
            let response = request.send().await.unwrap();
            (response.status(), response.text().await.unwrap())
        })
    };
    gw.server_logged("call 5 slow").await;
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": { "requestId": 5, "reason": "test" } });
    assert_eq!(gw.post(&cancel, Some(&session)).send().await.unwrap().status(), 202);
    gw.server_logged("cancelled 5").await;

    let ended = tokio::time::timeout(WAIT, pending).await;
    // End the session either way, so a failure shows what the POST got at DELETE.
    let delete = reqwest::Client::new()
        .delete(&gw.url)
        .bearer_auth(&gw.token)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 204);
    let (status, body) = ended
        .expect("the cancelled request's POST must end at the cancel, not at DELETE")
        .unwrap();
    assert!(status.is_success(), "{status}");
    assert!(
        messages(&body).iter().all(|m| m.get("id") != Some(&json!(5))),
        "a cancelled request gets no answer: {body:?}"
    );

    // The id is free again and the session still works.
    let session = gw.legacy_session().await;
    let again = gw
        .post(&call(json!(5), "echo", "c2", false), Some(&session))
        .send()
        .await
        .unwrap();
    let body = again.text().await.unwrap();
    assert!(body.contains("echo c2"), "{body}");
}

/// 2026 era on the shared stdio child: a log message and `tools/list_changed` the server sends
/// while handling a call name no request, yet belong on that call's response stream — before
/// its result — as they would reach a client connected directly. They used to be lost.
#[tokio::test]
async fn modern_notifications_sent_during_a_call_ride_on_its_response_stream() {
    let dir = tempfile::tempdir().unwrap();
    let gw = start(dir.path()).await;
    let response = gw
        .post(&call(json!("n1"), "chatty", "m3", true), None)
        .send()
        .await
        .unwrap();
    let body = tokio::time::timeout(WAIT, response.text()).await.unwrap().unwrap();
    let got = messages(&body);
    let methods: Vec<_> = got.iter().map(|m| m.get("method").and_then(Value::as_str)).collect();
    assert_eq!(
        methods,
        [
            Some("notifications/message"),
            Some("notifications/tools/list_changed"),
            None
        ],
        "both notifications, then the result: {body}"
    );
    assert_eq!(got[0]["params"]["data"], "chatty m3");
    assert_eq!(got[2]["id"], "n1", "the result under the client's own id: {body}");
    assert_eq!(got[2]["result"]["content"][0]["text"], "chatty done");
}

/// The wire id a logged `call <id> <tool>` line names.
fn wire_id(line: &str) -> &str {
    line.split(' ').nth(1).unwrap()
}

/// 2026 era, HTTP entry, stdio upstream: a client that closes its response stream cancels the
/// call — the child gets `notifications/cancelled` under the id the gateway gave the call.
#[tokio::test]
async fn closing_a_modern_response_stream_cancels_the_call_on_the_stdio_child() {
    let dir = tempfile::tempdir().unwrap();
    let gw = start(dir.path()).await;
    let mut body = call(json!(1), "slow", "s1", true);
    body["params"]["_meta"]["progressToken"] = json!("p1");
    let response = gw.post(&body, None).send().await.unwrap();
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"),
        "progress came first, so the answer is a stream"
    );
    let mut stream = response.bytes_stream();
    let first = tokio::time::timeout(WAIT, futures::StreamExt::next(&mut stream))
        .await
        .unwrap();
    assert!(String::from_utf8_lossy(&first.unwrap().unwrap()).contains("notifications/progress"));
    let line = gw.server_logged("slow").await;
    drop(stream);
    gw.server_logged(&format!("cancelled {}", wire_id(&line))).await;
}

/// The same for a client that hangs up while its answer is pending and no stream is open yet:
/// one that takes JSON only, and one that takes either (the gateway waits for the first message
/// to choose). The gateway cancels upstream (and records the call as cancelled) rather than wait
/// on for nobody.
#[tokio::test]
async fn hanging_up_on_a_pending_modern_answer_cancels_the_call_on_the_stdio_child() {
    let dir = tempfile::tempdir().unwrap();
    let gw = start(dir.path()).await;
    for (n, accept) in ["application/json", "application/json, text/event-stream"]
        .into_iter()
        .enumerate()
    {
        let marker = format!("hang{n}");
        let request = reqwest::Client::new()
            .post(&gw.url)
            .bearer_auth(&gw.token)
            .header("accept", accept)
            .json(&call(json!(n), "slow", &marker, true));
        let pending = tokio::spawn(request.send());
        let line = gw.server_logged(&format!("slow {marker}")).await;
        pending.abort();
        assert!(pending.await.unwrap_err().is_cancelled());
        gw.server_logged(&format!("cancelled {}", wire_id(&line))).await;
    }
}
