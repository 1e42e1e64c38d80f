//! The downstream endpoint: Streamable HTTP at `/mcp/<server>` on loopback.
//!
//! Every request passes [`guard`] first: the `Host` must be a loopback name (DNS rebinding), an
//! `Origin`, if sent, must be local (web pages), and the bearer token must match `gateway.json`.

pub mod control;
mod guard;
pub mod mcp;

use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;

use crate::Gateway;

/// Largest request body accepted.
pub const MAX_BODY: usize = 16 * 1024 * 1024;

pub fn router(gateway: Arc<Gateway>) -> Router {
    Router::new()
        .route("/mcp/{server}", post(mcp::post).get(mcp::get).delete(mcp::delete))
        .route("/health", get(mcp::health))
        .route("/control/approvals", get(control::list))
        .route("/control/approvals/{id}/approve", post(control::approve))
        .route("/control/approvals/{id}/deny", post(control::deny))
        .route("/control/events", get(control::events))
        .layer(axum::middleware::from_fn_with_state(gateway.clone(), guard::guard))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(gateway)
}
