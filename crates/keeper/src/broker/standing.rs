//! Standing grants: a person's "yes" or "no" that also covers later calls, without touching the
//! policy file.
//!
//! A grant is cut along three axes (DESIGN §5): *which* calls (this exact call by its keyed
//! argument digest · calls whose arguments satisfy a `when` condition · any arguments), *whose*
//! (one agent session · every session) and *how long* (until a deadline · until the gateway
//! restarts; a session's grant also ends with the session). "Always" is not here: it is written
//! into the policy file. A deny grant outranks an allow grant that also covers a call, so two
//! overlapping answers fail closed.
//!
//! A grant is for one kind of request ([`Method`]): the name a held call carries is a tool's, a
//! resource's URI, a prompt's name or a server request's kind, and one text can be several of
//! them, so a grant on the tool `x` never covers the prompt `x` or the resource `x`.

use std::sync::{Arc, Mutex};

use portcullis_audit::Method;
pub use portcullis_gate::held_calls::Effect;
use portcullis_gate::held_calls::Found;
use portcullis_policy::{CallFacts, When};
use serde::Serialize;

/// Which calls of the tool a grant covers.
#[derive(Debug, Clone)]
pub enum Which {
    /// This exact call: the keyed digest of its canonical arguments.
    Exact(String),
    /// Calls whose arguments (and client) satisfy the condition.
    When(Arc<When>),
    Any,
}

/// A grant as it is listed (control API, CLI, app).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "StandingGrant"))]
pub struct Listed {
    pub id: String,
    pub server: String,
    pub tool: String,
    pub effect: Effect,
    pub reason: Option<String>,
    /// `None`: every session.
    pub session: Option<String>,
    /// `"exact"`, `"when"` or `"any"`.
    #[cfg_attr(feature = "ts", ts(type = "\"exact\" | \"when\" | \"any\""))]
    pub which: &'static str,
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown> | null"))]
    pub when: Option<serde_json::Value>,
    pub digest: Option<String>,
    /// `None`: until the gateway restarts (or the session ends).
    pub expires_at_ms: Option<i64>,
    pub created_at_ms: i64,
}

/// A new grant, before it has an id.
#[derive(Debug, Clone)]
pub struct NewGrant {
    pub server: String,
    pub tool: String,
    pub effect: Effect,
    pub reason: Option<String>,
    pub session: Option<String>,
    pub which: Which,
    pub expires_at_ms: Option<i64>,
}

/// The call a grant is asked about.
pub struct Asked<'a> {
    /// Which kind of request it is; a grant covers only its own kind.
    pub method: Method,
    pub server: &'a str,
    pub tool: &'a str,
    pub session: &'a str,
    pub digest: &'a str,
    pub facts: CallFacts<'a>,
}

/// Grants alive at once. A person makes them one at a time; the bound keeps a script that
/// approves in a loop from growing the list without end (the oldest goes first).
const MAX_GRANTS: usize = 1024;

#[derive(Default)]
pub struct Standing {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    grants: Vec<Granted>,
}

/// A grant in force: as listed, what it covers, and the kind of request it is for (kept beside
/// the listing, whose shape the app's bindings fix).
struct Granted {
    listed: Listed,
    which: Which,
    method: Method,
}

impl Standing {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a grant for tool calls; returns its id. [`Standing::add_for`] for the other kinds.
    pub fn add(&self, grant: NewGrant, now_ms: i64) -> String {
        self.add_for(Method::ToolsCall, grant, now_ms)
    }

    /// Adds a grant for requests of `method` (a held call's [`PendingApproval::method`]); returns
    /// its id.
    ///
    /// [`PendingApproval::method`]: portcullis_gate::held_calls::pending::PendingApproval::method
    pub fn add_for(&self, method: Method, grant: NewGrant, now_ms: i64) -> String {
        let mut inner = self.lock();
        inner.next += 1;
        let id = format!("g{}", inner.next);
        let (kind, when, digest) = match &grant.which {
            Which::Exact(digest) => ("exact", None, Some(digest.clone())),
            Which::When(when) => ("when", Some(when.as_json().clone()), None),
            Which::Any => ("any", None, None),
        };
        let listed = Listed {
            id: id.clone(),
            server: grant.server,
            tool: grant.tool,
            effect: grant.effect,
            reason: grant.reason,
            session: grant.session,
            which: kind,
            when,
            digest,
            expires_at_ms: grant.expires_at_ms,
            created_at_ms: now_ms,
        };
        prune(&mut inner.grants, now_ms);
        if inner.grants.len() >= MAX_GRANTS {
            inner.grants.remove(0);
        }
        inner.grants.push(Granted {
            listed,
            which: grant.which,
            method,
        });
        id
    }

    /// The grants in force, oldest first.
    pub fn list(&self, now_ms: i64) -> Vec<Listed> {
        let mut inner = self.lock();
        prune(&mut inner.grants, now_ms);
        inner.grants.iter().map(|g| g.listed.clone()).collect()
    }

    /// Ends a grant; whether it existed.
    pub fn revoke(&self, id: &str) -> bool {
        let mut inner = self.lock();
        let before = inner.grants.len();
        inner.grants.retain(|g| g.listed.id != id);
        inner.grants.len() != before
    }

    /// The grant that decides `asked`, if any: a deny before an allow.
    pub fn find(&self, asked: &Asked<'_>, now_ms: i64) -> Option<Found> {
        let mut inner = self.lock();
        prune(&mut inner.grants, now_ms);
        let covering = || inner.grants.iter().filter(|g| covers(g, asked));
        let listed = &covering()
            .find(|g| g.listed.effect == Effect::Deny)
            .or_else(|| covering().next())?
            .listed;
        Some(Found {
            id: listed.id.clone(),
            effect: listed.effect,
            reason: listed.reason.clone(),
            session_scoped: listed.session.is_some(),
        })
    }

    /// The session ended: its grants go with it.
    pub fn end_session(&self, session: &str) {
        self.lock()
            .grants
            .retain(|g| g.listed.session.as_deref() != Some(session));
    }
}

/// Whether a grant covers a call (time aside).
fn covers(granted: &Granted, asked: &Asked<'_>) -> bool {
    let Granted { listed, which, method } = granted;
    *method == asked.method
        && listed.server == asked.server
        && listed.tool == asked.tool
        && listed.session.as_deref().is_none_or(|s| s == asked.session)
        && match which {
            Which::Exact(digest) => digest == asked.digest,
            Which::When(when) => when.holds(&asked.facts),
            Which::Any => true,
        }
}

fn prune(grants: &mut Vec<Granted>, now_ms: i64) {
    grants.retain(|g| g.listed.expires_at_ms.is_none_or(|at| at > now_ms));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn grant(effect: Effect, session: Option<&str>, which: Which, expires: Option<i64>) -> NewGrant {
        NewGrant {
            server: "fs".into(),
            tool: "write_file".into(),
            effect,
            reason: None,
            session: session.map(str::to_owned),
            which,
            expires_at_ms: expires,
        }
    }

    fn ask<'a>(session: &'a str, digest: &'a str, arguments: &'a Value) -> Asked<'a> {
        Asked {
            method: Method::ToolsCall,
            server: "fs",
            tool: "write_file",
            session,
            digest,
            facts: CallFacts::arguments(arguments),
        }
    }

    #[test]
    fn a_grant_covers_its_session_its_tool_and_its_arguments_until_it_expires() {
        let s = Standing::default();
        let under = Arc::new(When::parse(&json!({"arguments.path": {"path_under": "/tmp/x"}})).unwrap());
        s.add(grant(Effect::Allow, Some("a"), Which::When(under), Some(1_000)), 0);
        let inside = json!({"path": "/tmp/x/f"});
        let outside = json!({"path": "/tmp/x/../y"});
        assert!(s.find(&ask("a", "d", &inside), 10).is_some());
        assert!(s.find(&ask("b", "d", &inside), 10).is_none(), "another session");
        assert!(s.find(&ask("a", "d", &outside), 10).is_none(), "an escape is not under");
        assert!(s.find(&ask("a", "d", &inside), 1_000).is_none(), "expired");
        assert!(s.list(1_000).is_empty(), "and gone from the list");
    }

    #[test]
    fn a_deny_outranks_an_allow_and_revoking_ends_a_grant() {
        let s = Standing::default();
        let args = json!({});
        s.add(grant(Effect::Allow, None, Which::Any, None), 0);
        let deny = s.add(grant(Effect::Deny, None, Which::Exact("d1".into()), None), 0);
        assert_eq!(s.find(&ask("a", "d1", &args), 1).unwrap().effect, Effect::Deny);
        assert_eq!(s.find(&ask("a", "d2", &args), 1).unwrap().effect, Effect::Allow);
        assert!(s.revoke(&deny));
        assert!(!s.revoke(&deny), "once");
        assert_eq!(s.find(&ask("a", "d1", &args), 1).unwrap().effect, Effect::Allow);
    }

    #[test]
    fn a_sessions_grants_end_with_it() {
        let s = Standing::default();
        let args = json!({});
        s.add(grant(Effect::Allow, Some("a"), Which::Any, None), 0);
        s.add(grant(Effect::Allow, None, Which::Any, None), 0);
        s.end_session("a");
        let listed = s.list(0);
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].session, None);
        assert!(
            s.find(&ask("a", "d", &args), 0).is_some(),
            "the every-session grant stays"
        );
    }

    /// One name, several kinds of request: a grant on the tool `notes` is no grant on the prompt
    /// `notes`, and one on the resource `file:///x` none on a tool of that name.
    #[test]
    fn a_grant_covers_only_its_kind_of_request() {
        let s = Standing::default();
        let args = json!({});
        s.add(grant(Effect::Allow, None, Which::Any, None), 0);
        s.add_for(Method::ResourcesRead, grant(Effect::Deny, None, Which::Any, None), 0);
        let asked = |method| Asked {
            method,
            ..ask("a", "d", &args)
        };
        assert_eq!(s.find(&asked(Method::ToolsCall), 0).unwrap().effect, Effect::Allow);
        assert_eq!(
            s.find(&asked(Method::ResourcesRead), 0).unwrap().effect,
            Effect::Deny,
            "the resource grant, not the tool's"
        );
        assert!(
            s.find(&asked(Method::PromptsGet), 0).is_none(),
            "no grant for the prompt"
        );
        assert!(
            s.find(&asked(Method::ResourcesSubscribe), 0).is_none(),
            "a read grant is not a subscribe grant"
        );
    }
}
