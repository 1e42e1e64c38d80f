//! Off Unix: every line goes to the writer task through a bounded queue, in order.

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use tokio::io::AsyncWriteExt;

use super::{frame, Refused};
use crate::queue::{self, Budget, Weighed};

/// A message's line as [`frame`] cut it; both parts empty: close stdin.
struct Frame([Bytes; 2]);

impl Weighed for Frame {
    fn weight(&self) -> usize {
        self.0[0].len() + self.0[1].len()
    }
}

pub(in crate::upstream) struct StdinPipe {
    tx: queue::Sender<Frame>,
}

impl StdinPipe {
    /// Takes the child's stdin; the returned future is its writer task (run it on the runtime).
    pub(in crate::upstream) fn for_child(
        mut stdin: tokio::process::ChildStdin,
        budget: Budget,
    ) -> std::io::Result<(Arc<Self>, impl Future<Output = ()> + Send + 'static)> {
        let (tx, mut rx) = queue::bounded("child stdin", budget, queue::Overflow::Refuse);
        let writer = async move {
            while let Some(Frame(parts)) = rx.recv().await {
                if parts.iter().all(Bytes::is_empty) {
                    break;
                }
                for part in &parts {
                    if stdin.write_all(part).await.is_err() {
                        return;
                    }
                }
                if stdin.flush().await.is_err() {
                    return;
                }
            }
        };
        Ok((Arc::new(Self { tx }), writer))
    }

    pub(in crate::upstream) fn send(&self, message: &Bytes) -> Result<(), Refused> {
        self.tx.send(Frame(frame(message))).map_err(|e| match e {
            queue::SendError::Full(_) => Refused::Full,
            queue::SendError::Closed(_) => Refused::Closed,
        })
    }

    /// Closes stdin once everything sent before is written.
    pub(in crate::upstream) fn close(&self) {
        let _ = self.tx.send(Frame([Bytes::new(), Bytes::new()]));
    }
}
