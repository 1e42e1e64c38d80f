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
use serde_json::{json, Value};

use crate::choose::{Choice, ChoiceError, GrantChoice};
use crate::Keeper;
use portcullis_gate::held_calls::pending::Scope;
use portcullis_gate::held_calls::DecideError;
use portcullis_gate::policy_store::NewRule;

const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub(crate) async fn list(State(gw): State<Arc<Keeper>>) -> Response {
    Json(gw.pending_approvals()).into_response()
}

/// `GET /control/sessions`: the live client sessions, the keeper's own and every `connect`'s.
pub(crate) async fn sessions(State(gw): State<Arc<Keeper>>) -> Response {
    Json(gw.live_sessions()).into_response()
}

/// What a person checks when calls are refused: whether the audit can be written, and which
/// policy files were rejected (the last good policy, or none, in force instead).
pub(crate) async fn status(State(gw): State<Arc<Keeper>>) -> Response {
    let health = gw.health();
    let audit = portcullis_gate::audit_log::health_json(health.audit.as_ref());
    Json(json!({ "audit": audit, "policies": health.policies, "policy_reload": health.policy_reload })).into_response()
}

/// `POST /control/approvals/{id}/approve`. Without `for` and `when`: once, this session, or
/// "always" written to the policy file. `always` with `when` and no `for`: an allow rule with that
/// condition written to the policy file. Otherwise a standing grant (DESIGN §5) — `once` for
/// this exact call, `session` for this session, `always` for every session — lasting `for`
/// (`"90s"`, `"15m"`, `"1h"`, `"restart"`) and narrowed to calls matching `when`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApproveBody {
    #[serde(default)]
    scope: Option<Scope>,
    #[serde(default, rename = "for")]
    for_: Option<String>,
    #[serde(default)]
    when: Option<Value>,
    /// Approve once with these arguments instead of the agent's ("approve with edits").
    #[serde(default)]
    arguments: Option<Value>,
    /// Say what the choice would write and match in the audit; decide nothing.
    #[serde(default)]
    dry_run: bool,
}

/// `POST /control/approvals/{id}/deny`: as approve; `always` without `for` writes a deny entry
/// (with `when`, a deny rule with that condition), with `for` makes an every-session deny grant.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct DenyBody {
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    always: bool,
    #[serde(default, rename = "for")]
    for_: Option<String>,
    #[serde(default)]
    when: Option<Value>,
    #[serde(default)]
    dry_run: bool,
}

pub(crate) async fn approve(
    State(gw): State<Arc<Keeper>>,
    Path(id): Path<String>,
    body: Option<Json<ApproveBody>>,
) -> Response {
    let Json(body) = body.unwrap_or_default();
    let scope = body.scope.unwrap_or(Scope::Once);
    if let Some(arguments) = body.arguments {
        if scope != Scope::Once || body.for_.is_some() || body.when.is_some() || body.dry_run {
            return error(
                StatusCode::BAD_REQUEST,
                "edited \"arguments\" approve this call once; they do not combine with a scope, \"for\", \"when\" or a dry run",
            );
        }
        return decide(&gw, &id, Choice::Edit { arguments });
    }
    let choice = match grant_terms(body.for_.as_deref(), body.when) {
        Ok(None) => Choice::Approve(scope),
        Ok(Some((_, Some(when)))) if scope == Scope::Always && body.for_.is_none() => Choice::Rule(NewRule {
            allow: true,
            when,
            reason: None,
        }),
        Ok(Some((duration, when))) => Choice::Grant(GrantChoice {
            allow: true,
            reason: None,
            every_session: scope == Scope::Always,
            duration,
            exact: scope == Scope::Once && when.is_none(),
            when,
        }),
        Err(why) => return error(StatusCode::BAD_REQUEST, &why),
    };
    if body.dry_run {
        return dry_run(gw, id, choice).await;
    }
    decide(&gw, &id, choice)
}

pub(crate) async fn deny(
    State(gw): State<Arc<Keeper>>,
    Path(id): Path<String>,
    body: Option<Json<DenyBody>>,
) -> Response {
    let Json(body) = body.unwrap_or_default();
    let choice = match grant_terms(body.for_.as_deref(), body.when) {
        Ok(None) => Choice::Deny {
            reason: body.reason,
            always: body.always,
        },
        Ok(Some((_, Some(when)))) if body.always && body.for_.is_none() => Choice::Rule(NewRule {
            allow: false,
            when,
            reason: body.reason,
        }),
        Ok(Some((duration, when))) => Choice::Grant(GrantChoice {
            allow: false,
            reason: body.reason,
            every_session: body.always,
            duration,
            exact: false,
            when,
        }),
        Err(why) => return error(StatusCode::BAD_REQUEST, &why),
    };
    if body.dry_run {
        return dry_run(gw, id, choice).await;
    }
    decide(&gw, &id, choice)
}

/// What the choice would write and how many earlier audited calls it would have matched; the
/// call stays pending. The audit is read off the async threads.
async fn dry_run(gw: Arc<Keeper>, id: String, choice: Choice) -> Response {
    let answer = tokio::task::spawn_blocking(move || {
        let planned = gw.dry_run(&id, &choice);
        (planned, gw.is_pending(&id))
    })
    .await;
    match answer {
        Ok((Ok(planned), still_pending)) => {
            let mut body = serde_json::to_value(&planned).unwrap_or_default();
            if let Value::Object(map) = &mut body {
                map.insert("dry_run".into(), Value::Bool(true));
                map.insert("pending".into(), Value::Bool(still_pending));
            }
            Json(body).into_response()
        }
        Ok((Err(e), _)) => choice_error(e),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &format!("the dry run failed: {e}")),
    }
}

/// `POST /control/approvals/{id}/extend`: more time for a person to decide.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExtendBody {
    /// Seconds to add to the deadline (default 60).
    #[serde(default)]
    by_secs: Option<u64>,
}

/// What "Extend" adds when the body names no amount.
const DEFAULT_EXTEND_SECS: u64 = 60;

/// Moves the held call's deadline (bounded by `approval.max_hold_secs` from when it was held);
/// answers the new `expires_at`, which `GET /control/approvals` lists too.
pub(crate) async fn extend(
    State(gw): State<Arc<Keeper>>,
    Path(id): Path<String>,
    body: Option<Json<ExtendBody>>,
) -> Response {
    let Json(body) = body.unwrap_or_default();
    let by = body.by_secs.unwrap_or(DEFAULT_EXTEND_SECS);
    if by == 0 || by > 86_400 {
        return error(
            StatusCode::BAD_REQUEST,
            &format!("\"by_secs\" must be between 1 and 86400, found {by}"),
        );
    }
    match gw.extend_approval(&id, Duration::from_secs(by)) {
        Ok(extended) => Json(json!({
            "id": id,
            "expires_at": extended.approval.expires_at,
            "expires_at_ms": extended.approval.expires_at_ms,
            "clamped": extended.clamped,
            "max_hold_secs": gw.config().max_hold_secs,
        }))
        .into_response(),
        Err(e @ DecideError::Unknown(_)) => error(StatusCode::NOT_FOUND, &e.to_string()),
        Err(e @ DecideError::AlreadyDecided { .. }) => error(StatusCode::CONFLICT, &e.to_string()),
    }
}

/// How long a grant lasts (`None`: until restart) and the condition it is narrowed to.
type GrantTerms = (Option<Duration>, Option<Value>);

/// The terms when the body asks for a standing grant; `None` for a plain decision.
fn grant_terms(for_: Option<&str>, when: Option<Value>) -> Result<Option<GrantTerms>, String> {
    if for_.is_none() && when.is_none() {
        return Ok(None);
    }
    let duration = match for_ {
        None | Some("restart") => None,
        Some(text) => Some(parse_duration(text)?),
    };
    Ok(Some((duration, when)))
}

/// `90s`, `15m`, `1h`, `2d` …; at least a second.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text.trim())
        .map_err(|e| format!("\"for\": {text:?} is not a duration like 90s, 15m, 1h or restart ({e})"))?;
    if duration < Duration::from_secs(1) {
        return Err(format!("\"for\": {text:?} is shorter than a second"));
    }
    Ok(duration)
}

fn decide(gw: &Keeper, id: &str, choice: Choice) -> Response {
    let approved = match &choice {
        Choice::Approve(_) | Choice::Edit { .. } => true,
        Choice::Deny { .. } => false,
        Choice::Grant(g) => g.allow,
        Choice::Rule(r) => r.allow,
    };
    let scope = match &choice {
        Choice::Approve(scope) => Some(*scope),
        _ => None,
    };
    match gw.choose(id, choice) {
        Ok(decided) => {
            let decision = if approved { "approved" } else { "rejected" };
            Json(json!({
                "id": id,
                "decision": decision,
                "scope": scope,
                "server": decided.approval.server,
                "tool": decided.approval.tool,
                "grant": decided.grant,
                "also_settled": decided.also_settled,
                "policy_write": decided.policy_write,
            }))
            .into_response()
        }
        Err(e) => choice_error(e),
    }
}

fn choice_error(e: ChoiceError) -> Response {
    match e {
        ChoiceError::Decide(e @ DecideError::Unknown(_)) => error(StatusCode::NOT_FOUND, &e.to_string()),
        ChoiceError::Decide(e @ DecideError::AlreadyDecided { .. }) => error(StatusCode::CONFLICT, &e.to_string()),
        e @ ChoiceError::Invalid(_) => error(StatusCode::BAD_REQUEST, &e.to_string()),
        e @ ChoiceError::Policy(_) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UndoBody {
    write_id: String,
}

/// `POST /control/policy/undo {"write_id": …}`: takes back the policy write an "always" decision
/// made (its `policy_write.write_id`), within 30 s and only if the file was not changed since.
pub(crate) async fn undo_policy_write(State(gw): State<Arc<Keeper>>, Json(body): Json<UndoBody>) -> Response {
    use portcullis_gate::policy_store::UndoError;
    match gw.undo_policy_write(&body.write_id) {
        Ok(write) => Json(json!({ "undone": true, "policy_write": write })).into_response(),
        Err(e @ UndoError::Unknown(_)) => error(StatusCode::NOT_FOUND, &e.to_string()),
        Err(e @ UndoError::Expired(_)) => error(StatusCode::GONE, &e.to_string()),
        Err(e @ UndoError::Changed { .. }) => error(StatusCode::CONFLICT, &e.to_string()),
        Err(e @ UndoError::Io { .. }) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// `GET /control/grants`: the standing grants in force.
pub(crate) async fn grants(State(gw): State<Arc<Keeper>>) -> Response {
    Json(gw.standing_grants()).into_response()
}

/// `POST /control/grants/{id}/revoke`.
pub(crate) async fn revoke(State(gw): State<Arc<Keeper>>, Path(id): Path<String>) -> Response {
    if gw.revoke_grant(&id) {
        tracing::info!(grant = id, "grant revoked");
        Json(json!({ "id": id, "revoked": true })).into_response()
    } else {
        error(StatusCode::NOT_FOUND, &format!("no grant {id} (it may have expired)"))
    }
}

/// Every gateway event as SSE; the subscriber counts as an approver while connected.
pub(crate) async fn events(State(gw): State<Arc<Keeper>>) -> Response {
    let guard = gw.attach_approver();
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
pub(crate) async fn servers(State(gw): State<Arc<Keeper>>) -> Response {
    Json(gw.servers().reports(SERVERS_WAIT).await).into_response()
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}
