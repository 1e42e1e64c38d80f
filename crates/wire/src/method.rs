//! MCP method names the gateway recognises. Everything else passes through by name unseen.

pub const INITIALIZE: &str = "initialize";
pub const INITIALIZED: &str = "notifications/initialized";
pub const SERVER_DISCOVER: &str = "server/discover";
pub const TOOLS_CALL: &str = "tools/call";
pub const TOOLS_LIST: &str = "tools/list";
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
pub const CANCELLED: &str = "notifications/cancelled";
pub const PROGRESS: &str = "notifications/progress";
pub const PING: &str = "ping";

/// `_meta` key that marks a 2026-07-28 (stateless) request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client's self-reported identity on stateless requests.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
