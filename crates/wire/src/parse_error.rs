//! Why a message was refused, and the JSON-RPC error code its refusal carries.

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("a JSON-RPC message must be a JSON object")]
    NotAnObject,
    #[error("JSON-RPC batches are not supported (removed in MCP 2025-06-18)")]
    Batch,
    #[error("invalid JSON-RPC id {0}: expected a string or an integer")]
    BadId(String),
    #[error(
        "a request id must be a string or an integer, not null (JSON-RPC libraries disagree on what a null id means)"
    )]
    NullId,
    #[error("not a JSON-RPC request, notification or response (no method, result or error)")]
    NoKind,
    #[error("method {0:?} without an id: only notifications/* methods may be sent without one; add an id to make it a request")]
    NotANotification(String),
    #[error("\"jsonrpc\" must be \"2.0\" on requests and notifications")]
    Version,
    #[error("params must be an object (MCP has no positional parameters)")]
    Params,
    #[error("invalid tools/call: {0}")]
    ToolCall(&'static str),
    #[error("invalid request: {0}")]
    Door(&'static str),
    #[error("a response cannot carry both a result and an error")]
    ResultAndError,
    #[error("ambiguous message, refused: {0}")]
    Ambiguous(String),
    #[error("this message has no id to replace")]
    NoId,
}

impl ParseError {
    /// The JSON-RPC error code for a message refused with this error: bad JSON is a parse error,
    /// valid JSON that is not a well-formed, unambiguous message an invalid request.
    pub fn code(&self) -> i64 {
        match self {
            ParseError::Json(_) => crate::error_code::PARSE_ERROR,
            _ => crate::error_code::INVALID_REQUEST,
        }
    }
}
