//! The built-in extensions (pi's `dist/extensions/`): `mcp` (in [`crate::mcp`]), and the CLI's
//! hooks for them: which built-ins a `pi` run loads, and `pi mcp …`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::extensions::Extension;
use crate::mcp::extension::{DEFAULT_STARTUP_WAIT, McpExtension, McpExtensionOptions};

/// What decides the built-in extensions of a `pi` run.
#[derive(Clone, Debug, Default)]
pub struct BuiltinOptions {
    /// The agent directory.
    pub agent_dir: PathBuf,
    /// `--no-mcp`: no MCP for this run.
    pub no_mcp: bool,
    /// `--approve` / `--no-approve`; `None` asks the trust store.
    pub project_trusted: Option<bool>,
    /// `--tools` entries (MCP tools are filtered only when one starts with `mcp__`).
    pub tools: Option<Vec<String>>,
    /// `--exclude-tools` entries.
    pub exclude_tools: Option<Vec<String>>,
}

/// The built-in extensions a `pi` run loads.
pub fn cli_extensions(options: &BuiltinOptions) -> Vec<Arc<dyn Extension>> {
    let mut out: Vec<Arc<dyn Extension>> = Vec::new();
    if !options.no_mcp {
        out.push(Arc::new(McpExtension::new(McpExtensionOptions {
            agent_dir: options.agent_dir.clone(),
            project_trusted: options.project_trusted,
            startup_wait: DEFAULT_STARTUP_WAIT,
            tools: options.tools.clone(),
            exclude_tools: options.exclude_tools.clone(),
        })));
    }
    out
}

/// `pi mcp <args>`: runs the command on its own runtime and returns the exit code.
pub fn run_mcp_cli(args: &[String]) -> i32 {
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    let agent_dir = crate::session::get_agent_dir();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    let code = runtime.block_on(crate::mcp::cli::run_mcp_command(args, &cwd, &agent_dir, &mut out, &mut err));
    crate::mcp::client::kill_all_server_groups();
    code
}
