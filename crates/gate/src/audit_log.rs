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
        self.queue(row).await.unwrap_or(Err(AuditError::WriterGone))
    }

    /// Hands `row` to the writer; the receiver gets the commit's result. When the writer is idle
    /// the row is committed right here, on this worker thread (~40 µs, no thread hop), and the
    /// receiver is ready before the first poll.
    fn queue(&self, row: NewDecision) -> oneshot::Receiver<Result<i64, AuditError>> {
        let (tx, rx) = oneshot::channel();
        self.writer.record(
            row,
            Box::new(move |result| {
                let _ = tx.send(result);
            }),
        );
        rx
    }

    /// Records the decision of a call that is to be forwarded. Like [`AuditLog::record`], but a
    /// caller that stops waiting before the row is committed (its future dropped: the client
    /// hung up) leaves no row without an outcome: no [`crate::gate::Forwarded`] will complete
    /// it, so the row is completed as `cancelled` once it is committed.
    pub async fn record_forward(&self, row: NewDecision) -> Result<i64, AuditError> {
        let mut waiting = Unclaimed {
            rx: Some(self.queue(row)),
            audit: self.clone(),
        };
        waiting.claim().await
    }

    /// Adds the upstream outcome to a row; failures are logged by the writer. Wakes nobody on the
    /// answer's path: the outcome rides with the next decision, or is committed within 10 ms.
    pub fn complete(&self, id: i64, outcome: Outcome, upstream_ms: i64) {
        self.writer.complete(id, outcome, upstream_ms, None);
    }

    /// [`complete`](Self::complete) with what came back ([`crate::answers`]), in one transaction.
    pub fn complete_with_answer(
        &self,
        id: i64,
        outcome: Outcome,
        upstream_ms: i64,
        answer: portcullis_audit::AnswerRecord,
    ) {
        self.writer.complete_with_answer(id, outcome, upstream_ms, answer);
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

/// A forwarded call's row being committed, while its caller waits; dropped still waiting, it
/// completes the row as `cancelled` (see [`AuditLog::record_forward`]).
struct Unclaimed {
    rx: Option<oneshot::Receiver<Result<i64, AuditError>>>,
    audit: AuditLog,
}

impl Unclaimed {
    /// The writer's answer; from here the caller holds the row (and completes it).
    async fn claim(&mut self) -> Result<i64, AuditError> {
        let answer = match self.rx.as_mut() {
            Some(rx) => rx.await.unwrap_or(Err(AuditError::WriterGone)),
            None => Err(AuditError::WriterGone),
        };
        self.rx = None;
        answer
    }
}

impl Drop for Unclaimed {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else {
            return;
        };
        match rx.try_recv() {
            Ok(Ok(id)) => self.audit.complete(id, Outcome::Cancelled, 0),
            Err(oneshot::error::TryRecvError::Empty) => {
                // Not committed yet: wait for it off this thread (no blocking in `Drop`).
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    return;
                };
                let audit = self.audit.clone();
                runtime.spawn(async move {
                    if let Ok(Ok(id)) = rx.await {
                        audit.complete(id, Outcome::Cancelled, 0);
                    }
                });
            }
            // Not written, or the writer is gone: no row to complete.
            Ok(Err(_)) | Err(oneshot::error::TryRecvError::Closed) => {}
        }
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
            "since_ms": fault.since.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }),
    }
}
