//! A client that names no configured server, or brings the wrong token or hello, is refused with a
//! typed code ([`RefusalCode`]) beside the words a person reads, on both entries: the local
//! socket's hello and the HTTP MCP route. `portcullis connect` branches on the code.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use portcullis_config::config::Config;
use portcullis_gate::local_conn::RefusalCode;
use portcullis_gate::local_conn::{Hello, PROTOCOL};
use portcullis_gate::local_socket;
use portcullis_keeper::Keeper;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const WITHIN: Duration = Duration::from_secs(10);

/// A gateway with one server, `known` (never started: every test here is refused before that).
/// Its base URL, token and local socket.
async fn start(dir: &std::path::Path) -> (String, String, std::path::PathBuf) {
    let config = json!({ "listen": "127.0.0.1:0", "mcpServers": { "known": { "command": "true" } } });
    let config = Config::from_str(&config.to_string(), &dir.join("portcullis.json")).unwrap();
    let data = dir.join("data");
    let gateway = Keeper::open(config, &data).unwrap();
    let (listener, file) = gateway.bind(&data).await.unwrap();
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    let socket = file.socket.expect("a local socket on this platform");
    (file.url, file.token, socket)
}

/// Sends `hello` on a new socket connection; the gateway's one answer line, once it closed.
async fn hello_answer(socket: &std::path::Path, hello: &Hello) -> Value {
    let mut stream = local_socket::connect(socket).await.unwrap();
    stream.write_all(&hello.line()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WITHIN, stream.read_to_end(&mut answer))
        .await
        .expect("a refused connection is closed")
        .unwrap();
    serde_json::from_slice(&answer).unwrap()
}

fn code_of(value: &Value) -> RefusalCode {
    serde_json::from_value(value.clone()).unwrap()
}

#[tokio::test]
async fn local_conn_refuses_an_unknown_server_with_a_typed_code() {
    let dir = tempfile::tempdir().unwrap();
    let (_, token, socket) = start(dir.path()).await;
    let hello = |server: &str, token: &str, portcullis: u32| Hello {
        portcullis,
        server: server.to_owned(),
        token: token.to_owned(),
        role: None,
        link: None,
    };

    let answer = hello_answer(&socket, &hello("nope", &token, PROTOCOL)).await;
    assert_eq!(
        code_of(&answer["error"]["data"]["code"]),
        RefusalCode::UnknownServer,
        "{answer}"
    );
    assert_eq!(
        answer["error"]["message"], "[portcullis] no server named \"nope\" in the config",
        "the words for a person stay beside the code: {answer}"
    );
    assert_eq!(
        answer["error"]["code"], -32600,
        "still a JSON-RPC error any client can show: {answer}"
    );

    let answer = hello_answer(&socket, &hello("known", "not-the-token", PROTOCOL)).await;
    assert_eq!(
        code_of(&answer["error"]["data"]["code"]),
        RefusalCode::BadToken,
        "{answer}"
    );
    let answer = hello_answer(&socket, &hello("known", &token, PROTOCOL + 1)).await;
    assert_eq!(
        code_of(&answer["error"]["data"]["code"]),
        RefusalCode::BadHello,
        "{answer}"
    );
}

#[tokio::test]
async fn http_mcp_refuses_an_unknown_server_with_a_typed_404() {
    let dir = tempfile::tempdir().unwrap();
    let (url, token, _) = start(dir.path()).await;
    let http = reqwest::Client::builder().no_proxy().timeout(WITHIN).build().unwrap();
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {} });
    for request in [
        http.post(format!("{url}/mcp/nope")).json(&initialize),
        http.get(format!("{url}/mcp/nope")),
    ] {
        let response = request.bearer_auth(&token).send().await.unwrap();
        assert_eq!(response.status(), reqwest::StatusCode::NOT_FOUND);
        let body: Value = response.json().await.expect("a JSON body");
        assert_eq!(code_of(&body["code"]), RefusalCode::UnknownServer, "{body}");
        assert_eq!(
            body["error"], "portcullis: no server named \"nope\" in the config",
            "{body}"
        );
    }
}

#[test]
fn a_code_from_a_newer_gateway_reads_as_other() {
    assert_eq!(code_of(&json!("something_new")), RefusalCode::Other);
    assert_eq!(
        serde_json::to_value(RefusalCode::UnknownServer).unwrap(),
        "unknown_server"
    );
}
