//! Wiring of the extension runner into a session: the `context` events are the agent's
//! `transform_context`, `tool_call` / `tool_result` wrap every tool execution, agent events are
//! forwarded as notifications, and the session implements the actions extensions call.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use pi_agent_core::{
    AfterToolCallContext, AfterToolCallResult, BeforeToolCallContext, BeforeToolCallResult, BoxError, ToolCallHooks,
    TransformContext,
};
use pi_ai::{Content, UserBlock};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::session::{AgentSession, DeferredAction, SessionShared, extension_model, session_models};
use crate::extensions::{
    ExtensionActions, ExtensionError, ExtensionMessage, ExtensionRunner, ForkPosition, NavigateTreeRequest,
    NotifyEvent, SendMessageOptions, SendUserMessageOptions, SessionControlFuture, SlashCommandInfo, ToolCallEvent,
    ToolInfo, ToolResultEvent,
};
use crate::messages::{CodingAgentMessage, CodingMessage};

impl AgentSession {
    /// Binds extension actions to this session and emits `session_start` (pi's `bindExtensions`).
    /// `on_error` hears every extension error from then on (handler failures, timeouts, a
    /// subprocess that died; pi's `onError`), `session_start`'s included; `dispose` removes it.
    /// Without binding, `context` handlers still run, but every extension action
    /// (`append_entry`, `send_message`, …) fails with "Extension runtime not initialized…".
    pub async fn bind_extensions(&self, on_error: impl Fn(&ExtensionError) + Send + Sync + 'static) {
        let Some(runner) = &self.shared.runner else { return };
        let handle = AgentSessionHandle { agent: self.agent.clone(), cwd: self.cwd.clone() };
        runner.bind(Arc::new(SessionActions { session: Arc::downgrade(&self.shared), handle }));
        let listener = runner.on_error(on_error);
        if let Some(previous) = lock_listener(&self.shared).replace(listener) {
            previous.remove();
        }
        runner.emit(NotifyEvent::SessionStart { reason: "startup".into(), previous_session_file: None }).await;
        self.extend_resources_from_extensions("startup").await;
    }

    /// What an extension's `ctx.shutdown()` does from now on (pi's `shutdownHandler` binding):
    /// the interactive and RPC modes quit once the session is idle; without a handler (print
    /// and JSON modes, as pi) the request does nothing. Set it before `bind_extensions` so a
    /// request from `session_start` is heard.
    pub fn set_extension_shutdown_handler(&self, handler: impl Fn() + Send + Sync + 'static) {
        *self.shared.shutdown_handler.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(handler));
    }
}

fn lock_listener(shared: &SessionShared) -> std::sync::MutexGuard<'_, Option<crate::extensions::ErrorListenerHandle>> {
    shared.error_listener.lock().unwrap_or_else(|e| e.into_inner())
}

/// The runner as the agent's hooks.
pub(crate) struct ExtensionHooks {
    pub(crate) runner: Arc<ExtensionRunner>,
    /// The session, for the system prompt a `before_agent_start` handler forced for the run.
    pub(crate) session: Weak<SessionShared>,
}

#[async_trait]
impl TransformContext<CodingMessage> for ExtensionHooks {
    async fn transform_context(
        &self,
        messages: Vec<CodingAgentMessage>,
        _cancel: &CancellationToken,
    ) -> Result<Vec<CodingAgentMessage>, BoxError> {
        // `context` handlers never see system messages (the head is restored after them);
        // `context_with_system` handlers own them.
        let transformed = self.runner.emit_context(messages).await;
        let hidden = self.session.upgrade().map(|s| s.hidden_declarations()).unwrap_or_default();
        let transformed = super::session::hide_declarations(transformed, &hidden);
        let forced = self.session.upgrade().and_then(|s| s.run_state().forced_system_prompt.clone());
        Ok(match forced {
            Some(forced) => apply_forced_prompt(transformed, forced),
            None => transformed,
        })
    }
}

#[async_trait]
impl ToolCallHooks<CodingMessage> for ExtensionHooks {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_, CodingMessage>,
        _cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCallResult>, BoxError> {
        let mut event = ToolCallEvent {
            tool_call_id: ctx.tool_call.id.clone(),
            tool_name: ctx.tool_call.name.clone(),
            input: ctx.args.clone(),
            parent_tool_call_id: None,
        };
        match self.runner.emit_tool_call(&mut event).await {
            // Fail closed: a failing `tool_call` handler blocks the call with its error text.
            Err(error) => Ok(Some(BeforeToolCallResult { block: true, reason: Some(error.error), terminate: false })),
            Ok(Some(r)) if r.block => {
                Ok(Some(BeforeToolCallResult { block: true, reason: r.reason, terminate: r.terminate }))
            }
            Ok(_) => Ok(None),
        }
    }

    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_, CodingMessage>,
        cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCallResult>, BoxError> {
        let event = ToolResultEvent {
            tool_name: ctx.tool_call.name.clone(),
            tool_call_id: ctx.tool_call.id.clone(),
            parent_tool_call_id: None,
            input: ctx.args.clone(),
            content: ctx.result.content.clone(),
            details: ctx.result.details.clone(),
            structured_content: ctx.result.structured_content.clone(),
            is_error: ctx.is_error,
            usage: ctx.result.usage.clone(),
        };
        // An abort does not wait for a `tool_result` handler (one that hangs would hold the run
        // until its timeout): the result stays as the tool made it.
        let patch = tokio::select! {
            patch = self.runner.emit_tool_result(event) => patch,
            _ = cancel.cancelled() => None,
        };
        Ok(patch.map(|p| AfterToolCallResult {
            content: p.content,
            details: p.details,
            structured_content: p.structured_content,
            is_error: p.is_error,
            usage: p.usage,
            terminate: None,
        }))
    }
}

/// pi's forced-prompt projection: the system messages collapse into one head holding the
/// forced text (and the current tool declarations); nothing is recorded.
fn apply_forced_prompt(messages: Vec<CodingAgentMessage>, forced: String) -> Vec<CodingAgentMessage> {
    let current = pi_ai::transcript::current_system_message(&messages);
    let mut head = pi_ai::SystemMessage::new(forced);
    if let Some(current) = current {
        head.tools_added = current.tools_added;
        head.timestamp = current.timestamp;
    } else {
        head.timestamp = pi_ai::now_ms();
    }
    std::iter::once(CodingAgentMessage::System(head.into()))
        .chain(messages.into_iter().filter(|m| !matches!(m, CodingAgentMessage::System(_))))
        .collect()
}

/// The session as the runtime behind extension actions.
pub(crate) struct SessionActions {
    pub(crate) session: Weak<SessionShared>,
    pub(crate) handle: AgentSessionHandle,
}

/// What the actions need to reach the live session without keeping it alive.
#[derive(Clone)]
pub(crate) struct AgentSessionHandle {
    pub(crate) agent: pi_agent_core::Agent<CodingMessage>,
    pub(crate) cwd: String,
}

impl SessionActions {
    fn session(&self) -> Result<AgentSession, BoxError> {
        let shared = self.session.upgrade().ok_or("The session was disposed")?;
        Ok(AgentSession { agent: self.handle.agent.clone(), shared, cwd: self.handle.cwd.clone() })
    }
}

impl ExtensionActions for SessionActions {
    fn send_message(&self, message: ExtensionMessage, options: SendMessageOptions) -> Result<(), BoxError> {
        // pi's `sendCustomMessage` is async, but everything before its first `await` (all cases
        // but starting a run) happens within the call, so the order of entries and queued
        // messages is the call order.
        let session = self.session()?;
        let Some(message) = session.deliver_custom_now(super::session::custom_message(message), options) else {
            return Ok(());
        };
        let (shared, runner) = (session.shared.clone(), session.shared.runner.clone());
        shared.spawn_tracked(report_action(runner, "sendMessage", async move { session.run_custom(message).await }));
        Ok(())
    }

    fn send_user_message(&self, content: Content<UserBlock>, options: SendUserMessageOptions) -> Result<(), BoxError> {
        // pi's `sendUserMessage` calls `prompt` within the call, so one made from an
        // `agent_settled` handler is deferred until that event has been heard.
        let session = self.session()?;
        if session.shared.run_state().emitting_settled {
            spawn_user_message(session, content, options);
            return Ok(());
        }
        let Some(content) =
            session.queue_user_message_now(content, options.deliver_as, options.expand_prompt_templates)
        else {
            return Ok(());
        };
        spawn_user_message(session, content, options);
        Ok(())
    }

    fn append_entry(&self, custom_type: &str, data: Option<Value>) -> Result<(), BoxError> {
        self.session()?.append_entry(custom_type, data)?;
        Ok(())
    }

    fn set_session_name(&self, name: &str) -> Result<(), BoxError> {
        self.session()?.set_session_name(name)?;
        Ok(())
    }

    fn get_session_name(&self) -> Option<String> {
        self.session().ok()?.session_name()
    }

    fn get_thinking_level(&self) -> Option<String> {
        Some(self.session().ok()?.thinking_level().as_str().to_owned())
    }

    fn set_thinking_level(&self, level: &str) -> Result<(), BoxError> {
        let level = pi_ai::ThinkingLevel::parse(level).ok_or_else(|| format!("Invalid thinking level: {level}"))?;
        self.session()?.set_thinking_level(level)?;
        Ok(())
    }

    fn model(&self) -> Option<Value> {
        serde_json::to_value(self.session().ok()?.model()).ok()
    }

    fn compact(&self, custom_instructions: Option<String>) -> Result<(), BoxError> {
        let session = self.session()?;
        let (shared, runner) = (session.shared.clone(), session.shared.runner.clone());
        shared.spawn_tracked(report_action(runner, "compact", async move {
            session.compact(custom_instructions.as_deref()).await.map(|_| ())
        }));
        Ok(())
    }

    fn wait_for_idle(&self) -> futures::future::BoxFuture<'static, Result<(), BoxError>> {
        let session = self.session();
        Box::pin(async move {
            session?.wait_for_idle().await;
            Ok(())
        })
    }

    fn session_snapshot(&self) -> Option<Value> {
        let shared = self.session.upgrade()?;
        // Never wait for the lock: a handler may run while the session holds it.
        let sm = shared.session_manager.try_lock().ok()?;
        let entries: Vec<Value> = sm.get_branch(None).iter().filter_map(|e| serde_json::to_value(e).ok()).collect();
        Some(
            serde_json::json!({"sessionId": sm.session_id(), "sessionFile": sm.session_file(), "leafId": sm.leaf_id(), "entries": entries}),
        )
    }

    fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<(), BoxError> {
        self.session()?.with_session_manager(|sm| sm.append_label_change(entry_id, label))?;
        Ok(())
    }

    fn get_active_tools(&self) -> Vec<String> {
        self.session().map(|s| s.active_tool_names()).unwrap_or_default()
    }

    fn get_all_tools(&self) -> Vec<ToolInfo> {
        let Ok(session) = self.session() else { return Vec::new() };
        // pi's `getAllTools()` carries each tool's prompt guidelines.
        let guidelines = session.shared.prompt_options.lock().map(|o| o.tool_guidelines.clone()).unwrap_or_default();
        session
            .shared
            .all_tools
            .lock()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| ToolInfo {
                        name: t.name().to_owned(),
                        description: t.description().to_owned(),
                        parameters: t.parameters().clone(),
                        prompt_guidelines: guidelines.iter().find(|(n, _)| n == t.name()).map(|(_, g)| g.clone()),
                        output_schema: t.output_schema(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn register_tool(&self, tool: Arc<dyn pi_agent_core::AgentTool>) -> Result<(), BoxError> {
        self.session()?.register_tool(tool);
        Ok(())
    }

    fn set_active_tools(&self, names: &[String]) -> Result<(), BoxError> {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.session()?.set_active_tools_by_name(&names);
        Ok(())
    }

    fn is_idle(&self) -> bool {
        self.session().map(|s| !s.is_streaming()).unwrap_or(true)
    }

    fn abort(&self) {
        // pi's `void this.abort()`: the request takes effect at once; nobody waits for idle.
        if let Ok(session) = self.session() {
            session.request_abort();
        }
    }

    fn shutdown(&self) {
        let Some(shared) = self.session.upgrade() else { return };
        let handler = shared.shutdown_handler.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(handler) = handler {
            handler();
        }
    }

    fn has_pending_messages(&self) -> bool {
        self.session().map(|s| s.pending_message_count() > 0).unwrap_or(false)
    }

    fn get_system_prompt(&self) -> String {
        self.session().map(|s| s.system_prompt()).unwrap_or_default()
    }

    fn get_system_prompt_options(&self) -> Value {
        let Ok(session) = self.session() else { return Value::Object(Default::default()) };
        // pi rebuilds its base options whenever the tools change: the active tools are selected.
        let mut options = super::session::lock(&session.shared.prompt_options).clone();
        options.selected_tools = Some(session.active_tool_names());
        super::extension_ctx::system_prompt_options_json(&options)
    }

    fn read_session(&self, read: &mut dyn FnMut(&crate::session::SessionManager)) -> bool {
        self.session.upgrade().is_some_and(|shared| super::extension_ctx::read_session(&shared, read))
    }

    fn signal(&self) -> Option<(u64, CancellationToken)> {
        self.handle.agent.signal_with_run()
    }

    fn new_session_with_setup(
        &self,
        parent_session: Option<String>,
        setup: crate::extensions::SessionSetupFuture,
    ) -> SessionControlFuture {
        let session = self.session();
        Box::pin(async move { Ok(session?.new_session_with_setup(parent_session, Some(setup)).await?.cancelled) })
    }

    fn get_settings(&self) -> Value {
        self.session()
            .map(|s| s.settings_manager().settings().to_value())
            .unwrap_or_else(|_| Value::Object(Default::default()))
    }

    fn get_commands(&self) -> Vec<SlashCommandInfo> {
        self.session().map(|s| slash_commands(&s)).unwrap_or_default()
    }

    fn set_model(&self, provider: &str, id: &str) -> futures::future::BoxFuture<'static, Result<bool, BoxError>> {
        let (session, provider, id) = (self.session(), provider.to_owned(), id.to_owned());
        Box::pin(async move {
            let session = session?;
            let Some(model) = extension_model(&session, &provider, &id) else { return Ok(false) };
            session.set_model(model)?;
            Ok(true)
        })
    }

    fn models(&self, available_only: bool) -> Vec<pi_ai::Model> {
        let Ok(session) = self.session() else { return Vec::new() };
        session_models(&session, available_only)
    }

    fn stream_request(
        &self,
        model: &pi_ai::Model,
        context: pi_ai::transcript::TranscriptContext,
        options: pi_ai::options::StreamOptions,
    ) -> Option<pi_ai::AssistantMessageEventStream> {
        let session = self.session().ok()?;
        Some((session.shared.stream_fn)(model, context, options))
    }

    fn typed_models(&self) -> Option<(Vec<Value>, Vec<String>)> {
        let session = self.session().ok()?;
        let registry = session.shared.runner.as_ref()?.create_context().model_registry();
        Some(crate::extensions::typed_snapshot(&registry))
    }

    fn typed_model_call(
        &self,
        method: &str,
        params: Value,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Option<futures::future::BoxFuture<'static, Result<Value, String>>> {
        let session = self.session().ok()?;
        let registry = session.shared.runner.as_ref()?.create_context().model_registry();
        let method = method.to_owned();
        Some(Box::pin(async move {
            let answer = crate::extensions::typed_call(&registry, &method, &params, cancel).await;
            answer.unwrap_or_else(|| Err(format!("Unknown method: {method}")))
        }))
    }

    fn is_project_trusted(&self) -> bool {
        self.session().map(|s| s.settings_manager().is_project_trusted()).unwrap_or(false)
    }

    fn get_context_usage(&self) -> Option<Value> {
        let usage = self.session().ok()?.get_context_usage()?;
        Some(
            serde_json::json!({"tokens": usage.tokens, "contextWindow": usage.context_window, "percent": usage.percent}),
        )
    }

    fn new_session(&self, parent_session: Option<String>) -> SessionControlFuture {
        let session = self.session();
        Box::pin(async move { Ok(session?.new_session(parent_session).await?.cancelled) })
    }

    fn fork(&self, entry_id: &str, position: ForkPosition) -> SessionControlFuture {
        let (session, entry_id) = (self.session(), entry_id.to_owned());
        Box::pin(async move {
            let session = session?;
            let outcome = match position {
                ForkPosition::Before => session.fork(&entry_id).await?,
                ForkPosition::At => session.clone_at(&entry_id).await?,
            };
            Ok(outcome.cancelled)
        })
    }

    fn navigate_tree(&self, target_id: &str, options: NavigateTreeRequest) -> SessionControlFuture {
        let (session, target_id) = (self.session(), target_id.to_owned());
        Box::pin(async move {
            let options = super::session::NavigateTreeOptions {
                summarize: options.summarize,
                custom_instructions: options.custom_instructions,
                replace_instructions: options.replace_instructions,
                label: options.label,
            };
            Ok(session?.navigate_tree(&target_id, options).await?.cancelled)
        })
    }

    fn switch_session(&self, session_path: &str) -> SessionControlFuture {
        let (session, path) = (self.session(), std::path::PathBuf::from(session_path));
        Box::pin(async move { Ok(session?.switch_session(&path).await?.cancelled) })
    }

    fn reload(&self) -> futures::future::BoxFuture<'static, Result<(), BoxError>> {
        let session = self.session();
        Box::pin(async move { reload_extensions(session?).await })
    }

    fn execute_tool(
        &self,
        parent_tool_call_id: &str,
        name: &str,
        args: serde_json::Map<String, Value>,
        cancel: CancellationToken,
    ) -> futures::future::BoxFuture<'static, Result<pi_agent_core::AgentToolResult, BoxError>> {
        let session = self.session();
        // The id is taken now, in the order the calls are made (pi numbers them in `execute`).
        let call = session.as_ref().ok().map(|s| s.shared.run_state().nested.begin(parent_tool_call_id, name, &args));
        let (parent, name) = (parent_tool_call_id.to_owned(), name.to_owned());
        Box::pin(async move {
            let session = session?;
            let call = call.ok_or("The session was disposed")?;
            let tool = session.shared.all_tools.lock().ok().and_then(|t| t.iter().find(|t| t.name() == name).cloned());
            Ok(run_nested_tool(session.shared.clone(), tool, call, parent, name, args, cancel).await)
        })
    }
}

/// pi's `getCommands`: extension commands, then prompt templates, then skills.
fn slash_commands(session: &AgentSession) -> Vec<SlashCommandInfo> {
    let mut out: Vec<SlashCommandInfo> = session
        .shared
        .runner
        .as_ref()
        .map(|r| r.commands())
        .unwrap_or_default()
        .into_iter()
        .map(|(name, c)| SlashCommandInfo {
            name,
            description: c.description,
            source: "extension".into(),
            source_info: Some(serde_json::json!({"path": c.extension_path, "source": "extension"})),
        })
        .collect();
    let templates = super::session::lock(&session.shared.prompt_templates).clone();
    out.extend(templates.into_iter().map(|t| SlashCommandInfo {
        name: t.name,
        description: Some(t.description),
        source: "prompt".into(),
        source_info: Some(serde_json::json!({"path": t.file_path, "source": "prompt"})),
    }));
    let skills = super::session::lock(&session.shared.prompt_options).skills.clone();
    out.extend(skills.into_iter().map(|s| SlashCommandInfo {
        name: format!("skill:{}", s.name),
        description: Some(s.description),
        source: "skill".into(),
        source_info: Some(serde_json::json!({"path": s.file_path, "source": "skill"})),
    }));
    out
}

/// The command context's `reload()` (pi's `AgentSession.reload` for extensions): refused while a
/// run is active; `session_shutdown` (`reload`), every extension loads again and its tools join
/// the session, `session_start` (`reload`).
async fn reload_extensions(session: AgentSession) -> Result<(), BoxError> {
    if session.is_streaming() {
        return Err("Wait for the current response to finish before reloading.".into());
    }
    if session.is_compacting() {
        return Err("Wait for compaction to finish before reloading.".into());
    }
    let Some(runner) = session.shared.runner.clone() else { return Ok(()) };
    runner.emit(NotifyEvent::SessionShutdown { reason: "reload".into(), target_session_file: None }).await;
    runner.reload().await;
    for tool in runner.registered_tools() {
        session.register_tool(tool.definition.tool.clone());
    }
    // The active tools now run the reloaded definitions.
    let active = session.active_tool_names();
    session.set_active_tools_by_name(&active.iter().map(String::as_str).collect::<Vec<_>>());
    runner.emit(NotifyEvent::SessionStart { reason: "reload".into(), previous_session_file: None }).await;
    session.extend_resources_from_extensions("reload").await;
    Ok(())
}

/// pi's `NestedToolCallRunner.execute` for one call (`call` holds its id `<parent>/<n>`):
/// `tool_execution_start`, `_update` and `_end` with `parentToolCallId`, each to the extensions and
/// then to the session's listeners, and between them the pipeline of a model-issued call; the
/// outcome goes into the caller's `nestedCalls` record.
async fn run_nested_tool(
    shared: Arc<super::session::SessionShared>,
    tool: Option<Arc<dyn pi_agent_core::AgentTool>>,
    call: super::session::NestedCall,
    parent: String,
    name: String,
    args: serde_json::Map<String, Value>,
    cancel: CancellationToken,
) -> pi_agent_core::AgentToolResult {
    use pi_agent_core::AgentEvent;
    let id = call.id.clone();
    let start =
        AgentEvent::ToolExecutionStart { tool_call_id: id.clone(), tool_name: name.clone(), args: args.clone() };
    emit_nested(&shared, &parent, start).await;
    let started = std::time::Instant::now();
    let runner = shared.runner.clone();
    let ids = (id.clone(), parent.clone());
    let result = nested_pipeline(&shared, tool, runner, ids, name.clone(), args, cancel).await;
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|b| if let pi_ai::UserBlock::Text(t) = b { Some(t.text.as_str()) } else { None })
        .collect();
    shared.run_state().nested.end(&call, result.is_error, &text.join("\n"), result.usage.as_ref());
    let end = AgentEvent::ToolExecutionEnd {
        tool_call_id: id,
        tool_name: name,
        result: Box::new(result.clone()),
        is_error: result.is_error,
        duration_ms: Some(started.elapsed().as_millis() as u64),
    };
    emit_nested(&shared, &parent, end).await;
    result
}

/// pi's nested-call `emit`: the extensions first, then the session's listeners.
async fn emit_nested(
    shared: &super::session::SessionShared,
    parent: &str,
    event: pi_agent_core::AgentEvent<crate::messages::CodingMessage>,
) {
    use pi_agent_core::AgentEvent;
    let parent_tool_call_id = Some(parent.to_owned());
    let notify = match &event {
        AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args } => Some(NotifyEvent::ToolExecutionStart {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            args: args.clone(),
            parent_tool_call_id,
        }),
        AgentEvent::ToolExecutionUpdate { tool_call_id, tool_name, args, partial_result } => {
            Some(NotifyEvent::ToolExecutionUpdate {
                tool_call_id: tool_call_id.clone(),
                tool_name: tool_name.clone(),
                args: args.clone(),
                partial_result: (&**partial_result).into(),
                parent_tool_call_id,
            })
        }
        AgentEvent::ToolExecutionEnd { tool_call_id, tool_name, result, is_error, duration_ms } => {
            Some(NotifyEvent::ToolExecutionEnd {
                tool_call_id: tool_call_id.clone(),
                tool_name: tool_name.clone(),
                result: (&**result).into(),
                is_error: *is_error,
                duration_ms: *duration_ms,
                parent_tool_call_id,
            })
        }
        _ => None,
    };
    if let (Some(runner), Some(notify)) = (&shared.runner, notify) {
        runner.emit(notify).await;
    }
    shared.emit(&super::session::SessionEvent::NestedToolExecution { parent_tool_call_id: parent.to_owned(), event });
}

/// Prepare, validate, `tool_call`, execute, `tool_result` for a nested call `id` of `parent`.
async fn nested_pipeline(
    shared: &super::session::SessionShared,
    tool: Option<Arc<dyn pi_agent_core::AgentTool>>,
    runner: Option<Arc<ExtensionRunner>>,
    (id, parent): (String, String),
    name: String,
    args: serde_json::Map<String, Value>,
    cancel: CancellationToken,
) -> pi_agent_core::AgentToolResult {
    use pi_agent_core::AgentToolResult;
    let Some(tool) = tool else { return AgentToolResult::error(format!("Tool {name} not found")) };
    let args = tool.prepare_arguments(args);
    let args = match pi_ai::validate::validate_arguments(tool.name(), tool.parameters(), &args) {
        Ok(args) => args,
        Err(e) => return AgentToolResult::error(e.to_string()),
    };
    if let Some(runner) = &runner {
        let mut event = ToolCallEvent {
            tool_call_id: id.clone(),
            tool_name: name.clone(),
            input: args.clone(),
            parent_tool_call_id: Some(parent.clone()),
        };
        match runner.emit_tool_call(&mut event).await {
            Err(error) => return AgentToolResult::error(error.error),
            Ok(Some(r)) if r.block => {
                return AgentToolResult::error(r.reason.unwrap_or_else(|| "Tool execution was blocked".to_owned()));
            }
            Ok(_) => {}
        }
    }
    if cancel.is_cancelled() {
        return AgentToolResult::error("Operation aborted");
    }
    let (updates, mut received) = tokio::sync::mpsc::unbounded_channel::<AgentToolResult>();
    let on_update: Arc<dyn Fn(AgentToolResult) + Send + Sync> = Arc::new(move |partial| {
        let _ = updates.send(partial);
    });
    let ctx = pi_agent_core::ToolContext::new(cancel.clone(), Some(on_update));
    let update = |partial_result| pi_agent_core::AgentEvent::ToolExecutionUpdate {
        tool_call_id: id.clone(),
        tool_name: name.clone(),
        args: args.clone(),
        partial_result: Box::new(partial_result),
    };
    // Progress reaches the listeners in order while the tool runs, all of it before `tool_result`.
    let execution = tool.execute(&id, args.clone(), ctx.clone());
    tokio::pin!(execution);
    let outcome = loop {
        tokio::select! {
            biased;
            Some(partial) = received.recv() => emit_nested(shared, &parent, update(partial)).await,
            outcome = &mut execution => break outcome,
        }
    };
    // Updates after the result are dropped, as the loop drops them for its calls.
    ctx.close();
    while let Ok(partial) = received.try_recv() {
        emit_nested(shared, &parent, update(partial)).await;
    }
    let mut result = match outcome {
        Ok(result) => result,
        Err(e) => AgentToolResult::error(e.message()),
    };
    let Some(runner) = runner else { return result };
    let event = ToolResultEvent {
        tool_name: name.clone(),
        tool_call_id: id.clone(),
        parent_tool_call_id: Some(parent),
        input: args,
        content: result.content.clone(),
        details: result.details.clone(),
        structured_content: result.structured_content.clone(),
        is_error: result.is_error,
        usage: result.usage.clone(),
    };
    let patch = tokio::select! {
        patch = runner.emit_tool_result(event) => patch,
        _ = cancel.cancelled() => None,
    };
    if let Some(p) = patch {
        let content_overridden = p.content.is_some();
        if let Some(content) = p.content {
            result.content = content;
        }
        if let Some(details) = p.details {
            result.details = details;
        }
        if let Some(is_error) = p.is_error {
            result.is_error = is_error;
        }
        result.structured_content = match p.structured_content {
            Some(s) => Some(s),
            None if content_overridden => None,
            None => result.structured_content.take(),
        };
    }
    result
}

/// pi's `sendUserMessage` as a session task (deferred while `agent_settled` is being heard).
fn spawn_user_message(session: AgentSession, content: Content<UserBlock>, options: SendUserMessageOptions) {
    let runner = session.shared.runner.clone();
    let action: DeferredAction = Box::new(move |session: AgentSession| {
        Box::pin(async move {
            let work = session.send_user_message(content, options.deliver_as, options.expand_prompt_templates);
            report_action(runner, "sendUserMessage", work).await;
            Ok(())
        })
    });
    if let Some(action) = session.defer_while_settling(action) {
        let shared = session.shared.clone();
        shared.spawn_tracked(async move {
            // A failure was reported by `report_action` inside the action.
            let _ = action(session).await;
        });
    }
}

/// Runs an action, reporting its failure as an extension error with path `<runtime>`.
async fn report_action(
    runner: Option<Arc<ExtensionRunner>>,
    action: &'static str,
    work: impl std::future::Future<Output = Result<(), crate::sdk::error::SdkError>>,
) {
    if let Err(e) = work.await {
        tracing::warn!(error = %e, action, "extension action failed");
        if let Some(runner) = runner {
            runner.emit_error(crate::extensions::ExtensionError::new("<runtime>", action, e.to_string()));
        }
    }
}

/// The providers' payload hook running the extensions' async `before_provider_request` chain:
/// the hook's future is awaited on the request's own task (no blocking, no nested runtime).
pub(crate) fn payload_hook(runner: Arc<ExtensionRunner>) -> pi_ai::options::PayloadHook {
    Arc::new(move |payload: &Value, _model: &pi_ai::Model| {
        if !runner.has_handlers("before_provider_request") {
            return Box::pin(std::future::ready(None));
        }
        let runner = runner.clone();
        let payload = payload.clone();
        Box::pin(async move {
            let out = runner.emit_before_provider_request(payload.clone()).await;
            (out != payload).then_some(out)
        })
    })
}
