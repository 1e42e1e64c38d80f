//! Headers that mirror the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`)
//! through the HTTP entry to an HTTP upstream, in-process, in both eras: a header that disagrees
//! with the body, or that the body gives no value for, is refused (400, -32020) and never reaches
//! the upstream; the upstream's `Mcp-Param-*` headers are written from the body. The upstream is a
//! small axum handler whose one tool declares `x-mcp-header` arguments and that records the
//! headers of every call it gets.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::{Json, Router};
use portcullis_config::config::Config;
use portcullis_keeper::Keeper;
use serde_json::{json, Value};

use crate::common::serve_mcp;

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

type Calls = Arc<Mutex<Vec<(HeaderMap, Value)>>>;

fn tool() -> Value {
    json!({ "name": "route", "inputSchema": { "type": "object", "properties": {
        "region": { "type": "string", "x-mcp-header": "Region" },
        "count": { "type": "integer", "x-mcp-header": "Count" },
        "query": { "type": "string" } } } })
}

/// Answers initialize, tools/list and tools/call (recording each call's headers and body).
async fn start_upstream() -> (String, Calls) {
    let calls: Calls = Arc::default();
    let record = calls.clone();
    let app = Router::new().route(
        "/mcp",
        post(move |headers: HeaderMap, Json(body): Json<Value>| {
            let record = record.clone();
            async move {
                let result = match body["method"].as_str() {
                    Some("initialize") => json!({ "protocolVersion": LEGACY, "capabilities": { "tools": {} },
                                                  "serverInfo": { "name": "mirror", "version": "1" } }),
                    Some("tools/list") => json!({ "tools": [tool()] }),
                    Some("tools/call") => {
                        record.lock().unwrap().push((headers, body.clone()));
                        json!({ "content": [{ "type": "text", "text": "ran" }] })
                    }
                    Some("resources/read") => {
                        record.lock().unwrap().push((headers, body.clone()));
                        json!({ "contents": [{ "uri": body["params"]["uri"], "text": "read" }] })
                    }
                    _ => return StatusCode::ACCEPTED.into_response(),
                };
                Json(json!({ "jsonrpc": "2.0", "id": body["id"], "result": result })).into_response()
            }
        }),
    );
    let url = serve_mcp(app).await;
    (url, calls)
}

async fn start_gateway(dir: &Path, upstream_url: &str) -> (String, String) {
    std::fs::create_dir_all(dir.join("policies")).unwrap();
    std::fs::write(dir.join("policies/up.json"), r#"{"version":"1","default":"allow"}"#).unwrap();
    let config_text = json!({ "listen": "127.0.0.1:0", "mcpServers": { "up": { "url": upstream_url } } }).to_string();
    let config = Config::from_str(&config_text, &dir.join("portcullis.json")).unwrap();
    let data = dir.join("data");
    let gateway = Keeper::open(config, &data).unwrap();
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    (file.server_url("up"), file.token)
}

/// One client: the gateway's URL and token, and the legacy session it opened, if any.
struct Client {
    url: String,
    token: String,
    session: Option<String>,
}

impl Client {
    async fn post(&self, headers: &[(&str, &str)], body: &Value) -> (StatusCode, Value) {
        let mut request = reqwest::Client::new()
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.json(body).send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        // A JSON body, or the last `data:` line of an SSE one.
        let json = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or(&text);
        (status, serde_json::from_str(json).unwrap_or(Value::Null))
    }
}

fn meta(era: &str) -> Value {
    if era == MODERN {
        json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientCapabilities": {} } })
    } else {
        json!({})
    }
}

fn request(era: &str, id: u64, method: &str, mut params: Value) -> Value {
    if let (Some(params), Value::Object(meta)) = (params.as_object_mut(), meta(era)) {
        params.extend(meta);
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// A client that has listed the tools (so the gateway knows the schema), in `era`.
async fn client(url: &str, token: &str, era: &str) -> Client {
    let mut client = Client {
        url: url.to_owned(),
        token: token.to_owned(),
        session: None,
    };
    if era == LEGACY {
        let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
        let response = reqwest::Client::new()
            .post(url)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&init)
            .send()
            .await
            .unwrap();
        let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        client.session = Some(id);
        let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        let (status, _) = client.post(&[("mcp-protocol-version", LEGACY)], &initialized).await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    let list = request(era, 1, "tools/list", json!({}));
    let (status, listed) = client.post(&[("mcp-method", "tools/list")], &list).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["result"]["tools"][0]["name"], "route", "{listed}");
    client
}

fn call(era: &str, id: u64, arguments: &Value) -> Value {
    request(
        era,
        id,
        "tools/call",
        json!({ "name": "route", "arguments": arguments }),
    )
}

fn assert_refused(status: StatusCode, reply: &Value, needle: &str) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    assert_eq!(reply["error"]["code"], -32020, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("[portcullis]") && message.contains(needle),
        "{message:?} should name {needle:?}"
    );
}

#[tokio::test]
async fn param_headers_that_disagree_with_the_body_are_refused_in_both_eras() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, calls) = start_upstream().await;
    let (url, token) = start_gateway(dir.path(), &upstream).await;
    for era in [MODERN, LEGACY] {
        let c = client(&url, &token, era).await;
        let args = json!({ "region": "us-west1", "count": 42, "query": "q" });
        let cases: [(&[(&str, &str)], &str); 6] = [
            (
                &[("mcp-param-region", "eu-west1")],
                "Mcp-Param-region header does not match",
            ),
            (&[("mcp-param-count", "43")], "Mcp-Param-count header does not match"),
            (&[("mcp-param-region", "=?base64?ZXUtd2VzdDE=?=")], "does not match"),
            (&[("mcp-param-query", "q")], "declares"),
            (
                &[("mcp-param-region", "us-west1"), ("mcp-param-region", "eu-west1")],
                "more than once",
            ),
            (&[("mcp-name", "other")], "Mcp-Name"),
        ];
        for (i, (headers, needle)) in cases.into_iter().enumerate() {
            let (status, reply) = c.post(headers, &call(era, 10 + i as u64, &args)).await;
            assert_refused(status, &reply, needle);
        }
        // A header whose argument the body leaves out.
        let (status, reply) = c
            .post(
                &[("mcp-param-region", "us-west1")],
                &call(era, 20, &json!({ "count": 1 })),
            )
            .await;
        assert_refused(status, &reply, "gives none");
        assert!(
            calls.lock().unwrap().is_empty(),
            "{era}: no refused call reached the upstream"
        );
    }
}

#[tokio::test]
async fn an_mcp_name_that_disagrees_with_a_resource_uri_is_refused_in_both_eras() {
    // `Mcp-Name` mirrors `params.uri` of resources/read: a server that routes on the header must
    // not read another resource than the one the gate decided on.
    let dir = tempfile::tempdir().unwrap();
    let (upstream, calls) = start_upstream().await;
    let (url, token) = start_gateway(dir.path(), &upstream).await;
    for era in [MODERN, LEGACY] {
        let c = client(&url, &token, era).await;
        let read = |id: u64| request(era, id, "resources/read", json!({ "uri": "file:///tmp/notes.txt" }));
        let (status, reply) = c.post(&[("mcp-name", "file:///etc/shadow")], &read(30)).await;
        assert_refused(status, &reply, "Mcp-Name");
        assert!(
            calls.lock().unwrap().is_empty(),
            "{era}: the refused read reached the upstream"
        );
        let (status, reply) = c.post(&[("mcp-name", "file:///tmp/notes.txt")], &read(31)).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        assert_eq!(reply["result"]["contents"][0]["text"], "read", "{reply}");
        let recorded = calls.lock().unwrap();
        assert_eq!(recorded.len(), 1, "{era}: the read was forwarded once");
        let (headers, body) = recorded.last().unwrap();
        assert_eq!(body["params"]["uri"], "file:///tmp/notes.txt");
        if era == MODERN {
            assert_eq!(headers["mcp-name"], "file:///tmp/notes.txt", "written from the body");
        }
        drop(recorded);
        calls.lock().unwrap().clear();
    }
}

#[tokio::test]
async fn the_upstream_gets_param_headers_written_from_the_body_in_both_eras() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, calls) = start_upstream().await;
    let (url, token) = start_gateway(dir.path(), &upstream).await;
    for era in [MODERN, LEGACY] {
        let c = client(&url, &token, era).await;
        // Headers that agree (the integer as 42.0: the spec compares integers numerically).
        let args = json!({ "region": "us-west1", "count": 42, "query": "q" });
        let agreeing = [
            ("mcp-param-region", "us-west1"),
            ("mcp-param-count", "42.0"),
            ("mcp-name", "route"),
        ];
        let (status, reply) = c.post(&agreeing, &call(era, 30, &args)).await;
        assert_eq!(
            (status, &reply["result"]["content"][0]["text"]),
            (StatusCode::OK, &json!("ran")),
            "{reply}"
        );
        // No headers from the client: the upstream still gets them, from the body.
        let args = json!({ "region": " café ", "query": "q" });
        let (status, reply) = c.post(&[], &call(era, 31, &args)).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        let seen = std::mem::take(&mut *calls.lock().unwrap());
        let sent: Vec<(Option<&str>, Option<&str>)> = seen
            .iter()
            .map(|(h, _)| {
                let text = |n: &str| h.get(n).map(|v| v.to_str().unwrap());
                (text("mcp-param-region"), text("mcp-param-count"))
            })
            .collect();
        assert_eq!(
            sent,
            [(Some("us-west1"), Some("42")), (Some("=?base64?IGNhZsOpIA==?="), None)],
            "{era}: the body's values, in the spec's form, and nothing else"
        );
        assert!(seen.iter().all(|(h, _)| h.get("mcp-param-query").is_none()));
    }
}

#[tokio::test]
async fn a_protocol_version_header_that_disagrees_with_the_body_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, calls) = start_upstream().await;
    let (url, token) = start_gateway(dir.path(), &upstream).await;
    let c = client(&url, &token, MODERN).await;
    let args = json!({ "region": "r" });
    let (status, reply) = c
        .post(&[("mcp-protocol-version", "2025-06-18")], &call(MODERN, 40, &args))
        .await;
    assert_refused(status, &reply, "MCP-Protocol-Version");
    // Mcp-Param-* on a method that mirrors no arguments.
    let list = request(MODERN, 41, "tools/list", json!({}));
    let (status, reply) = c.post(&[("mcp-param-region", "r")], &list).await;
    assert_refused(status, &reply, "only a tools/call");
    assert!(calls.lock().unwrap().is_empty());
}
