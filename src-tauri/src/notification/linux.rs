//! Linux: a D-Bus notification with Approve and Deny actions (`org.freedesktop.Notifications`).
//! One thread per notification shows it and waits for an action, a close, or the call being
//! decided elsewhere; without a notification daemon `show` fails fast and the thread ends.

use notify_rust::{Notification, NotificationResponse, Timeout};
use portcullis_gateway::approval::PendingApproval;
use tokio::sync::oneshot;

use super::{Action, OnAction, Text};

/// Dropping it (the call was decided) closes the notification.
pub type Closer = oneshot::Sender<()>;

pub fn show(approval: &PendingApproval, text: Text, on_action: OnAction, done: Box<dyn FnOnce(&str) + Send>) -> Closer {
    let (closer, closed) = oneshot::channel::<()>();
    let id = approval.id.clone();
    let left_ms = approval.expires_at_ms - portcullis_gateway::gate::now_ms();
    let timeout = u32::try_from(left_ms.max(1000)).unwrap_or(u32::MAX);
    let spawned = std::thread::Builder::new()
        .name(format!("notification-{id}"))
        .spawn(move || {
            let shown = Notification::new()
                .appname("Portcullis")
                .summary(&text.summary)
                .body(&text.body)
                .icon("dialog-question")
                .action("default", "Open")
                .action("approve", "Approve")
                .action("deny", "Deny")
                .timeout(Timeout::Milliseconds(timeout))
                .show();
            let handle = match shown {
                Ok(handle) => handle,
                Err(e) => {
                    tracing::debug!(error = %e, "no notification shown (no notification daemon?)");
                    done(&id);
                    return;
                }
            };
            tracing::info!(id, notification = handle.id(), "notification shown");
            let mut response = None;
            let decided_elsewhere = {
                let waited = futures::executor::block_on(futures::future::select(
                    Box::pin(handle.wait_for_action_async(|r| response = Some(r.clone()))),
                    closed,
                ));
                matches!(waited, futures::future::Either::Right(_))
            };
            // Decided elsewhere, or acted on (not every daemon retires a notification whose
            // action was invoked): take it away.
            let acted = matches!(
                response,
                Some(NotificationResponse::Action(_) | NotificationResponse::Default)
            );
            if decided_elsewhere || acted {
                futures::executor::block_on(handle.close_async());
            }
            let action = match response {
                Some(NotificationResponse::Action(a)) if a == "approve" => Some(Action::Approve),
                Some(NotificationResponse::Action(a)) if a == "deny" => Some(Action::Deny),
                Some(NotificationResponse::Default) => Some(Action::Open),
                _ => None,
            };
            done(&id);
            if let Some(action) = action {
                tracing::info!(id, ?action, "notification action");
                on_action(&id, action);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start a notification thread");
    }
    closer
}
