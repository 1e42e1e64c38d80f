//! What each server says about its tools (title, description, annotations), learnt from the
//! `tools/list` answers passing through and forgotten on `notifications/tools/list_changed`.
//! The approval prompt shows it; nothing here decides anything.

use std::collections::HashMap;
use std::sync::RwLock;

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
}

impl ToolCatalog {
    /// Records the tools of one `tools/list` page (pages add up; a changed list clears first).
    pub fn learn(&self, server: &str, tools: &[Value]) {
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
