//! The control API for tool pins ([`portcullis_gate::pins`]): list what is pinned and what changed, and
//! accept a changed definition. Behind the same guard as the rest of the control API.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use crate::Keeper;
use portcullis_gate::pins::PinError;

/// `GET /control/tools`: every pin, with its pending change (`change`, else null).
pub(crate) async fn list(State(gw): State<Arc<Keeper>>) -> Response {
    Json(gw.tool_pins()).into_response()
}

/// `GET /control/tools/changed`: only the tools whose calls are held for a change.
pub(crate) async fn changed(State(gw): State<Arc<Keeper>>) -> Response {
    Json(gw.changed_tools()).into_response()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct AcceptBody {
    /// The `new_digest` the person reviewed; when the tool changed again since, 409.
    #[serde(default)]
    digest: Option<String>,
}

/// `POST /control/tools/{server}/{tool}/accept`: 404 unknown tool, 409 nothing to accept or the
/// tool changed again since the given digest.
pub(crate) async fn accept(
    State(gw): State<Arc<Keeper>>,
    Path((server, tool)): Path<(String, String)>,
    body: Option<Json<AcceptBody>>,
) -> Response {
    let Json(body) = body.unwrap_or_default();
    match gw.accept_tool(&server, &tool, body.digest.as_deref()) {
        Ok(pin) => Json(pin).into_response(),
        Err(e) => {
            let status = match e {
                PinError::UnknownTool { .. } => StatusCode::NOT_FOUND,
                PinError::NotChanged { .. } | PinError::Stale { .. } => StatusCode::CONFLICT,
                PinError::Read { .. } | PinError::Invalid { .. } | PinError::Write { .. } => {
                    StatusCode::INTERNAL_SERVER_ERROR
                }
            };
            (status, Json(json!({ "error": e.to_string() }))).into_response()
        }
    }
}
