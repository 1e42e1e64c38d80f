//! The JSON-RPC wire of MCP, as thin as a pass-through proxy needs.
//!
//! - [`Message`] keeps every message as the exact bytes it arrived in, plus the few envelope fields
//!   routing needs (kind, id, method). Bytes the gateway does not police are forwarded as they came:
//!   ids, `_meta`, unknown fields and key order survive untouched.
//! - [`RequestId`] is the id's raw JSON text, so `1` and `"1"` stay distinct and round-trip exactly.
//! - [`LineDecoder`] frames stdio (split on `\n` only, strip one `\r`, bounded line length).
//! - [`SseDecoder`] / [`sse::encode_event`] frame Server-Sent Events for Streamable HTTP and legacy SSE.
//! - [`canonical`] gives the canonical form of JSON, the keyed digest of tool arguments (approval
//!   grants, audit) and the unkeyed digest of tool definitions (pins).
//! - [`gate_result`] builds the `isError` tool results Portcullis answers with instead of forwarding.
//!
//! Nothing here knows about tokio, policies or storage.

pub mod canonical;
pub mod codec;
pub mod gate_result;
pub mod message;
pub mod method;
pub mod mirror;
pub mod parse_error;
pub mod sse;
pub mod strict;
pub mod tools_page;

pub use codec::{LineDecoder, LineError};
pub use message::{Kind, Message, RequestId};
pub use parse_error::ParseError;
pub use sse::{SseDecoder, SseEvent};

/// The largest JSON-RPC message Portcullis reads, in bytes, whichever way it comes: an HTTP
/// request body (larger: 413), a stdio line from a client (`connect`) or an upstream, an SSE
/// event. Sixteen MiB holds any real tool call or result (a big file read, a screenshot as
/// base64) while capping what one message can make the gateway buffer. Here because the config
/// file's limits are checked against it too.
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// JSON-RPC error codes the gateway itself produces.
pub mod error_code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// 2026-07-28: an HTTP header disagrees with the body it accompanies.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// Portcullis refused a request that has no `isError` result form (a resource read, a prompt
    /// fetch, a server's request): its message starts `[portcullis]` and says why.
    pub const REFUSED: i64 = -32001;
}
