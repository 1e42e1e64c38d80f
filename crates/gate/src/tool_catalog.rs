//! What each server says about its tools (title, description, annotations, input schema),
//! learnt from the `tools/list` answers passing through. The approval prompt shows it; nothing
//! here decides anything.
//!
//! Kept per agent session as well as per server: each session has its own upstream connection,
//! and one session's `notifications/tools/list_changed` forgets only what that session was told,
//! so the prompt of a call held in another session keeps its description and badge. The
//! server-wide scope (the monitor connection's lists and the latest of every session's) is never
//! forgotten, only overwritten tool by tool; a tool no scope has seen was never listed, and the
//! prompt calls it high risk.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, RwLock};

use crate::listed_tool::Listed;

use serde_json::Value;

/// What a server says about one tool in its `tools/list` entry, beyond the name.
#[derive(Debug, Clone, Default)]
pub struct ToolDescription {
    pub title: Option<String>,
    pub description: Option<String>,
    pub annotations: Option<Value>,
    /// The tool's `inputSchema`, against which the prompt checks edited arguments.
    pub input_schema: Option<Value>,
}

/// What the catalog knows of one tool for one session's prompt.
#[derive(Debug, Clone, Default)]
pub struct Known {
    pub info: ToolDescription,
    /// Whether the server ever listed the tool (to this session, another, or the monitor).
    pub listed: bool,
}

/// Whose list a scope holds: one session's, or the server's latest.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Scope {
    Server(String),
    Session(String, String),
}

/// One tool as kept: the JSON members as their text, shared by every scope that learnt it.
/// A 20,000-tool server is kept once, in about the size of its page, rather than as two trees
/// of `Value`s (one per scope); the prompt reads a tool back only when a call is held.
#[derive(Debug)]
struct Stored {
    title: Option<Box<str>>,
    description: Option<Box<str>>,
    annotations: Option<Box<str>>,
    input_schema: Option<Box<str>>,
}

impl Stored {
    fn of(tool: &Value) -> Self {
        let text = |k: &str| tool.get(k).and_then(Value::as_str).map(Box::from);
        let json = |k: &str| tool.get(k).map(|v| v.to_string().into_boxed_str());
        let title = text("title").or_else(|| tool.get("annotations")?.get("title")?.as_str().map(Box::from));
        Self {
            title,
            description: text("description"),
            annotations: json("annotations"),
            input_schema: json("inputSchema"),
        }
    }

    fn info(&self) -> ToolDescription {
        // The text was written from a `Value` here, so it reads back.
        let value = |t: &Option<Box<str>>| t.as_deref().and_then(|t| serde_json::from_str(t).ok());
        ToolDescription {
            title: self.title.as_deref().map(str::to_owned),
            description: self.description.as_deref().map(str::to_owned),
            annotations: value(&self.annotations),
            input_schema: value(&self.input_schema),
        }
    }
}

#[derive(Default)]
pub struct ToolCatalog {
    scopes: RwLock<HashMap<Scope, HashMap<String, Arc<Stored>>>>,
    /// Per scope and tool, a keyed hash of the definition's text last learnt from a page
    /// ([`ToolCatalog::learn_listed`]), so a repeated list is not read again.
    seen: Mutex<HashMap<Scope, HashMap<String, u64>>>,
    hasher: RandomState,
}

impl ToolCatalog {
    /// Records the tools of one `tools/list` page read outside any agent session (the monitor
    /// connection, `policy init`): the server-wide scope.
    pub fn learn(&self, server: &str, tools: &[Value]) {
        self.learn_each(&[Scope::Server(server.to_owned())], tools);
    }

    /// Records a `tools/list` page read from its bytes in `session` (pages add up; a changed
    /// list is forgotten first): a tool whose text is the one last learnt in that session is not
    /// read again. `None` when a tool to learn cannot be read as a JSON value.
    pub(crate) fn learn_listed(&self, server: &str, session: &str, tools: &[Listed<'_>]) -> Option<()> {
        let scope = Scope::Session(server.to_owned(), session.to_owned());
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let known = seen.entry(scope.clone()).or_default();
        let mut fresh = Vec::new();
        for tool in tools {
            let hash = self.hasher.hash_one(tool.raw);
            if known.get(&*tool.name) != Some(&hash) {
                fresh.push((tool, hash));
            }
        }
        if fresh.is_empty() {
            return Some(());
        }
        let values = fresh.iter().map(|(t, _)| t.value()).collect::<Option<Vec<&Value>>>()?;
        self.learn_each(&[scope, Scope::Server(server.to_owned())], values);
        for (tool, hash) in fresh {
            known.insert(tool.name.to_string(), hash);
        }
        Some(())
    }

    fn learn_each<'v>(&self, scopes: &[Scope], tools: impl IntoIterator<Item = &'v Value>) {
        let mut all = self.scopes.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let info = Arc::new(Stored::of(tool));
            for scope in scopes {
                all.entry(scope.clone())
                    .or_default()
                    .insert(name.to_owned(), Arc::clone(&info));
            }
        }
    }

    /// Forgets what `session` was told of `server`'s tools (its list changed, or it ended).
    pub fn forget(&self, server: &str, session: &str) {
        let scope = Scope::Session(server.to_owned(), session.to_owned());
        // Held while the tools go too, so a page learnt meanwhile is not left marked as learnt.
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.remove(&scope);
        self.scopes
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&scope);
    }

    /// The `inputSchema` of `tool` as `session` was told it, else as the server last listed it
    /// (read alone, for the headers a call mirrors: [`portcullis_wire::mirror::params`]).
    pub fn input_schema(&self, server: &str, session: &str, tool: &str) -> Option<Value> {
        let scopes = self.scopes.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let of = |scope: Scope| scopes.get(&scope)?.get(tool).cloned();
        let stored = of(Scope::Session(server.to_owned(), session.to_owned()))
            .or_else(|| of(Scope::Server(server.to_owned())))?;
        serde_json::from_str(stored.input_schema.as_deref()?).ok()
    }

    /// What `session`'s prompt shows of `tool`: what that session was told, else the
    /// server's latest.
    pub fn get(&self, server: &str, session: &str, tool: &str) -> Known {
        let scopes = self.scopes.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let of = |scope: Scope| scopes.get(&scope)?.get(tool).map(|stored| stored.info());
        of(Scope::Session(server.to_owned(), session.to_owned()))
            .or_else(|| of(Scope::Server(server.to_owned())))
            .map_or_else(Known::default, |info| Known { info, listed: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Value {
        serde_json::json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
    }

    fn learn(catalog: &ToolCatalog, session: &str, tools: &[Value]) {
        let texts: Vec<String> = tools.iter().map(Value::to_string).collect();
        let listed: Vec<Listed<'_>> = tools
            .iter()
            .zip(&texts)
            .map(|(t, raw)| Listed::new(t["name"].as_str().unwrap().into(), raw))
            .collect();
        catalog.learn_listed("srv", session, &listed).unwrap();
    }

    /// Regression: another session's list_changed cleared the shared catalog, and the prompt of
    /// a call held in this session lost its description and badge.
    #[test]
    fn another_sessions_list_changed_keeps_this_sessions_descriptions() {
        let catalog = ToolCatalog::default();
        learn(&catalog, "a", &[tool("write_file", "writes a file")]);
        learn(&catalog, "b", &[tool("write_file", "writes a file")]);
        catalog.forget("srv", "b");
        let known = catalog.get("srv", "a", "write_file");
        assert!(known.listed);
        assert_eq!(known.info.description.as_deref(), Some("writes a file"));
        assert_eq!(known.info.input_schema, Some(serde_json::json!({"type": "object"})));
    }

    #[test]
    fn a_session_sees_its_own_list_and_else_the_servers_latest() {
        let catalog = ToolCatalog::default();
        learn(&catalog, "a", &[tool("t", "as told to a")]);
        learn(&catalog, "b", &[tool("t", "as told to b")]);
        assert_eq!(
            catalog.get("srv", "a", "t").info.description.as_deref(),
            Some("as told to a")
        );
        assert_eq!(
            catalog.get("srv", "c", "t").info.description.as_deref(),
            Some("as told to b"),
            "a session that listed nothing sees the latest list"
        );
        catalog.forget("srv", "a");
        assert!(
            catalog.get("srv", "a", "t").listed,
            "the server's latest still knows it"
        );
    }

    #[test]
    fn a_tool_no_list_named_is_not_listed() {
        let catalog = ToolCatalog::default();
        catalog.learn("srv", &[tool("t", "d")]);
        assert!(catalog.get("srv", "a", "t").listed);
        assert!(!catalog.get("srv", "a", "ghost").listed);
        assert!(!catalog.get("other", "a", "t").listed);
    }
}
