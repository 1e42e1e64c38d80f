//! The control API, beside the MCP endpoint and behind the same guard (loopback, Origin, token):
//! list held calls, decide them, follow events, and read the gateway's status (is the audit
//! writable).
//!
//! Why loopback HTTP with the `gateway.json` token rather than a Unix socket: the same check
//! already guards the MCP endpoint, it works unchanged on Linux, macOS and Windows, and the
//! token file is mode 0600, so only the user who runs the gateway can read it. On Linux the guard
//! also checks that the client socket belongs to that user ([`super::peer_user`]), so a leaked
//! token alone does not let another local user decide calls. Subscribers to
//! `/control/events` count as approvers: with none, held calls are refused at once rather than
//! left waiting for nobody.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures::StreamExt;
use portcullis_wire::sse;
use serde::Deserialize;
use serde_json::json;

use crate::approval::{DecideError, Scope};
use crate::gate::{Choice, ChoiceError};
use crate::Gateway;

const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub async fn list(State(gw): State<Arc<Gateway>>) -> Response {
    Json(gw.gate().approvals.pending()).into_response()
}

/// What a person checks when calls are refused: whether the audit can be written, and which
/// policy files were rejected (the last good policy, or none, in force instead).
pub async fn status(State(gw): State<Arc<Gateway>>) -> Response {
    let audit = crate::audit_log::health_json(gw.gate().audit.fault().as_ref());
    let policies = gw.gate().policies.problems();
    Json(json!({ "audit": audit, "policies": policies })).into_response()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ApproveBody {
    #[serde(default)]
    scope: Option<Scope>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DenyBody {
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    always: bool,
}

pub async fn approve(
    State(gw): State<Arc<Gateway>>,
    Path(id): Path<String>,
    body: Option<Json<ApproveBody>>,
) -> Response {
    let scope = body.and_then(|Json(b)| b.scope).unwrap_or(Scope::Once);
    decide(&gw, &id, Choice::Approve(scope))
}

pub async fn deny(State(gw): State<Arc<Gateway>>, Path(id): Path<String>, body: Option<Json<DenyBody>>) -> Response {
    let Json(body) = body.unwrap_or_default();
    decide(
        &gw,
        &id,
        Choice::Deny {
            reason: body.reason,
            always: body.always,
        },
    )
}

fn decide(gw: &Gateway, id: &str, choice: Choice) -> Response {
    let scope = match &choice {
        Choice::Approve(scope) => Some(*scope),
        Choice::Deny { .. } => None,
    };
    match gw.gate().choose(id, choice) {
        Ok(approval) => {
            let decision = if scope.is_some() { "approved" } else { "rejected" };
            Json(json!({ "id": id, "decision": decision, "scope": scope, "server": approval.server, "tool": approval.tool }))
                .into_response()
        }
        Err(ChoiceError::Decide(e @ DecideError::Unknown(_))) => error(StatusCode::NOT_FOUND, &e.to_string()),
        Err(ChoiceError::Decide(e @ DecideError::AlreadyDecided { .. })) => error(StatusCode::CONFLICT, &e.to_string()),
        Err(e @ ChoiceError::Policy(_)) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// Every gateway event as SSE; the subscriber counts as an approver while connected.
pub async fn events(State(gw): State<Arc<Gateway>>) -> Response {
    let guard = gw.gate().approvals.attach_approver();
    let rx = gw.subscribe();
    let events = futures::stream::unfold((rx, guard), |(mut rx, guard)| async move {
        let frame = match tokio::time::timeout(KEEP_ALIVE, rx.recv()).await {
            Ok(Ok(event)) => sse::encode_event(&serde_json::to_vec(&event).unwrap_or_default()),
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(n))) => {
                // Better no stream than a silently wrong picture: the subscriber reconnects
                // and reads the pending list afresh.
                tracing::warn!(missed = n, "control event subscriber fell behind; closing its stream");
                return None;
            }
            Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => return None,
            Err(_) => sse::encode_comment("keep-alive"),
        };
        Some((frame, (rx, guard)))
    });
    // A first comment flushes the headers, so a subscriber knows it is attached.
    let stream = futures::stream::once(async { sse::encode_comment("subscribed") })
        .chain(events)
        .take_until(gw.stopping());
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream.map(Ok::<_, Infallible>)),
    )
        .into_response()
}

/// How long `GET /control/servers` waits for monitor connections being opened.
const SERVERS_WAIT: Duration = Duration::from_secs(3);

/// Each upstream's health (opening the monitor connections on first use).
pub async fn servers(State(gw): State<Arc<Gateway>>) -> Response {
    Json(gw.servers().reports(SERVERS_WAIT).await).into_response()
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}
