//! An rmcp stdio server: `echo` (read-only) and `drop_table` (destructive, never really drops
//! anything), both annotated, so a test can see annotations and results pass the gateway intact.
//! rmcp serves both MCP eras: `server/discover` as well as `initialize`.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

struct Tables;

fn schema(property: &str) -> Arc<Map<String, Value>> {
    let Value::Object(schema) = json!({
        "type": "object",
        "properties": { property: { "type": "string" } },
        "required": [property],
    }) else {
        unreachable!("a JSON object literal")
    };
    Arc::new(schema)
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("echo", "Echoes its message back.", schema("message"))
            .annotate(ToolAnnotations::new().read_only(true).destructive(false)),
        Tool::new(
            "drop_table",
            "Drops a table (this peer only says it did).",
            schema("table"),
        )
        .annotate(ToolAnnotations::new().read_only(false).destructive(true)),
    ]
}

fn argument<'a>(params: &'a CallToolRequestParams, key: &str) -> Result<&'a str, ErrorData> {
    params
        .arguments
        .as_ref()
        .and_then(|args| args.get(key))
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorData::invalid_params(format!("`{key}` (a string) is required"), None))
}

impl ServerHandler for Tables {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp-peer-tables", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = match request.name.as_ref() {
            "echo" => format!("rmcp echo: {}", argument(&request, "message")?),
            "drop_table" => format!("dropped {}", argument(&request, "table")?),
            other => return Err(ErrorData::invalid_params(format!("no tool named {other}"), None)),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

pub(crate) async fn run() -> anyhow::Result<()> {
    let service = Tables.serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
