//! The built-in tools of the coding agent: `read`, `bash`, `edit`, `write`, `grep`, `find`, `ls`.
//!
//! Each is an [`AgentTool`] with pi 1.6.0's name, description, parameter schema, output format,
//! limits, notices and error texts. Paths are resolved against the tool's cwd (see [`path`]); paths
//! outside it are allowed, as in pi. Failures are `Err(ToolError)` with pi's message, except a
//! non-zero bash exit, which is an `is_error` result as in pi.
//!
//! ```
//! let tools = pi_coding_agent::tools::coding_tools("/tmp");
//! let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
//! assert_eq!(names, ["read", "bash", "edit", "write"]);
//! ```

use std::sync::Arc;

use pi_agent_core::AgentTool;

pub mod args;
pub mod bash;
pub mod edit;
pub mod edit_diff;
pub mod edit_match;
pub mod find;
pub mod fs_error;
pub mod grep;
pub mod image;
pub mod ls;
pub mod mutation_queue;
pub mod output;
pub mod path;
pub mod powershell;
pub mod prologue;
pub mod read;
pub(crate) mod shell;
pub mod truncate;
pub mod walk;
pub mod write;

pub use bash::{BashSpawnContext, BashSpawnHook, BashTool, BashToolOptions};
pub use edit::EditTool;
pub use find::FindTool;
pub use grep::GrepTool;
pub use ls::LsTool;
pub use mutation_queue::with_file_mutation_queue;
pub use powershell::PowerShellTool;
pub use read::{ReadTool, ReadToolOptions};
pub use truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult};
pub use write::WriteTool;

/// Options of every built-in tool (pi's `ToolsOptions`).
#[derive(Clone, Default)]
pub struct ToolsOptions {
    /// Options of `read`.
    pub read: ReadToolOptions,
    /// Options of `bash`.
    pub bash: BashToolOptions,
}

/// Names of the built-in tools (pi's `allToolNames`; `powershell` answers that it runs only on
/// Windows, as pi's does elsewhere).
pub const ALL_TOOL_NAMES: [&str; 8] = ["read", "bash", "powershell", "edit", "write", "grep", "find", "ls"];

/// The `read` tool for `cwd`.
pub fn read_tool(cwd: &str) -> Arc<dyn AgentTool> {
    Arc::new(ReadTool::new(cwd, ReadToolOptions::default()))
}

/// The `bash` tool for `cwd`.
pub fn bash_tool(cwd: &str) -> Arc<dyn AgentTool> {
    Arc::new(BashTool::new(cwd, BashToolOptions::default()))
}

/// The `edit` tool for `cwd`.
pub fn edit_tool(cwd: &str) -> Arc<dyn AgentTool> {
    Arc::new(EditTool::new(cwd))
}

/// The `write` tool for `cwd`.
pub fn write_tool(cwd: &str) -> Arc<dyn AgentTool> {
    Arc::new(WriteTool::new(cwd))
}

/// The `grep` tool for `cwd`.
pub fn grep_tool(cwd: &str) -> Arc<dyn AgentTool> {
    Arc::new(GrepTool::new(cwd))
}

/// The `find` tool for `cwd`.
pub fn find_tool(cwd: &str) -> Arc<dyn AgentTool> {
    Arc::new(FindTool::new(cwd))
}

/// The `ls` tool for `cwd`.
pub fn ls_tool(cwd: &str) -> Arc<dyn AgentTool> {
    Arc::new(LsTool::new(cwd))
}

/// One built-in tool by name (pi's `createTool`), or `None` for an unknown name.
pub fn tool_by_name(name: &str, cwd: &str, options: &ToolsOptions) -> Option<Arc<dyn AgentTool>> {
    Some(match name {
        "read" => Arc::new(ReadTool::new(cwd, options.read.clone())),
        "bash" => Arc::new(BashTool::new(cwd, options.bash.clone())),
        "powershell" => Arc::new(PowerShellTool::new(cwd)),
        "edit" => edit_tool(cwd),
        "write" => write_tool(cwd),
        "grep" => grep_tool(cwd),
        "find" => find_tool(cwd),
        "ls" => ls_tool(cwd),
        _ => return None,
    })
}

/// pi's `createCodingTools`: read, bash, edit, write.
pub fn coding_tools(cwd: &str) -> Vec<Arc<dyn AgentTool>> {
    coding_tools_with(cwd, &ToolsOptions::default())
}

/// [`coding_tools`] with options.
pub fn coding_tools_with(cwd: &str, options: &ToolsOptions) -> Vec<Arc<dyn AgentTool>> {
    ["read", "bash", "edit", "write"].iter().filter_map(|n| tool_by_name(n, cwd, options)).collect()
}

/// pi's `createReadOnlyTools`: read, grep, find, ls.
pub fn read_only_tools(cwd: &str) -> Vec<Arc<dyn AgentTool>> {
    read_only_tools_with(cwd, &ToolsOptions::default())
}

/// [`read_only_tools`] with options.
pub fn read_only_tools_with(cwd: &str, options: &ToolsOptions) -> Vec<Arc<dyn AgentTool>> {
    ["read", "grep", "find", "ls"].iter().filter_map(|n| tool_by_name(n, cwd, options)).collect()
}

/// pi's `createAllTools`: every built-in tool, in [`ALL_TOOL_NAMES`] order.
pub fn all_tools(cwd: &str, options: &ToolsOptions) -> Vec<Arc<dyn AgentTool>> {
    ALL_TOOL_NAMES.iter().filter_map(|n| tool_by_name(n, cwd, options)).collect()
}

/// pi's `Object.keys(details).length > 0 ? details : undefined`: no `details` key in the result
/// when a tool has nothing to add (`Null` is undefined).
pub(crate) fn details_or_undefined(details: serde_json::Map<String, serde_json::Value>) -> serde_json::Value {
    if details.is_empty() { serde_json::Value::Null } else { serde_json::Value::Object(details) }
}
