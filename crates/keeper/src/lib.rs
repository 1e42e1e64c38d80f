//! The keeper: the user's one long-lived process, hosted by the tray app or `portcullis serve`.
//! It keeps only what needs a person — the approval broker, grants across sessions, "always"
//! writes, the control API, the events the UI shows, the registry of live sessions — and runs
//! the gate (`portcullis-gate`) for its own HTTP entry. Allow, deny, hide and rate limits never
//! need it: `portcullis connect` runs the gate itself and asks the keeper only about held calls.
//!
//! Follow one held `tools/call` from either entry (at most 8 files):
//! - from `connect`: `crates/gate/src/local_conn.rs` → `session.rs` → `gate.rs` →
//!   `gate/hold.rs` → `held_calls/remote.rs` (the keeper link) → here `link_serve.rs` →
//!   `broker.rs` (held; the prompt is the app's or `approvals watch`'s, fed by its events) →
//!   `choose.rs` (a person's answer, back down the link to the gate, which commits the audit
//!   row and forwards);
//! - from HTTP: `http/mcp.rs` (Host, Origin, token) → `session.rs` → `gate.rs` → `gate/hold.rs`
//!   → `broker/in_process.rs` → `broker.rs` → `choose.rs`.
//!
//! [`Keeper`] (`keeper.rs`) is the running whole; what the CLI's control API (`http/control.rs`)
//! and the desktop app ask of it is one handle API (`keeper/handle.rs`).

mod broker;
pub mod choose;
mod http;
mod keeper;
mod link_serve;
mod local_accept;
// Its users (a tmpfs, an IPv6 loopback) are Unix tests.
#[cfg(test)]
#[cfg(unix)]
#[path = "../../gate/src/test_env.rs"]
mod test_env;

pub use broker::standing;
pub use broker::ApproverGuard;
pub use keeper::{running_gateway, GateExplanation, Health, Keeper, StartError};
pub use portcullis_gate::AUDIT_FILE;
