//! MCP method names the gateway recognises. Everything else passes through by name unseen.

pub const INITIALIZE: &str = "initialize";
pub const INITIALIZED: &str = "notifications/initialized";
pub const TOOLS_CALL: &str = "tools/call";
pub const TOOLS_LIST: &str = "tools/list";
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
pub const CANCELLED: &str = "notifications/cancelled";
pub const PROGRESS: &str = "notifications/progress";
pub const PING: &str = "ping";

// The other doors the gate decides (issue 32): a client's reads and fetches, and what the
// server asks of the client.
pub const RESOURCES_READ: &str = "resources/read";
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
pub const RESOURCES_LIST: &str = "resources/list";
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
pub const PROMPTS_GET: &str = "prompts/get";
pub const PROMPTS_LIST: &str = "prompts/list";
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
pub const ELICITATION_CREATE: &str = "elicitation/create";
pub const ROOTS_LIST: &str = "roots/list";

/// `_meta` key that marks a 2026-07-28 (stateless) request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client's self-reported identity on stateless requests.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key carrying a stateless request's own capabilities (2026-07-28).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The tasks extension's identifier (SEP-2663), under `clientCapabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `_meta` key tying a 2025-11-25 task's result to its task.
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// `_meta` key of every frame of a 2026 `subscriptions/listen` stream: the listen request's id.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

pub const TASKS_GET: &str = "tasks/get";
/// 2025-11-25 only: waits for the task's result.
pub const TASKS_RESULT: &str = "tasks/result";
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// 2026-07-28 extension only: answers a task's input requests.
pub const TASKS_UPDATE: &str = "tasks/update";
/// 2025-11-25: a task's status changed.
pub const TASK_STATUS: &str = "notifications/tasks/status";
