//! The state shared by the runner and every extension's API: the bound [`ExtensionActions`], flag
//! values, error listeners, and the [`ExtensionContext`] handlers receive.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use serde::{Deserialize, Serialize};

use super::actions::ExtensionActions;
use super::errors::{ExtensionApiError, ExtensionError};
use crate::ui::UiHost;

/// Locks a mutex, recovering the data if a panicking handler poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The value of a flag registered with
/// [`ExtensionApi::register_flag`](crate::extensions::ExtensionApi::register_flag).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FlagValue {
    /// A `boolean` flag.
    Bool(bool),
    /// A `string` flag.
    String(String),
}

impl FlagValue {
    /// JavaScript's `typeof` of the value (`"boolean"` or `"string"`).
    pub fn type_name(&self) -> &'static str {
        match self {
            FlagValue::Bool(_) => "boolean",
            FlagValue::String(_) => "string",
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            FlagValue::Bool(b) => Some(*b),
            FlagValue::String(_) => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            FlagValue::String(s) => Some(s),
            FlagValue::Bool(_) => None,
        }
    }
}

/// The mode the host runs in (pi's `ctx.mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtensionMode {
    /// Interactive terminal UI.
    Tui,
    /// RPC mode.
    Rpc,
    /// JSON event stream.
    Json,
    /// Print mode (the default of an unbound runner).
    #[default]
    Print,
}

type ErrorListener = Arc<dyn Fn(&ExtensionError) + Send + Sync>;

/// The sender of the queue of events emitted without being awaited (see `event_queue`): an event
/// and, when its caller waits for the delivery, who to tell.
pub(crate) type QueueSender =
    tokio::sync::mpsc::UnboundedSender<(super::events::NotifyEvent, Option<tokio::sync::oneshot::Sender<()>>)>;

/// Shared by the runner, every [`ExtensionApi`](crate::extensions::ExtensionApi) and every context.
pub(crate) struct Runtime {
    pub(crate) cwd: String,
    actions: RwLock<Option<Arc<dyn ExtensionActions>>>,
    pub(crate) flag_values: Mutex<HashMap<String, FlagValue>>,
    listeners: Mutex<Vec<(u64, ErrorListener)>>,
    next_listener: Mutex<u64>,
    mode: RwLock<(ExtensionMode, bool)>,
    ui: RwLock<Arc<dyn UiHost>>,
    /// The session's JavaScript host, while extensions in it are loaded (type-erased so the
    /// runtime does not depend on the host's module).
    pub(crate) node_host: Mutex<std::sync::Weak<dyn std::any::Any + Send + Sync>>,
    /// Running out-of-process tools by call id, for their partial results (`tool.update`).
    pub(crate) tool_updates: Mutex<HashMap<String, pi_agent_core::ToolContext>>,
    /// MCP servers extensions registered (pi's `McpServerRegistry`), in registration order.
    pub(crate) mcp_servers: Mutex<Vec<super::registrations::RegisteredMcpServer>>,
    /// Model providers extensions registered, in registration order.
    pub(crate) providers: Mutex<Vec<super::registrations::RegisteredProvider>>,
    /// Provider registrations rejected while extensions loaded (pi's `Extension "<path>" error:
    /// <message>` diagnostics).
    pub(crate) provider_errors: Mutex<Vec<super::errors::ExtensionLoadError>>,
    /// Their models as their `refreshModels` / `oauth.modifyModels` made them, by provider name
    /// (see `node::provider_models`).
    pub(crate) provider_models: Mutex<HashMap<String, Vec<serde_json::Value>>>,
    /// Virtual models extensions registered, in registration order.
    pub(crate) virtual_models: Mutex<Vec<super::registrations::VirtualModelSlot>>,
    /// The event bus extensions share (`pi.events`).
    pub(crate) bus: Arc<super::bus::EventBusState>,
    /// Logins extensions registered for `/login` (llama.cpp's server URL and key).
    pub(crate) login_providers: crate::auth::LoginRegistry,
    /// Told when an MCP server is registered or unregistered after binding (emits
    /// `mcp_servers_change`).
    pub(crate) mcp_listener: Mutex<Option<Arc<dyn Fn() + Send + Sync>>>,
    /// The queue of events emitted without being awaited (see `event_queue`).
    pub(crate) event_queue: Mutex<Option<QueueSender>>,
    /// The session's agent dir (its auth.json), when the SDK set it (see `request_auth`).
    pub(crate) agent_dir: Mutex<Option<std::path::PathBuf>>,
}

impl Runtime {
    pub(crate) fn new(cwd: String) -> Arc<Self> {
        Arc::new(Runtime {
            cwd,
            actions: RwLock::new(None),
            flag_values: Mutex::new(HashMap::new()),
            listeners: Mutex::new(Vec::new()),
            next_listener: Mutex::new(0),
            mode: RwLock::new((ExtensionMode::Print, false)),
            ui: RwLock::new(crate::ui::no_ui()),
            node_host: Mutex::new(std::sync::Weak::<()>::new()),
            tool_updates: Mutex::new(HashMap::new()),
            mcp_servers: Mutex::new(Vec::new()),
            providers: Mutex::new(Vec::new()),
            provider_errors: Mutex::new(Vec::new()),
            provider_models: Mutex::new(HashMap::new()),
            virtual_models: Mutex::new(Vec::new()),
            bus: Arc::new(Default::default()),
            login_providers: crate::auth::LoginRegistry::new(),
            mcp_listener: Mutex::new(None),
            event_queue: Mutex::new(None),
            agent_dir: Mutex::new(None),
        })
    }

    /// A sink that reports to this runtime's listeners (for the event bus).
    pub(crate) fn error_sink(self: &Arc<Self>) -> super::bus::ErrorSink {
        let weak = Arc::downgrade(self);
        Arc::new(move |error| {
            if let Some(runtime) = weak.upgrade() {
                runtime.report(error);
            }
        })
    }

    /// Tells the listener set at binding that the registered MCP servers changed.
    pub(crate) fn mcp_servers_changed(&self) {
        let listener = lock(&self.mcp_listener).clone();
        if let Some(listener) = listener {
            listener();
        }
    }

    pub(crate) fn bind(&self, actions: Arc<dyn ExtensionActions>) {
        *self.actions.write().unwrap_or_else(|e| e.into_inner()) = Some(actions);
    }

    pub(crate) fn actions(&self) -> Result<Arc<dyn ExtensionActions>, ExtensionApiError> {
        self.actions.read().unwrap_or_else(|e| e.into_inner()).clone().ok_or(ExtensionApiError::NotInitialized)
    }

    pub(crate) fn set_mode(&self, mode: ExtensionMode, has_ui: bool) {
        *self.mode.write().unwrap_or_else(|e| e.into_inner()) = (mode, has_ui);
    }

    pub(crate) fn set_ui(&self, ui: Arc<dyn UiHost>) {
        *self.ui.write().unwrap_or_else(|e| e.into_inner()) = ui;
    }

    pub(crate) fn ui(&self) -> Arc<dyn UiHost> {
        self.ui.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn context_mode(&self) -> ExtensionMode {
        self.mode().0
    }

    fn mode(&self) -> (ExtensionMode, bool) {
        *self.mode.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether what extensions print goes to stderr (every mode but the interactive one, where
    /// pi's stdout is the terminal the UI draws on).
    pub(crate) fn forwards_extension_output(&self) -> bool {
        self.mode().0 != ExtensionMode::Tui
    }

    pub(crate) fn add_listener(&self, listener: ErrorListener) -> u64 {
        let mut next = lock(&self.next_listener);
        *next += 1;
        let id = *next;
        lock(&self.listeners).push((id, listener));
        id
    }

    pub(crate) fn remove_listener(&self, id: u64) {
        lock(&self.listeners).retain(|(i, _)| *i != id);
    }

    /// Reports an error to every listener (pi's `emitError`), and to `tracing`.
    pub(crate) fn report(&self, error: ExtensionError) {
        tracing::warn!(extension = %error.extension_path, event = %error.event, error = %error.error, "extension error");
        let listeners: Vec<ErrorListener> = lock(&self.listeners).iter().map(|(_, l)| l.clone()).collect();
        for listener in listeners {
            listener(&error);
        }
    }
}

/// What every handler receives besides its event (pi's `ExtensionContext`).
///
/// Cheap to clone. The session-backed methods answer like pi's unbound runner until
/// [`ExtensionRunner::bind`](crate::extensions::ExtensionRunner::bind) is called.
#[derive(Clone)]
pub struct ExtensionContext {
    pub(crate) runtime: Arc<Runtime>,
    /// A command's context (pi's `ExtensionCommandContext`): the session controls work.
    pub(crate) command: bool,
}

impl fmt::Debug for ExtensionContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionContext").field("cwd", &self.runtime.cwd).finish()
    }
}

impl ExtensionContext {
    /// The working directory of the session.
    pub fn cwd(&self) -> &str {
        &self.runtime.cwd
    }

    /// The host's mode.
    pub fn mode(&self) -> ExtensionMode {
        self.runtime.mode().0
    }

    /// Whether an interactive UI is attached.
    pub fn has_ui(&self) -> bool {
        self.runtime.mode().1
    }

    /// The user interface (pi's `ctx.ui`): the host's [`UiHost`], or [`crate::ui::NoUi`]'s
    /// answers in print and json modes and before a host is set.
    pub fn ui(&self) -> Arc<dyn UiHost> {
        self.runtime.ui()
    }

    /// Whether the agent is idle.
    pub fn is_idle(&self) -> bool {
        self.runtime.actions().map(|a| a.is_idle()).unwrap_or(true)
    }

    /// Aborts the current run.
    pub fn abort(&self) {
        if let Ok(a) = self.runtime.actions() {
            a.abort();
        }
    }

    /// Whether messages are queued.
    pub fn has_pending_messages(&self) -> bool {
        self.runtime.actions().map(|a| a.has_pending_messages()).unwrap_or(false)
    }

    /// The current system prompt.
    pub fn get_system_prompt(&self) -> String {
        self.runtime.actions().map(|a| a.get_system_prompt()).unwrap_or_default()
    }

    /// Requests a graceful shutdown.
    pub fn shutdown(&self) {
        if let Ok(a) = self.runtime.actions() {
            a.shutdown();
        }
    }

    /// `ctx.model`, as pi's JSON (`None` without a session).
    pub fn model(&self) -> Option<serde_json::Value> {
        self.runtime.actions().ok()?.model()
    }

    /// `ctx.scopedModels`, as pi's JSON.
    pub fn scoped_models(&self) -> Vec<serde_json::Value> {
        self.runtime.actions().map(|a| a.scoped_models()).unwrap_or_default()
    }

    /// `ctx.thinkingLevel` (`None` without a session).
    pub fn thinking_level(&self) -> Option<String> {
        self.runtime.actions().ok()?.get_thinking_level()
    }

    /// `ctx.isProjectTrusted()`.
    pub fn is_project_trusted(&self) -> bool {
        self.runtime.actions().map(|a| a.is_project_trusted()).unwrap_or(false)
    }

    /// `ctx.getContextUsage()`: `{tokens, contextWindow, percent}` (`None` when unknown).
    pub fn get_context_usage(&self) -> Option<serde_json::Value> {
        self.runtime.actions().ok()?.get_context_usage()
    }

    /// `ctx.compact({customInstructions})`: starts a compaction without waiting for it; a
    /// failure is reported as an extension error.
    pub fn compact(&self, custom_instructions: Option<String>) -> Result<(), ExtensionApiError> {
        let actions = self.runtime.actions()?;
        actions.compact(custom_instructions).map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// `ctx.sessionManager`'s view: `{sessionId, sessionFile, leafId, entries: [the branch]}`
    /// (`None` without a session).
    pub fn session(&self) -> Option<serde_json::Value> {
        self.runtime.actions().ok()?.session_snapshot()
    }

    /// Whether this is a command's context (pi's `ExtensionCommandContext`).
    pub fn is_command_context(&self) -> bool {
        self.command
    }
}
