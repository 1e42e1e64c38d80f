//! `POST /control/policy/explain`: how the policy the running gate holds decides a call, and
//! whether that policy is the file's (`portcullis policy explain` asks here first, so it reports
//! what is enforced, not only what the file says).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use portcullis_policy::CallFacts;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::Keeper;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExplainBody {
    server: String,
    tool: String,
    #[serde(default)]
    arguments: Value,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    client_version: Option<String>,
}

pub(crate) async fn explain(State(gw): State<Arc<Keeper>>, Json(body): Json<ExplainBody>) -> Response {
    let mut facts = CallFacts::arguments(&body.arguments);
    facts.client_name = body.client_name.as_deref();
    facts.client_version = body.client_version.as_deref();
    match gw.explain_policy(&body.server, &body.tool, &facts) {
        Some(explained) => Json(explained).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({ "error": format!("no server {:?} in the gateway's config", body.server) })),
        )
            .into_response(),
    }
}
