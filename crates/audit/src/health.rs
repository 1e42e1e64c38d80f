//! Whether the writer can write: the one fact the gateway needs to fail closed and tell a person.
//!
//! The writer thread owns the truth (it is the only one that writes) and publishes each change of
//! state here; any handle can read the current state, and one listener (the gateway's log and
//! event stream) hears every change. Only changes are published, so a database that stays broken
//! for an hour produces two notifications, not one per refused call.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use rusqlite::ErrorCode;

use crate::error::AuditError;

/// What kind of trouble the database is in, for a short human description and for callers that
/// want to tell the cases apart without reading message text.
/// Serialized as [`FaultKind::as_str`] (the `condition` of the gateway's `AuditHealth` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FaultKind {
    /// Another process holds the write lock past the busy timeout.
    Locked,
    /// The filesystem (or SQLite's page limit) has no room for the write.
    Full,
    /// The file, its `-wal`/`-shm`, or the filesystem is read-only.
    ReadOnly,
    /// Anything else SQLite or the filesystem reported.
    #[serde(rename = "error")]
    Other,
}

impl FaultKind {
    pub fn of(err: &AuditError) -> FaultKind {
        if matches!(err, AuditError::ReadOnly { .. }) {
            return FaultKind::ReadOnly;
        }
        match err.sqlite_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => FaultKind::Locked,
            Some(ErrorCode::DiskFull) => FaultKind::Full,
            Some(ErrorCode::ReadOnly) => FaultKind::ReadOnly,
            _ => FaultKind::Other,
        }
    }

    /// Snake case, for JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Locked => "locked",
            FaultKind::Full => "full",
            FaultKind::ReadOnly => "read_only",
            FaultKind::Other => "error",
        }
    }

    /// A few words for a person.
    pub fn describe(self) -> &'static str {
        match self {
            FaultKind::Locked => "locked by another process",
            FaultKind::Full => "disk full",
            FaultKind::ReadOnly => "read-only",
            FaultKind::Other => "write error",
        }
    }
}

/// The database cannot be written: since when, and why.
#[derive(Debug, Clone)]
pub struct AuditFault {
    pub kind: FaultKind,
    /// The error that started the fault (a later, different error does not replace it: the
    /// person fixes the first cause first).
    pub error: AuditError,
    pub since: SystemTime,
}

impl AuditFault {
    pub(crate) fn new(error: AuditError) -> Self {
        AuditFault {
            kind: FaultKind::of(&error),
            error,
            since: SystemTime::now(),
        }
    }

    /// "disk full: audit database error: database or disk is full"
    pub fn summary(&self) -> String {
        format!("{}: {}", self.kind.describe(), self.error)
    }
}

/// Hears every change: `Some(fault)` when writes start failing, `None` when they work again.
/// Runs on the writer thread; keep it short.
pub type HealthListener = Box<dyn Fn(Option<&AuditFault>) + Send>;

/// The current state plus the listener, shared by the writer thread and every handle.
#[derive(Default)]
pub(crate) struct HealthCell {
    fault: Mutex<Option<AuditFault>>,
    listener: Mutex<Option<HealthListener>>,
}

impl HealthCell {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub(crate) fn fault(&self) -> Option<AuditFault> {
        self.fault.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(crate) fn set_listener(&self, listener: HealthListener) {
        *self.listener.lock().unwrap_or_else(PoisonError::into_inner) = Some(listener);
    }

    /// Records a failed write. Logs and notifies only on the change from working to failing.
    pub(crate) fn failed(&self, err: &AuditError) {
        let fault = {
            let mut slot = self.fault.lock().unwrap_or_else(PoisonError::into_inner);
            if slot.is_some() {
                return;
            }
            let fault = AuditFault::new(err.clone());
            *slot = Some(fault.clone());
            fault
        };
        tracing::error!(
            condition = fault.kind.as_str(),
            "audit database cannot be written ({}); every tools/call is refused until it can",
            fault.summary()
        );
        self.notify(Some(&fault));
    }

    /// Records a write that worked. Logs and notifies only on the change from failing to working.
    pub(crate) fn succeeded(&self) {
        let was = self.fault.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(was) = was {
            let secs = was.since.elapsed().map_or(0, |d| d.as_secs());
            tracing::warn!(
                condition = was.kind.as_str(),
                "audit database writable again after {secs} s ({}); calls are audited and forwarded",
                was.kind.describe()
            );
            self.notify(None);
        }
    }

    pub(crate) fn is_failing(&self) -> bool {
        self.fault.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    fn notify(&self, fault: Option<&AuditFault>) {
        let listener = self.listener.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(listener) = listener.as_ref() {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| listener(fault))).is_err() {
                tracing::error!("the audit health listener panicked");
            }
        }
    }
}

#[cfg(test)]
mod serde_tests {
    use super::FaultKind;

    /// The JSON the `AuditHealth` event carries is the text `GET /control/status` shows.
    #[test]
    fn a_fault_kind_serializes_as_its_text() {
        for kind in [
            FaultKind::Locked,
            FaultKind::Full,
            FaultKind::ReadOnly,
            FaultKind::Other,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }
}
