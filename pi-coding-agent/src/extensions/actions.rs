//! [`ExtensionActions`]: what extensions can ask the session to do, implemented by the session
//! and bound to the runner with [`ExtensionRunner::bind`](crate::extensions::ExtensionRunner::bind).

use pi_ai::{Content, UserBlock};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::errors::BoxError;

/// A message an extension sends (pi's `Pick<CustomMessage, "customType" | "content" | "display" | "details">`).
///
/// It becomes a `custom` message: `content` reaches the model as user content; `display` and
/// `details` never do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionMessage {
    /// Which extension sent it.
    pub custom_type: String,
    /// What the model sees, as a user message.
    pub content: Content<UserBlock>,
    /// Whether the terminal renders it.
    #[serde(default)]
    pub display: bool,
    /// Structured data for programs and renderers (never sent to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ExtensionMessage {
    /// A displayed message with text content and no details.
    pub fn text(custom_type: impl Into<String>, text: impl Into<String>) -> Self {
        ExtensionMessage {
            custom_type: custom_type.into(),
            content: Content::Text(text.into()),
            display: true,
            details: None,
        }
    }
}

/// When a sent message is delivered (pi's `deliverAs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DeliverAs {
    /// Into the running turn as a steering message (the default while streaming).
    Steer,
    /// After the run would otherwise stop.
    FollowUp,
    /// Held and sent with the next prompt.
    NextTurn,
}

/// Options of [`ExtensionActions::send_message`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageOptions {
    /// Start a turn when idle (pi's `triggerTurn`; `None` = not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_turn: Option<bool>,
    /// How to deliver while streaming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliver_as: Option<DeliverAs>,
}

/// Options of [`ExtensionActions::send_user_message`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendUserMessageOptions {
    /// `steer` or `followUp` while streaming (`nextTurn` is not valid here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliver_as: Option<DeliverAs>,
    /// Expand prompt templates (pi's default: `false`).
    #[serde(default)]
    pub expand_prompt_templates: bool,
}

/// A tool as [`ExtensionActions::get_all_tools`] describes it (pi's `ToolInfo`, the fields a v1 needs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// Tool name.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
    /// Guideline bullets for the system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_guidelines: Option<Vec<String>>,
    /// JSON Schema of the tool's structured result (pi's `outputSchema`), if it has one; for
    /// built-in extensions only (pi's `getAllTools()` does not list it).
    #[serde(skip)]
    pub output_schema: Option<Value>,
}

/// A slash command as `pi.getCommands()` lists it (pi's `SlashCommandInfo`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlashCommandInfo {
    /// The invocation name, without `/` (`skill:name` for skills).
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `extension`, `prompt` or `skill`.
    pub source: String,
    /// Where it comes from (`{path, source, scope, origin}`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_info: Option<Value>,
}

/// Where `ctx.fork(entryId, {position})` cuts the branch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ForkPosition {
    /// Before a user message: the new session ends at its parent (pi's default).
    #[default]
    Before,
    /// At the entry: the new session includes it (pi's `clone`).
    At,
}

/// Options of the command context's `navigateTree(targetId, options)`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateTreeRequest {
    /// Summarize the branch being left.
    #[serde(default)]
    pub summarize: bool,
    /// Extra instructions for the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    /// Whether `custom_instructions` replace pi's summary prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_instructions: Option<bool>,
    /// A label for the summary entry (or the target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// What `newSession({setup})` runs on the new session's manager (see
/// [`ExtensionActions::new_session_with_setup`]).
pub type SessionSetup = Box<dyn FnOnce(&mut crate::session::SessionManager) -> Result<(), BoxError> + Send + 'static>;

/// The [`SessionSetup`] of `newSession({setup})`, once the new session is installed (an
/// out-of-process `setup` runs then, on a copy, and its appends are replayed).
pub type SessionSetupFuture = futures::future::BoxFuture<'static, Result<SessionSetup, BoxError>>;

/// The answer of the command context's session controls: `{cancelled}`.
pub type SessionControlFuture = futures::future::BoxFuture<'static, Result<bool, BoxError>>;

/// The session side of the extension API (pi's `ExtensionActions` plus the context actions).
///
/// The session implements it and binds it with
/// [`ExtensionRunner::bind`](crate::extensions::ExtensionRunner::bind). Until then every action of
/// [`ExtensionApi`](crate::extensions::ExtensionApi) fails with
/// [`RUNTIME_NOT_INITIALIZED`](crate::extensions::RUNTIME_NOT_INITIALIZED). Methods are synchronous
/// like pi's; `send_message`/`send_user_message` are fire-and-forget (spawn the work and report
/// late failures as extension errors with path `<runtime>`).
///
/// The context methods (`is_idle`, `abort`, …) have defaults that match pi's unbound runner.
pub trait ExtensionActions: Send + Sync {
    /// pi's `sendMessage`: a `custom` message (see the spec §3.5 for the delivery order).
    fn send_message(&self, message: ExtensionMessage, options: SendMessageOptions) -> Result<(), BoxError>;

    /// pi's `sendUserMessage`: a user message, as if typed.
    fn send_user_message(&self, content: Content<UserBlock>, options: SendUserMessageOptions) -> Result<(), BoxError>;

    /// pi's `appendEntry`: a `custom` session entry (state persistence, never sent to the model).
    fn append_entry(&self, custom_type: &str, data: Option<Value>) -> Result<(), BoxError>;

    /// pi's `setSessionName`.
    fn set_session_name(&self, name: &str) -> Result<(), BoxError>;

    /// pi's `getSessionName`.
    fn get_session_name(&self) -> Option<String>;

    /// pi's `setLabel(entryId, label?)`.
    fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<(), BoxError>;

    /// pi's `getActiveTools`: names of the active tools.
    fn get_active_tools(&self) -> Vec<String>;

    /// pi's `getAllTools`.
    fn get_all_tools(&self) -> Vec<ToolInfo>;

    /// pi's `setActiveTools(names)` (unknown and hidden names are ignored by the session).
    fn set_active_tools(&self, names: &[String]) -> Result<(), BoxError>;

    /// Adds a tool an extension registered after loading to the session's tools (inactive until
    /// activated; pi's `registerTool` during a session). Without a session there is nothing to add to.
    fn register_tool(&self, tool: std::sync::Arc<dyn pi_agent_core::AgentTool>) -> Result<(), BoxError> {
        let _ = tool;
        Ok(())
    }

    /// `ctx.isIdle()`.
    fn is_idle(&self) -> bool {
        true
    }

    /// `ctx.abort()`.
    fn abort(&self) {}

    /// `ctx.hasPendingMessages()`.
    fn has_pending_messages(&self) -> bool {
        false
    }

    /// `ctx.getSystemPrompt()`.
    fn get_system_prompt(&self) -> String {
        String::new()
    }

    /// pi's `ctx.executeTool(name, args, { signal })`: runs the registered tool `name` on behalf of
    /// the tool call `parent_tool_call_id` through the tool pipeline (argument preparation and
    /// validation, `tool_call` / `tool_result` handlers). Tool failures come back as results with
    /// `is_error`; `Err` means the session cannot run it. Defaults to "not available".
    fn execute_tool(
        &self,
        parent_tool_call_id: &str,
        name: &str,
        args: serde_json::Map<String, Value>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> futures::future::BoxFuture<'static, Result<pi_agent_core::AgentToolResult, BoxError>> {
        let _ = (parent_tool_call_id, name, args, cancel);
        Box::pin(async { Err("Tool calls need a session".into()) })
    }

    /// `ctx.shutdown()`.
    fn shutdown(&self) {}

    /// What `ctx.sessionManager` reads in an out-of-process extension:
    /// `{"sessionId","sessionFile","leafId","entries":[the current branch, serialized]}`; `None`
    /// without a session (pi's unbound runner has none either).
    fn session_snapshot(&self) -> Option<Value> {
        None
    }

    /// Runs `read` on the session's manager (pi's `ctx.sessionManager`, read-only); `false`
    /// without a session or while the session holds its manager (then `read` is not called).
    fn read_session(&self, read: &mut dyn FnMut(&crate::session::SessionManager)) -> bool {
        let _ = read;
        false
    }

    /// The current run's abort signal with the run's number (pi's `ctx.signal`, the agent's
    /// signal: `None` while the agent is not streaming).
    fn signal(&self) -> Option<(u64, tokio_util::sync::CancellationToken)> {
        None
    }

    /// The command context's `newSession({parentSession, setup})`: once the new session is
    /// installed, `setup` resolves to what changes its manager (pi hands `setup` the new session's
    /// manager), the agent's context is rebuilt from it, and then `session_start` is emitted.
    fn new_session_with_setup(
        &self,
        parent_session: Option<String>,
        setup: SessionSetupFuture,
    ) -> SessionControlFuture {
        let _ = (parent_session, setup);
        Box::pin(async { Err("newSession is not available in this session".into()) })
    }

    /// pi's `getThinkingLevel` (`"off"`, …; `None` without a session).
    fn get_thinking_level(&self) -> Option<String> {
        None
    }

    /// pi's `setThinkingLevel`.
    fn set_thinking_level(&self, _level: &str) -> Result<(), BoxError> {
        Err("setThinkingLevel is not available in this session".into())
    }

    /// `ctx.model`, serialized (`None` without a session).
    fn model(&self) -> Option<Value> {
        None
    }

    /// `ctx.compact({customInstructions})`: starts a manual compaction (failures reported later).
    fn compact(&self, _custom_instructions: Option<String>) -> Result<(), BoxError> {
        Err("compact is not available in this session".into())
    }

    /// The command context's `waitForIdle()`.
    fn wait_for_idle(&self) -> futures::future::BoxFuture<'static, Result<(), BoxError>> {
        Box::pin(async { Ok(()) })
    }

    /// pi's `getSettings()`: the effective settings as JSON (`{}` without a session).
    fn get_settings(&self) -> Value {
        Value::Object(Default::default())
    }

    /// pi's `getCommands()`: extension commands, prompt templates, then skills.
    fn get_commands(&self) -> Vec<SlashCommandInfo> {
        Vec::new()
    }

    /// pi's `setModel(model)`: `false` when the model is unknown or its provider has no auth.
    fn set_model(&self, provider: &str, id: &str) -> futures::future::BoxFuture<'static, Result<bool, BoxError>> {
        let _ = (provider, id);
        Box::pin(async { Ok(false) })
    }

    /// `ctx.isProjectTrusted()`.
    fn is_project_trusted(&self) -> bool {
        false
    }

    /// `ctx.getContextUsage()` as pi's JSON (`{tokens, contextWindow, percent}`).
    fn get_context_usage(&self) -> Option<Value> {
        None
    }

    /// `ctx.scopedModels`, serialized.
    fn scoped_models(&self) -> Vec<Value> {
        Vec::new()
    }

    /// The models `ctx.modelRegistry` knows: every one (`available_only == false`, pi's
    /// `getAll`) or those with configured auth (pi's `getAvailable`).
    fn models(&self, available_only: bool) -> Vec<pi_ai::Model> {
        let _ = available_only;
        Vec::new()
    }

    /// A request through the session's providers with request-time auth and none of the
    /// session's hooks (`ctx.modelRegistry.stream`); `None` without a session.
    fn stream_request(
        &self,
        model: &pi_ai::Model,
        context: pi_ai::transcript::TranscriptContext,
        options: pi_ai::options::StreamOptions,
    ) -> Option<pi_ai::AssistantMessageEventStream> {
        let _ = (model, context, options);
        None
    }

    /// `ctx.modelRegistry`'s image and classifier models for a snapshot across a process
    /// boundary: every one and the `provider/id` keys of those with configured auth; `None`
    /// without a session.
    fn typed_models(&self) -> Option<(Vec<Value>, Vec<String>)> {
        None
    }

    /// `ctx.modelRegistry.classify` / `generateImages` (`method`) across a process boundary:
    /// pi's result JSON (errors included); `None` without a session.
    fn typed_model_call(
        &self,
        method: &str,
        params: Value,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Option<futures::future::BoxFuture<'static, Result<Value, String>>> {
        let _ = (method, params, cancel);
        None
    }

    /// `ctx.getSystemPromptOptions()` as JSON.
    fn get_system_prompt_options(&self) -> Value {
        Value::Object(Default::default())
    }

    /// The command context's `newSession({parentSession})`: `Ok(true)` when a handler cancelled.
    fn new_session(&self, parent_session: Option<String>) -> SessionControlFuture {
        let _ = parent_session;
        Box::pin(async { Err("newSession is not available in this session".into()) })
    }

    /// The command context's `fork(entryId, {position})`.
    fn fork(&self, entry_id: &str, position: ForkPosition) -> SessionControlFuture {
        let _ = (entry_id, position);
        Box::pin(async { Err("fork is not available in this session".into()) })
    }

    /// The command context's `navigateTree(targetId, options)`.
    fn navigate_tree(&self, target_id: &str, options: NavigateTreeRequest) -> SessionControlFuture {
        let _ = (target_id, options);
        Box::pin(async { Err("navigateTree is not available in this session".into()) })
    }

    /// The command context's `switchSession(sessionPath)`.
    fn switch_session(&self, session_path: &str) -> SessionControlFuture {
        let _ = session_path;
        Box::pin(async { Err("switchSession is not available in this session".into()) })
    }

    /// The command context's `reload()`: `session_shutdown` (`reload`), the extensions load
    /// again, `session_start` (`reload`).
    fn reload(&self) -> futures::future::BoxFuture<'static, Result<(), BoxError>> {
        Box::pin(async { Err("reload is not available in this session".into()) })
    }
}
