//! The gate: one downstream session's data path, run in-process wherever a client's bytes arrive —
//! in `portcullis connect` for a stdio client (one hop: client → connect → server), and in the
//! keeper's HTTP entry (`portcullis-keeper`) for HTTP clients. One implementation of the decision
//! path, not two.
//!
//! A [`Plane`] (`plane.rs`) is the gate for a config's servers in one process: the policy in force
//! with hot reload, rate limits, pins, the audit commit before forwarding, the upstreams, the
//! `tools/list` filter. What needs a person is not here: a held call is asked through
//! [`held_calls::HeldCalls`], the one seam to the keeper.
//!
//! Follow one held `tools/call` through the files, client's bytes to the server's:
//! 1. `local_conn.rs` — `portcullis connect`'s stdio client (`serve_stdio`), one JSON-RPC message
//!    per line, each read by the one strict reader (`portcullis_wire::Message::parse`);
//! 2. `session.rs` — `tools/call` goes to the gate, everything else straight on;
//! 3. `gate.rs` (`Gate::decide`), reading the call once (`gate/read.rs`) — the policy in force
//!    ([`policy_store`]) evaluated by `portcullis_policy` → rate limit → changed tool ([`pins`]) →
//!    held for a person (`gate/hold.rs` asks through `held_calls.rs`; from `connect`, the keeper
//!    link `held_calls/remote.rs`) → audit row committed (`audit_log.rs`) → a `Forwarded` token,
//!    or the refusal;
//! 4. `session/reply.rs` → `upstream.rs` (a child process, Streamable HTTP or legacy SSE) — the
//!    answer comes back through the session, and the token completes the audit row.
//!
//! The person's side of step 3 — the prompt, the broker, grants, a person's choice — is in
//! `crates/keeper` (`broker.rs`, `choose.rs`). Every other file here serves one of those steps;
//! `tools_filter.rs` is the one change made to a server's answer (hidden tools leave
//! `tools/list`). No module imports one that imports it back (`scripts/check-module-cycles.py`).
//!
//! Invariants: nothing but `tools/call` and `tools/list` is inspected or changed; a call is
//! forwarded only after its decision row is committed; when in doubt (no policy, no audit, no
//! keeper to ask) a call is refused with a `[portcullis]` tool error.

pub mod allocator;
pub mod audit_log;
pub mod clock;
pub mod digest_key;
pub mod events;
pub mod gate;
pub mod held_calls;
pub mod limits;
mod listed_tool;
pub mod local_conn;
pub mod local_socket;
pub mod pins;
mod places;
mod plane;
pub mod policy_store;
pub mod queue;
pub mod rate_limit;
pub mod session;
mod session_caps;
pub mod tool_catalog;
pub mod tools_filter;
pub mod upstream;
// Its users (a tmpfs, an IPv6 loopback) are Unix tests.
#[cfg(test)]
#[cfg(unix)]
mod test_env;

pub use plane::{event_channel, new_token, Plane, StartError, AUDIT_FILE};
