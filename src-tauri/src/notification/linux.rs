//! Linux: the one D-Bus notification (`org.freedesktop.Notifications`), owned by one worker
//! thread. The thread shows what the latest wanted state says — replacing the notification in
//! place (same D-Bus id) when it changes, closing it when nothing waits — and between changes
//! waits for the person's action. One owner means no race between versions: a burst of held
//! calls updates one notification instead of stacking several. Without a notification daemon a
//! show fails fast and the thread waits for the next change.

use futures::future::{select, Either};
use notify_rust::{Notification, NotificationHandle, NotificationResponse, Timeout};
use tokio::sync::watch;

use super::{Action, OnAction, Shown};

/// Starts the worker; it ends when the sender is dropped.
pub(super) fn run(mut wanted: watch::Receiver<Option<Shown>>, on_action: OnAction) {
    let spawned = std::thread::Builder::new().name("notification".into()).spawn(move || {
        futures::executor::block_on(async move {
            let mut current: Option<(NotificationHandle, Shown)> = None;
            // A notification the person dismissed stays away until what it would show changes.
            let mut dismissed: Option<Shown> = None;
            loop {
                let want = wanted.borrow_and_update().clone();
                if want != dismissed {
                    dismissed = None;
                    apply(&mut current, want).await;
                }
                let Some((handle, shown)) = &current else {
                    if wanted.changed().await.is_err() {
                        return;
                    }
                    continue;
                };
                let mut response = None;
                let changed = {
                    let waited = select(
                        Box::pin(handle.wait_for_action_async(|r| response = Some(r.clone()))),
                        Box::pin(wanted.changed()),
                    )
                    .await;
                    match waited {
                        Either::Right((Ok(()), _)) => true,
                        Either::Right((Err(_), _)) => {
                            handle.close_async().await;
                            return;
                        }
                        Either::Left(_) => false,
                    }
                };
                if changed {
                    continue;
                }
                // Acted on or dismissed: not every daemon retires a notification whose action
                // was invoked, so take it away.
                handle.close_async().await;
                let id = shown.id.clone();
                let action = match response {
                    Some(NotificationResponse::Action(a)) if a == "approve" && shown.decide => Some(Action::Approve),
                    Some(NotificationResponse::Action(a)) if a == "deny" && shown.decide => Some(Action::Deny),
                    Some(NotificationResponse::Default) => Some(Action::Open),
                    _ => None,
                };
                dismissed = current.take().map(|(_, s)| s);
                if let Some(action) = action {
                    tracing::info!(id, ?action, "notification action");
                    on_action(&id, action);
                }
            }
        });
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the notification thread");
    }
}

/// Shows `want` in place of `current` (same D-Bus id), or closes `current` when `want` is none.
async fn apply(current: &mut Option<(NotificationHandle, Shown)>, want: Option<Shown>) {
    if current.as_ref().map(|(_, s)| s) == want.as_ref() {
        return;
    }
    let Some(shown) = want else {
        if let Some((handle, _)) = current.take() {
            handle.close_async().await;
        }
        return;
    };
    let left_ms = shown.expires_at_ms - portcullis_gate::clock::now_ms();
    let mut n = Notification::new();
    n.appname("Portcullis")
        .summary(&shown.text.summary)
        .body(&shown.text.body)
        .icon("dialog-question")
        .action("default", "Open")
        .timeout(Timeout::Milliseconds(
            u32::try_from(left_ms.max(1000)).unwrap_or(u32::MAX),
        ));
    if shown.decide {
        n.action("approve", "Approve").action("deny", "Deny");
    }
    if let Some((handle, _)) = current.as_ref() {
        n.id(handle.id());
    }
    match n.show_async().await {
        Ok(handle) => {
            tracing::info!(
                id = shown.id,
                notification = handle.id(),
                calls = shown.text.summary,
                "notification shown"
            );
            *current = Some((handle, shown));
        }
        Err(e) => {
            tracing::debug!(error = %e, "no notification shown (no notification daemon?)");
            *current = None;
        }
    }
}
