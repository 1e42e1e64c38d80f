//! What the modules here share.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use serde_json::Value;

/// Serves `app` on a loopback port for the rest of the test; the URL of its `/mcp`.
pub(crate) async fn serve_mcp(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// POSTs `body` to the keeper's entry as a client would; the JSON answer.
pub(crate) async fn post_json(url: &str, token: &str, body: &Value) -> Value {
    let response = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    response.json().await.unwrap()
}
