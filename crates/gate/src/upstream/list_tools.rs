//! Listing a configured server's tools directly, without a gateway: `initialize`, then every page
//! of `tools/list` (unfiltered — hiding is the gateway's business, not the lister's).
//!
//! [`list_tools`] lists the tools (one short-lived connection); [`list_offered`] also lists the
//! resources, resource templates and prompts a server declares in its `initialize` result, for
//! `portcullis policy init`. A list the server declares but does not give (an error such as
//! method not found) is left out and said so, never a failure: the tools are what must be listed.
//! [`handshake`] and [`list_all_pages`] are the steps on their own, for callers that keep the
//! connection.

use std::time::Duration;

use portcullis_config::config::ServerConfig;
use portcullis_policy::starter::Offered;
use portcullis_wire::{error_code, method, Message};
use serde_json::{json, Value};

use super::{IdMode, Upstream};

/// The protocol version offered in `initialize`.
pub const PROTOCOL_VERSION: &str = "2025-06-18";
/// Most `tools/list` pages read from one server: a server whose cursor never ends is cut here.
pub const MAX_PAGES: usize = 100;

/// Why the tools could not be listed, with what the server wrote on stderr (stdio servers).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ListToolsError {
    pub message: String,
    pub stderr_tail: Vec<String>,
}

/// Everything a server lists ([`list_offered`]).
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Tools always; resources, templates and prompts when the server offers them.
    pub offered: Offered,
    /// Lists the server offers that could not be read: which, and why (each left out).
    pub unlisted: Vec<String>,
}

/// Starts `config`, lists its tools (every page) and stops it; bounded by `deadline` overall.
/// `client_name` is the `clientInfo.name` the server sees.
pub async fn list_tools(
    server: &str,
    config: &ServerConfig,
    client_name: &str,
    deadline: Duration,
) -> Result<Vec<Value>, ListToolsError> {
    with_server(server, config, deadline, |upstream| async move {
        handshake(&upstream, client_name).await?;
        list_all_pages(&upstream).await
    })
    .await
}

/// As [`list_tools`], and also every page of `resources/list`, `resources/templates/list` (when
/// the `initialize` result declares `resources`) and `prompts/list` (when it declares `prompts`).
pub async fn list_offered(
    server: &str,
    config: &ServerConfig,
    client_name: &str,
    deadline: Duration,
) -> Result<Listing, ListToolsError> {
    with_server(server, config, deadline, |upstream| async move {
        let init = handshake(&upstream, client_name).await?;
        let tools = list_all_pages(&upstream).await?;
        let offers = |capability: &str| {
            init.pointer(&format!("/capabilities/{capability}"))
                .is_some_and(Value::is_object)
        };
        let mut unlisted = Vec::new();
        let mut optional = |list: Result<Vec<Value>, String>| list.map_err(|why| unlisted.push(why)).ok();
        let mut offered = Offered {
            tools,
            ..Offered::default()
        };
        if offers("resources") {
            offered.resources = optional(list_pages(&upstream, method::RESOURCES_LIST, "resources", 1_000).await);
            offered.resource_templates =
                optional(list_pages(&upstream, method::RESOURCES_TEMPLATES_LIST, "resourceTemplates", 2_000).await);
        }
        if offers("prompts") {
            offered.prompts = optional(list_pages(&upstream, method::PROMPTS_LIST, "prompts", 3_000).await);
        }
        Ok(Listing { offered, unlisted })
    })
    .await
}

/// Starts `config`, runs `list` on it (answering what the server asks meanwhile) and stops it;
/// bounded by `deadline` overall.
async fn with_server<T, F, Fut>(
    server: &str,
    config: &ServerConfig,
    deadline: Duration,
    list: F,
) -> Result<T, ListToolsError>
where
    F: FnOnce(Upstream) -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let (events_tx, events_rx) = crate::queue::upstream_events();
    let upstream = Upstream::connect(server, config, IdMode::Remap, events_tx)
        .await
        .map_err(|e| ListToolsError {
            message: e.to_string(),
            stderr_tail: Vec::new(),
        })?;
    let answering = tokio::spawn(answer_server_requests(upstream.clone(), events_rx));
    let listed = tokio::time::timeout(deadline, list(upstream.clone()))
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "no answer to initialize and the lists within {} s",
                deadline.as_secs()
            ))
        });
    let stderr_tail = stderr_tail(&upstream);
    upstream.close().await;
    answering.abort();
    listed.map_err(|message| ListToolsError { message, stderr_tail })
}

/// `initialize` (declaring no client capabilities), then `notifications/initialized`; the
/// `initialize` result (the server's capabilities).
pub async fn handshake(upstream: &Upstream, client_name: &str) -> Result<Value, String> {
    let init = json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": { "name": client_name, "version": env!("CARGO_PKG_VERSION") },
    });
    let result = call(upstream, 0, method::INITIALIZE, &init).await?;
    let initialized = Message::notification(method::INITIALIZED, &json!({}));
    upstream.send(initialized).await.map_err(|e| e.to_string())?;
    Ok(result)
}

/// Every page of `tools/list`, following `nextCursor` up to [`MAX_PAGES`].
pub async fn list_all_pages(upstream: &Upstream) -> Result<Vec<Value>, String> {
    list_pages(upstream, method::TOOLS_LIST, "tools", 0).await
}

/// Every page of the list `method`, whose items are the result's `field`, following `nextCursor`
/// up to [`MAX_PAGES`]; the requests' ids count from `first_id + 1`.
async fn list_pages(upstream: &Upstream, method: &str, field: &str, first_id: u64) -> Result<Vec<Value>, String> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 1..=MAX_PAGES {
        let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({ "cursor": c }));
        let result = call(upstream, first_id + page as u64, method, &params).await?;
        match result.get(field) {
            Some(Value::Array(list)) => items.extend(list.iter().cloned()),
            _ => return Err(format!("the {method} answer has no {field:?} array")),
        }
        cursor = result.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
        if cursor.is_none() {
            return Ok(items);
        }
    }
    Err(format!(
        "{method} still had more pages after {MAX_PAGES}; refusing a possibly endless list"
    ))
}

/// The last lines a stdio server wrote to stderr (HTTP servers have none).
pub fn stderr_tail(upstream: &Upstream) -> Vec<String> {
    match upstream {
        Upstream::Stdio(child) => child.stderr_tail(),
        Upstream::Http(_) | Upstream::Sse(_) => Vec::new(),
    }
}

/// Answers what the server asks of this client while listing, so a server that asks does not hang.
async fn answer_server_requests(upstream: Upstream, mut events: crate::queue::Receiver<Message>) {
    while let Some(msg) = events.recv().await {
        answer_server_request(&upstream, &msg).await;
    }
}

/// A request from the server to a client that declared no capabilities: `ping` is answered,
/// anything else is "not offered". Notifications are left to the caller.
pub(crate) async fn answer_server_request(upstream: &Upstream, msg: &Message) {
    let (true, Some(id)) = (msg.is_request(), msg.id()) else {
        return;
    };
    let answer = if msg.method() == Some(method::PING) {
        Message::response(id, &json!({}))
    } else {
        Message::error_response(
            Some(id),
            error_code::METHOD_NOT_FOUND,
            "this Portcullis client offers no client features",
        )
    };
    let _ = upstream.send(answer).await;
}

/// One request; its result, or the error's text.
async fn call(upstream: &Upstream, id: u64, method: &str, params: &Value) -> Result<Value, String> {
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    let msg = Message::from_value(&body).map_err(|e| e.to_string())?;
    let mut exchange = upstream.request(msg, &[]).await.map_err(|e| e.to_string())?;
    while let Some(reply) = exchange.messages.recv().await {
        if !reply.is_response() {
            continue;
        }
        let value = reply.to_value().map_err(|e| e.to_string())?;
        if let Some(error) = value.get("error") {
            let text = error.get("message").and_then(Value::as_str).unwrap_or("error");
            return Err(format!("{method} failed: {text}"));
        }
        return Ok(value.get("result").cloned().unwrap_or(Value::Null));
    }
    Err(format!("the server closed the connection before answering {method}"))
}
