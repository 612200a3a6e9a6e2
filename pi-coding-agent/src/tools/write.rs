//! The `write` tool: creates or overwrites a file, creating its parent directories.

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde_json::{Map, Value, json};

use super::args::required_str;
use super::fs_error::node_message;
use super::mutation_queue::with_file_mutation_queue;
use super::path::resolve_to_cwd;
use super::prologue::check_cancelled;

const DESCRIPTION: &str = "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.";

/// The `write` tool. Build it with [`super::write_tool`].
pub struct WriteTool {
    cwd: String,
    parameters: Value,
}

impl WriteTool {
    /// A write tool resolving paths against `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["path", "content"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
                "content": {"type": "string", "description": "Content to write to the file"}
            }
        });
        WriteTool { cwd: cwd.into(), parameters }
    }
}

#[async_trait]
impl AgentTool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn constrained_sampling(&self) -> Option<Value> {
        Some(serde_json::json!({"type": "json_schema", "strict": "prefer"}))
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(
        &self,
        _id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let path = required_str(&args, "path")?;
        let content = required_str(&args, "content")?;
        let absolute = resolve_to_cwd(path, &self.cwd);
        let dir = match absolute.rfind('/') {
            Some(0) | None => "/".to_owned(),
            Some(i) => absolute[..i].to_owned(),
        };
        // Aborts are checked between operations, never in the middle of one, so the queue stays
        // locked until the file operation has settled.
        with_file_mutation_queue(&absolute, || async {
            check_cancelled(&ctx)?;
            tokio::fs::create_dir_all(&dir).await.map_err(|e| ToolError::new(node_message(&e, "mkdir", Some(&dir))))?;
            check_cancelled(&ctx)?;
            tokio::fs::write(&absolute, content.as_bytes())
                .await
                .map_err(|e| ToolError::new(node_message(&e, "open", Some(&absolute))))?;
            check_cancelled(&ctx)?;
            Ok(AgentToolResult::text(format!("Successfully wrote to {path}")))
        })
        .await
    }
}
