//! The async face of the audit writer: await until a decision row is committed.

use portcullis_audit::{AuditError, AuditWriter, NewDecision, Outcome};
use tokio::sync::oneshot;

#[derive(Clone)]
pub struct AuditLog {
    writer: AuditWriter,
}

impl AuditLog {
    pub fn new(writer: AuditWriter) -> Self {
        Self { writer }
    }

    /// Records a decision; returns once the row is committed (or the write failed).
    pub async fn record(&self, row: NewDecision) -> Result<i64, AuditError> {
        let (tx, rx) = oneshot::channel();
        self.writer.record(
            row,
            Box::new(move |result| {
                let _ = tx.send(result);
            }),
        );
        rx.await.unwrap_or(Err(AuditError::WriterGone))
    }

    /// Adds the upstream outcome to a row; failures are logged by the writer.
    pub fn complete(&self, id: i64, outcome: Outcome, upstream_ms: i64) {
        self.writer.complete(id, outcome, upstream_ms, None);
    }
}
