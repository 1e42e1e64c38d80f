//! macOS and Windows: a plain notification without actions (clicking it is left to the OS);
//! the tray and the prompt carry the decision. One worker thread shows each new state; the OS
//! retires them.

use tokio::sync::watch;

use super::{OnAction, Shown};

pub fn run(mut wanted: watch::Receiver<Option<Shown>>, _on_action: OnAction) {
    let _ = std::thread::Builder::new().name("notification".into()).spawn(move || {
        futures::executor::block_on(async move {
            loop {
                let want = wanted.borrow_and_update().clone();
                if let Some(shown) = want {
                    if let Err(e) = notify_rust::Notification::new()
                        .summary(&shown.text.summary)
                        .body(&shown.text.body)
                        .show()
                    {
                        tracing::debug!(error = %e, "no notification shown");
                    }
                }
                if wanted.changed().await.is_err() {
                    return;
                }
            }
        });
    });
}
