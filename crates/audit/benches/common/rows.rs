//! The row both audit benches record: an allowed `echo` call of one session, as the gateway hands
//! it to the writer. Included by each bench (`#[path]`), as a bench is a crate of its own.

use portcullis_audit::{DecidedBy, Decision, NewDecision};

/// Row `i` (its time and request id follow `i`) with these arguments.
pub(crate) fn allowed_echo(i: u64, arguments: serde_json::Value) -> NewDecision {
    NewDecision {
        time_ms: 1_780_000_000_000 + i64::try_from(i).unwrap_or(i64::MAX),
        session: "bench-session-0001".into(),
        client_name: Some("bench-client".into()),
        client_version: Some("1.0.0".into()),
        server: "everything".into(),
        method: portcullis_audit::Method::ToolsCall,
        tool: "echo".into(),
        arguments,
        arguments_digest: "hmac-sha256:3f0a4c1e9d2b7a65f0e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5e4f3a2b".into(),
        decision: Decision::Allowed,
        decided_by: DecidedBy::Policy,
        rule: Some("tools.echo".into()),
        reason: None,
        wait_ms: None,
        request_id: Some(i.to_string()),
        arguments_text: None,
        original_arguments: None,
        extra_redact_keys: Vec::new(),
    }
}
