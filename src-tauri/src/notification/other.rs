//! macOS and Windows: a plain notification without actions (clicking it is left to the OS);
//! the tray and the prompt carry the decision.

use portcullis_gateway::approval::PendingApproval;

use super::{OnAction, Text};

/// Nothing to close: the OS retires the notification.
pub type Closer = ();

pub fn show(
    approval: &PendingApproval,
    text: Text,
    _on_action: OnAction,
    done: Box<dyn FnOnce(&str) + Send>,
) -> Closer {
    let id = approval.id.clone();
    let _ = std::thread::Builder::new()
        .name(format!("notification-{id}"))
        .spawn(move || {
            if let Err(e) = notify_rust::Notification::new()
                .summary(&text.summary)
                .body(&text.body)
                .show()
            {
                tracing::debug!(error = %e, "no notification shown");
            }
            done(&id);
        });
}
