//! The async face of the audit writer: await until a decision row is committed.

use portcullis_audit::{AuditError, AuditFault, AuditWriter, FaultKind, NewDecision, Outcome};
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

    /// A reader on the same database (its own read-only connection).
    pub fn store(&self) -> Result<portcullis_audit::AuditStore, AuditError> {
        self.writer.store()
    }

    /// Why the audit cannot be written right now, if it cannot.
    pub fn fault(&self) -> Option<AuditFault> {
        self.writer.fault()
    }
}

/// What the agent reads when its call is refused because its decision could not be recorded.
pub fn refusal_text(err: &AuditError) -> String {
    format!(
        "call refused: the audit log cannot be written ({}: {err}); nothing is forwarded until it can",
        FaultKind::of(err).describe()
    )
}

/// The audit's health as `GET /control/status` and the `AuditHealth` event carry it.
pub fn health_json(fault: Option<&AuditFault>) -> serde_json::Value {
    match fault {
        None => serde_json::json!({ "ok": true }),
        Some(fault) => serde_json::json!({
            "ok": false,
            "condition": fault.kind.as_str(),
            "error": fault.summary(),
            "since_ms": fault.since.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
        }),
    }
}
