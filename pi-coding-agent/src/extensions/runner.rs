//! [`ExtensionRunner`]: loads extensions and runs their handlers with pi's composition and error
//! isolation rules (spec §3.3).
//!
//! Handlers run in extension load order, then registration order, over a snapshot of the handler
//! lists taken when the emit starts. A handler that returns an error or panics is reported to the
//! [`on_error`](ExtensionRunner::on_error) listeners as an [`ExtensionError`] and the emit goes
//! on with the value from before that handler, except for `tool_call` (fail-closed: the error is
//! returned so the call is blocked) and `user_bash` (reported and returned).

use std::collections::HashSet;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::FutureExt;
use pi_tui::{Component, Theme};
use tracing::Instrument;

use super::actions::ExtensionActions;
use super::api::{
    EntryRenderOptions, Extension, ExtensionApi, ExtensionFlag, ExtensionRecord, HANDLERS_CHANGED, Handler,
    MessageRenderOptions, RegisteredCommand, RegisteredTool,
};
pub(crate) use super::errors::panic_message;
use super::errors::{ExtensionError, ExtensionLoadError};
use super::events::ExtensionEvent;
use super::runtime::{ExtensionContext, ExtensionMode, FlagValue, Runtime, lock};
use crate::messages::CustomRoleMessage;
use crate::session::CustomEntry;

/// Removes an error listener registered with [`ExtensionRunner::on_error`].
#[derive(Clone)]
pub struct ErrorListenerHandle {
    runtime: Arc<Runtime>,
    id: u64,
}

impl ErrorListenerHandle {
    /// Stops delivering errors to the listener.
    pub fn remove(&self) {
        self.runtime.remove_listener(self.id);
    }
}

impl fmt::Debug for ErrorListenerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorListenerHandle").field("id", &self.id).finish()
    }
}

/// Runs the loaded extensions' handlers (pi's `ExtensionRunner`).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::sync::Arc;
/// use pi_coding_agent::extensions::{Extension, ExtensionRunner, FnExtension, InputEvent, InputOutcome, InputSource};
/// let shout = FnExtension::new("<inline:1>", |pi| {
///     pi.on_sync::<InputEvent>(|e, _| Ok(Some(InputOutcome::Transform { text: e.text.to_uppercase(), images: None })));
///     Ok(())
/// });
/// let runner = ExtensionRunner::load(vec![Arc::new(shout) as Arc<dyn Extension>], "/tmp").await;
/// let out = runner.emit_input("hi", None, InputSource::Interactive).await;
/// assert_eq!(out, InputOutcome::Transform { text: "HI".into(), images: None });
/// # });
/// ```
pub struct ExtensionRunner {
    /// Every extension's record in load order; one that failed to load has no registrations.
    pub(crate) extensions: Vec<Arc<ExtensionRecord>>,
    /// What each record was loaded from, for [`ExtensionRunner::reload`].
    sources: Vec<Arc<dyn Extension>>,
    pub(crate) runtime: Arc<Runtime>,
    load_errors: Vec<ExtensionLoadError>,
    /// The events handled, as of a count of [`HANDLERS_CHANGED`]: rebuilt only after a change.
    handled: std::sync::Mutex<Option<(u64, HashSet<String>)>>,
    /// [`ExtensionRunner::has_update_handlers`]' answer and the count it holds for: `count << 1 |
    /// answer`, or `u64::MAX` before the first question.
    update_handled: AtomicU64,
    /// The `message_update` handlers as of a count of [`HANDLERS_CHANGED`] (asked for on every
    /// streamed delta): rebuilt only after a change.
    update_snapshot: std::sync::Mutex<Option<(u64, UpdateHandlers)>>,
}

/// The `message_update` handlers at one moment.
pub(crate) type UpdateHandlers = Arc<[UpdateHandler]>;

/// One `message_update` handler: its extension's path, the handler, and the handler without a
/// future when it was registered as one.
pub(crate) struct UpdateHandler {
    pub(crate) path: Arc<str>,
    pub(crate) handler: Handler<super::events::NotifyEvent>,
    pub(crate) sync: Option<super::handler::SyncHandler<super::events::NotifyEvent>>,
}

impl fmt::Debug for ExtensionRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionRunner")
            .field("extensions", &self.extension_paths())
            .field("load_errors", &self.load_errors)
            .finish()
    }
}

/// The handlers of one event at one moment, with the path of each one's extension.
pub(crate) type Snapshot<E> = smallvec::SmallVec<[(Arc<str>, Handler<E>); 4]>;

impl ExtensionRunner {
    /// Loads `extensions` in order (pi's `loadExtensions`). A failing setup (error or panic) is
    /// recorded as `{path, error: "Failed to load extension: …"}` (see
    /// [`load_errors`](Self::load_errors)), its registrations are discarded, and the others still
    /// load.
    pub async fn load(extensions: Vec<Arc<dyn Extension>>, cwd: impl Into<String>) -> ExtensionRunner {
        Self::load_in(extensions, cwd, None).await
    }

    /// [`ExtensionRunner::load`] with the session's agent dir known while loading (its
    /// models.json and auth.json decide what provider registrations are valid and available).
    pub async fn load_in(
        extensions: Vec<Arc<dyn Extension>>,
        cwd: impl Into<String>,
        agent_dir: Option<std::path::PathBuf>,
    ) -> ExtensionRunner {
        let runtime = Runtime::new(cwd.into());
        *lock(&runtime.agent_dir) = agent_dir;
        let mut records = Vec::new();
        let mut load_errors = Vec::new();
        for ext in &extensions {
            let record = ExtensionRecord::new(ext.path());
            if let Some(error) = Self::setup_one(&runtime, ext.as_ref(), &record).await {
                load_errors.push(error);
            }
            records.push(record);
        }
        ExtensionRunner {
            extensions: records,
            sources: extensions,
            runtime,
            load_errors,
            handled: Default::default(),
            update_handled: AtomicU64::new(u64::MAX),
            update_snapshot: Default::default(),
        }
    }

    /// Runs one extension's setup on `record`; a failure discards its registrations.
    async fn setup_one(
        runtime: &Arc<Runtime>,
        ext: &dyn Extension,
        record: &Arc<ExtensionRecord>,
    ) -> Option<ExtensionLoadError> {
        let api = ExtensionApi { record: record.clone(), runtime: runtime.clone() };
        let setup = AssertUnwindSafe(ext.setup(&api)).catch_unwind().await;
        let message = match setup {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(panic) => Some(panic_message(panic)),
        };
        match message {
            None => {
                record.commit(runtime);
                None
            }
            Some(message) => {
                record.fail(runtime);
                Some(ExtensionLoadError {
                    path: ext.path().to_owned(),
                    error: format!("Failed to load extension: {message}"),
                })
            }
        }
    }

    /// Loads every extension again (the runner side of pi's `reload`): each one's registrations,
    /// bus handlers, MCP servers and providers are dropped and its setup runs again; flag values
    /// are kept. Returns the new load errors (each is also reported to the error listeners).
    pub async fn reload(&self) -> Vec<ExtensionLoadError> {
        let mut errors = Vec::new();
        for (ext, record) in self.sources.iter().zip(&self.extensions) {
            record.reset(&self.runtime);
            if let Some(error) = Self::setup_one(&self.runtime, ext.as_ref(), record).await {
                self.report(ExtensionError::new(error.path.clone(), "reload", error.error.clone()));
                errors.push(error);
            }
        }
        errors
    }

    /// The extensions that failed to load.
    pub fn load_errors(&self) -> &[ExtensionLoadError] {
        &self.load_errors
    }

    /// Paths of the loaded extensions, in load order.
    pub fn extension_paths(&self) -> Vec<String> {
        self.extensions.iter().filter(|e| e.is_active()).map(|e| e.path.to_string()).collect()
    }

    /// Binds the session's actions (pi's `bindCore`): from now on extension actions work.
    pub fn bind(&self, actions: Arc<dyn ExtensionActions>) {
        self.runtime.bind(actions);
        // Servers registered from now on reach the extension that connects them right away
        // (pi's change listener: `mcp_servers_change`, not awaited, in order).
        super::event_queue::set_emitter(emit_queued);
        super::event_queue::start(&self.runtime, self.extensions.clone());
        let runtime = Arc::downgrade(&self.runtime);
        let listener: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
            if let Some(runtime) = runtime.upgrade() {
                let servers = lock(&runtime.mcp_servers).clone();
                super::event_queue::push(&runtime, super::events::NotifyEvent::mcp_servers_change(&servers), false);
            }
        });
        *lock(&self.runtime.mcp_listener) = Some(listener);
    }

    /// A runner over `extensions` and `runtime`, for emitting from a task (it cannot reload).
    pub(crate) fn over(extensions: Vec<Arc<ExtensionRecord>>, runtime: Arc<Runtime>) -> ExtensionRunner {
        ExtensionRunner {
            extensions,
            sources: Vec::new(),
            runtime,
            load_errors: Vec::new(),
            handled: Default::default(),
            update_handled: AtomicU64::new(u64::MAX),
            update_snapshot: Default::default(),
        }
    }

    /// Sets the mode and whether a UI is attached (what `ctx.mode` / `ctx.hasUI` answer).
    pub fn set_mode(&self, mode: ExtensionMode, has_ui: bool) {
        self.runtime.set_mode(mode, has_ui);
    }

    /// Sets the user interface extensions reach through `ctx.ui` (the seam of [`crate::ui`]);
    /// `has_ui` follows the host's [`UiHost::has_ui`](crate::ui::UiHost::has_ui).
    pub fn set_ui(&self, ui: std::sync::Arc<dyn crate::ui::UiHost>) {
        let mode = self.runtime.context_mode();
        self.runtime.set_mode(mode, ui.has_ui());
        super::event_queue::set_emitter(emit_queued);
        super::event_queue::start(&self.runtime, self.extensions.clone());
        self.runtime.set_ui(super::ui_prompt::PromptEventsUi::wrap(
            ui,
            Arc::downgrade(&self.runtime),
            self.extensions.clone(),
        ));
    }

    /// Adds an error listener (pi's `onError`).
    pub fn on_error(&self, listener: impl Fn(&ExtensionError) + Send + Sync + 'static) -> ErrorListenerHandle {
        let id = self.runtime.add_listener(Arc::new(listener));
        ErrorListenerHandle { runtime: self.runtime.clone(), id }
    }

    /// Reports an error to every listener (pi's `emitError`), e.g. a command failure.
    pub fn emit_error(&self, error: ExtensionError) {
        self.runtime.report(error);
    }

    /// The context handlers receive.
    pub fn create_context(&self) -> ExtensionContext {
        ExtensionContext { runtime: self.runtime.clone(), command: false }
    }

    /// Whether any extension handles `event` (pi's `hasHandlers`). Asked on every streamed delta,
    /// so it looks the event up in a set kept until a handler is added or removed.
    pub fn has_handlers(&self, event: &str) -> bool {
        let changes = HANDLERS_CHANGED.load(Ordering::Acquire);
        let mut handled = lock(&self.handled);
        if handled.as_ref().is_none_or(|(seen, _)| *seen != changes) {
            let events = self
                .extensions
                .iter()
                .flat_map(|e| lock(&e.handlers).iter().map(|h| h.event.clone()).collect::<Vec<_>>());
            *handled = Some((changes, events.collect()));
        }
        handled.as_ref().is_some_and(|(_, events)| events.contains(event))
    }

    /// [`has_handlers`](Self::has_handlers)`("message_update")`, asked on every streamed delta:
    /// two atomic loads while no handler was added or removed since it was last asked.
    pub fn has_update_handlers(&self) -> bool {
        let changes = HANDLERS_CHANGED.load(Ordering::Acquire);
        let cached = self.update_handled.load(Ordering::Acquire);
        if cached != u64::MAX && cached >> 1 == changes {
            return cached & 1 == 1;
        }
        let answer = self.has_handlers("message_update");
        self.update_handled.store((changes << 1) | u64::from(answer), Ordering::Release);
        answer
    }

    /// The events the extensions handle, each once, sorted.
    pub fn handled_events(&self) -> Vec<String> {
        let mut events: Vec<String> = self
            .extensions
            .iter()
            .flat_map(|e| lock(&e.handlers).iter().map(|h| h.event.clone()).collect::<Vec<_>>())
            .collect();
        events.sort();
        events.dedup();
        events
    }

    pub(crate) fn report(&self, error: ExtensionError) {
        self.runtime.report(error);
    }

    /// The handlers of `name` with type `E`, in load then registration order, copied now (held
    /// inline up to four: `message_update` asks for them on every streamed delta).
    pub(crate) fn snapshot<E: ExtensionEvent>(&self, name: &str) -> Snapshot<E> {
        let mut out = Snapshot::new();
        for ext in &self.extensions {
            for entry in lock(&ext.handlers).iter().filter(|h| h.event == name) {
                if let Some(h) = entry.handler.downcast_ref::<Handler<E>>() {
                    out.push((ext.path.clone(), h.clone()));
                }
            }
        }
        out
    }

    /// The `message_update` handlers in order, each with its form without a future if it has one.
    fn update_snapshot(&self) -> Vec<UpdateHandler> {
        type Notify = super::events::NotifyEvent;
        let mut out = Vec::new();
        for ext in &self.extensions {
            for entry in lock(&ext.handlers).iter().filter(|h| h.event == "message_update") {
                if let Some(handler) = entry.handler.downcast_ref::<Handler<Notify>>() {
                    let sync =
                        entry.sync.as_ref().and_then(|s| s.downcast_ref::<super::handler::SyncHandler<Notify>>());
                    out.push(UpdateHandler { path: ext.path.clone(), handler: handler.clone(), sync: sync.cloned() });
                }
            }
        }
        out
    }

    /// The `message_update` handlers, copied only after a handler was added or removed since the
    /// last call ([`Self::snapshot`] locks and filters every extension's list).
    pub(crate) fn update_handlers(&self) -> UpdateHandlers {
        let changes = HANDLERS_CHANGED.load(Ordering::Acquire);
        let mut cached = lock(&self.update_snapshot);
        match cached.as_ref() {
            Some((seen, handlers)) if *seen == changes => handlers.clone(),
            _ => {
                let handlers: UpdateHandlers = self.update_snapshot().into();
                *cached = Some((changes, handlers.clone()));
                handlers
            }
        }
    }

    /// Calls one handler without a future; an error or a panic becomes its message.
    pub(crate) fn call_sync_handler<E: ExtensionEvent>(
        handler: &super::handler::SyncHandler<E>,
        event: &mut E,
        ctx: &ExtensionContext,
    ) -> Result<Option<E::Output>, String> {
        let span = tracing::debug_span!("extension_handler", event = E::NAME);
        let _entered = span.enter();
        match std::panic::catch_unwind(AssertUnwindSafe(|| handler(event, ctx))) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(e.to_string()),
            Err(panic) => Err(panic_message(panic)),
        }
    }

    /// Calls one handler; an error or a panic becomes its message.
    pub(crate) async fn call_handler<E: ExtensionEvent>(
        &self,
        handler: &Handler<E>,
        event: &mut E,
        ctx: &ExtensionContext,
    ) -> Result<Option<E::Output>, String> {
        let span = tracing::debug_span!("extension_handler", event = E::NAME);
        let ev = &mut *event;
        let future = match std::panic::catch_unwind(AssertUnwindSafe(move || {
            let ev = ev;
            handler(ev, ctx)
        })) {
            Ok(f) => f,
            Err(panic) => return Err(panic_message(panic)),
        };
        match AssertUnwindSafe(future).catch_unwind().instrument(span).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(e.to_string()),
            Err(panic) => Err(panic_message(panic)),
        }
    }

    /// All registered tools, the first registration of a name winning (pi's `getAllRegisteredTools`).
    pub fn registered_tools(&self) -> Vec<RegisteredTool> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for ext in &self.extensions {
            for tool in lock(&ext.tools).values() {
                if seen.insert(tool.definition.tool.name().to_owned()) {
                    out.push(tool.clone());
                }
            }
        }
        out
    }

    /// The tool named `name` (pi's `getToolDefinition`).
    pub fn tool(&self, name: &str) -> Option<RegisteredTool> {
        self.extensions.iter().find_map(|e| lock(&e.tools).get(name).cloned())
    }

    /// All commands with their invocation names (pi's `resolveRegisteredCommands`): a name
    /// registered by several extensions becomes `name:1`, `name:2`, ….
    pub fn commands(&self) -> Vec<(String, RegisteredCommand)> {
        let all: Vec<RegisteredCommand> =
            self.extensions.iter().flat_map(|e| lock(&e.commands).values().cloned().collect::<Vec<_>>()).collect();
        let mut counts = std::collections::HashMap::<String, usize>::new();
        for c in &all {
            *counts.entry(c.name.clone()).or_default() += 1;
        }
        let mut seen = std::collections::HashMap::<String, usize>::new();
        let mut taken = std::collections::HashSet::<String>::new();
        all.into_iter()
            .map(|c| {
                let occurrence = {
                    let n = seen.entry(c.name.clone()).or_default();
                    *n += 1;
                    *n
                };
                let mut name = if counts.get(&c.name).copied().unwrap_or(0) > 1 {
                    format!("{}:{occurrence}", c.name)
                } else {
                    c.name.clone()
                };
                if taken.contains(&name) {
                    let mut suffix = occurrence;
                    loop {
                        suffix += 1;
                        name = format!("{}:{suffix}", c.name);
                        if !taken.contains(&name) {
                            break;
                        }
                    }
                }
                taken.insert(name.clone());
                (name, c)
            })
            .collect()
    }

    /// The command invoked as `/name` (pi's `getCommand`).
    pub fn command(&self, name: &str) -> Option<RegisteredCommand> {
        self.commands().into_iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// Runs `/name args` (pi's `_tryExecuteExtensionCommand`): `false` when no such command. A
    /// failing or panicking handler is reported as `{extensionPath: "command:<name>", event:
    /// "command"}` and still counts as handled.
    pub async fn run_command(&self, name: &str, args: &str) -> bool {
        let Some(command) = self.command(name) else {
            return false;
        };
        let ctx = ExtensionContext { runtime: self.runtime.clone(), command: true };
        let result = match std::panic::catch_unwind(AssertUnwindSafe(|| (command.handler)(args.to_owned(), ctx))) {
            Ok(f) => match AssertUnwindSafe(f).catch_unwind().await {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(p) => Err(panic_message(p)),
            },
            Err(p) => Err(panic_message(p)),
        };
        if let Err(error) = result {
            self.report(ExtensionError::new(format!("command:{name}"), "command", error));
        }
        true
    }

    /// All flags, the first registration of a name winning (pi's `getFlags`).
    pub fn flags(&self) -> Vec<ExtensionFlag> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for ext in &self.extensions {
            for flag in lock(&ext.flags).values() {
                if seen.insert(flag.name.clone()) {
                    out.push(flag.clone());
                }
            }
        }
        out
    }

    /// Sets a flag's value from the CLI (pi's `setFlagValue`).
    pub fn set_flag_value(&self, name: &str, value: FlagValue) {
        lock(&self.runtime.flag_values).insert(name.to_owned(), value);
    }

    /// The current flag values.
    pub fn flag_values(&self) -> std::collections::HashMap<String, FlagValue> {
        lock(&self.runtime.flag_values).clone()
    }

    /// Whether an extension renders entries of `custom_type`.
    pub fn has_entry_renderer(&self, custom_type: &str) -> bool {
        self.extensions.iter().any(|e| lock(&e.entry_renderers).contains_key(custom_type))
    }

    /// Renders a `custom` entry with the first extension's renderer of its `customType` (pi's
    /// `getEntryRenderer`); `None` without a renderer or when the renderer declines.
    pub fn render_entry(&self, entry: &CustomEntry, expanded: bool, theme: &Theme) -> Option<Box<dyn Component>> {
        let renderer =
            self.extensions.iter().find_map(|e| lock(&e.entry_renderers).get(&entry.custom_type).cloned())?;
        renderer(entry, &EntryRenderOptions { expanded }, theme)
    }

    /// Renders a `custom` message with the first extension's renderer of its `customType` (pi's
    /// `getMessageRenderer`).
    pub fn render_message(
        &self,
        message: &CustomRoleMessage,
        options: MessageRenderOptions,
        theme: &Theme,
    ) -> Option<Box<dyn Component>> {
        let renderer =
            self.extensions.iter().find_map(|e| lock(&e.message_renderers).get(&message.custom_type).cloned())?;
        renderer(message, &options, theme)
    }
}

impl ExtensionRunner {
    /// Every registered shortcut, the first registration of a key winning.
    pub fn shortcuts(&self) -> Vec<super::shortcuts::RegisteredShortcut> {
        let mut out: Vec<super::shortcuts::RegisteredShortcut> = Vec::new();
        for ext in &self.extensions {
            for s in lock(&ext.shortcuts).values() {
                if !out.iter().any(|o| o.shortcut == s.shortcut) {
                    out.push(s.clone());
                }
            }
        }
        out
    }

    /// Runs the shortcut `key`; `false` when none is registered. A failure is reported.
    pub async fn run_shortcut(&self, key: &str) -> bool {
        let Some(shortcut) = self.shortcuts().into_iter().find(|s| s.shortcut == key) else {
            return false;
        };
        if let Err(error) = (shortcut.handler)(self.create_context()).await {
            self.emit_error(ExtensionError::new(&shortcut.extension_path, "shortcut", error.to_string()));
        }
        true
    }
}

impl ExtensionRunner {
    /// The renderers extensions registered for `tool_name` (then for every tool), in load order.
    fn tool_renderers_for(&self, tool_name: &str) -> Vec<super::tool_renderers::ToolRenderers> {
        let mut out = Vec::new();
        for ext in &self.extensions {
            let renderers = lock(&ext.tool_renderers);
            for key in [tool_name, super::tool_renderers::ANY_TOOL] {
                if let Some(r) = renderers.get(key) {
                    out.push(r.clone());
                }
            }
        }
        out
    }

    /// Draws a tool call with the first extension renderer that draws it; `None` keeps the
    /// built-in line.
    pub fn render_tool_call(
        &self,
        tool_name: &str,
        args: &serde_json::Map<String, serde_json::Value>,
        theme: &Theme,
    ) -> Option<Box<dyn Component>> {
        self.tool_renderers_for(tool_name)
            .into_iter()
            .find_map(|r| r.render_call.and_then(|f| f(tool_name, args, theme)))
    }

    /// Draws a tool result (`{content, details, isError}`) with the first extension renderer that
    /// draws it; `None` keeps the built-in drawing.
    pub fn render_tool_result(
        &self,
        tool_name: &str,
        args: &serde_json::Map<String, serde_json::Value>,
        result: &serde_json::Value,
        options: super::tool_renderers::ToolRenderOptions,
        theme: &Theme,
    ) -> Option<Box<dyn Component>> {
        self.tool_renderers_for(tool_name)
            .into_iter()
            .find_map(|r| r.render_result.and_then(|f| f(tool_name, args, result, &options, theme)))
    }
}

/// The queue's delivery of one event (see `event_queue::Emit`).
fn emit_queued(
    extensions: Vec<Arc<ExtensionRecord>>,
    runtime: Arc<Runtime>,
    event: super::events::NotifyEvent,
) -> futures::future::BoxFuture<'static, ()> {
    Box::pin(async move {
        let runner = ExtensionRunner::over(extensions, runtime);
        runner.emit(event).await;
    })
}
