//! The live sessions the keeper knows of: its own HTTP entry's and those every data plane
//! (`portcullis connect`) announces over its keeper link, so the person sees who is connected
//! where (`GET /control/sessions`, the app's Servers view). A session leaves when it ends, or
//! when the link of the data plane that announced it closes.

use std::collections::BTreeMap;
use std::sync::Mutex;

use portcullis_gate::held_calls::LiveSession;

#[derive(Default)]
pub struct LiveSessions(Mutex<BTreeMap<String, LiveSession>>);

impl LiveSessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, LiveSession>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds or updates (a client that initialized again) a session.
    pub fn announce(&self, session: LiveSession) {
        self.lock().insert(session.session.clone(), session);
    }

    pub fn end(&self, session: &str) {
        self.lock().remove(session);
    }

    /// Every live session, by server then oldest first.
    pub fn list(&self) -> Vec<LiveSession> {
        let mut all: Vec<LiveSession> = self.lock().values().cloned().collect();
        all.sort_by(|a, b| (&a.server, a.since_ms, &a.session).cmp(&(&b.server, b.since_ms, &b.session)));
        all
    }
}

#[cfg(test)]
mod tests {
    use portcullis_gate::held_calls::pending::ClientInfo;

    use super::*;

    fn live(session: &str, server: &str, since_ms: i64) -> LiveSession {
        LiveSession {
            session: session.into(),
            server: server.into(),
            client: ClientInfo::default(),
            via: "connect".into(),
            pid: 7,
            since_ms,
        }
    }

    #[test]
    fn sessions_are_listed_by_server_then_age_until_they_end() {
        let live_sessions = LiveSessions::default();
        live_sessions.announce(live("b", "fs", 2));
        live_sessions.announce(live("a", "fs", 3));
        live_sessions.announce(live("c", "everything", 9));
        let order = |l: &LiveSessions| l.list().into_iter().map(|s| s.session).collect::<Vec<_>>();
        assert_eq!(order(&live_sessions), ["c", "b", "a"]);
        live_sessions.end("b");
        assert_eq!(order(&live_sessions), ["c", "a"]);
    }
}
