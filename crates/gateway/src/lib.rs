//! The Portcullis gateway: an MCP proxy that decides every `tools/call` by policy.
//!
//! [`Gateway`] (`gateway.rs`) is the running whole: config, sessions (`gateway/sessions.rs`),
//! endpoints and shutdown (`gateway/serve.rs`). What the CLI's control API ([`http`]) and the
//! desktop app ask of it — held calls and answers, grants, pause, policy files, pins, health —
//! is one handle API (`gateway/handle.rs`); nothing outside reaches into the [`gate`]'s parts.
//!
//! Follow one call through the files:
//! 1. [`http`] — the loopback endpoint checks Host, Origin and token, parses the body
//!    ([`portcullis_wire::Message`]) and finds the [`session::Session`]; or [`local_conn`] — a
//!    `portcullis connect` connection on the local socket ([`local_socket`]: the platform part),
//!    which checks the hello's token and drives the same session API, one message per line;
//! 2. [`session`] — `tools/call` goes to the [`gate`], everything else straight on;
//! 3. [`gate`] — policy ([`policy_store`]) → rate limit ([`rate_limit`]) → changed tool
//!    ([`pins`]) → approval ([`approval`]) → audit row committed ([`audit_log`]) → forward or refuse;
//! 4. [`upstream`] — the child process / Streamable HTTP / legacy SSE connection; the answer
//!    flows back through the session, which completes the audit row.
//!
//! Invariants: nothing but `tools/call` and `tools/list` is inspected or changed; a call is
//! forwarded only after its decision row is committed; when in doubt (no policy, no audit, no
//! approver) a call is refused with a `[portcullis]` tool error.

pub mod approval;
pub mod audit_log;
pub mod digest_key;
pub mod events;
pub mod gate;
pub mod http;
pub mod limits;
pub mod listed_tool;
pub mod local_conn;
pub mod local_socket;
pub mod pins;
pub mod policy_store;
pub mod queue;
pub mod rate_limit;
pub mod risk;
pub mod session;
pub mod session_caps;
pub mod starter_policy;
pub mod tool_catalog;
pub mod tools_filter;
pub mod upstream;
mod gateway;

pub use gateway::{running_gateway, Gateway, Health, StartError, AUDIT_FILE};
