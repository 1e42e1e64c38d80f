//! Pausing approvals: while paused, a call that would wait for a person is denied at once by
//! the gateway (recorded as such) and never reaches the upstream; resuming holds calls again.
//! The switch is announced on the event stream the control API and the desktop app follow.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use std::sync::{Arc, Mutex};

use axum::routing::post;
use axum::{Json, Router};
use portcullis_audit::{AuditFilter, AuditStore, DecidedBy, Decision};
use portcullis_config::config::Config;
use portcullis_gate::events::GatewayEvent;
use portcullis_keeper::Keeper;
use serde_json::{json, Value};

use crate::common::serve_mcp;

/// An upstream that answers every call and counts them.
async fn start_upstream() -> (String, Arc<Mutex<usize>>) {
    let calls = Arc::new(Mutex::new(0));
    let count = calls.clone();
    let app = Router::new().route(
        "/mcp",
        post(move |Json(body): Json<Value>| {
            let count = count.clone();
            async move {
                *count.lock().unwrap() += 1;
                Json(json!({ "jsonrpc": "2.0", "id": body["id"], "result": { "content": [{ "type": "text", "text": "ok" }], "resultType": "complete" } }))
            }
        }),
    );
    let url = serve_mcp(app).await;
    (url, calls)
}

fn call(id: u64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "write_file", "arguments": { "path": "/tmp/x" },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } })
}

#[tokio::test]
async fn a_paused_gateway_denies_held_calls_without_asking_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream, calls) = start_upstream().await;
    std::fs::create_dir_all(dir.path().join("policies")).unwrap();
    std::fs::write(
        dir.path().join("policies/up.json"),
        r#"{"version":"1","default":"require_approval"}"#,
    )
    .unwrap();
    let config_text = json!({ "listen": "127.0.0.1:0", "mcpServers": { "up": { "url": upstream } } }).to_string();
    let config = Config::from_str(&config_text, &dir.path().join("portcullis.json")).unwrap();
    let data = dir.path().join("data");
    let gateway = Keeper::open(config, &data).unwrap();
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.clone().serve(listener, std::future::pending()));
    let _approver = gateway.attach_approver();
    let mut events = gateway.subscribe();

    assert!(!gateway.paused());
    gateway.set_paused(true);
    gateway.set_paused(true); // no change: no second event
    assert!(gateway.paused());
    assert!(matches!(
        events.recv().await.unwrap(),
        GatewayEvent::PauseChanged { paused: true }
    ));

    let post = |body: Value| {
        reqwest::Client::new()
            .post(file.server_url("up"))
            .bearer_auth(&file.token)
            .json(&body)
            .send()
    };
    let reply: Value = post(call(1)).await.unwrap().json().await.unwrap();
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(
        text.starts_with("[portcullis] Portcullis is paused:") && text.contains("write_file"),
        "{text}"
    );
    assert_eq!(*calls.lock().unwrap(), 0, "a paused call never reaches the upstream");
    assert!(gateway.pending_approvals().is_empty(), "nothing is held while paused");
    let rows = AuditStore::open(&data.join(portcullis_keeper::AUDIT_FILE))
        .unwrap()
        .query(&AuditFilter::default(), 10)
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].decision, rows[0].decided_by),
        (Decision::Denied, DecidedBy::Gateway)
    );
    assert_eq!(rows[0].reason.as_deref(), Some("Portcullis is paused"));

    // Resumed: the next call is held for a person again.
    gateway.set_paused(false);
    let held = tokio::spawn(post(call(2)));
    let requested = loop {
        match tokio::time::timeout(std::time::Duration::from_secs(10), events.recv()).await {
            Ok(Ok(GatewayEvent::ApprovalRequested { approval })) => break approval,
            Ok(Ok(_)) => {}
            other => panic!("no ApprovalRequested after resuming: {other:?}"),
        }
    };
    gateway
        .choose(
            &requested.id,
            portcullis_keeper::choose::Choice::Approve(portcullis_gate::held_calls::pending::Scope::Once),
        )
        .unwrap();
    // A held call is answered on an event stream: the response is its last `data:` line.
    let body = held.await.unwrap().unwrap().text().await.unwrap();
    let data = body
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data:"))
        .unwrap_or(&body);
    let reply: Value = serde_json::from_str(data.trim()).unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "ok", "{reply}");
}
