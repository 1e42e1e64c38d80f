//! The gateway's events, as the app acts on them: forwarded to both web views as Tauri events
//! named by type (`ApprovalRequested`, `ApprovalExtended`, `ApprovalResolved`, `AuditAppended`, `PolicyReloaded`,
//! `PolicyRejected`, `PauseChanged`, payloads as in `GatewayEvent`), and turned into the prompt's
//! visibility, notifications and the tray.

use std::sync::Arc;

use portcullis_gate::events::GatewayEvent;
use portcullis_gate::held_calls::pending::Scope;
use portcullis_keeper::choose::Choice;
use serde_json::Value;
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::commands::approvals::decide;
use crate::host::{Host, Running};
use crate::notification::{self, Notifier};
use crate::windows::{self, prompt_action};

/// Follows the gateway's events until it stops.
pub fn spawn<R: Runtime>(app: AppHandle<R>, running: Arc<Running>, mut events: broadcast::Receiver<GatewayEvent>) {
    tauri::async_runtime::spawn(async move {
        loop {
            match events.recv().await {
                Ok(event) => on_event(&app, &running, event),
                Err(RecvError::Lagged(missed)) => {
                    // The web views re-list when shown; make the prompt match the truth now.
                    tracing::warn!(missed, "fell behind the gateway's events; resyncing");
                    let pending = running.gateway.pending_approvals().len();
                    windows::apply_prompt(&app, prompt_action(pending, false));
                    app.state::<Arc<Host>>().nudge();
                }
                Err(RecvError::Closed) => return,
            }
        }
    });
}

fn on_event<R: Runtime>(app: &AppHandle<R>, running: &Running, event: GatewayEvent) {
    let host = app.state::<Arc<Host>>();
    let gateway = &running.gateway;
    forward(app, &event);
    match event {
        // A call asked again after the keeper before this one stopped was seen then: it waits in
        // the lists and the tray's count, with no second prompt.
        GatewayEvent::ApprovalRequested { approval } if approval.asked_before => {
            tracing::info!(id = approval.id, "held call asked again; no second prompt");
            host.nudge();
        }
        GatewayEvent::ApprovalRequested { approval } => {
            let pending = gateway.pending_approvals().len();
            windows::apply_prompt(app, prompt_action(pending, true));
            let latency = portcullis_gate::clock::now_ms() - approval.requested_at_ms;
            tracing::info!(id = approval.id, latency_ms = latency, "prompt shown");
            refresh_notification(app, running);
            host.nudge();
        }
        GatewayEvent::ApprovalResolved { .. } => {
            refresh_notification(app, running);
            let pending = gateway.pending_approvals().len();
            windows::apply_prompt(app, prompt_action(pending, false));
            host.nudge();
        }
        // The tray says when a policy file is not the one in force; the gateway holds that state.
        GatewayEvent::PolicyReloaded { .. }
        | GatewayEvent::PolicyRejected { .. }
        | GatewayEvent::PauseChanged { .. } => {
            host.nudge();
        }
        // Forwarded above; the windows show it (AuditHealth: calls are refused while `ok` is false).
        // ApprovalExtended: the prompt shows the new deadline.
        GatewayEvent::AuditAppended { .. }
        | GatewayEvent::AuditHealth { .. }
        | GatewayEvent::ApprovalExtended { .. } => {}
    }
}

/// The one notification follows the held calls: named for one, counted for several, gone for
/// none (and none at all while notifications are off).
fn refresh_notification<R: Runtime>(app: &AppHandle<R>, running: &Running) {
    let host = app.state::<Arc<Host>>();
    let pending = if host.settings.notifications() {
        running.gateway.pending_approvals()
    } else {
        Vec::new()
    };
    app.state::<Arc<Notifier>>()
        .refresh(&pending, on_notification_action(app, running));
}

/// Emits `event` to every web view under its type's name, without the `type` tag.
fn forward<R: Runtime>(app: &AppHandle<R>, event: &GatewayEvent) {
    let (name, payload) = split(event);
    if let Err(e) = app.emit(&name, payload) {
        tracing::warn!(error = %e, event = name, "cannot forward an event to the windows");
    }
}

/// `{"type": "X", ...rest}` → `("X", {...rest})`.
pub fn split(event: &GatewayEvent) -> (String, Value) {
    let mut value = serde_json::to_value(event).unwrap_or(Value::Null);
    let name = value
        .as_object_mut()
        .and_then(|o| o.remove("type"))
        .and_then(|t| t.as_str().map(str::to_owned))
        .unwrap_or_default();
    (name, value)
}

fn on_notification_action<R: Runtime>(app: &AppHandle<R>, running: &Running) -> notification::OnAction {
    let app = app.clone();
    let gateway = running.gateway.clone();
    Arc::new(move |id, action| {
        let choice = match action {
            notification::Action::Approve => Choice::Approve(Scope::Once),
            notification::Action::Deny => Choice::Deny {
                reason: None,
                always: false,
            },
            notification::Action::Open => return windows::show_prompt_on(&app, id),
        };
        if let Err(e) = decide(&gateway, id, choice).map(drop) {
            tracing::info!(%e, "notification action on a call already decided");
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_named_by_type_and_keep_their_fields() {
        let (name, payload) = split(&GatewayEvent::ApprovalResolved {
            id: "3".into(),
            decision: portcullis_audit::Decision::Approved,
            decided_by: portcullis_audit::DecidedBy::User,
            scope: Some(Scope::Once),
        });
        assert_eq!(name, "ApprovalResolved");
        assert_eq!(
            payload,
            serde_json::json!({"id": "3", "decision": "approved", "decided_by": "user", "scope": "once"})
        );
        let (name, payload) = split(&GatewayEvent::PolicyRejected {
            server: "fs".into(),
            problems: vec!["bad".into()],
        });
        assert_eq!(name, "PolicyRejected");
        assert_eq!(payload, serde_json::json!({"server": "fs", "problems": ["bad"]}));
    }
}
