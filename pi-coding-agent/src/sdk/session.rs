//! `AgentSession`: an [`Agent`] bound to a [`SessionManager`], the coding tools and the prompt.
//!
//! - Every message that ends (`message_end`) is persisted to the session, after listeners saw it.
//! - Before every request the context is rebuilt from the session (compaction and context edits
//!   apply), so the session, not the agent's copy, decides what the model sees.
//! - The first prompt records the system prompt as the transcript's first system message
//!   (`sections`, tool declarations); later prompts append a `sections` patch when the prompt
//!   changed, and tool changes are declared by the agent loop's tool diff.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use pi_agent_core::{
    Agent, AgentEvent, AgentMessage, AgentTool, BoxError, PrepareRequestContext, RequestUpdate, TurnHooks, Unsubscribe,
};
use pi_ai::transcript::current_system_message;
use pi_ai::{ImageContent, Model, TextContent, ThinkingLevel, UserBlock, UserMessage, now_ms};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::SdkError;
use super::extension_bridge::{AgentSessionHandle, SessionActions, notify_event};
use super::system_prompt::{SystemPromptOptions, build_system_prompt_message, diff_system_prompt_sections};
use crate::extensions::{ExtensionRunner, NotifyEvent};
use crate::messages::{BashExecutionMessage, CodingAgentMessage, CodingMessage, CustomRoleMessage};
use crate::session::SessionManager;

/// An event of a session: the agent's events plus session-level ones.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // events are moved, not stored in bulk
pub enum SessionEvent {
    /// An agent event (`agent_start`, `message_update`, `tool_execution_end`, …).
    Agent(AgentEvent<CodingMessage>),
    /// An entry was appended to the session.
    EntryAppended {
        /// The entry id.
        id: String,
        /// The entry type (`message`, `custom`, `custom_message`, …).
        entry_type: &'static str,
    },
}

type Listener = Arc<dyn Fn(&SessionEvent) + Send + Sync>;

pub(crate) struct SessionShared {
    pub(crate) session_manager: Mutex<SessionManager>,
    listeners: Mutex<Vec<(u64, Listener)>>,
    next_listener: AtomicU64,
    pub(crate) all_tools: Mutex<Vec<Arc<dyn AgentTool>>>,
    pub(crate) active_tools: Mutex<Vec<String>>,
    pub(crate) prompt_options: Mutex<SystemPromptOptions>,
    /// Prompt templates for `/name args` expansion (resources, issue 8; see `sdk/expand.rs`).
    pub(crate) prompt_templates: Mutex<Vec<super::prompt_templates::PromptTemplate>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SessionShared {
    pub(crate) fn new(
        session_manager: SessionManager,
        all_tools: Vec<Arc<dyn AgentTool>>,
        active_tools: Vec<String>,
        prompt_options: SystemPromptOptions,
    ) -> Self {
        SessionShared {
            session_manager: Mutex::new(session_manager),
            listeners: Mutex::new(Vec::new()),
            next_listener: AtomicU64::new(1),
            all_tools: Mutex::new(all_tools),
            active_tools: Mutex::new(active_tools),
            prompt_options: Mutex::new(prompt_options),
            prompt_templates: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn emit(&self, event: &SessionEvent) {
        let listeners: Vec<Listener> = lock(&self.listeners).iter().map(|(_, l)| l.clone()).collect();
        for l in listeners {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l(event))).is_err() {
                tracing::warn!("a session listener panicked; it keeps its registration");
            }
        }
    }

    /// Persists one finished message (after every listener saw it).
    fn persist(&self, message: &CodingAgentMessage) {
        let mut sm = lock(&self.session_manager);
        let (result, entry_type) = match message {
            AgentMessage::Custom(CodingMessage::Custom(c)) => (
                sm.append_custom_message_entry(&c.custom_type, c.content.clone(), c.display, c.details.clone()),
                "custom_message",
            ),
            other => (sm.append_message(other.clone()), "message"),
        };
        drop(sm);
        match result {
            Ok(id) => self.emit(&SessionEvent::EntryAppended { id, entry_type }),
            Err(e) => tracing::error!(error = %e, "could not persist a message to the session"),
        }
    }

    pub(crate) fn active_tool_objects(&self) -> Vec<Arc<dyn AgentTool>> {
        let all = lock(&self.all_tools);
        lock(&self.active_tools).iter().filter_map(|name| all.iter().find(|t| t.name() == name).cloned()).collect()
    }
}

/// Rebuilds the context from the session before every request.
struct SessionContextHook {
    shared: Arc<SessionShared>,
}

#[async_trait]
impl TurnHooks<CodingMessage> for SessionContextHook {
    async fn prepare_request(
        &self,
        _ctx: PrepareRequestContext<'_, CodingMessage>,
        _cancel: &CancellationToken,
    ) -> Result<Option<RequestUpdate<CodingMessage>>, BoxError> {
        let messages = lock(&self.shared.session_manager).build_session_context().messages;
        Ok(Some(RequestUpdate { messages: Some(messages), ..Default::default() }))
    }
}

/// Options of one prompt.
#[derive(Clone, Debug)]
pub struct PromptOptions {
    /// Images sent with the text.
    pub images: Vec<ImageContent>,
    /// Expand `/skill:name args` and `/template args` first (pi's `expandPromptTemplates`,
    /// default true).
    pub expand_prompt_templates: bool,
}

impl Default for PromptOptions {
    fn default() -> Self {
        PromptOptions { images: Vec::new(), expand_prompt_templates: true }
    }
}

/// The result of a user `!command` ([`AgentSession::execute_bash`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BashResult {
    /// Combined output (possibly truncated).
    pub output: String,
    /// Exit code, if the process exited.
    pub exit_code: Option<i64>,
    /// Whether it was cancelled.
    pub cancelled: bool,
    /// Whether the output was truncated.
    pub truncated: bool,
    /// Where the full output was saved, when truncated.
    pub full_output_path: Option<String>,
}

/// A coding-agent session: the agent, its session file, tools, prompt and extensions.
#[derive(Clone)]
pub struct AgentSession {
    pub(crate) agent: Agent<CodingMessage>,
    pub(crate) shared: Arc<SessionShared>,
    pub(crate) cwd: String,
    pub(crate) runner: Option<Arc<ExtensionRunner>>,
}

impl AgentSession {
    pub(crate) fn new(
        agent: Agent<CodingMessage>,
        shared: Arc<SessionShared>,
        cwd: String,
        runner: Option<Arc<ExtensionRunner>>,
    ) -> Self {
        // Extensions see each event first, then public listeners, then the event is persisted.
        if let Some(runner) = &runner {
            let runner = runner.clone();
            agent.subscribe_async(move |event| {
                let runner = runner.clone();
                Box::pin(async move {
                    if let Some(n) = notify_event(&event) {
                        runner.emit(n).await;
                    }
                    Ok(())
                })
            });
        }
        let persist = shared.clone();
        let weak = Arc::downgrade(&shared);
        agent.subscribe(move |event: &AgentEvent<CodingMessage>| {
            if let Some(shared) = weak.upgrade() {
                shared.emit(&SessionEvent::Agent(event.clone()));
            }
            if let AgentEvent::MessageEnd { message } = event {
                persist.persist(message);
            }
        });
        AgentSession { agent, shared, cwd, runner }
    }

    /// The extension runner (present when extensions were loaded).
    pub fn extension_runner(&self) -> Option<&Arc<ExtensionRunner>> {
        self.runner.as_ref()
    }

    /// Binds extension actions to this session and emits `session_start` (pi's `bindExtensions`).
    /// Without it, `context` handlers still run, but every extension action (`append_entry`,
    /// `send_message`, …) fails with "Extension runtime not initialized…".
    pub async fn bind_extensions(&self) {
        let Some(runner) = &self.runner else { return };
        let handle = AgentSessionHandle { agent: self.agent.clone(), cwd: self.cwd.clone() };
        runner.bind(Arc::new(SessionActions { session: Arc::downgrade(&self.shared), handle }));
        runner.emit(NotifyEvent::SessionStart { reason: "startup".into(), previous_session_file: None }).await;
    }

    pub(crate) fn context_hook(shared: &Arc<SessionShared>) -> Arc<dyn TurnHooks<CodingMessage>> {
        Arc::new(SessionContextHook { shared: shared.clone() })
    }

    /// The underlying agent.
    pub fn agent(&self) -> &Agent<CodingMessage> {
        &self.agent
    }

    /// The working directory.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The session manager (locked; do not hold the guard across an `.await`).
    pub fn session_manager(&self) -> MutexGuard<'_, SessionManager> {
        lock(&self.shared.session_manager)
    }

    /// Registers a listener for session events; returns a handle that removes it.
    pub fn subscribe(&self, listener: impl Fn(&SessionEvent) + Send + Sync + 'static) -> Unsubscribe {
        let id = self.shared.next_listener.fetch_add(1, Ordering::Relaxed);
        lock(&self.shared.listeners).push((id, Arc::new(listener)));
        let weak = Arc::downgrade(&self.shared);
        Unsubscribe::new(move || {
            if let Some(s) = weak.upgrade() {
                lock(&s.listeners).retain(|(i, _)| *i != id);
            }
        })
    }

    /// The agent's transcript (refreshed from the session after every run).
    pub fn messages(&self) -> Vec<CodingAgentMessage> {
        self.agent.messages()
    }

    /// The system prompt as the transcript replays it.
    pub fn system_prompt(&self) -> String {
        pi_ai::transcript::current_system_prompt(&self.session_messages())
    }

    fn session_messages(&self) -> Vec<CodingAgentMessage> {
        lock(&self.shared.session_manager).build_session_context().messages
    }

    /// The model.
    pub fn model(&self) -> Model {
        self.agent.with_state(|s| s.model.clone())
    }

    /// Switches the model and records a `model_change` entry.
    pub fn set_model(&self, model: Model) -> Result<(), SdkError> {
        lock(&self.shared.session_manager).append_model_change(&model.provider, &model.id)?;
        self.agent.set_model(model);
        Ok(())
    }

    /// The thinking level.
    pub fn thinking_level(&self) -> ThinkingLevel {
        self.agent.with_state(|s| s.thinking_level)
    }

    /// Sets the thinking level and records a `thinking_level_change` entry.
    pub fn set_thinking_level(&self, level: ThinkingLevel) -> Result<(), SdkError> {
        lock(&self.shared.session_manager).append_thinking_level_change(level.as_str())?;
        self.agent.set_thinking_level(level);
        Ok(())
    }

    /// Whether a run is active.
    pub fn is_streaming(&self) -> bool {
        self.agent.with_state(|s| s.is_streaming)
    }

    /// The names of the active tools.
    pub fn active_tool_names(&self) -> Vec<String> {
        lock(&self.shared.active_tools).clone()
    }

    /// The names of every available tool.
    pub fn all_tool_names(&self) -> Vec<String> {
        lock(&self.shared.all_tools).iter().map(|t| t.name().to_owned()).collect()
    }

    /// Activates exactly these tools (unknown names are ignored). The next request declares the
    /// change with a system message (`toolsAdded` / `toolsRemoved`) and patches the `tools` section.
    pub fn set_active_tools_by_name(&self, names: &[&str]) {
        let known = self.all_tool_names();
        let names: Vec<String> =
            names.iter().filter(|n| known.iter().any(|k| k == *n)).map(|n| (*n).to_owned()).collect();
        *lock(&self.shared.active_tools) = names;
        self.agent.set_tools(self.shared.active_tool_objects());
    }

    /// Adds a tool to the available set (inactive until activated).
    pub fn register_tool(&self, tool: Arc<dyn AgentTool>) {
        let mut all = lock(&self.shared.all_tools);
        all.retain(|t| t.name() != tool.name());
        all.push(tool);
    }

    /// The system message the next prompt should start with: the whole prompt when the session
    /// has none yet, a `sections` patch when it changed, nothing otherwise.
    fn system_patch(&self) -> Result<Option<pi_ai::SystemMessage>, SdkError> {
        let mut options = lock(&self.shared.prompt_options).clone();
        options.selected_tools = Some(self.active_tool_names());
        let desired = build_system_prompt_message(&options)?;
        let current = current_system_message(&self.session_messages());
        let patch = match current {
            None => Some(desired),
            Some(head) => {
                let previous = head.sections.unwrap_or_default();
                let wanted = desired.sections.unwrap_or_default();
                diff_system_prompt_sections(&previous, &wanted)
                    .map(|sections| pi_ai::SystemMessage { sections: Some(sections), ..pi_ai::SystemMessage::new("") })
            }
        };
        Ok(patch.map(|mut m| {
            m.timestamp = now_ms();
            m
        }))
    }

    /// Sends a user prompt and runs until the agent settles. The user content is always an array
    /// (`[{type:"text"}, …images]`), as pi sends it.
    pub async fn prompt(&self, text: &str) -> Result<(), SdkError> {
        self.prompt_with(text, PromptOptions::default()).await
    }

    /// [`Self::prompt`] with images.
    pub async fn prompt_with(&self, text: &str, options: PromptOptions) -> Result<(), SdkError> {
        // Resources (issue 8): `/skill:name` and `/template` expansion, implemented in sdk/expand.rs.
        let text = &self.expand_user_input(text, options.expand_prompt_templates);
        let mut content = vec![UserBlock::Text(TextContent::new(text))];
        content.extend(options.images.into_iter().map(UserBlock::Image));
        self.run_messages(vec![AgentMessage::User(UserMessage::new(content))]).await
    }

    /// Sends several messages as one prompt (they may include system messages that patch the
    /// prompt, and custom messages), as `agent.prompt([...])` does in pi.
    pub async fn prompt_messages(&self, messages: Vec<CodingAgentMessage>) -> Result<(), SdkError> {
        self.run_messages(messages).await
    }

    /// Runs a prompt batch (system patch first when the prompt changed).
    pub(crate) async fn run_messages(&self, messages: Vec<CodingAgentMessage>) -> Result<(), SdkError> {
        if self.is_streaming() {
            return Err(SdkError::Busy);
        }
        let mut batch = Vec::with_capacity(messages.len() + 1);
        if let Some(patch) = self.system_patch()? {
            batch.push(AgentMessage::System(patch));
        }
        batch.extend(messages);
        self.agent.set_messages(self.session_messages());
        self.agent.set_tools(self.shared.active_tool_objects());
        self.agent.prompt(batch).await?;
        self.agent.set_messages(self.session_messages());
        Ok(())
    }

    /// Queues a steering message (injected after the current turn); `/skill:name` and `/template`
    /// input is expanded as in [`Self::prompt`].
    pub fn steer(&self, text: &str) {
        // Resources (issue 8): pi expands skill commands and templates in queued input too.
        let text = &self.expand_user_input(text, true);
        self.agent.steer(UserMessage::new(vec![UserBlock::Text(TextContent::new(text))]));
    }

    /// Queues a follow-up message (injected when the agent would stop), expanded like a prompt.
    pub fn follow_up(&self, text: &str) {
        // Resources (issue 8): pi expands skill commands and templates in queued input too.
        let text = &self.expand_user_input(text, true);
        self.agent.follow_up(UserMessage::new(vec![UserBlock::Text(TextContent::new(text))]));
    }

    /// Aborts the run and waits until the agent is idle.
    pub async fn abort(&self) {
        self.agent.abort();
        self.agent.wait_for_idle().await;
    }

    /// Resolves when no run is active.
    pub async fn wait_for_idle(&self) {
        self.agent.wait_for_idle().await;
    }

    /// The text of the last assistant message, if any.
    pub fn get_last_assistant_text(&self) -> Option<String> {
        self.messages().iter().rev().find_map(|m| m.as_assistant().map(|a| a.text()))
    }

    /// The session file, once something was written.
    pub fn session_file(&self) -> Option<std::path::PathBuf> {
        self.session_manager().session_file().map(|p| p.to_path_buf())
    }

    /// The session id.
    pub fn session_id(&self) -> String {
        self.session_manager().session_id().to_owned()
    }

    /// Appends a `custom` entry: state for extensions and UIs, **never sent to the model**
    /// (pi's `appendEntry`).
    pub fn append_entry(&self, custom_type: &str, data: Option<Value>) -> Result<String, SdkError> {
        let id = lock(&self.shared.session_manager).append_custom_entry(custom_type, data)?;
        self.shared.emit(&SessionEvent::EntryAppended { id: id.clone(), entry_type: "custom" });
        Ok(id)
    }

    /// Sends a `custom` message (pi's `sendMessage`): `content` reaches the model as a user
    /// message; `details` and `display` never do. With `trigger_turn` on an idle session a run
    /// starts; while streaming it is queued as steering; otherwise it is appended for the next
    /// request.
    pub async fn send_custom_message(&self, message: CustomRoleMessage, trigger_turn: bool) -> Result<(), SdkError> {
        let message = AgentMessage::Custom(CodingMessage::Custom(message));
        if self.is_streaming() {
            self.agent.steer(message);
            return Ok(());
        }
        if trigger_turn {
            return self.run_messages(vec![message]).await;
        }
        self.shared.persist(&message);
        self.agent.set_messages(self.session_messages());
        Ok(())
    }

    /// Runs a user `!command` in the working directory and records it as a `bashExecution`
    /// message (`exclude_from_context`: visible to extensions and UIs, never to the model).
    pub async fn execute_bash(&self, command: &str, exclude_from_context: bool) -> Result<BashResult, SdkError> {
        let tool = crate::tools::bash_tool(&self.cwd);
        let mut args = Map::new();
        args.insert("command".into(), json!(command));
        let cancel = self.agent.signal().unwrap_or_default();
        let ctx = pi_agent_core::ToolContext::new(cancel.clone(), None);
        let outcome = tool.execute("user-bash", args, ctx).await;
        let (text, details, failed) = match &outcome {
            Ok(r) => (
                r.content.iter().filter_map(|b| b.as_text()).collect::<Vec<_>>().join("\n"),
                r.details.clone(),
                r.is_error,
            ),
            Err(e) => (e.message().to_owned(), Value::Null, true),
        };
        let result = parse_bash_outcome(&text, &details, failed, cancel.is_cancelled());
        let message = BashExecutionMessage {
            command: command.to_owned(),
            output: result.output.clone(),
            exit_code: result.exit_code,
            cancelled: result.cancelled,
            truncated: result.truncated,
            full_output_path: result.full_output_path.clone(),
            timestamp: now_ms(),
            exclude_from_context: exclude_from_context.then_some(true),
            ..Default::default()
        };
        self.shared.persist(&AgentMessage::Custom(CodingMessage::BashExecution(message)));
        self.agent.set_messages(self.session_messages());
        Ok(result)
    }

    /// Moves the session leaf to `entry_id` (pi's tree navigation without a summary) and refreshes
    /// the agent's transcript.
    pub fn navigate_tree(&self, entry_id: &str) -> Result<(), SdkError> {
        lock(&self.shared.session_manager).branch(entry_id)?;
        self.agent.set_messages(self.session_messages());
        Ok(())
    }

    /// Aborts any run and drops every listener.
    pub async fn dispose(&self) {
        self.abort().await;
        lock(&self.shared.listeners).clear();
    }
}

/// Reads the bash tool's result back into a [`BashResult`].
fn parse_bash_outcome(text: &str, details: &Value, failed: bool, cancelled: bool) -> BashResult {
    let full_output_path = details.get("fullOutputPath").and_then(Value::as_str).map(str::to_owned);
    let truncated =
        details.get("truncation").is_some_and(|t| t.get("truncated").and_then(Value::as_bool) == Some(true));
    // The tool appends "\n\nCommand exited with code N" to a failing command's output.
    let (output, exit_code) = match text.rsplit_once("\n\nCommand exited with code ") {
        Some((out, code)) if failed => (out.to_owned(), code.trim().parse::<i64>().ok()),
        _ => (text.to_owned(), if failed { None } else { Some(0) }),
    };
    BashResult { output, exit_code, cancelled, truncated, full_output_path }
}
