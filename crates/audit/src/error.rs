//! The crate's error type.

use std::path::PathBuf;
use std::sync::Arc;

use crate::record::UnknownValue;

/// Everything the audit store can fail with.
///
/// `Clone` because one failed group commit answers every command in it with the same error; the
/// SQLite error is shared behind an `Arc` for that reason. Messages are short and say what to do;
/// the SQLite detail is the `source`.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The database file could not be opened or configured.
    #[error("cannot open audit database {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: Arc<rusqlite::Error>,
    },
    /// A reader was pointed at a file that does not exist.
    #[error("audit database {} does not exist (it is created when the gateway first starts)", path.display())]
    Missing { path: PathBuf },
    /// The file can only be opened read-only, so decisions cannot be recorded.
    #[error("audit database {} is read-only; make it and its -wal and -shm files writable by the gateway", path.display())]
    ReadOnly { path: PathBuf },
    /// The file was written by a newer Portcullis whose schema this build does not know.
    #[error(
        "audit database schema version {found} is newer than this build supports ({supported}): a newer Portcullis \
         wrote it. If Portcullis was just upgraded, restart the MCP client so that it starts the installed \
         `portcullis connect`; otherwise upgrade portcullis"
    )]
    SchemaTooNew { found: i64, supported: i64 },
    /// A reader found a schema older than this build's (the gateway upgrades it when it starts).
    #[error("audit database schema version {found} is older than {expected}; start the gateway once to upgrade it")]
    SchemaTooOld { found: i64, expected: i64 },
    /// A statement failed (read or write, including a failed commit).
    #[error("audit database error: {0}")]
    Sqlite(#[source] Arc<rusqlite::Error>),
    /// The arguments could not be serialized (cannot happen for a `serde_json::Value`, kept so the
    /// writer never has to panic).
    #[error("cannot encode arguments as JSON: {0}")]
    Encode(#[source] Arc<serde_json::Error>),
    /// A stored row holds a value this build cannot read.
    #[error("audit row {id} has an unreadable {column}: {detail}")]
    InvalidRow {
        id: i64,
        column: &'static str,
        detail: String,
    },
    /// `complete` named a row that does not exist.
    #[error("audit row {id} does not exist")]
    NoSuchRow { id: i64 },
    /// `complete` was called for a row whose outcome is already recorded; the first outcome stays.
    #[error("audit row {id} already has an outcome")]
    AlreadyCompleted { id: i64 },
    /// The writer thread could not be started.
    #[error("cannot start the audit writer thread: {0}")]
    Thread(#[source] Arc<std::io::Error>),
    /// The writer thread has stopped, so nothing more can be recorded.
    #[error("audit writer has stopped; restart the gateway")]
    WriterGone,
}

impl From<rusqlite::Error> for AuditError {
    fn from(err: rusqlite::Error) -> Self {
        AuditError::Sqlite(Arc::new(err))
    }
}

impl AuditError {
    /// The SQLite primary error code, when the failure came from SQLite. Lets callers tell "busy"
    /// and "disk full" apart without reading message text.
    pub fn sqlite_code(&self) -> Option<rusqlite::ErrorCode> {
        match self {
            AuditError::Open { source, .. } | AuditError::Sqlite(source) => source.sqlite_error_code(),
            _ => None,
        }
    }

    pub(crate) fn invalid(id: i64, column: &'static str, err: &UnknownValue) -> Self {
        AuditError::InvalidRow {
            id,
            column,
            detail: err.to_string(),
        }
    }
}
