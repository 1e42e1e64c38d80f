//! What a failed command sends the web view: `{ code, message }`, never a bare string.
//! `code` is for the UI to branch on, `message` is short and shown to the person as is.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct IpcError {
    pub code: &'static str,
    pub message: String,
}

impl IpcError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn unknown_server(server: &str) -> Self {
        Self::new(
            "unknown_server",
            format!("no server {server:?} in the config's mcpServers"),
        )
    }

    /// An unexpected failure: the detail goes to the log, a short message to the person.
    pub fn internal(what: &str, error: &dyn std::fmt::Display) -> Self {
        tracing::error!(%error, "{what}");
        Self::new("internal", format!("{what}: {error}"))
    }
}

impl std::fmt::Display for IpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl From<portcullis_audit::AuditError> for IpcError {
    fn from(e: portcullis_audit::AuditError) -> Self {
        Self::internal("the audit log cannot be read", &e)
    }
}

pub type IpcResult<T> = Result<T, IpcError>;
