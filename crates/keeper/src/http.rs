//! The downstream endpoint: Streamable HTTP at `/mcp/<server>` on loopback.
//!
//! Every request passes [`guard`] first: the `Host` must be a loopback name (DNS rebinding), an
//! `Origin`, if sent, must be local (web pages), and the bearer token must match `gateway.json`.
//! The control API further answers only the gateway's own user ([`peer_user`]).

pub(crate) mod accept;
pub(crate) mod conn_caps;
pub(crate) mod control;
pub(crate) mod control_policy;
pub(crate) mod control_tools;
pub(crate) mod guard;
pub(crate) mod mcp;
pub(crate) mod peer_user;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;

use crate::Keeper;

/// Largest request body accepted.
pub(crate) const MAX_BODY: usize = portcullis_wire::MAX_MESSAGE;

pub(crate) fn router(gateway: Arc<Keeper>) -> Router {
    Router::new()
        .route("/mcp/{server}", post(mcp::post).get(mcp::get).delete(mcp::delete))
        .route("/health", get(mcp::health))
        .route("/control/approvals", get(control::list))
        .route("/control/sessions", get(control::sessions))
        .route("/control/approvals/{id}/approve", post(control::approve))
        .route("/control/approvals/{id}/deny", post(control::deny))
        .route("/control/approvals/{id}/extend", post(control::extend))
        .route("/control/events", get(control::events))
        .route("/control/grants", get(control::grants))
        .route("/control/grants/{id}/revoke", post(control::revoke))
        .route("/control/policy/undo", post(control::undo_policy_write))
        .route("/control/policy/explain", post(control_policy::explain))
        .route("/control/status", get(control::status))
        .route("/control/tools", get(control_tools::list))
        .route("/control/tools/changed", get(control_tools::changed))
        .route("/control/tools/{server}/{tool}/accept", post(control_tools::accept))
        .route("/control/servers", get(control::servers))
        .layer(axum::middleware::from_fn_with_state(gateway.clone(), guard::guard))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(gateway)
}

/// Both ends of the TCP connection a request came on (the control API looks up who owns the
/// client end).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Conn {
    pub local: Option<SocketAddr>,
    pub peer: SocketAddr,
}
