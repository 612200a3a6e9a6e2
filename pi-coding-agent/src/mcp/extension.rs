//! The built-in `mcp` extension (pi's `extensions/mcp/index.ts`): connects the servers of
//! `mcp.json` when a session starts, in the background; registers their tools as
//! `mcp__<server>__<tool>` (direct tools are activated, codemode and deferred tools stay
//! undeclared, hidden tools are not registered); the first prompt waits up to 10 s for servers with
//! direct tools; every prompt keeps the `mcp_servers` section current; a direct call waits for its
//! server; `/mcp` prints the status; the session's end stops every server.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pi_agent_core::AgentTool;

use super::config::{Exposure, LoadedMcpConfig, McpServerEntry, load_mcp_config, matches_any, project_trusted};
use super::manager::{ConnState, McpManager, ServerChange, ServerHandle};
use super::naming::mcp_namespace;
use super::section::{MCP_SERVERS_SECTION, SectionServer, render_servers_section};
use super::tools::{McpTool, normalize_input_schema, resource_tools, tool_description};
use crate::builtin_extensions::codemode::CODEMODE_TOOL_NAME;
use crate::builtin_extensions::tool_search::{SearchableTool, TOOL_SEARCH_TOOL_NAME, ToolCatalog, ToolNamespace};
use crate::extensions::{BeforeAgentStartEvent, BoxError, Extension, ExtensionApi, ExtensionContext, ToolCallEvent};

/// How long the first prompt waits for servers with direct tools.
pub const DEFAULT_STARTUP_WAIT: Duration = Duration::from_secs(10);

/// Options of the MCP extension.
#[derive(Clone, Debug)]
pub struct McpExtensionOptions {
    /// The agent directory (`mcp.json`, `mcp.log`, `trust.json`).
    pub agent_dir: PathBuf,
    /// Whether the project is trusted; `None` asks the trust store.
    pub project_trusted: Option<bool>,
    /// How long the first prompt waits for servers with direct tools.
    pub startup_wait: Duration,
    /// `--tools` entries: MCP tools are filtered only when one of them starts with `mcp__`.
    pub tools: Option<Vec<String>>,
    /// `--exclude-tools` entries.
    pub exclude_tools: Option<Vec<String>>,
}

impl McpExtensionOptions {
    /// Whether `--tools` / `--exclude-tools` let an MCP tool through.
    pub fn allows(&self, name: &str) -> bool {
        let allowed = match &self.tools {
            Some(tools) if tools.iter().any(|t| t.starts_with("mcp__")) => matches_any(tools, name),
            _ => true,
        };
        allowed && !self.exclude_tools.as_ref().is_some_and(|ex| matches_any(ex, name))
    }
}

/// The built-in MCP extension.
pub struct McpExtension {
    options: McpExtensionOptions,
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    manager: Mutex<Option<Arc<McpManager>>>,
    config: Mutex<LoadedMcpConfig>,
    waited: AtomicBool,
    resources_registered: AtomicBool,
    /// The exposure the resource tools were last synced with (`None`: no server has resources).
    resource_exposure: Mutex<Option<Exposure>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl McpExtension {
    /// The extension for sessions of `agent_dir`.
    pub fn new(options: McpExtensionOptions) -> Self {
        McpExtension { options, state: Arc::new(State::default()) }
    }

    /// The session's manager, once the session started.
    pub fn manager(&self) -> Option<Arc<McpManager>> {
        lock(&self.state.manager).clone()
    }

    /// The session's loaded `mcp.json` files.
    pub fn config(&self) -> LoadedMcpConfig {
        lock(&self.state.config).clone()
    }
}

/// The MCP tools `tool_search` and codemode can find (codemode and deferred exposure).
struct McpCatalog {
    state: Arc<State>,
}

#[async_trait]
impl ToolCatalog for McpCatalog {
    async fn ready(&self) {
        let manager = lock(&self.state.manager).clone();
        if let Some(manager) = manager {
            manager.wait_for_all().await;
        }
    }

    fn searchable_tools(&self) -> Vec<SearchableTool> {
        let Some(manager) = lock(&self.state.manager).clone() else { return Vec::new() };
        // The resource tools, while the servers they reach are not `direct` (then they are declared).
        let resources: Vec<SearchableTool> = match *lock(&self.state.resource_exposure) {
            Some(Exposure::Codemode | Exposure::Deferred) => resource_tools(&manager)
                .iter()
                .map(|t| SearchableTool {
                    name: t.name().to_owned(),
                    description: t.description().to_owned(),
                    parameters: t.parameters().clone(),
                    namespace: None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let tools = manager
            .registered_tools()
            .into_iter()
            .filter(|t| matches!(t.exposure, Exposure::Codemode | Exposure::Deferred))
            .filter_map(|t| {
                let server = manager.server(&t.server)?;
                if !server.entry().enabled() {
                    return None;
                }
                Some(SearchableTool {
                    name: t.name.clone(),
                    description: tool_description(&t.server, &t.tool),
                    parameters: normalize_input_schema(t.tool.get("inputSchema").unwrap_or(&serde_json::Value::Null)),
                    namespace: Some(ToolNamespace {
                        name: mcp_namespace(&t.server),
                        description: server
                            .entry()
                            .description()
                            .map(|d| d.trim().to_owned())
                            .filter(|d| !d.is_empty()),
                        instructions: server.instructions(),
                    }),
                })
            });
        tools.chain(resources).collect()
    }

    fn namespace_of(&self, name: &str) -> Option<ToolNamespace> {
        self.namespace(name)
    }
}

impl McpCatalog {
    /// The namespace of `name`'s server, whatever the tool's exposure (hidden tools have none).
    fn namespace(&self, name: &str) -> Option<ToolNamespace> {
        let manager = lock(&self.state.manager).clone()?;
        let tool = manager.registered_tools().into_iter().find(|t| t.name == name && t.exposure != Exposure::Hidden)?;
        let server = manager.server(&tool.server)?;
        Some(ToolNamespace {
            name: mcp_namespace(&tool.server),
            description: server.entry().description().map(|d| d.trim().to_owned()).filter(|d| !d.is_empty()),
            instructions: server.instructions(),
        })
    }
}

impl McpExtension {
    /// The MCP tools as a catalog for `tool_search` and codemode.
    pub fn catalog(&self) -> Arc<dyn ToolCatalog> {
        Arc::new(McpCatalog { state: self.state.clone() })
    }
}

impl std::fmt::Debug for McpExtension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpExtension").field("options", &self.options).finish()
    }
}

fn has_direct_tools(server: &ServerHandle) -> bool {
    server.entry().configured_exposures().contains(&Exposure::Direct)
}

/// Whether `manager` is the session's (a replaced session's connections may settle late).
fn is_current(state: &State, manager: &Arc<McpManager>) -> bool {
    lock(&state.manager).as_ref().is_some_and(|current| Arc::ptr_eq(current, manager))
}

/// Activates `add` and deactivates `remove` (one `set_active_tools` when something changed).
fn update_active(api: &ExtensionApi, add: &[String], remove: &[String]) {
    let Ok(active) = api.get_active_tools() else { return };
    let mut next: Vec<String> = active.iter().filter(|n| !remove.contains(n)).cloned().collect();
    for name in add {
        if !next.contains(name) {
            next.push(name.clone());
        }
    }
    if next != active
        && let Err(e) = api.set_active_tools(&next)
    {
        tracing::warn!(error = %e, "MCP tools could not be (de)activated");
    }
}

/// Registers the tools of `server` with the session, activates the direct ones and deactivates
/// the ones the server withdrew (pi re-registers those as hidden).
fn register_server_tools(
    api: &ExtensionApi,
    options: &McpExtensionOptions,
    manager: &Arc<McpManager>,
    state: &State,
    server: &ServerHandle,
) {
    if !is_current(state, manager) {
        return;
    }
    let (mut direct, mut unreachable) = (Vec::new(), Vec::new());
    for tool in manager.registered_tools().into_iter().filter(|t| t.server == server.name()) {
        if !options.allows(&tool.name) {
            continue;
        }
        if tool.exposure == Exposure::Hidden {
            unreachable.push(tool.name.clone());
            continue;
        }
        if tool.exposure == Exposure::Direct {
            direct.push(tool.name.clone());
        }
        let tool: Arc<dyn AgentTool> = Arc::new(McpTool::new(&tool, manager));
        if let Err(e) = api.register_tool(tool) {
            tracing::warn!(error = %e, "MCP tool registration failed");
        }
    }
    update_active(api, &direct, &unreachable);
    sync_resource_tools(api, manager, state);
}

/// The exposure the resource tools reach their servers with (pi's `syncResourceTools`): the
/// widest of the enabled, not hidden servers with resources (`direct`, then `codemode`, then
/// `deferred`); `None` when no server has resources.
fn resource_exposure(manager: &McpManager) -> Option<Exposure> {
    let exposures: Vec<Exposure> = manager
        .servers()
        .iter()
        .filter(|s| s.has_resources() && s.entry().enabled() && s.entry().exposure() != Exposure::Hidden)
        .map(|s| s.entry().exposure())
        .collect();
    [Exposure::Direct, Exposure::Codemode, Exposure::Deferred].into_iter().find(|e| exposures.contains(e))
}

/// Registers the resource tools once a server has resources, declares them while one of their
/// servers is `direct`, and leaves the declared set when none is any more.
fn sync_resource_tools(api: &ExtensionApi, manager: &Arc<McpManager>, state: &State) {
    let next = resource_exposure(manager);
    let previous = std::mem::replace(&mut *lock(&state.resource_exposure), next);
    if previous == next {
        return;
    }
    let tools = resource_tools(manager);
    let names: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
    if next.is_some() && !state.resources_registered.swap(true, Ordering::AcqRel) {
        for tool in tools {
            if let Err(e) = api.register_tool(tool) {
                tracing::warn!(error = %e, "MCP resource tool registration failed");
            }
        }
    }
    if next == Some(Exposure::Direct) {
        update_active(api, &names, &[]);
    } else if previous == Some(Exposure::Direct) {
        update_active(api, &[], &names);
    }
}

/// What the session does after `/mcp` changed a server (pi's `setEnabled` / `setExposure`):
/// a disabled server's tools leave the declared set, tools no longer `direct` leave it after an
/// exposure change, the resource tools follow, and codemode or tool_search is activated when the
/// servers now need it.
fn apply_server_change(
    api: &ExtensionApi,
    manager: &Arc<McpManager>,
    state: &State,
    server: &ServerHandle,
    change: ServerChange,
) {
    if !is_current(state, manager) {
        return;
    }
    let tools = manager.registered_tools().into_iter().filter(|t| t.server == server.name());
    let leaving: Vec<String> = match change {
        ServerChange::Disabled => tools.map(|t| t.name).collect(),
        ServerChange::Exposure => tools.filter(|t| t.exposure != Exposure::Direct).map(|t| t.name).collect(),
        ServerChange::Enabled => Vec::new(),
    };
    update_active(api, &[], &leaving);
    sync_resource_tools(api, manager, state);
    let entries: Vec<_> = manager.servers().iter().map(|s| s.entry()).collect();
    let auto_enable = lock(&state.config).auto_enable_codemode;
    activate_discovery(api, entries.iter().map(|e| e.as_ref()), auto_enable);
}

/// Servers extensions registered, after those of `mcp.json`, which win over a registered server
/// whose namespace they share (pi's `registeredServers`). Invalid entries become config errors.
fn add_registered_servers(api: &ExtensionApi, loaded: &mut LoadedMcpConfig) {
    for server in api.get_mcp_servers() {
        if let Some(configured) = loaded.servers.iter().find(|s| mcp_namespace(&s.name) == mcp_namespace(&server.name))
        {
            tracing::info!(
                "\"{}\" registered by {} is overridden by \"{}\" in {}",
                server.name,
                server.extension_path,
                configured.name,
                configured.source
            );
            continue;
        }
        match super::config::validate_server_config(&server.name, &server.config) {
            Ok(raw) => loaded.servers.push(super::config::McpServerEntry {
                name: server.name,
                raw,
                source: server.extension_path,
                scope: super::config::Scope::Extension,
                override_path: None,
            }),
            Err(e) => loaded.errors.push(format!("{}: {e}", server.extension_path)),
        }
    }
}

/// pi's `ensureDiscoveryActive` for tool_search: activated when an enabled server has deferred
/// tools and a `tool_search` tool is registered.
fn activate_discovery<'a>(
    api: &ExtensionApi,
    servers: impl Iterator<Item = &'a McpServerEntry> + Clone,
    auto_enable_codemode: Option<bool>,
) {
    let needs = |e: Exposure| servers.clone().any(|s| s.enabled() && s.configured_exposures().contains(&e));
    let (codemode, deferred) = (needs(Exposure::Codemode), needs(Exposure::Deferred));
    if !codemode && !deferred {
        return;
    }
    let registered = |name: &str| api.get_all_tools().is_ok_and(|tools| tools.iter().any(|t| t.name == name));
    let Ok(mut active) = api.get_active_tools() else { return };
    let mut activate = |name: &str| {
        if registered(name) && !active.iter().any(|n| n == name) {
            active.push(name.to_owned());
            true
        } else {
            false
        }
    };
    // codemode unless `autoEnableCodemode` is false, tool_search for deferred tools.
    let mut changed = codemode && auto_enable_codemode != Some(false) && activate(CODEMODE_TOOL_NAME);
    changed |= deferred && activate(TOOL_SEARCH_TOOL_NAME);
    if changed {
        let _ = api.set_active_tools(&active);
    }
}

/// pi's startup report: config errors and failed servers, or `None` when nothing needs the user.
pub fn problems_message(config_errors: &[String], manager: &McpManager) -> Option<String> {
    let mut lines: Vec<String> = config_errors.iter().map(|e| format!("config: {e}")).collect();
    for server in manager.servers() {
        match server.state() {
            ConnState::Failed(error) => {
                let first = error.split('\n').next().unwrap_or("").to_owned();
                lines.push(format!("{}: failed: {first}", server.name()));
            }
            ConnState::NeedsAuth => lines.push(format!("{}: needs sign-in", server.name())),
            _ => {}
        }
    }
    if lines.is_empty() {
        return None;
    }
    let lines: Vec<String> = lines.iter().map(|l| format!("  {l}")).collect();
    Some(format!("MCP servers need attention:\n{}\nRun /mcp to fix.", lines.join("\n")))
}

/// pi's plain `/mcp` status.
pub fn format_status(manager: &McpManager, config: &LoadedMcpConfig, agent_dir: &std::path::Path) -> String {
    if manager.servers().is_empty() && config.errors.is_empty() {
        return format!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.",
            agent_dir.join("mcp.json").display()
        );
    }
    let mut lines: Vec<String> = manager
        .servers()
        .iter()
        .map(|server| {
            let exposure = server.entry().exposure().as_str();
            let state = server.state();
            if state == ConnState::NeedsAuth && server.entry().enabled() {
                return format!("{}: needs sign-in, run /mcp login {} ({exposure})", server.name(), server.name());
            }
            let tools =
                if state == ConnState::Connected { format!(", {} tools", server.tools().len()) } else { String::new() };
            let (label, error) = match (&state, server.entry().enabled()) {
                (_, false) => ("disabled".to_owned(), None),
                (ConnState::Disconnected(e), _) => {
                    ("disconnected, reconnects on next call".to_owned(), Some(e.clone()))
                }
                (ConnState::Failed(e), _) => ("failed".to_owned(), Some(e.clone())),
                (ConnState::Connected, _) => ("connected".to_owned(), None),
                (ConnState::Connecting, _) => ("connecting".to_owned(), None),
                (ConnState::Closed, _) => ("closed".to_owned(), None),
                (ConnState::Starting, _) => ("starting".to_owned(), None),
                (ConnState::NeedsAuth, _) => ("needs-auth".to_owned(), None),
            };
            let error = error.map(|e| format!("\n    {}", e.replace('\n', "\n    "))).unwrap_or_default();
            format!("{}: {label}{tools} ({exposure}){error}", server.name())
        })
        .collect();
    lines.extend(config.errors.iter().map(|e| format!("config error: {e}")));
    lines.join("\n")
}

impl McpExtension {
    fn on_session_start(&self, api: &ExtensionApi, ctx: &ExtensionContext) {
        let cwd = PathBuf::from(ctx.cwd());
        let trusted = self.options.project_trusted.unwrap_or_else(|| project_trusted(&self.options.agent_dir, &cwd));
        let mut loaded = load_mcp_config(&self.options.agent_dir, &cwd, trusted);
        add_registered_servers(api, &mut loaded);
        let manager = McpManager::new(loaded.servers.clone(), &cwd, Some(self.options.agent_dir.join("mcp.log")));
        manager.set_credentials(super::oauth_store::McpOAuthCredentialStore::new(&self.options.agent_dir));
        let (api2, weak, state) = (api.clone(), Arc::downgrade(&manager), self.state.clone());
        let options = self.options.clone();
        manager.set_tools_listener(Arc::new(move |server| {
            if let Some(manager) = weak.upgrade() {
                register_server_tools(&api2, &options, &manager, &state, server);
            }
        }));
        let (api2, weak, state) = (api.clone(), Arc::downgrade(&manager), self.state.clone());
        manager.set_change_listener(Arc::new(move |server, change| {
            if let Some(manager) = weak.upgrade() {
                apply_server_change(&api2, &manager, &state, server, change);
            }
        }));
        self.state.waited.store(false, Ordering::Release);
        self.state.resources_registered.store(false, Ordering::Release);
        *lock(&self.state.resource_exposure) = None;
        activate_discovery(api, loaded.servers.iter(), loaded.auto_enable_codemode);
        let config_errors = loaded.errors.clone();
        *lock(&self.state.config) = loaded;
        if let Some(old) = lock(&self.state.manager).replace(manager.clone()) {
            tokio::spawn(async move { old.close_all().await });
        }
        manager.start_all();
        // pi's `reportProblems`: once every server settled, one message for what needs the user.
        let (ui, weak) = (ctx.ui(), Arc::downgrade(&manager));
        tokio::spawn(async move {
            let Some(manager) = weak.upgrade() else { return };
            manager.wait_for_all().await;
            if let Some(message) = problems_message(&config_errors, &manager) {
                ui.notify(&message, crate::ui::NotifyKind::Warning);
            }
        });
    }
}

#[async_trait]
impl Extension for McpExtension {
    fn path(&self) -> &str {
        "builtin:mcp"
    }

    async fn setup(&self, api: &ExtensionApi) -> Result<(), BoxError> {
        let this = Arc::new(McpExtension { options: self.options.clone(), state: self.state.clone() });
        let start = (this.clone(), api.clone());
        api.on_notify("session_start", move |_event, ctx| {
            start.0.on_session_start(&start.1, ctx);
            Box::pin(async { Ok(None) })
        });
        let state = self.state.clone();
        let wait = self.options.startup_wait;
        api.on::<BeforeAgentStartEvent>(move |event, ctx| {
            let state = state.clone();
            Box::pin(async move {
                let Some(manager) = lock(&state.manager).clone() else { return Ok(None) };
                if !state.waited.swap(true, Ordering::AcqRel) {
                    let direct: Vec<Arc<ServerHandle>> = manager
                        .servers()
                        .iter()
                        .filter(|s| s.entry().enabled() && has_direct_tools(s))
                        .cloned()
                        .collect();
                    if !direct.is_empty() && !manager.wait_for(&direct, Some(wait)).await {
                        ctx.ui().notify(
                            "MCP servers are still connecting; their tools become available once connected.",
                            crate::ui::NotifyKind::Info,
                        );
                    }
                }
                let current: Vec<_> = manager.servers().iter().map(|s| (s.entry(), s.instructions())).collect();
                let servers: Vec<SectionServer<'_>> =
                    current.iter().map(|(e, i)| SectionServer { entry: e, instructions: i.as_deref() }).collect();
                match render_servers_section(&servers) {
                    Some(section) => {
                        event.sections.insert(MCP_SERVERS_SECTION.to_owned(), section);
                    }
                    None => {
                        event.sections.shift_remove(MCP_SERVERS_SECTION);
                    }
                }
                Ok(None)
            })
        });
        let state = self.state.clone();
        api.on::<ToolCallEvent>(move |event, _ctx| {
            let state = state.clone();
            Box::pin(async move {
                let Some(manager) = lock(&state.manager).clone() else { return Ok(None) };
                let name = event.tool_name.as_str();
                if matches!(name, "list_mcp_resources" | "list_mcp_resource_templates" | "read_mcp_resource") {
                    manager.wait_for_all().await;
                } else if let Some(owner) = manager.owner_of(name)
                    && let Some(server) = manager.server(&owner)
                {
                    server.ready().await;
                }
                Ok(None)
            })
        });
        let state = self.state.clone();
        api.on_notify("session_shutdown", move |_event, _ctx| {
            let manager = lock(&state.manager).take();
            Box::pin(async move {
                if let Some(manager) = manager {
                    manager.close_all().await;
                }
                Ok(None)
            })
        });
        let (state, agent_dir) = (self.state.clone(), self.options.agent_dir.clone());
        api.register_command(
            "mcp",
            Some("Manage MCP servers: sign in, reconnect, enable or disable, and change exposure"),
            move |args, ctx| {
                let (state, agent_dir) = (state.clone(), agent_dir.clone());
                Box::pin(async move {
                    let manager = lock(&state.manager).clone();
                    let Some(manager) = manager else { return Ok(()) };
                    let config = lock(&state.config).clone();
                    super::command::run_mcp_command(&args, manager, &config, &agent_dir, &ctx).await;
                    Ok(())
                })
            },
        )?;
        Ok(())
    }
}
