//! [`Extension`] and [`ExtensionApi`] (pi's `pi` object): handler registration, tools, commands,
//! flags, renderers, and the actions that go through the session.

use std::fmt;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::future::BoxFuture;
use indexmap::IndexMap;
use pi_agent_core::AgentTool;
use pi_ai::{Content, UserBlock};
use pi_tui::{Component, Theme};
use serde_json::Value;

use super::actions::{ExtensionMessage, SendMessageOptions, SendUserMessageOptions, ToolInfo};
use super::errors::{BoxError, ExtensionApiError};
use super::events::{ExtensionEvent, NotifyEvent};
use super::exec::{ExecOptions, ExecResult, exec_command};
pub use super::registrations::RegisteredMcpServer;
use super::runtime::{ExtensionContext, FlagValue, Runtime, lock};
use crate::messages::CustomRoleMessage;
use crate::session::CustomEntry;

use super::handler::answered;
pub use super::handler::{Handler, HandlerFuture, SyncHandler};

/// An extension compiled into the program (pi's default-exported factory).
///
/// `setup` registers handlers, tools, commands and flags; action methods fail until the runner is
/// bound. An error (or a panic) makes the load fail: `Failed to load extension: <message>`, and
/// everything the extension registered is discarded.
#[async_trait]
pub trait Extension: Send + Sync {
    /// The extension's path or name (reported in errors).
    fn path(&self) -> &str;

    /// Registers what the extension provides.
    async fn setup(&self, api: &ExtensionApi) -> Result<(), BoxError>;
}

type SetupFn = dyn Fn(&ExtensionApi) -> Result<(), BoxError> + Send + Sync;

/// An extension from a closure (pi's inline `extensionFactories`).
///
/// ```
/// use pi_coding_agent::extensions::{FnExtension, ToolResultEvent};
/// let audit = FnExtension::new("<inline:audit>", |pi| {
///     let api = pi.clone();
///     pi.on::<ToolResultEvent>(move |event, _ctx| {
///         let api = api.clone();
///         Box::pin(async move {
///             api.append_entry("audit-note", serde_json::json!({"toolName": event.tool_name}))?;
///             Ok(None)
///         })
///     });
///     Ok(())
/// });
/// # let _ = audit;
/// ```
pub struct FnExtension {
    path: String,
    setup: Box<SetupFn>,
}

impl FnExtension {
    /// An extension named `path` whose setup is `setup`.
    pub fn new(
        path: impl Into<String>,
        setup: impl Fn(&ExtensionApi) -> Result<(), BoxError> + Send + Sync + 'static,
    ) -> Self {
        FnExtension { path: path.into(), setup: Box::new(setup) }
    }
}

impl fmt::Debug for FnExtension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnExtension").field("path", &self.path).finish()
    }
}

#[async_trait]
impl Extension for FnExtension {
    fn path(&self) -> &str {
        &self.path
    }

    async fn setup(&self, api: &ExtensionApi) -> Result<(), BoxError> {
        (self.setup)(api)
    }
}

/// A tool an extension registers (pi's `ToolDefinition`: the tool plus its prompt fields).
#[derive(Clone)]
pub struct ToolDefinition {
    /// The tool.
    pub tool: Arc<dyn AgentTool>,
    /// One line for the "Available tools" section of the default system prompt (omitted without it).
    pub prompt_snippet: Option<String>,
    /// Guideline bullets appended to the system prompt while the tool is active.
    pub prompt_guidelines: Option<Vec<String>>,
}

impl From<Arc<dyn AgentTool>> for ToolDefinition {
    fn from(tool: Arc<dyn AgentTool>) -> Self {
        ToolDefinition { tool, prompt_snippet: None, prompt_guidelines: None }
    }
}

/// A tool with the extension that registered it.
#[derive(Clone)]
pub struct RegisteredTool {
    /// The definition.
    pub definition: ToolDefinition,
    /// The extension's path.
    pub extension_path: String,
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.definition.tool.name())
            .field("extension_path", &self.extension_path)
            .finish()
    }
}

impl RegisteredTool {
    /// The tool's [`ToolInfo`].
    pub fn info(&self) -> ToolInfo {
        let t = &self.definition.tool;
        ToolInfo {
            name: t.name().to_owned(),
            description: t.description().to_owned(),
            parameters: t.parameters().clone(),
            prompt_guidelines: self.definition.prompt_guidelines.clone(),
            output_schema: t.output_schema(),
        }
    }
}

/// A command handler: `(args, ctx)`.
pub type CommandHandler =
    Arc<dyn Fn(String, ExtensionContext) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync>;

/// A `/command` an extension registered.
#[derive(Clone)]
pub struct RegisteredCommand {
    /// The name (without `/`).
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// The handler.
    pub handler: CommandHandler,
    /// The extension's path.
    pub extension_path: String,
}

impl fmt::Debug for RegisteredCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredCommand")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("extension_path", &self.extension_path)
            .finish()
    }
}

/// The type of a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagType {
    /// `--name` / `--no-name`.
    Boolean,
    /// `--name value`.
    String,
}

impl FlagType {
    fn name(self) -> &'static str {
        match self {
            FlagType::Boolean => "boolean",
            FlagType::String => "string",
        }
    }
}

/// A CLI flag an extension registered (pi's `ExtensionFlag`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionFlag {
    /// The flag name (without `--`).
    pub name: String,
    /// Help text.
    pub description: Option<String>,
    /// Its type.
    pub kind: FlagType,
    /// Its default.
    pub default: Option<FlagValue>,
    /// The extension's path.
    pub extension_path: String,
}

/// Options of an entry renderer call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntryRenderOptions {
    /// Whether the user expanded the entry.
    pub expanded: bool,
}

/// Options of a message renderer call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageRenderOptions {
    /// Whether the user expanded the message.
    pub expanded: bool,
    /// Horizontal padding of the `outputPad` setting.
    pub output_pad: usize,
}

/// Renders a `custom` session entry of one `customType` (pi's `EntryRenderer`).
pub type EntryRenderer =
    Arc<dyn Fn(&CustomEntry, &EntryRenderOptions, &Theme) -> Option<Box<dyn Component>> + Send + Sync>;

/// Renders a `custom` message of one `customType` (pi's `MessageRenderer`).
pub type MessageRenderer =
    Arc<dyn Fn(&CustomRoleMessage, &MessageRenderOptions, &Theme) -> Option<Box<dyn Component>> + Send + Sync>;

pub(crate) struct HandlerEntry {
    pub(crate) event: String,
    pub(crate) id: u64,
    /// A [`Handler`] of the event's type.
    pub(crate) handler: Arc<dyn std::any::Any + Send + Sync>,
    /// The same handler as a [`SyncHandler`], when it was registered as one.
    pub(crate) sync: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

const LOADING: u8 = 0;
const ACTIVE: u8 = 1;
const FAILED: u8 = 2;

/// Everything one extension registered.
pub(crate) struct ExtensionRecord {
    pub(crate) path: Arc<str>,
    pub(crate) handlers: Mutex<Vec<HandlerEntry>>,
    pub(crate) tools: Mutex<IndexMap<String, RegisteredTool>>,
    pub(crate) commands: Mutex<IndexMap<String, RegisteredCommand>>,
    pub(crate) flags: Mutex<IndexMap<String, ExtensionFlag>>,
    pub(crate) entry_renderers: Mutex<IndexMap<String, EntryRenderer>>,
    pub(crate) message_renderers: Mutex<IndexMap<String, MessageRenderer>>,
    pub(crate) shortcuts: Mutex<IndexMap<String, super::shortcuts::RegisteredShortcut>>,
    pub(crate) tool_renderers: Mutex<IndexMap<String, super::tool_renderers::ToolRenderers>>,
    pub(crate) markdown_transformer: Mutex<Option<super::markdown::MarkdownTransformerRegistration>>,
    /// What the extension's registrations need while it is loaded (its JavaScript host).
    pub(crate) keep_alive: Mutex<Vec<Arc<dyn std::any::Any + Send + Sync>>>,
    state: AtomicU8,
}

impl ExtensionRecord {
    pub(crate) fn new(path: &str) -> Arc<Self> {
        Arc::new(ExtensionRecord {
            path: Arc::from(path),
            handlers: Mutex::new(Vec::new()),
            tools: Mutex::new(IndexMap::new()),
            commands: Mutex::new(IndexMap::new()),
            flags: Mutex::new(IndexMap::new()),
            entry_renderers: Mutex::new(IndexMap::new()),
            message_renderers: Mutex::new(IndexMap::new()),
            shortcuts: Mutex::new(IndexMap::new()),
            tool_renderers: Mutex::new(IndexMap::new()),
            markdown_transformer: Mutex::new(None),
            keep_alive: Mutex::new(Vec::new()),
            state: AtomicU8::new(LOADING),
        })
    }

    pub(crate) fn commit(&self, runtime: &Runtime) {
        let mut values = lock(&runtime.flag_values);
        for flag in lock(&self.flags).values() {
            if let Some(default) = &flag.default {
                values.entry(flag.name.clone()).or_insert_with(|| default.clone());
            }
        }
        self.state.store(ACTIVE, Ordering::Release);
    }

    /// The load failed: everything it registered is discarded.
    pub(crate) fn fail(&self, runtime: &Runtime) {
        self.clear(runtime);
        self.state.store(FAILED, Ordering::Release);
    }

    /// Before loading again: nothing registered, loading.
    pub(crate) fn reset(&self, runtime: &Runtime) {
        self.clear(runtime);
        self.state.store(LOADING, Ordering::Release);
    }

    fn clear(&self, runtime: &Runtime) {
        lock(&self.handlers).clear();
        handlers_changed();
        lock(&self.tools).clear();
        lock(&self.commands).clear();
        lock(&self.flags).clear();
        lock(&self.entry_renderers).clear();
        lock(&self.message_renderers).clear();
        lock(&self.shortcuts).clear();
        *lock(&self.markdown_transformer) = None;
        lock(&self.keep_alive).clear();
        lock(&self.tool_renderers).clear();
        runtime.bus.clear_extension(&self.path);
        lock(&runtime.mcp_servers).retain(|s| s.extension_path != *self.path);
        lock(&runtime.providers).retain(|p| p.extension_path != *self.path);
        lock(&runtime.virtual_models).retain(|m| m.extension_path != *self.path);
    }

    /// Whether the extension loaded.
    pub(crate) fn is_active(&self) -> bool {
        self.state.load(Ordering::Acquire) == ACTIVE
    }
}

static NEXT_HANDLER: AtomicU64 = AtomicU64::new(1);

/// Counts changes of any extension's handler list (added, removed, cleared), so a runner can keep
/// the set of handled events and rebuild it only after a change ([`ExtensionRunner::has_handlers`]
/// is asked on every streamed delta). Bumped after the change is made.
///
/// [`ExtensionRunner::has_handlers`]: super::ExtensionRunner::has_handlers
pub(crate) static HANDLERS_CHANGED: AtomicU64 = AtomicU64::new(0);

fn handlers_changed() {
    HANDLERS_CHANGED.fetch_add(1, Ordering::AcqRel);
}

/// Removes a handler registered with [`ExtensionApi::on`]. Dropping it does nothing.
#[derive(Clone)]
pub struct Unsubscribe {
    record: Arc<ExtensionRecord>,
    id: u64,
}

impl Unsubscribe {
    /// Removes the handler (later emits no longer call it; a running emit keeps its snapshot).
    pub fn unsubscribe(&self) {
        lock(&self.record.handlers).retain(|h| h.id != self.id);
        handlers_changed();
    }
}

impl fmt::Debug for Unsubscribe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unsubscribe").field("id", &self.id).finish()
    }
}

/// The API an extension registers with and acts through (pi's `ExtensionAPI`, `pi`).
///
/// Cheap to clone; handlers capture a clone to call actions later. Registration works during
/// setup; actions ([`append_entry`](Self::append_entry), [`send_message`](Self::send_message), …)
/// fail with [`ExtensionApiError::NotInitialized`] until the runner is bound.
#[derive(Clone)]
pub struct ExtensionApi {
    pub(crate) record: Arc<ExtensionRecord>,
    pub(crate) runtime: Arc<Runtime>,
}

impl fmt::Debug for ExtensionApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionApi").field("path", &self.record.path).finish()
    }
}

impl ExtensionApi {
    /// The extension's path.
    pub fn path(&self) -> &str {
        &self.record.path
    }

    pub(crate) fn assert_active(&self) -> Result<(), ExtensionApiError> {
        if self.record.state.load(Ordering::Acquire) == FAILED {
            return Err(ExtensionApiError::Inactive(self.record.path.to_string()));
        }
        Ok(())
    }

    fn add_handler(&self, event: &str, handler: Arc<dyn std::any::Any + Send + Sync>) -> Unsubscribe {
        self.add_handlers(event, handler, None)
    }

    fn add_handlers(
        &self,
        event: &str,
        handler: Arc<dyn std::any::Any + Send + Sync>,
        sync: Option<Arc<dyn std::any::Any + Send + Sync>>,
    ) -> Unsubscribe {
        let id = NEXT_HANDLER.fetch_add(1, Ordering::Relaxed);
        lock(&self.record.handlers).push(HandlerEntry { event: event.to_owned(), id, handler, sync });
        handlers_changed();
        Unsubscribe { record: self.record.clone(), id }
    }

    /// Registers an async handler of event `E` (pi's `pi.on(name, handler)`).
    ///
    /// ```
    /// use pi_coding_agent::extensions::{ExtensionApi, ToolCallEvent, ToolCallResult};
    /// fn setup(pi: &ExtensionApi) {
    ///     pi.on::<ToolCallEvent>(|event, _ctx| Box::pin(async move {
    ///         if event.tool_name == "bash" {
    ///             return Ok(Some(ToolCallResult::block("bash is disabled")));
    ///         }
    ///         Ok(None)
    ///     }));
    /// }
    /// ```
    pub fn on<E: ExtensionEvent>(
        &self,
        handler: impl for<'a> Fn(&'a mut E, &'a ExtensionContext) -> HandlerFuture<'a, E::Output> + Send + Sync + 'static,
    ) -> Unsubscribe {
        let handler: Handler<E> = Arc::new(handler);
        self.add_handler(E::NAME, Arc::new(handler))
    }

    /// Registers a synchronous handler of event `E`.
    ///
    /// ```
    /// use pi_coding_agent::extensions::{ContextEvent, ExtensionApi};
    /// fn setup(pi: &ExtensionApi) {
    ///     // Keep the last ten messages of the conversation.
    ///     pi.on_sync::<ContextEvent>(|event, _ctx| {
    ///         let cut = event.messages.len().saturating_sub(10);
    ///         event.messages.drain(..cut);
    ///         Ok(None)
    ///     });
    /// }
    /// ```
    pub fn on_sync<E: ExtensionEvent>(
        &self,
        handler: impl Fn(&mut E, &ExtensionContext) -> Result<Option<E::Output>, BoxError> + Send + Sync + 'static,
    ) -> Unsubscribe {
        let sync: SyncHandler<E> = Arc::new(handler);
        self.add_sync(E::NAME, sync)
    }

    /// Registers `sync` for `event`, and as a [`Handler`] answering at once.
    fn add_sync<E: ExtensionEvent>(&self, event: &str, sync: SyncHandler<E>) -> Unsubscribe {
        let call = sync.clone();
        let handler: Handler<E> = Arc::new(move |event, ctx| answered(call(event, ctx)));
        self.add_handlers(event, Arc::new(handler), Some(Arc::new(sync)))
    }

    /// Registers a handler of a notify event by pi's name (`"agent_start"`, `"session_start"`,
    /// `"tool_execution_end"`, …; see [`NotifyEvent::kind`]). The answer matters only for
    /// `session_before_*` (e.g. `{"cancel": true}`).
    pub fn on_notify(
        &self,
        event: &str,
        handler: impl for<'a> Fn(&'a mut NotifyEvent, &'a ExtensionContext) -> HandlerFuture<'a, Value>
        + Send
        + Sync
        + 'static,
    ) -> Unsubscribe {
        let handler: Handler<NotifyEvent> = Arc::new(handler);
        self.add_handler(event, Arc::new(handler))
    }

    /// [`on_notify`](Self::on_notify) with a handler that answers at once: no future per call
    /// (for `message_update`, the event of every streamed delta, the cheapest handler there is).
    ///
    /// ```
    /// use pi_coding_agent::extensions::{ExtensionApi, NotifyEvent};
    /// fn setup(pi: &ExtensionApi) {
    ///     pi.on_notify_sync("message_update", |event, _ctx| {
    ///         if let NotifyEvent::MessageUpdate { message, .. } = event {
    ///             let _ = message.role();
    ///         }
    ///         Ok(None)
    ///     });
    /// }
    /// ```
    pub fn on_notify_sync(
        &self,
        event: &str,
        handler: impl Fn(&mut NotifyEvent, &ExtensionContext) -> Result<Option<Value>, BoxError> + Send + Sync + 'static,
    ) -> Unsubscribe {
        let sync: SyncHandler<NotifyEvent> = Arc::new(handler);
        self.add_sync(event, sync)
    }

    /// Registers a tool (pi's `registerTool`); its parameters must be a JSON object schema.
    pub fn register_tool(&self, definition: impl Into<ToolDefinition>) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        let definition = definition.into();
        let name = definition.tool.name().to_owned();
        if !definition.tool.parameters().is_object() {
            return Err(ExtensionApiError::Invalid(format!(
                "Tool \"{name}\" registered by extension \"{}\" must define an object parameter schema.",
                self.record.path
            )));
        }
        let tool = definition.tool.clone();
        let registered = RegisteredTool { definition, extension_path: self.record.path.to_string() };
        lock(&self.record.tools).insert(name, registered);
        // Registered during a session: the session's tools grow at once, as pi's do.
        if self.record.state.load(Ordering::Acquire) == ACTIVE
            && let Ok(actions) = self.runtime.actions()
        {
            actions.register_tool(tool).map_err(|e| ExtensionApiError::Action(e.to_string()))?;
        }
        Ok(())
    }

    /// Registers a `/name` command (pi's `registerCommand`).
    ///
    /// ```
    /// use pi_coding_agent::extensions::ExtensionApi;
    /// fn setup(pi: &ExtensionApi) -> Result<(), pi_coding_agent::extensions::ExtensionApiError> {
    ///     let api = pi.clone();
    ///     pi.register_command("audit", Some("Show the audit count"), move |args, _ctx| {
    ///         let api = api.clone();
    ///         Box::pin(async move { api.append_entry("audit-command", serde_json::json!({"args": args}))?; Ok(()) })
    ///     })
    /// }
    /// ```
    pub fn register_command(
        &self,
        name: &str,
        description: Option<&str>,
        handler: impl Fn(String, ExtensionContext) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync + 'static,
    ) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        if name.is_empty() {
            return Err(ExtensionApiError::Invalid(format!(
                "Command registered by extension \"{}\" must have a non-empty string name. Use pi.registerCommand(\"name\", {{ description, handler }}).",
                self.record.path
            )));
        }
        let command = RegisteredCommand {
            name: name.to_owned(),
            description: description.map(str::to_owned),
            handler: Arc::new(handler),
            extension_path: self.record.path.to_string(),
        };
        lock(&self.record.commands).insert(name.to_owned(), command);
        Ok(())
    }

    /// Registers a CLI flag (pi's `registerFlag`); the default must match the type.
    pub fn register_flag(
        &self,
        name: &str,
        kind: FlagType,
        default: Option<FlagValue>,
        description: Option<&str>,
    ) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        if let Some(d) = &default
            && d.type_name() != kind.name()
        {
            return Err(ExtensionApiError::Invalid(format!(
                "Invalid default for flag \"{name}\": expected {}, got {}",
                kind.name(),
                d.type_name()
            )));
        }
        let flag = ExtensionFlag {
            name: name.to_owned(),
            description: description.map(str::to_owned),
            kind,
            default: default.clone(),
            extension_path: self.record.path.to_string(),
        };
        lock(&self.record.flags).insert(name.to_owned(), flag);
        if let Some(default) = default
            && self.record.state.load(Ordering::Acquire) == ACTIVE
        {
            lock(&self.runtime.flag_values).entry(name.to_owned()).or_insert(default);
        }
        Ok(())
    }

    /// The value of a flag this extension registered (pi's `getFlag`): the CLI value, else the
    /// default; `None` for flags of other extensions.
    pub fn get_flag(&self, name: &str) -> Option<FlagValue> {
        let flags = lock(&self.record.flags);
        let flag = flags.get(name)?;
        lock(&self.runtime.flag_values).get(name).cloned().or_else(|| flag.default.clone())
    }

    /// Registers a renderer of `custom` session entries of `custom_type` (pi's `registerEntryRenderer`).
    pub fn register_entry_renderer(
        &self,
        custom_type: &str,
        renderer: impl Fn(&CustomEntry, &EntryRenderOptions, &Theme) -> Option<Box<dyn Component>> + Send + Sync + 'static,
    ) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        lock(&self.record.entry_renderers).insert(custom_type.to_owned(), Arc::new(renderer));
        Ok(())
    }

    /// Registers a renderer of `custom` messages of `custom_type` (pi's `registerMessageRenderer`).
    pub fn register_message_renderer(
        &self,
        custom_type: &str,
        renderer: impl Fn(&CustomRoleMessage, &MessageRenderOptions, &Theme) -> Option<Box<dyn Component>>
        + Send
        + Sync
        + 'static,
    ) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        lock(&self.record.message_renderers).insert(custom_type.to_owned(), Arc::new(renderer));
        Ok(())
    }

    /// Registers how the rows of `tool_name` are drawn in the interactive transcript (pi's tool
    /// `renderCall` / `renderResult`, and `registerToolRenderer`); `"*"`
    /// ([`ANY_TOOL`](crate::extensions::ANY_TOOL)) asks the renderers for every tool.
    pub fn register_tool_renderer(
        &self,
        tool_name: &str,
        renderers: super::tool_renderers::ToolRenderers,
    ) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        lock(&self.record.tool_renderers).insert(tool_name.to_owned(), renderers);
        Ok(())
    }

    pub(crate) fn act<T>(
        &self,
        f: impl FnOnce(&dyn super::actions::ExtensionActions) -> Result<T, BoxError>,
    ) -> Result<T, ExtensionApiError> {
        self.assert_active()?;
        let actions = self.runtime.actions()?;
        f(actions.as_ref()).map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// pi's `sendMessage`: a `custom` message whose `content` reaches the model as user content.
    pub fn send_message(
        &self,
        message: ExtensionMessage,
        options: SendMessageOptions,
    ) -> Result<(), ExtensionApiError> {
        self.act(|a| a.send_message(message, options))
    }

    /// pi's `sendUserMessage`.
    pub fn send_user_message(
        &self,
        content: impl Into<Content<UserBlock>>,
        options: SendUserMessageOptions,
    ) -> Result<(), ExtensionApiError> {
        let content = content.into();
        self.act(|a| a.send_user_message(content, options))
    }

    /// pi's `appendEntry`: a `custom` session entry, never sent to the model.
    pub fn append_entry(&self, custom_type: &str, data: impl Into<Option<Value>>) -> Result<(), ExtensionApiError> {
        let data = data.into();
        self.act(|a| a.append_entry(custom_type, data))
    }

    /// pi's `setSessionName`.
    pub fn set_session_name(&self, name: &str) -> Result<(), ExtensionApiError> {
        self.act(|a| a.set_session_name(name))
    }

    /// pi's `getSessionName`.
    pub fn get_session_name(&self) -> Result<Option<String>, ExtensionApiError> {
        self.act(|a| Ok(a.get_session_name()))
    }

    /// pi's `setLabel(entryId, label?)`.
    pub fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<(), ExtensionApiError> {
        self.act(|a| a.set_label(entry_id, label))
    }

    /// pi's `getActiveTools`.
    pub fn get_active_tools(&self) -> Result<Vec<String>, ExtensionApiError> {
        self.act(|a| Ok(a.get_active_tools()))
    }

    /// pi's `getAllTools`.
    pub fn get_all_tools(&self) -> Result<Vec<ToolInfo>, ExtensionApiError> {
        self.act(|a| Ok(a.get_all_tools()))
    }

    /// pi's `setActiveTools(names)`.
    pub fn set_active_tools(&self, names: &[String]) -> Result<(), ExtensionApiError> {
        self.act(|a| a.set_active_tools(names))
    }

    /// The session's id, file, leaf and the entries of the current branch (pi's
    /// `ctx.sessionManager.getBranch()`), or `None` while the session is busy or unbound.
    pub fn session_snapshot(&self) -> Result<Option<Value>, ExtensionApiError> {
        self.act(|a| Ok(a.session_snapshot()))
    }

    /// pi's `ctx.executeTool()`: see [`ExtensionActions::execute_tool`](super::actions::ExtensionActions::execute_tool).
    pub fn execute_tool(
        &self,
        parent_tool_call_id: &str,
        name: &str,
        args: serde_json::Map<String, Value>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<BoxFuture<'static, Result<pi_agent_core::AgentToolResult, super::errors::BoxError>>, ExtensionApiError>
    {
        self.act(|a| Ok(a.execute_tool(parent_tool_call_id, name, args, cancel)))
    }

    /// pi's `registerMcpServer(name, config)`: registers or replaces an MCP server for this
    /// session (read when the session starts). A server of another extension with the same name
    /// is an error.
    pub fn register_mcp_server(&self, name: &str, config: Value) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        if !config.is_object() {
            return Err(ExtensionApiError::Invalid(format!("server \"{name}\" must be an object")));
        }
        let mut servers = lock(&self.runtime.mcp_servers);
        if let Some(other) = servers.iter().find(|s| s.name == name && s.extension_path != *self.record.path) {
            return Err(ExtensionApiError::Invalid(format!(
                "MCP server \"{name}\" is already registered by {}",
                other.extension_path
            )));
        }
        let server =
            RegisteredMcpServer { name: name.to_owned(), config, extension_path: self.record.path.to_string() };
        match servers.iter_mut().find(|s| s.name == name) {
            Some(existing) => *existing = server,
            None => servers.push(server),
        }
        drop(servers);
        self.runtime.mcp_servers_changed();
        Ok(())
    }

    /// pi's `unregisterMcpServer(name)`: removes a server this extension registered.
    pub fn unregister_mcp_server(&self, name: &str) {
        lock(&self.runtime.mcp_servers).retain(|s| !(s.name == name && s.extension_path == *self.record.path));
        self.runtime.mcp_servers_changed();
    }

    /// pi's `getMcpServers()`: copies of the registered servers, in registration order.
    pub fn get_mcp_servers(&self) -> Vec<RegisteredMcpServer> {
        lock(&self.runtime.mcp_servers).clone()
    }

    /// pi's `exec(command, args, options)`: runs a real process (no shell) in `options.cwd` or the
    /// session's cwd. Works during loading too.
    pub async fn exec(
        &self,
        command: &str,
        args: &[String],
        options: ExecOptions,
    ) -> Result<ExecResult, ExtensionApiError> {
        self.assert_active()?;
        let cwd = options.cwd.clone().unwrap_or_else(|| self.runtime.cwd.clone());
        Ok(exec_command(command, args, &cwd, options).await)
    }

    /// Registers a keyboard shortcut (pi's `pi.registerShortcut(shortcut, {description, handler})`).
    pub fn register_shortcut(
        &self,
        shortcut: &str,
        description: Option<&str>,
        handler: impl Fn(ExtensionContext) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync + 'static,
    ) -> Result<(), ExtensionApiError> {
        let registered = super::shortcuts::RegisteredShortcut {
            shortcut: shortcut.to_owned(),
            description: description.map(str::to_owned),
            handler: Arc::new(handler),
            extension_path: self.path().to_owned(),
        };
        lock(&self.record.shortcuts).insert(shortcut.to_owned(), registered);
        Ok(())
    }
}
