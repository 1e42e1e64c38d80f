//! Standing permissions that spare a second prompt.
//!
//! - Session grants: (kind of request, server, tool, agent session), from "approve for this
//!   session"; they end with the session. The kind ([`Method`]) keeps a grant on the tool `x` off
//!   the prompt `x` and the resource `x`.
//! - Changed-tool session grants: (server, tool, agent session, definition digest), from "approve
//!   for this session" on a call held because its tool changed ([`portcullis_gate::pins`]); bound to the
//!   digest, so a further change asks again.

use std::collections::HashSet;
use std::sync::Mutex;

use portcullis_audit::Method;

#[derive(Default)]
pub struct Grants {
    /// Timed, session and every-session grants, listed and revocable.
    pub standing: super::standing::Standing,
    changed_tool: Mutex<HashSet<(String, String, String, String)>>,
}

impl Grants {
    /// "Approve for this session": any arguments of `tool` (for another `method`, the resource
    /// URI, prompt name or server request named so), this session, until it ends.
    pub fn grant_session(&self, method: Method, server: &str, tool: &str, session: &str) -> String {
        let grant = super::standing::NewGrant {
            server: server.to_owned(),
            tool: tool.to_owned(),
            effect: super::standing::Effect::Allow,
            reason: None,
            session: Some(session.to_owned()),
            which: super::standing::Which::Any,
            expires_at_ms: None,
        };
        self.standing.add_for(method, grant, portcullis_gate::clock::now_ms())
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
    }

    fn lock_changed(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String, String, String)>> {
        self.changed_tool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session_allows(g: &Grants, tool: &str, session: &str) -> bool {
        allows(g, Method::ToolsCall, tool, session)
    }

    fn allows(g: &Grants, method: Method, tool: &str, session: &str) -> bool {
        let args = serde_json::json!({});
        let asked = super::super::standing::Asked {
            method,
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
        let id = g.grant_session(Method::ToolsCall, "s", "t", "a");
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

    /// "For this session" on a held prompt covers that prompt in that session, not a tool or a
    /// resource of the same name.
    #[test]
    fn a_session_grant_covers_only_its_kind_of_request() {
        let g = Grants::default();
        g.grant_session(Method::PromptsGet, "s", "x", "a");
        assert!(allows(&g, Method::PromptsGet, "x", "a"));
        assert!(!allows(&g, Method::ToolsCall, "x", "a"), "the tool x asks");
        assert!(!allows(&g, Method::ResourcesRead, "x", "a"), "the resource x asks");
    }
}
