//! What each server says about its tools (title, description, annotations), learnt from the
//! `tools/list` answers passing through and forgotten on `notifications/tools/list_changed`.
//! The approval prompt shows it; nothing here decides anything.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Mutex, RwLock};

use crate::tools_filter::Listed;

use serde_json::Value;

#[derive(Debug, Clone, Default)]
pub struct ToolInfo {
    pub title: Option<String>,
    pub description: Option<String>,
    pub annotations: Option<Value>,
}

#[derive(Default)]
pub struct ToolCatalog {
    servers: RwLock<HashMap<String, HashMap<String, ToolInfo>>>,
    /// Per server and tool, a keyed hash of the definition's text last learnt from a page
    /// ([`ToolCatalog::learn_listed`]), so a repeated list is not read again.
    seen: Mutex<HashMap<String, HashMap<String, u64>>>,
    hasher: RandomState,
}

impl ToolCatalog {
    /// Records the tools of one `tools/list` page (pages add up; a changed list clears first).
    pub fn learn(&self, server: &str, tools: &[Value]) {
        self.learn_each(server, tools);
    }

    /// [`ToolCatalog::learn`] for a page read from its bytes: a tool whose text is the one last
    /// learnt is not read again. `None` when a tool to learn cannot be read as a JSON value.
    pub fn learn_listed(&self, server: &str, tools: &[Listed<'_>]) -> Option<()> {
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let known = seen.entry(server.to_owned()).or_default();
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
        self.learn_each(server, values);
        for (tool, hash) in fresh {
            known.insert(tool.name.to_string(), hash);
        }
        Some(())
    }

    fn learn_each<'v>(&self, server: &str, tools: impl IntoIterator<Item = &'v Value>) {
        let mut servers = self.servers.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let known = servers.entry(server.to_owned()).or_default();
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let text = |k: &str| tool.get(k).and_then(Value::as_str).map(str::to_owned);
            let title = text("title").or_else(|| tool.get("annotations")?.get("title")?.as_str().map(str::to_owned));
            known.insert(
                name.to_owned(),
                ToolInfo {
                    title,
                    description: text("description"),
                    annotations: tool.get("annotations").cloned(),
                },
            );
        }
    }

    pub fn forget(&self, server: &str) {
        // Held while the tools go too, so a page learnt meanwhile is not left marked as learnt.
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.remove(server);
        self.servers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(server);
    }

    pub fn get(&self, server: &str, tool: &str) -> Option<ToolInfo> {
        self.servers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(server)?
            .get(tool)
            .cloned()
    }
}
