//! Standing permissions that spare a second prompt.
//!
//! - Session grants: (server, tool, agent session), from "approve for this session"; they end
//!   with the session.
//! - Continuations: a 2026-07-28 MRTR call is several `tools/call` requests. When an approved
//!   call comes back `input_required`, its retry — the same `requestState`, or the same session,
//!   tool and argument digest — is the same logical call and is not asked again. A continuation
//!   lives for a bounded time and is used once (a further `input_required` grants the next).
//! - Changed-tool session grants: (server, tool, agent session, definition digest), from "approve
//!   for this session" on a call held because its tool changed ([`crate::pins`]); bound to the
//!   digest, so a further change asks again.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a continuation waits for its retry.
const CONTINUATION_TTL: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContinuationKey {
    pub server: String,
    pub tool: String,
    pub session: String,
    pub digest: String,
}

#[derive(Default)]
pub struct Grants {
    session: Mutex<HashSet<(String, String, String)>>,
    changed_tool: Mutex<HashSet<(String, String, String, String)>>,
    continuations: Mutex<Vec<(ContinuationKey, Option<String>, Instant)>>,
}

impl Grants {
    pub fn grant_session(&self, server: &str, tool: &str, session: &str) {
        self.lock_sessions()
            .insert((server.to_owned(), tool.to_owned(), session.to_owned()));
    }

    pub fn session_allows(&self, server: &str, tool: &str, session: &str) -> bool {
        self.lock_sessions()
            .contains(&(server.to_owned(), tool.to_owned(), session.to_owned()))
    }

    /// "For this session" on a call held because `tool` changed to the definition `digest`.
    pub fn grant_changed_tool(&self, server: &str, tool: &str, session: &str, digest: &str) {
        self.lock_changed().insert((
            server.to_owned(),
            tool.to_owned(),
            session.to_owned(),
            digest.to_owned(),
        ));
    }

    pub fn changed_tool_allows(&self, server: &str, tool: &str, session: &str, digest: &str) -> bool {
        self.lock_changed().contains(&(
            server.to_owned(),
            tool.to_owned(),
            session.to_owned(),
            digest.to_owned(),
        ))
    }

    pub fn end_session(&self, session: &str) {
        self.lock_sessions().retain(|(_, _, s)| s != session);
        self.lock_changed().retain(|(_, _, s, _)| s != session);
        self.lock_continuations().retain(|(k, _, _)| k.session != session);
    }

    /// An approved call answered `input_required`; `request_state` is its opaque state, as JSON.
    pub fn grant_continuation(&self, key: ContinuationKey, request_state: Option<String>) {
        let mut list = self.lock_continuations();
        list.retain(|(_, _, at)| at.elapsed() < CONTINUATION_TTL);
        list.push((key, request_state, Instant::now()));
    }

    /// Uses up the continuation this call is a retry of, if any.
    pub fn take_continuation(&self, key: &ContinuationKey, request_state: Option<&str>) -> bool {
        let mut list = self.lock_continuations();
        list.retain(|(_, _, at)| at.elapsed() < CONTINUATION_TTL);
        let found = list.iter().position(|(k, state, _)| {
            k == key
                || (request_state.is_some()
                    && state.as_deref() == request_state
                    && k.server == key.server
                    && k.tool == key.tool)
        });
        found.map(|i| list.remove(i)).is_some()
    }

    fn lock_sessions(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String, String)>> {
        self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_changed(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String, String, String)>> {
        self.changed_tool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_continuations(&self) -> std::sync::MutexGuard<'_, Vec<(ContinuationKey, Option<String>, Instant)>> {
        self.continuations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(session: &str, digest: &str) -> ContinuationKey {
        ContinuationKey {
            server: "s".into(),
            tool: "t".into(),
            session: session.into(),
            digest: digest.into(),
        }
    }

    #[test]
    fn session_grants_are_per_session() {
        let g = Grants::default();
        g.grant_session("s", "t", "a");
        assert!(g.session_allows("s", "t", "a"));
        assert!(!g.session_allows("s", "t", "b"));
        assert!(!g.session_allows("s", "u", "a"));
        g.end_session("a");
        assert!(!g.session_allows("s", "t", "a"));
    }

    #[test]
    fn changed_tool_grants_are_bound_to_the_digest() {
        let g = Grants::default();
        g.grant_changed_tool("s", "t", "a", "d1");
        assert!(g.changed_tool_allows("s", "t", "a", "d1"));
        assert!(
            !g.changed_tool_allows("s", "t", "a", "d2"),
            "a further change asks again"
        );
        assert!(!g.changed_tool_allows("s", "t", "b", "d1"));
        assert!(!g.session_allows("s", "t", "a"), "not an ordinary session grant");
        g.end_session("a");
        assert!(!g.changed_tool_allows("s", "t", "a", "d1"));
    }

    #[test]
    fn a_continuation_is_used_once_by_digest_or_request_state() {
        let g = Grants::default();
        g.grant_continuation(key("a", "d1"), Some("\"st\"".into()));
        assert!(!g.take_continuation(&key("a", "other"), None));
        assert!(g.take_continuation(&key("a", "d1"), None));
        assert!(!g.take_continuation(&key("a", "d1"), None), "used once");
        g.grant_continuation(key("a", "d1"), Some("\"st\"".into()));
        assert!(
            g.take_continuation(&key("b", "d2"), Some("\"st\"")),
            "same requestState chain"
        );
    }
}
