//! Standing permissions that spare a second prompt.
//!
//! - Session grants: (server, tool, agent session), from "approve for this session"; they end
//!   with the session.
//! - Continuations: a 2026-07-28 MRTR call is several `tools/call` requests. When an approved
//!   call comes back `input_required`, its retry is the same logical call and is not asked again
//!   — but only a retry from the same session (or caller), of the same tool, with the same
//!   argument digest, carrying the `requestState` the server handed out. `requestState` is
//!   opaque and travels through the client, so on its own it proves nothing: replayed from
//!   another session or with other arguments it asks again. A continuation lives for a bounded
//!   time and is used once (a further `input_required` grants the next).
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
    /// Timed, session and every-session grants, listed and revocable.
    pub standing: super::standing::Standing,
    changed_tool: Mutex<HashSet<(String, String, String, String)>>,
    continuations: Mutex<Vec<(ContinuationKey, Option<String>, Instant)>>,
}

impl Grants {
    /// "Approve for this session": any arguments of `tool`, this session, until it ends.
    pub fn grant_session(&self, server: &str, tool: &str, session: &str) -> String {
        let grant = super::standing::NewGrant {
            server: server.to_owned(),
            tool: tool.to_owned(),
            effect: super::standing::Effect::Allow,
            reason: None,
            session: Some(session.to_owned()),
            which: super::standing::Which::Any,
            expires_at_ms: None,
        };
        self.standing.add(grant, crate::clock::now_ms())
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
        self.standing.end_session(session);
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
        let found = list
            .iter()
            .position(|(k, state, _)| k == key && (state.is_none() || state.as_deref() == request_state));
        found.map(|i| list.remove(i)).is_some()
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

    fn session_allows(g: &Grants, tool: &str, session: &str) -> bool {
        let args = serde_json::json!({});
        let asked = super::super::standing::Asked {
            server: "s",
            tool,
            session,
            digest: "d",
            facts: portcullis_policy::CallFacts::arguments(&args),
        };
        g.standing.find(&asked, 0).is_some()
    }

    #[test]
    fn session_grants_are_per_session_and_listed() {
        let g = Grants::default();
        let id = g.grant_session("s", "t", "a");
        assert!(session_allows(&g, "t", "a"));
        assert!(!session_allows(&g, "t", "b"));
        assert!(!session_allows(&g, "u", "a"));
        assert_eq!(g.standing.list(0)[0].id, id);
        g.end_session("a");
        assert!(!session_allows(&g, "t", "a"));
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
        assert!(!session_allows(&g, "t", "a"), "not an ordinary session grant");
        g.end_session("a");
        assert!(!g.changed_tool_allows("s", "t", "a", "d1"));
    }

    #[test]
    fn a_continuation_is_bound_to_session_tool_digest_and_state_and_used_once() {
        let g = Grants::default();
        g.grant_continuation(key("a", "d1"), Some("\"st\"".into()));
        assert!(
            !g.take_continuation(&key("a", "other"), Some("\"st\"")),
            "other arguments"
        );
        assert!(!g.take_continuation(&key("b", "d1"), Some("\"st\"")), "another session");
        assert!(
            !g.take_continuation(&key("a", "d1"), None),
            "the retry carries the state"
        );
        assert!(
            !g.take_continuation(&key("a", "d1"), Some("\"forged\"")),
            "another chain"
        );
        assert!(g.take_continuation(&key("a", "d1"), Some("\"st\"")));
        assert!(!g.take_continuation(&key("a", "d1"), Some("\"st\"")), "used once");
        g.grant_continuation(key("a", "d1"), None);
        assert!(
            g.take_continuation(&key("a", "d1"), None),
            "no state handed out: the key alone"
        );
    }
}
