//! POST / GET / DELETE on `/mcp/<server>`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use portcullis_wire::message::refusal_id;
use portcullis_wire::mirror::params::{Received, PARAM_PREFIX};
use portcullis_wire::{error_code, method, mirror, sse, Kind, Message};
use serde_json::Value;

use crate::Keeper;
use portcullis_gate::gate::Caller;
use portcullis_gate::local_conn::RefusalCode;
use portcullis_gate::session::{Reply, RequestContext, Session};

pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
/// Sent by `portcullis connect`: the relay's agent session, and "open the stream now".
pub(crate) const RELAY_HEADER: &str = "x-portcullis-relay";

pub(crate) async fn health() -> impl IntoResponse {
    axum::Json(serde_json::json!({ "status": "ok" }))
}

pub(crate) async fn post(
    State(gw): State<Arc<Keeper>>,
    Path(server): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    if !gw.has_server(&server) {
        return unknown_server(&server);
    }
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return body_refused(&rejection),
    };
    if let Err(why) = portcullis_gate::limits::check_client_message(&body) {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            error_code::PARSE_ERROR,
            &format!("[portcullis] {why}"),
        );
    }
    let msg = match Message::parse(body.clone()) {
        Ok(msg) => msg,
        Err(e) => {
            tracing::warn!(server, error = %e, "client message refused");
            let reply = Message::error_response(refusal_id(&body).as_ref(), e.code(), &format!("[portcullis] {e}"));
            return json_response(StatusCode::BAD_REQUEST, &reply);
        }
    };
    if let Err(why) = check_mirror_headers(&headers, &msg) {
        return header_mismatch(&msg, &why);
    }
    let params_said = received_params(&headers);
    if !params_said.is_empty() && msg.method() != Some(method::TOOLS_CALL) {
        return header_mismatch(
            &msg,
            "only a tools/call's arguments are mirrored into Mcp-Param-* headers",
        );
    }
    let session_header = header_str(&headers, SESSION_HEADER);
    let is_initialize = msg.method() == Some(method::INITIALIZE);
    let (session, new_session) = match (session_header, is_initialize) {
        (Some(id), false) => match gw.plane().session(&server, id) {
            Some(s) => (s, false),
            None => {
                return rpc_error(
                    StatusCode::NOT_FOUND,
                    error_code::INVALID_REQUEST,
                    "[portcullis] unknown or ended session; initialize again",
                )
            }
        },
        (_, true) => match gw.plane().open_session(&server).await {
            Ok(s) => (s, true),
            Err(portcullis_gate::upstream::UpstreamError::Full(why)) => return session_refused(&msg, &why),
            Err(e) => return start_failed(&msg, &e.to_string()),
        },
        (None, false) => match gw.plane().stateless_session(&server).await {
            Ok(s) => (s, false),
            Err(e) => return start_failed(&msg, &e.to_string()),
        },
    };

    // Both paths (a session's and the shared stateless one) come through here; the upstream gets
    // these headers written from the body, so a header the body does not back is refused.
    if let Err(why) = session.check_param_headers(&msg, &params_said) {
        return header_mismatch(&msg, &why);
    }

    match msg.kind() {
        Kind::Request { .. } => {
            let ctx = RequestContext {
                caller: caller(&session, &headers, &msg),
                stream_now: headers.contains_key(RELAY_HEADER),
                accepts_sse: accepts_sse(&headers),
                sink: None,
            };
            let reply = session.request(msg, ctx).await;
            if new_session && !initialize_succeeded(&reply) {
                gw.plane().end_session(&session.id).await;
            }
            let mut response = render(reply);
            if new_session {
                if let Ok(value) = HeaderValue::from_str(&session.id) {
                    response.headers_mut().insert(SESSION_HEADER, value);
                }
            }
            response
        }
        Kind::Notification { .. } | Kind::Response { .. } => {
            // The caller only matters to a cancel (it names the held call); other
            // notifications skip reading their params.
            let who = if msg.method() == Some(method::CANCELLED) {
                caller(&session, &headers, &msg)
            } else {
                Caller::default()
            };
            send(&session, msg, &who).await
        }
    }
}

async fn send(session: &Session, msg: Message, caller: &Caller) -> Response {
    match session.send(msg, caller).await {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(e) => (StatusCode::BAD_GATEWAY, format!("portcullis: {e}\n")).into_response(),
    }
}

/// The standalone SSE stream for server-initiated messages (legacy sessions).
pub(crate) async fn get(State(gw): State<Arc<Keeper>>, Path(server): Path<String>, headers: HeaderMap) -> Response {
    match existing_session(&gw, &server, &headers) {
        Ok(session) => render(Reply::Sse(session.open_event_stream())),
        Err(response) => *response,
    }
}

pub(crate) async fn delete(State(gw): State<Arc<Keeper>>, Path(server): Path<String>, headers: HeaderMap) -> Response {
    match existing_session(&gw, &server, &headers) {
        Ok(session) => {
            gw.plane().end_session(&session.id).await;
            StatusCode::NO_CONTENT.into_response()
        }
        Err(response) => *response,
    }
}

/// The session a GET or DELETE names in `Mcp-Session-Id`.
fn existing_session(gw: &Keeper, server: &str, headers: &HeaderMap) -> Result<Arc<Session>, Box<Response>> {
    if !gw.has_server(server) {
        return Err(Box::new(unknown_server(server)));
    }
    let refuse = |status: StatusCode, text: &'static str| Box::new((status, text).into_response());
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        return Err(refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            "portcullis: this needs an Mcp-Session-Id (from initialize)\n",
        ));
    };
    gw.plane()
        .session(server, id)
        .ok_or_else(|| refuse(StatusCode::NOT_FOUND, "portcullis: unknown or ended session\n"))
}

fn render(reply: Reply) -> Response {
    #[allow(clippy::match_same_arms, reason = "two different reasons for one answer, each said")]
    match reply {
        // A cancelled request gets no answer: the POST ends empty, as for a notification.
        Reply::Cancelled => StatusCode::ACCEPTED.into_response(),
        Reply::Json(msg) => (
            [(header::CONTENT_TYPE, "application/json")],
            Body::from(msg.bytes().clone()),
        )
            .into_response(),
        Reply::JsonStatus(status, msg) => {
            json_response(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY), &msg)
        }
        Reply::Sse(rx) => {
            let stream = rx.map(|msg| Ok::<_, Infallible>(sse::encode_event(msg.bytes())));
            (
                [
                    (header::CONTENT_TYPE, "text/event-stream"),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                Body::from_stream(stream),
            )
                .into_response()
        }
        // Only a request with a sink is answered so, and HTTP requests have none.
        Reply::Sent => StatusCode::ACCEPTED.into_response(),
    }
}

/// The agent session of a request (docs/decisions.md, "Sessions"): the gateway session for legacy clients;
/// for stateless requests the relay's id, else the client's self-reported identity.
fn caller(session: &Session, headers: &HeaderMap, msg: &Message) -> Caller {
    portcullis_gate::session::caller_for(session, header_str(headers, RELAY_HEADER), msg)
}

/// `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` must agree with the body, which decides
/// ([`portcullis_wire::mirror`]), whatever the era: a legacy-era request that carries them anyway
/// is held to them too. `Err` says which one does not.
fn check_mirror_headers(headers: &HeaderMap, msg: &Message) -> Result<(), String> {
    let mismatch = |what: &str| Err(format!("the {what} header does not match the request body"));
    for name in [mirror::METHOD_HEADER, mirror::NAME_HEADER, VERSION_HEADER] {
        if headers.get_all(name).iter().nth(1).is_some() {
            return Err(format!("the {name} header appears more than once"));
        }
    }
    if let Some(m) = headers.get(mirror::METHOD_HEADER) {
        if m.to_str().ok().map(trim_ows) != msg.method() {
            return mismatch("Mcp-Method");
        }
    }
    let params = || msg.params::<Value>().unwrap_or(Value::Null);
    if let Some(name) = headers.get(mirror::NAME_HEADER) {
        let said = name.to_str().ok().map(trim_ows).and_then(mirror::decode_header_value);
        let params = params();
        let body = msg.method().and_then(|m| mirror::mirrored_name(m, &params));
        if said.is_none() || said.as_deref() != body {
            return mismatch("Mcp-Name");
        }
    }
    // Only a request that names its version in `_meta` (2026-07-28) mirrors it; a legacy
    // session's header carries the version negotiated at initialize, which the body never says.
    if let Some(version) = headers.get(VERSION_HEADER) {
        let params = params();
        let body = params.get("_meta").and_then(|m| m.get(method::META_PROTOCOL_VERSION));
        if let Some(body) = body {
            if version.to_str().ok().map(trim_ows) != body.as_str() {
                return mismatch("MCP-Protocol-Version");
            }
        }
    }
    Ok(())
}

/// HTTP strips a field value's edge spaces and tabs; a value that needs them travels in base64.
fn trim_ows(value: &str) -> &str {
    value.trim_matches([' ', '\t'])
}

/// A header that says something the body does not: 400 with JSON-RPC `-32020`, as the
/// 2026-07-28 transport asks of every server that reads the body.
fn header_mismatch(msg: &Message, why: &str) -> Response {
    tracing::warn!(why, "request refused: a header does not mirror the body");
    let text = format!("[portcullis] {why}; the body is what is decided and forwarded, and headers must agree with it");
    let reply = Message::error_response(msg.id(), error_code::HEADER_MISMATCH, &text);
    json_response(StatusCode::BAD_REQUEST, &reply)
}

fn initialize_succeeded(reply: &Reply) -> bool {
    match reply {
        Reply::Json(msg) => !matches!(msg.kind(), Kind::Response { is_error: true, .. }),
        Reply::JsonStatus(..) | Reply::Cancelled => false,
        Reply::Sse(_) | Reply::Sent => true,
    }
}

/// The request's `Mcp-Param-*` headers, each occurrence apart (a repeated one is refused).
fn received_params(headers: &HeaderMap) -> Vec<Received<'_>> {
    headers
        .iter()
        .filter_map(|(name, value)| {
            let name = name.as_str().strip_prefix(PARAM_PREFIX)?;
            Some(Received {
                name,
                value: value.to_str().ok(),
            })
        })
        .collect()
}

fn accepts_sse(headers: &HeaderMap) -> bool {
    header_str(headers, header::ACCEPT.as_str()).is_none_or(|a| a.contains("text/event-stream") || a.contains("*/*"))
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn unknown_server(server: &str) -> Response {
    let body = serde_json::json!({
        "code": RefusalCode::UnknownServer,
        "error": format!("portcullis: no server named {server:?} in the config"),
    });
    (StatusCode::NOT_FOUND, axum::Json(body)).into_response()
}

/// A session limit is full: a JSON-RPC error with the reason (HTTP 200, so every client shows
/// the text rather than a bare status).
fn session_refused(msg: &Message, why: &str) -> Response {
    let reply = Message::error_response(msg.id(), error_code::INTERNAL_ERROR, why);
    (
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(reply.bytes().clone()),
    )
        .into_response()
}

fn start_failed(msg: &Message, why: &str) -> Response {
    let text = format!("[portcullis] cannot start the upstream server: {why}");
    let reply = Message::error_response(msg.id(), error_code::INTERNAL_ERROR, &text);
    (
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(reply.bytes().clone()),
    )
        .into_response()
}

/// A body that could not be read: over [`super::MAX_BODY`] (413) or cut off.
fn body_refused(rejection: &BytesRejection) -> Response {
    let status = rejection.status();
    let text = if status == StatusCode::PAYLOAD_TOO_LARGE {
        format!(
            "[portcullis] message larger than the {} MiB limit; not read",
            super::MAX_BODY / (1024 * 1024)
        )
    } else {
        format!("[portcullis] cannot read the request body: {rejection}")
    };
    tracing::warn!(%status, "request body refused: {text}");
    rpc_error(status, error_code::PARSE_ERROR, &text)
}

fn rpc_error(status: StatusCode, code: i64, text: &str) -> Response {
    json_response(status, &Message::error_response(None, code, text))
}

fn json_response(status: StatusCode, reply: &Message) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(reply.bytes().clone()),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    fn call(version: &str) -> Message {
        let body = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "echo", "arguments": {}, "_meta": { "io.modelcontextprotocol/protocolVersion": version } } });
        Message::parse(Bytes::from(body.to_string())).unwrap()
    }

    #[test]
    fn the_client_info_is_read_from_meta_as_a_string_or_not_at_all() {
        let with = |meta: Value| {
            let body = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": { "name": "echo", "arguments": {"a": [1, 2]}, "_meta": meta } });
            portcullis_gate::session::client_info(&Message::parse(Bytes::from(body.to_string())).unwrap())
        };
        let info = |v: Value| with(serde_json::json!({ method::META_CLIENT_INFO: v }));
        assert_eq!(
            info(serde_json::json!({"name": "agent", "version": "2"})),
            (Some("agent".into()), Some("2".into()))
        );
        assert_eq!(
            info(serde_json::json!({"name": "agent", "version": 2})),
            (Some("agent".into()), None)
        );
        assert_eq!(info(serde_json::json!("agent")), (None, None));
        assert_eq!(with(serde_json::json!({"clientInfo": {"name": "agent"}})), (None, None));
    }

    #[test]
    fn routing_headers_must_agree_with_the_body_once() {
        let msg = call("2026-07-28");
        let agreeing = [
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
            ("mcp-protocol-version", "2026-07-28"),
        ];
        assert_eq!(check_mirror_headers(&headers(&agreeing), &msg), Ok(()));
        assert_eq!(
            check_mirror_headers(&headers(&[]), &msg),
            Ok(()),
            "absent headers are written from the body"
        );
        assert_eq!(
            check_mirror_headers(&headers(&[("mcp-name", "=?base64?ZWNobw==?=")]), &msg),
            Ok(())
        );
        let refused = [
            (&[("mcp-method", "tools/list")][..], "Mcp-Method"),
            (&[("mcp-name", "Echo")][..], "Mcp-Name"),
            (&[("mcp-protocol-version", "2025-06-18")][..], "MCP-Protocol-Version"),
            (&[("mcp-name", "echo"), ("mcp-name", "other")][..], "more than once"),
            (
                &[("mcp-method", "tools/call"), ("mcp-method", "tools/call")][..],
                "more than once",
            ),
        ];
        for (pairs, needle) in refused {
            let why = check_mirror_headers(&headers(pairs), &msg).unwrap_err();
            assert!(why.contains(needle), "{pairs:?}: {why}");
        }
    }

    #[test]
    fn a_legacy_request_keeps_its_negotiated_version_header() {
        let body = serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                       "params": { "name": "echo", "arguments": {} } });
        let msg = Message::parse(Bytes::from(body.to_string())).unwrap();
        let legacy = [("mcp-protocol-version", "2025-06-18"), ("mcp-name", "echo")];
        assert_eq!(check_mirror_headers(&headers(&legacy), &msg), Ok(()));
        let why = check_mirror_headers(&headers(&[("mcp-name", "other")]), &msg).unwrap_err();
        assert!(why.contains("Mcp-Name"), "{why}");
    }

    #[tokio::test]
    async fn a_refusal_is_400_with_minus_32020_and_says_portcullis() {
        let response = header_mismatch(
            &call("2026-07-28"),
            "the Mcp-Name header does not match the request body",
        );
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let body = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
        let reply: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(reply["id"], 1, "{reply}");
        assert_eq!(reply["error"]["code"], error_code::HEADER_MISMATCH, "{reply}");
        let text = reply["error"]["message"].as_str().unwrap();
        assert!(text.starts_with("[portcullis] the Mcp-Name header"), "{text}");
    }
}
