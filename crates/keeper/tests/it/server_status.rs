//! `GET /control/servers`: each upstream's health from the gateway's own monitor connection, and
//! a server added at run time (`Keeper::set_server`) served and reported without a restart.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use std::time::Duration;

use axum::response::IntoResponse;
use axum::routing::post;
use axum::{Json, Router};
use portcullis_config::config::{Config, ServerConfig};
use portcullis_keeper::Keeper;
use serde_json::{json, Value};

use crate::common::serve_mcp;

/// A Streamable HTTP upstream with two tools (stateless JSON answers).
async fn start_upstream() -> String {
    let app = Router::new().route(
        "/mcp",
        post(|Json(body): Json<Value>| async move {
            let result = match body["method"].as_str() {
                Some("initialize") => json!({ "protocolVersion": "2025-06-18", "capabilities": { "tools": {} },
                                              "serverInfo": { "name": "two", "version": "1" } }),
                Some("tools/list") => json!({ "tools": [
                    { "name": "read_note", "inputSchema": { "type": "object" } },
                    { "name": "delete_note", "inputSchema": { "type": "object" } } ] }),
                _ => json!({ "content": [{ "type": "text", "text": "ok" }] }),
            };
            match body.get("id") {
                Some(id) => Json(json!({ "jsonrpc": "2.0", "id": id, "result": result })).into_response(),
                None => axum::http::StatusCode::ACCEPTED.into_response(),
            }
        }),
    );
    let url = serve_mcp(app).await;
    url
}

#[tokio::test]
async fn control_servers_reports_each_upstream_and_servers_added_at_run_time() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = start_upstream().await;
    let config_text = json!({ "listen": "127.0.0.1:0", "mcpServers": {
        "notes": { "url": upstream },
        "broken": { "command": "/nonexistent/portcullis-test-server" } } })
    .to_string();
    let config = Config::from_str(&config_text, &dir.path().join("portcullis.json")).unwrap();
    let data = dir.path().join("data");
    let gateway = Keeper::open(config, &data).unwrap();
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.clone().serve(listener, std::future::pending()));
    let servers = || async {
        reqwest::Client::new()
            .get(format!("{}/control/servers", file.url))
            .bearer_auth(&file.token)
            .send()
            .await
            .unwrap()
            .json::<Vec<Value>>()
            .await
            .unwrap()
    };
    // Let every monitor connection settle (bounded), then ask the endpoint once.
    for probe in gateway.servers().all() {
        gateway.servers().ensure(&probe, Duration::from_secs(10)).await;
    }
    let list = servers().await;
    let by_name = |list: &[Value], name: &str| list.iter().find(|s| s["name"] == name).cloned().unwrap();
    let notes = by_name(&list, "notes");
    assert_eq!(
        (notes["state"].as_str(), notes["tool_count"].as_u64()),
        (Some("running"), Some(2)),
        "{notes}"
    );
    assert_eq!(notes["transport"], "http");
    let broken = by_name(&list, "broken");
    assert_eq!(broken["state"], "error", "{broken}");
    let why = broken["stderr_tail"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap();
    assert!(why.starts_with("[portcullis]"), "{why}");

    gateway
        .set_server(
            "more",
            ServerConfig::Http {
                url: upstream.clone(),
                headers: Default::default(),
            },
        )
        .await;
    assert_eq!(gateway.transport("more"), Some("http"));
    let probe = gateway.servers().get("more").unwrap();
    let status = gateway.servers().ensure(&probe, Duration::from_secs(10)).await;
    assert_eq!(probe.report(&status).tool_count, Some(2));
    let list = servers().await;
    let names: Vec<&str> = list.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["broken", "more", "notes"]);
}
