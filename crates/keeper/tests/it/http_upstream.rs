//! The gateway in front of a Streamable HTTP upstream, in-process: what reaches the upstream and
//! what the client gets back. The upstream here is a minimal axum handler that reports what it
//! received, because these checks are about headers the SDK servers do not expose.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use portcullis_config::config::Config;
use portcullis_keeper::Keeper;
use serde_json::{json, Value};

use crate::common::{post_json, serve_mcp};

type Seen = Arc<Mutex<Vec<(HeaderMap, Value)>>>;

/// An upstream that answers every request with an echo result and records what it saw.
async fn start_upstream() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let app = Router::new().route(
        "/mcp",
        post(move |headers: HeaderMap, Json(body): Json<Value>| {
            let record = record.clone();
            async move {
                record.lock().unwrap().push((headers, body.clone()));
                Json(json!({ "jsonrpc": "2.0", "id": body["id"], "result": { "content": [{ "type": "text", "text": "ok" }], "resultType": "complete" } }))
            }
        }),
    );
    let url = serve_mcp(app).await;
    (url, seen)
}

async fn start_gateway(dir: &Path, upstream_url: &str, policy: &str) -> (String, String) {
    std::fs::create_dir_all(dir.join("policies")).unwrap();
    std::fs::write(dir.join("policies/up.json"), policy).unwrap();
    let config_text = json!({ "listen": "127.0.0.1:0", "mcpServers": { "up": { "url": upstream_url } } }).to_string();
    let config = Config::from_str(&config_text, &dir.join("portcullis.json")).unwrap();
    let data = dir.join("data");
    let gateway = Keeper::open(config, &data).unwrap();
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    (file.server_url("up"), file.token)
}

fn modern_call(id: u64, tool: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": { "q": 1 },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } })
}

#[tokio::test]
async fn routing_headers_reach_an_http_upstream_written_from_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, seen) = start_upstream().await;
    let (url, token) = start_gateway(dir.path(), &upstream, r#"{"version":"1","default":"allow"}"#).await;
    let reply: Value = reqwest::Client::new()
        .post(&url)
        .bearer_auth(&token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "lookup")
        .json(&modern_call(7, "lookup"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        reply["result"]["content"][0]["text"], "ok",
        "the upstream's answer comes back: {reply}"
    );
    let seen = seen.lock().unwrap();
    let (headers, body) = seen.last().expect("the upstream received the call");
    assert_eq!(headers["mcp-method"], "tools/call");
    assert_eq!(headers["mcp-name"], "lookup");
    assert_eq!(headers["mcp-protocol-version"], "2026-07-28");
    assert_eq!(body["id"], 7, "ids pass through untouched");
}

#[tokio::test]
async fn a_denied_call_never_reaches_the_http_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, seen) = start_upstream().await;
    let policy = r#"{"version":"1","default":"allow","tools":{"drop_db":{"action":"deny","reason":"no"}}}"#;
    let (url, token) = start_gateway(dir.path(), &upstream, policy).await;
    let reply = post_json(&url, &token, &modern_call(8, "drop_db")).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(
        reply["result"]["resultType"], "complete",
        "a modern refusal carries resultType: {reply}"
    );
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("[portcullis]") && text.contains("tools.drop_db"),
        "{text}"
    );
    assert!(
        seen.lock().unwrap().is_empty(),
        "the upstream must not see a denied call"
    );
}

/// An upstream whose JSON answer is over the 16 MiB message limit, streamed without a length so
/// only counting stops it: the client gets a clear error, the gateway does not buffer it all.
#[tokio::test]
async fn an_oversized_json_answer_from_an_http_upstream_is_refused() {
    let app = Router::new().route(
        "/mcp",
        post(|| async {
            let head = r#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":""#;
            let chunk = bytes::Bytes::from(vec![b'x'; 1024 * 1024]);
            let parts = std::iter::once(bytes::Bytes::from(head))
                .chain(std::iter::repeat_n(chunk, 17))
                .chain(std::iter::once(bytes::Bytes::from(r#""}]}}"#)))
                .map(Ok::<_, std::convert::Infallible>);
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                axum::body::Body::from_stream(futures::stream::iter(parts)),
            )
        }),
    );
    let upstream = serve_mcp(app).await;
    let dir = tempfile::tempdir().unwrap();
    let (url, token) = start_gateway(dir.path(), &upstream, r#"{"version":"1","default":"allow"}"#).await;
    let reply = post_json(&url, &token, &modern_call(9, "big")).await;
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("[portcullis]") && message.contains("larger than 16777216 bytes"),
        "{reply}"
    );
}

/// A legacy-era HTTP upstream that takes `initialize` and then answers nothing, not even the
/// cancel: the call still ends at the call timeout (the cancel is sent in the background).
#[tokio::test]
async fn a_hung_http_upstream_that_also_ignores_the_cancel_is_bounded_by_the_call_timeout() {
    let app = Router::new().route(
        "/mcp",
        post(|Json(body): Json<Value>| async move {
            if body["method"] == "initialize" {
                let result = json!({ "jsonrpc": "2.0", "id": body["id"], "result": {
                    "protocolVersion": "2025-06-18", "capabilities": { "tools": {} },
                    "serverInfo": { "name": "hung", "version": "1" } } });
                return ([("mcp-session-id", "s1")], Json(result));
            }
            std::future::pending::<()>().await;
            unreachable!()
        }),
    );
    let upstream = serve_mcp(app).await;

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("policies")).unwrap();
    std::fs::write(
        dir.path().join("policies/up.json"),
        r#"{"version":"1","default":"allow"}"#,
    )
    .unwrap();
    let config_text =
        json!({ "listen": "127.0.0.1:0", "mcpServers": { "up": { "url": upstream, "call_timeout_secs": 1 } } })
            .to_string();
    let config = Config::from_str(&config_text, &dir.path().join("portcullis.json")).unwrap();
    let data = dir.path().join("data");
    let gateway = Keeper::open(config, &data).unwrap();
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.serve(listener, std::future::pending()));

    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut request = client
            .post(file.server_url("up"))
            .bearer_auth(&file.token)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let response = post(init, None).await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let started = std::time::Instant::now();
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "x", "arguments": {} } });
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        post(call, Some(session)).await.unwrap().text().await.unwrap()
    })
    .await
    .expect("the call must end at the call timeout");
    let waited = started.elapsed();
    assert!(answer.contains("did not answer within 1 s"), "{answer}");
    assert!(waited < std::time::Duration::from_secs(4), "answered after {waited:?}");
}

/// 2026 era: an upstream's JSON-RPC error passes through as that error, whatever HTTP status
/// carried it — a 404 with -32601 used to come back as HTTP 200 with the gateway's -32603.
#[tokio::test]
async fn an_upstream_json_rpc_error_on_a_non_2xx_status_passes_through_unchanged() {
    let app = Router::new().route(
        "/mcp",
        post(|Json(body): Json<Value>| async move {
            let error = json!({ "jsonrpc": "2.0", "id": body["id"], "error": {
                "code": -32601, "message": "Method not found: nope/nothing", "data": { "why": "upstream's own" } } });
            (axum::http::StatusCode::NOT_FOUND, Json(error))
        }),
    );
    let upstream = serve_mcp(app).await;
    let dir = tempfile::tempdir().unwrap();
    let (url, token) = start_gateway(dir.path(), &upstream, r#"{"version":"1","default":"allow"}"#).await;
    let meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {} });
    let request = json!({ "jsonrpc": "2.0", "id": "q1", "method": "nope/nothing", "params": { "_meta": meta } });
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth(&token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-method", "nope/nothing")
        .json(&request)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        404,
        "the upstream's status is mirrored to a 2026 client"
    );
    let reply: Value = response.json().await.unwrap();
    assert_eq!(
        reply,
        json!({ "jsonrpc": "2.0", "id": "q1", "error": {
            "code": -32601, "message": "Method not found: nope/nothing", "data": { "why": "upstream's own" } } }),
        "the upstream's own error, unchanged"
    );
}

/// Signals when dropped: an upstream handler's future is dropped when its client goes away.
struct OnDrop(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// 2026 era through `portcullis connect` (its POSTs carry the relay header and wait for headers
/// before the next line is read): a slow call must not hold back the relay's next request, and
/// the relay's cancel must reach the HTTP upstream (the upstream's request is dropped). The
/// gateway used to answer the relay's POST only once the upstream's headers came, so calls were
/// served one at a time and a cancel found nothing to cancel.
#[tokio::test]
async fn relay_requests_to_an_http_upstream_run_concurrently_and_the_relays_cancel_reaches_it() {
    let (dropped_tx, dropped_rx) = tokio::sync::oneshot::channel::<()>();
    let dropped_tx = Arc::new(Mutex::new(Some(dropped_tx)));
    let app = Router::new().route(
        "/mcp",
        post(move |Json(body): Json<Value>| {
            let dropped_tx = dropped_tx.clone();
            async move {
                if body["params"]["name"] == "slow" {
                    let _guard = OnDrop(dropped_tx.lock().unwrap().take());
                    std::future::pending::<()>().await;
                }
                if body["method"] == "notifications/cancelled" {
                    return (axum::http::StatusCode::ACCEPTED, Json(Value::Null));
                }
                let result = json!({ "jsonrpc": "2.0", "id": body["id"], "result": {
                    "content": [{ "type": "text", "text": "quick" }], "resultType": "complete" } });
                (axum::http::StatusCode::OK, Json(result))
            }
        }),
    );
    let upstream = serve_mcp(app).await;
    let dir = tempfile::tempdir().unwrap();
    let (url, token) = start_gateway(dir.path(), &upstream, r#"{"version":"1","default":"allow"}"#).await;
    let relay = |body: Value| {
        reqwest::Client::new()
            .post(&url)
            .bearer_auth(&token)
            .header("accept", "application/json, text/event-stream")
            .header("x-portcullis-relay", "relay-test-1")
            .json(&body)
            .send()
    };
    let wait = std::time::Duration::from_secs(10);

    let slow = tokio::time::timeout(wait, relay(modern_call(1, "slow")))
        .await
        .expect("the relay's POST gets its headers at once, before the upstream answers")
        .unwrap();
    assert!(slow.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let quick = tokio::time::timeout(wait, async {
        relay(modern_call(2, "quick")).await.unwrap().text().await
    })
    .await
    .expect("a second request is served while the first is still running")
    .unwrap();
    assert!(quick.contains("\"quick\""), "{quick}");

    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1 } });
    assert_eq!(relay(cancel).await.unwrap().status(), 202);
    tokio::time::timeout(wait, dropped_rx)
        .await
        .expect("the relay's cancel must reach the upstream: its request is dropped")
        .unwrap();
    let rest = tokio::time::timeout(wait, slow.text())
        .await
        .expect("the cancelled stream ends")
        .unwrap();
    assert!(!rest.contains("\"id\":1"), "a cancelled request gets no answer: {rest}");
}
