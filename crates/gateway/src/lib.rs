//! The Portcullis gateway: an MCP proxy that decides every `tools/call` by policy.
//!
//! [`Gateway`] (`gateway.rs`) is the running whole: config, sessions (`gateway/sessions.rs`),
//! endpoints and shutdown (`gateway/serve.rs`). What the CLI's control API ([`http`]) and the
//! desktop app ask of it — held calls and answers, grants, pause, policy files, pins, health —
//! is one handle API (`gateway/handle.rs`); nothing outside reaches into the [`gate`]'s parts.
//!
//! Follow one held `tools/call` through the files, client's bytes to the server's:
//! 1. `crates/cli/src/connect.rs` — `portcullis connect` is a data plane: this crate's gate for
//!    one stdio client, in that process ([`Gateway::open_data_plane`]); [`local_conn`] reads each
//!    line with the one strict reader (`portcullis_wire::Message::parse`,
//!    `crates/wire/src/message.rs`). HTTP clients come in through the keeper's [`http`] entry
//!    (`http/mcp.rs`: Host, Origin, token) to the same session API;
//! 2. [`session`] (`session.rs`) — `tools/call` goes to the [`gate`], everything else straight on;
//! 3. [`gate`] (`gate.rs`, `Gate::decide`) — the policy in force ([`policy_store`]) evaluated by
//!    `portcullis_policy` (`crates/policy/src/eval.rs`, naming its rule as a `RuleRef`) → rate
//!    limit ([`rate_limit`]) → changed tool ([`pins`]) → held for a person (`gate/hold.rs` asks
//!    through [`held_calls`], the one seam to the keeper: in the keeper its [`approval`] broker,
//!    in `connect` the keeper link `held_calls/remote.rs` → `held_calls/link.rs`; a person's
//!    answer, from the prompt or the CLI, is [`choose`] in the keeper) → audit row committed
//!    ([`audit_log`]) → a `Forwarded` token, or the refusal;
//! 4. `session/reply.rs` → [`upstream`] (`upstream.rs`, `upstream/child_process.rs`; or
//!    Streamable HTTP / legacy SSE) — the answer comes back through the session, and the token
//!    completes the audit row with the outcome (dropped unanswered: `cancelled`).
//!
//! Every other file serves one of those steps; `tools_filter.rs` is the one change made to a
//! server's answer (hidden tools leave `tools/list`). No module imports one that imports it
//! back (`scripts/check-module-cycles.py`, in CI).
//!
//! Invariants: nothing but `tools/call` and `tools/list` is inspected or changed; a call is
//! forwarded only after its decision row is committed; when in doubt (no policy, no audit, no
//! approver) a call is refused with a `[portcullis]` tool error.

pub mod allocator;
pub mod approval;
pub mod audit_log;
pub mod choose;
pub mod clock;
pub mod digest_key;
pub mod events;
pub mod gate;
mod gateway;
pub mod held_calls;
pub mod http;
pub mod limits;
pub mod listed_tool;
pub mod local_conn;
pub mod local_socket;
pub mod pins;
pub mod places;
pub mod policy_store;
pub mod queue;
pub mod rate_limit;
pub mod session;
pub mod session_caps;
pub mod tool_catalog;
pub mod tools_filter;
pub mod upstream;
// Its users (a tmpfs, an IPv6 loopback) are Unix tests.
#[cfg(test)]
#[cfg(unix)]
mod test_env;

pub use gateway::{running_gateway, Gateway, Health, StartError, AUDIT_FILE};
