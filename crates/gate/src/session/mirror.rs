//! A session's `Mcp-Param-*` headers ([`portcullis_wire::mirror::params`]): which arguments a tool
//! mirrors, read from its `inputSchema` as this session was told it. The client's headers are
//! checked against the body on the way in; the upstream's are written from the call as it is
//! forwarded (after an edit, the edited arguments), so nothing the client put in a header reaches
//! the upstream unless the body says the same.

use portcullis_wire::mirror::params::{self, Declared, Received};
use portcullis_wire::{method, Message};
use serde_json::Value;

use super::Session;
use crate::upstream::Upstream;

impl Session {
    /// The arguments `tool` mirrors into headers (none for a tool never listed), or why its
    /// schema's annotations are invalid.
    fn mirrored_params(&self, tool: &str) -> Result<Vec<Declared>, String> {
        self.gate
            .tool_input_schema(&self.server, &self.id, tool)
            .map_or(Ok(Vec::new()), |schema| params::declared(&schema))
    }

    /// Checks a `tools/call`'s `Mcp-Param-*` headers against its arguments. `Err` says what is
    /// wrong (for the client's `-32020`).
    pub fn check_param_headers(&self, msg: &Message, received: &[Received<'_>]) -> Result<(), String> {
        if received.is_empty() {
            return Ok(());
        }
        let (tool, arguments) = call_parts(msg);
        let declared = tool.as_deref().map_or(Ok(Vec::new()), |t| self.mirrored_params(t));
        params::check(&declared, arguments.as_ref(), received)
    }

    /// The `Mcp-Param-*` headers for `msg` on its way to an HTTP upstream, written from its own
    /// arguments; none for other upstreams and other messages.
    pub(super) fn param_headers(&self, msg: &Message) -> Vec<(String, String)> {
        if !matches!(self.upstream, Upstream::Http(_)) || msg.method() != Some(method::TOOLS_CALL) {
            return Vec::new();
        }
        let (Some(tool), Some(arguments)) = call_parts(msg) else {
            return Vec::new();
        };
        match self.mirrored_params(&tool) {
            Ok(declared) => params::write(&declared, &arguments),
            Err(why) => {
                tracing::debug!(
                    tool,
                    why,
                    "invalid x-mcp-header annotations: no Mcp-Param-* header written"
                );
                Vec::new()
            }
        }
    }
}

/// A `tools/call`'s tool name and arguments, where it has them.
fn call_parts(msg: &Message) -> (Option<String>, Option<Value>) {
    let Ok(Value::Object(mut params)) = msg.params::<Value>() else {
        return (None, None);
    };
    let tool = params.get("name").and_then(Value::as_str).map(str::to_owned);
    (tool, params.remove("arguments"))
}
