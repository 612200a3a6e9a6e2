//! MCP tools as agent tools (pi's `createMcpToolDefinition`) and the resource tools
//! (`list_mcp_resources`, `list_mcp_resource_templates`, `read_mcp_resource`, pi's `resources.ts`).

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use pi_ai::{TextContent, UserBlock};
use serde_json::{Map, Value, json};

use super::config::Exposure;
use super::content::{convert_mcp_result, limit_mcp_content, to_model_content};
use super::manager::{McpManager, RegisteredMcpTool};

/// The tool's input schema as an object schema (pi-mcp's `normalizeMcpInputSchema`).
pub fn normalize_input_schema(schema: &Value) -> Value {
    let mut map = schema.as_object().cloned().unwrap_or_default();
    if map.get("type").is_none_or(Value::is_null) {
        map.insert("type".into(), Value::String("object".into()));
    }
    if !map.contains_key("properties") {
        map.insert("properties".into(), Value::Object(Map::new()));
    }
    Value::Object(map)
}

/// The description the model sees: the trimmed description, else the title, else a default.
pub fn tool_description(server: &str, tool: &Value) -> String {
    let description = tool.get("description").and_then(Value::as_str).map(str::trim).filter(|d| !d.is_empty());
    let title = tool
        .get("title")
        .and_then(Value::as_str)
        .or_else(|| tool.get("annotations").and_then(|a| a.get("title")).and_then(Value::as_str))
        .filter(|t| !t.is_empty());
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    description.or(title).map(str::to_owned).unwrap_or_else(|| format!("MCP tool {name} from server {server}"))
}

/// One MCP tool of a server.
pub struct McpTool {
    name: String,
    label: String,
    server: String,
    tool_name: String,
    description: String,
    parameters: Value,
    /// Its `CallToolResult` output schema (pi's `createMcpResultSchema`).
    output_schema: Value,
    /// Its exposure.
    pub exposure: Exposure,
    manager: Weak<McpManager>,
}

impl McpTool {
    /// The tool for a registered MCP tool.
    pub fn new(registered: &RegisteredMcpTool, manager: &Arc<McpManager>) -> Self {
        let tool_name = registered.tool_name().to_owned();
        McpTool {
            name: registered.name.clone(),
            label: format!("{}/{tool_name}", registered.server),
            server: registered.server.clone(),
            description: tool_description(&registered.server, &registered.tool),
            parameters: normalize_input_schema(registered.tool.get("inputSchema").unwrap_or(&Value::Null)),
            output_schema: super::output_schemas::mcp_result_schema(registered.tool.get("outputSchema")),
            tool_name,
            exposure: registered.exposure,
            manager: Arc::downgrade(manager),
        }
    }
}

fn manager_gone() -> ToolError {
    ToolError::from("MCP is shut down")
}

#[async_trait]
impl AgentTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn output_schema(&self) -> Option<Value> {
        Some(self.output_schema.clone())
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let manager = self.manager.upgrade().ok_or_else(manager_gone)?;
        let server = manager.server(&self.server).cloned();
        if let Some(server) = &server
            && (server.entry().tool_exposure(&self.tool_name) == Exposure::Hidden
                || !server.tools().iter().any(|t| t.get("name").and_then(Value::as_str) == Some(&self.tool_name)))
        {
            return Err(format!("MCP tool \"{}/{}\" is no longer available.", self.server, self.tool_name).into());
        }
        let client = manager.client_for(&self.server).await?;
        let call = client.call_tool(&self.tool_name, args);
        let result = tokio::select! {
            r = call => r?,
            _ = ctx.cancel_token().cancelled() => return Err("Operation aborted".into()),
        };
        let readable = server.is_some_and(|s| s.has_resources() && s.entry().exposure() != Exposure::Hidden);
        Ok(convert_mcp_result(&self.server, &self.tool_name, &result, readable))
    }
}

/// `list_mcp_resources`.
pub const LIST_MCP_RESOURCES_TOOL: &str = "list_mcp_resources";
/// `list_mcp_resource_templates`.
pub const LIST_MCP_RESOURCE_TEMPLATES_TOOL: &str = "list_mcp_resource_templates";
/// `read_mcp_resource`.
pub const READ_MCP_RESOURCE_TOOL: &str = super::content::READ_MCP_RESOURCE_TOOL;

#[derive(Clone, Copy, PartialEq, Eq)]
enum ResourceKind {
    List,
    Templates,
    Read,
}

/// One of the three resource tools.
pub struct McpResourceTool {
    kind: ResourceKind,
    parameters: Value,
    manager: Weak<McpManager>,
}

fn list_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "MCP server name. Omit to list every server with resources."},
            "cursor": {"type": "string", "description": "Opaque cursor from a previous call with the same server; omit for the first page."}
        },
        "additionalProperties": false
    })
}

fn read_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "MCP server name exactly as configured. Must match the 'server' field returned by list_mcp_resources."},
            "uri": {"type": "string", "description": "Resource URI to read. Must be one of the URIs returned by list_mcp_resources."}
        },
        "required": ["server", "uri"],
        "additionalProperties": false
    })
}

/// The three resource tools, reaching the servers of `manager` with resources.
pub fn resource_tools(manager: &Arc<McpManager>) -> Vec<Arc<dyn AgentTool>> {
    [
        (ResourceKind::List, list_parameters()),
        (ResourceKind::Templates, list_parameters()),
        (ResourceKind::Read, read_parameters()),
    ]
    .into_iter()
    .map(|(kind, parameters)| {
        Arc::new(McpResourceTool { kind, parameters, manager: Arc::downgrade(manager) }) as Arc<dyn AgentTool>
    })
    .collect()
}

fn string_arg(args: &Map<String, Value>, key: &str) -> Result<Option<String>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_owned()).filter(|s| !s.is_empty())),
        Some(_) => Err(format!("{key} must be a string").into()),
    }
}

fn is_app_resource(item: &Value) -> bool {
    let uri = item.get("uri").or_else(|| item.get("uriTemplate")).and_then(Value::as_str).unwrap_or("");
    let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("").to_ascii_lowercase();
    let compact: String = mime.chars().filter(|c| !c.is_whitespace() && *c != '"').collect();
    uri.starts_with("ui://") || compact.contains(";profile=mcp-app")
}

fn listed(server: &str, item: &Value) -> Value {
    let mut out = Map::new();
    out.insert("server".into(), Value::String(server.to_owned()));
    if let Some(map) = item.as_object() {
        for (k, v) in map {
            if k != "_meta" && k != "icons" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

impl McpResourceTool {
    fn servers(manager: &McpManager) -> Vec<String> {
        let mut names: Vec<String> = manager
            .servers()
            .iter()
            .filter(|s| s.has_resources() && s.entry().enabled() && s.entry().exposure() != Exposure::Hidden)
            .map(|s| s.name().to_owned())
            .collect();
        names.sort_by_key(|a| a.to_lowercase());
        names
    }

    fn find_server(manager: &McpManager, name: &str) -> Result<String, ToolError> {
        let servers = Self::servers(manager);
        if servers.iter().any(|s| s == name) {
            return Ok(name.to_owned());
        }
        let available = servers.join(", ");
        let suffix =
            if available.is_empty() { String::new() } else { format!(". Servers with resources: {available}") };
        Err(format!("MCP server \"{name}\" has no resources{suffix}").into())
    }

    async fn page(&self, manager: &McpManager, server: &str, cursor: Option<String>) -> Result<Value, String> {
        let client = manager.client_for(server).await?;
        if self.kind == ResourceKind::List {
            client.list_resources(cursor).await
        } else {
            client.list_resource_templates(cursor).await
        }
    }

    async fn all(&self, manager: &McpManager, server: &str, key: &str) -> Result<Vec<Value>, String> {
        let mut items = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.page(manager, server, cursor).await?;
            items.extend(page.get(key).and_then(Value::as_array).cloned().unwrap_or_default());
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(items),
            }
        }
    }

    async fn list(
        &self,
        manager: &McpManager,
        args: &Map<String, Value>,
    ) -> Result<(Option<String>, Value), ToolError> {
        let key = if self.kind == ResourceKind::List { "resources" } else { "resourceTemplates" };
        let server = string_arg(args, "server")?;
        let cursor = string_arg(args, "cursor")?;
        if let Some(name) = server {
            let name = Self::find_server(manager, &name)?;
            let page = self.page(manager, &name, cursor).await?;
            let items: Vec<Value> = page
                .get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter(|i| !is_app_resource(i)).map(|i| listed(&name, i)).collect())
                .unwrap_or_default();
            let mut payload = json!({"server": name, key: items});
            if let Some(next) = page.get("nextCursor").filter(|v| !v.is_null()) {
                payload["nextCursor"] = next.clone();
            }
            return Ok((Some(name), payload));
        }
        if cursor.is_some() {
            return Err("cursor can only be used when a server is specified".into());
        }
        let servers = Self::servers(manager);
        let results = futures::future::join_all(servers.iter().map(|s| self.all(manager, s, key))).await;
        let (mut items, mut errors) = (Vec::new(), Vec::new());
        for (server, result) in servers.iter().zip(results) {
            match result {
                Ok(list) => items.extend(list.iter().filter(|i| !is_app_resource(i)).map(|i| listed(server, i))),
                Err(e) => errors.push(json!({"server": server, "error": e})),
            }
        }
        let mut payload = json!({key: items});
        if !errors.is_empty() {
            payload["errors"] = Value::Array(errors);
        }
        Ok((None, payload))
    }

    async fn read(&self, manager: &McpManager, args: &Map<String, Value>) -> Result<AgentToolResult, ToolError> {
        let server = string_arg(args, "server")?.ok_or("server must be provided")?;
        let uri = string_arg(args, "uri")?.ok_or("uri must be provided")?;
        let server = Self::find_server(manager, &server)?;
        let client = manager.client_for(&server).await?;
        let result = client.read_resource(&uri).await?;
        let contents = result.get("contents").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut blocks = Vec::new();
        for c in &contents {
            if contents.len() > 1 {
                let label = c.get("uri").and_then(Value::as_str).unwrap_or("");
                blocks.push(json!({"type": "text", "text": format!("{label}:")}));
            }
            blocks.push(json!({"type": "resource", "resource": c}));
        }
        let mut converted = to_model_content(&server, &blocks, false);
        if converted.is_empty() {
            converted.push(UserBlock::Text(TextContent::new(format!("Resource {uri} is empty."))));
        }
        let (content, full) = limit_mcp_content(converted);
        let contents: Vec<Value> = contents
            .into_iter()
            .map(|mut c| {
                if let Some(m) = c.as_object_mut() {
                    m.remove("_meta");
                }
                c
            })
            .collect();
        let mut details = json!({"server": server, "tool": READ_MCP_RESOURCE_TOOL});
        if let Some(p) = full {
            details["fullOutputPath"] = Value::String(p.display().to_string());
        }
        let mut out = AgentToolResult::text("");
        out.content = content;
        out.details = details;
        out.structured_content = Some(json!({"server": server, "uri": uri, "contents": contents}));
        Ok(out)
    }
}

#[async_trait]
impl AgentTool for McpResourceTool {
    fn output_schema(&self) -> Option<Value> {
        Some(match self.kind {
            ResourceKind::List => super::output_schemas::list_resources_schema(),
            ResourceKind::Templates => super::output_schemas::list_templates_schema(),
            ResourceKind::Read => super::output_schemas::read_resource_schema(),
        })
    }

    fn name(&self) -> &str {
        match self.kind {
            ResourceKind::List => LIST_MCP_RESOURCES_TOOL,
            ResourceKind::Templates => LIST_MCP_RESOURCE_TEMPLATES_TOOL,
            ResourceKind::Read => READ_MCP_RESOURCE_TOOL,
        }
    }

    fn description(&self) -> &str {
        match self.kind {
            ResourceKind::List => {
                "Lists resources provided by MCP servers. Resources allow servers to share data that provides context to language models, such as files, database schemas, or application-specific information. Prefer resources over web search when possible."
            }
            ResourceKind::Templates => {
                "Lists resource templates provided by MCP servers. Parameterized resource templates allow servers to share data that takes parameters and provides context to language models, such as files, database schemas, or application-specific information. Prefer resource templates over web search when possible."
            }
            ResourceKind::Read => "Read a specific resource from an MCP server given the server name and resource URI.",
        }
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Map<String, Value>,
        _ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let manager = self.manager.upgrade().ok_or_else(manager_gone)?;
        manager.wait_for_all().await;
        if self.kind == ResourceKind::Read {
            return self.read(&manager, &args).await;
        }
        let (server, payload) = self.list(&manager, &args).await?;
        let text = serde_json::to_string(&payload).unwrap_or_default();
        let (content, full) = limit_mcp_content(vec![UserBlock::Text(TextContent::new(text))]);
        let mut details = json!({"server": server.unwrap_or_default(), "tool": self.name()});
        if let Some(p) = full {
            details["fullOutputPath"] = Value::String(p.display().to_string());
        }
        let mut out = AgentToolResult::text("");
        out.content = content;
        out.details = details;
        out.structured_content = Some(payload);
        Ok(out)
    }
}
