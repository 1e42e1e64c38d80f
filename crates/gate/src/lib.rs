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
//!    answer comes back through the session; `answers.rs` inspects it (hidden characters, escapes,
//!    secrets, instruction markers, treated as the policy's `results` say; one the policy holds is
//!    asked about by `gate/held_answer.rs`, as a held call is) and the token completes the audit
//!    row with the outcome and what came back.
//!
//! The person's side of step 3 — the prompt, the broker, grants, a person's choice — is in
//! `crates/keeper` (`broker.rs`, `choose.rs`). Every other file here serves one of those steps;
//! `tools_filter.rs` is the one change made to a server's lists (hidden tools, resources,
//! templates and prompts leave them). No module imports one that imports it back
//! (`scripts/check-module-cycles.py`).
//!
//! The other doors take the same path from step 3 on, as a [`gate::Call`] whose `method` says what
//! it is (`gate/door.rs` reads them): a client's `resources/read`, `resources/subscribe` and
//! `prompts/get` from `session.rs`; the server's `sampling/createMessage`, `elicitation/create` and
//! `roots/list` from `session/server_asks.rs` (legacy era, before the client sees them) and
//! `session/input_requests.rs` (2026 era, MRTR input requests in a call's answer).
//!
//! Invariants: nothing but the decided requests, their answers and the lists is inspected or
//! changed, and an answer only when the policy takes something out of it; a request is
//! forwarded only after its decision row is committed; when in doubt (no policy, no audit, no
//! keeper to ask) it is refused with a `[portcullis]` tool error (a JSON-RPC error for methods
//! without one; for the server's requests, the answer a client saying no gives).

pub mod allocator;
pub mod answers;
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
