//! Continuations: a 2026-07-28 MRTR call is several `tools/call` requests. When an approved call
//! comes back `input_required`, its retry is the same logical call and is not asked again — but
//! only a retry from the same session (or caller), of the same tool, with the same argument
//! digest, carrying the `requestState` the server handed out. `requestState` is opaque and
//! travels through the client, so on its own it proves nothing: replayed from another session or
//! with other arguments it asks again. A continuation lives for a bounded time and is used once
//! (a further `input_required` grants the next).
//!
//! They belong to the gate, not the keeper: the retry comes back to the same data plane that
//! forwarded the approved call and saw its answer.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a continuation waits for its retry.
const CONTINUATION_TTL: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ContinuationKey {
    pub(crate) server: String,
    pub(crate) tool: String,
    pub(crate) session: String,
    pub(crate) digest: String,
}

#[derive(Default)]
pub(crate) struct Continuations {
    list: Mutex<Vec<(ContinuationKey, Option<String>, Instant)>>,
}

impl Continuations {
    /// An approved call answered `input_required`; `request_state` is its opaque state, as JSON.
    pub(crate) fn grant(&self, key: ContinuationKey, request_state: Option<String>) {
        let mut list = self.lock();
        list.retain(|(_, _, at)| at.elapsed() < CONTINUATION_TTL);
        list.push((key, request_state, Instant::now()));
    }

    /// Uses up the continuation this call is a retry of, if any.
    pub(crate) fn take(&self, key: &ContinuationKey, request_state: Option<&str>) -> bool {
        let mut list = self.lock();
        list.retain(|(_, _, at)| at.elapsed() < CONTINUATION_TTL);
        let found = list
            .iter()
            .position(|(k, state, _)| k == key && (state.is_none() || state.as_deref() == request_state));
        found.map(|i| list.remove(i)).is_some()
    }

    pub(crate) fn end_session(&self, session: &str) {
        self.lock().retain(|(k, _, _)| k.session != session);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(ContinuationKey, Option<String>, Instant)>> {
        self.list.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
    fn a_continuation_is_bound_to_session_tool_digest_and_state_and_used_once() {
        let c = Continuations::default();
        c.grant(key("a", "d1"), Some("\"st\"".into()));
        assert!(!c.take(&key("a", "other"), Some("\"st\"")), "other arguments");
        assert!(!c.take(&key("b", "d1"), Some("\"st\"")), "another session");
        assert!(!c.take(&key("a", "d1"), None), "the retry carries the state");
        assert!(!c.take(&key("a", "d1"), Some("\"forged\"")), "another chain");
        assert!(c.take(&key("a", "d1"), Some("\"st\"")));
        assert!(!c.take(&key("a", "d1"), Some("\"st\"")), "used once");
        c.grant(key("a", "d1"), None);
        assert!(c.take(&key("a", "d1"), None), "no state handed out: the key alone");
    }

    #[test]
    fn a_session_that_ends_takes_its_continuations_along() {
        let c = Continuations::default();
        c.grant(key("a", "d1"), None);
        c.grant(key("b", "d1"), None);
        c.end_session("a");
        assert!(!c.take(&key("a", "d1"), None));
        assert!(c.take(&key("b", "d1"), None));
    }
}
