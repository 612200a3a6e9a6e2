//! The built-in extensions (pi's `dist/extensions/`): `mcp` (in [`crate::mcp`]), [`tool_search`], [`codemode`],
//! and the CLI's hooks for them: which built-ins a `pi` run loads, and `pi mcp …`.

pub mod codemode;
pub mod llama;
pub mod tool_search;

use std::path::PathBuf;
use std::sync::Arc;

use crate::extensions::Extension;
use crate::mcp::extension::{DEFAULT_STARTUP_WAIT, McpExtension, McpExtensionOptions};

/// The built-in extensions this port has (pi's `builtin:<name>` names).
pub const BUILTIN_EXTENSION_NAMES: &[&str] = &["llama.cpp", "mcp", "tool-search", "codemode"];

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
    /// The `defaultTools` setting.
    pub default_tools: Option<Vec<String>>,
    /// The `codemode.inlineBudget` setting.
    pub codemode_inline_budget: Option<u64>,
    /// The model catalog codemode scripts reach through `models.*`.
    pub codemode_models: codemode::LazyModelCatalog,
    /// `codemode.mode: "only"`.
    pub codemode_only: bool,
    /// A one-shot run (print and JSON modes): no network refresh of the llama.cpp router's
    /// catalog at session start. pi refreshes model catalogs from the network only in the
    /// interactive and RPC modes; a one-shot run uses the stored catalog.
    pub one_shot: bool,
}

impl BuiltinOptions {
    /// Whether `--tools` or `defaultTools` names `tool` (as `tool` or `+tool`).
    fn names(&self, tool: &str) -> bool {
        let named = |list: &Option<Vec<String>>| {
            list.as_ref().is_some_and(|l| l.iter().any(|t| t == tool || t.strip_prefix('+') == Some(tool)))
        };
        named(&self.tools) || named(&self.default_tools)
    }
}

/// The built-in extensions a `pi` run loads.
pub fn cli_extensions(options: &BuiltinOptions) -> Vec<Arc<dyn Extension>> {
    let mut out: Vec<Arc<dyn Extension>> = Vec::new();
    let mut catalogs: Vec<Arc<dyn tool_search::ToolCatalog>> = Vec::new();
    // `-builtin:<name>` in the `extensions` setting turns a built-in off (pi's resolve).
    let cwd = std::env::current_dir().unwrap_or_default();
    let trusted = options
        .project_trusted
        .unwrap_or_else(|| crate::trust::is_project_trusted(&options.agent_dir, &cwd, None).unwrap_or(false));
    let enabled = |name: &str| crate::packages::builtin_extension_enabled(&cwd, &options.agent_dir, trusted, name);
    let mcp = (!options.no_mcp && enabled("mcp")).then(|| {
        Arc::new(McpExtension::new(McpExtensionOptions {
            agent_dir: options.agent_dir.clone(),
            project_trusted: options.project_trusted,
            startup_wait: DEFAULT_STARTUP_WAIT,
            tools: options.tools.clone(),
            exclude_tools: options.exclude_tools.clone(),
        }))
    });
    if let Some(mcp) = &mcp {
        catalogs.push(mcp.catalog());
    }
    // llama.cpp first, as pi's list has it.
    if enabled(llama::LLAMA_EXTENSION_NAME) {
        let llama = llama::LlamaExtension::new(options.agent_dir.clone()).with_startup_refresh(!options.one_shot);
        out.push(Arc::new(llama));
    }
    // codemode and tool_search before MCP: their session_start leaves the loadout before MCP
    // activates them for deferred and codemode servers. codemode first, as pi's
    // `builtInExtensions` (its tool comes before `tool_search` in `getAllTools()`).
    if enabled("codemode") {
        let active = options.names(codemode::CODEMODE_TOOL_NAME);
        let codemode = codemode::CodemodeExtension::new(catalogs.clone(), active, options.codemode_inline_budget)
            .with_lazy_models(options.codemode_models.clone())
            .with_mode_only(options.codemode_only);
        out.push(Arc::new(codemode));
    }
    let active = options.names(tool_search::TOOL_SEARCH_TOOL_NAME);
    if enabled("tool-search") {
        out.push(Arc::new(tool_search::ToolSearchExtension::new(catalogs, active)));
    }
    if let Some(mcp) = mcp {
        out.push(mcp);
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
