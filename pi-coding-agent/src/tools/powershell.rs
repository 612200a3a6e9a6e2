//! The `powershell` tool (pi's `createPowerShellToolDefinition`): pi lists it on every platform,
//! with the bash tool's parameters and output; it runs only on Windows. pi-rs does not run on
//! Windows, so a call answers pi's error for other platforms, "The powershell tool is only
//! available on Windows.", after pi's first (empty) update.

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde_json::{Map, Value};

use super::bash::BashTool;

const DESCRIPTION: &str = "Execute a PowerShell command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.";

/// pi's error where PowerShell cannot run.
pub const NOT_WINDOWS: &str = "The powershell tool is only available on Windows.";

/// The `powershell` tool: bash's declaration under PowerShell's name and description.
pub struct PowerShellTool {
    /// The bash tool whose parameters and output schema pi's shell tools share.
    bash: BashTool,
}

impl PowerShellTool {
    /// A powershell tool for `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        PowerShellTool { bash: BashTool::new(cwd, Default::default()) }
    }
}

#[async_trait]
impl AgentTool for PowerShellTool {
    fn name(&self) -> &str {
        "powershell"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn constrained_sampling(&self) -> Option<Value> {
        self.bash.constrained_sampling()
    }

    fn output_schema(&self) -> Option<Value> {
        self.bash.output_schema()
    }

    fn parameters(&self) -> &Value {
        self.bash.parameters()
    }

    async fn execute(
        &self,
        _id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        super::args::required_str(&args, "command")?;
        ctx.update(AgentToolResult { content: Vec::new(), details: Value::Object(Map::new()), ..Default::default() });
        Err(ToolError::new(NOT_WINDOWS))
    }
}
