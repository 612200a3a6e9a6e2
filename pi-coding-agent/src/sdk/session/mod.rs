//! `AgentSession`: an [`Agent`] bound to a [`SessionManager`], the coding tools, the prompt and
//! the extensions, as pi 1.6.0's `AgentSession` (`dist/core/agent-session.js`).
//!
//! - Every agent event reaches the extensions first (`message_end` handlers may replace the
//!   message), then the public listeners; a finished message is then persisted ([`events`]).
//! - Before every request the context is rebuilt from the session (compaction and context edits
//!   apply), so the session, not the agent's copy, decides what the model sees.
//! - The first prompt records the system prompt as the transcript's first system message
//!   (`sections`, tool declarations); later prompts append a `sections` patch when the prompt
//!   changed, and tool changes are declared by the agent loop's tool diff.
//!
//! One concept per module: [`prompt`] (input event, `before_agent_start`, the run loop),
//! [`messages`] (`send_message` delivery, steering), [`bash`] (`!cmd` and `user_bash`),
//! [`compaction`] (manual and automatic), [`retry`] (auto-retry), [`tree`] (tree navigation),
//! [`switching`] (new session, switch, fork), [`stats`].

mod bash;
mod bash_exec;
mod boundary;
pub(crate) mod cache_warming;
mod compaction;
mod discover;
mod event;
mod events;
mod expand_input;
mod known_models;
mod loadout;
mod messages;
mod nested;
mod prompt;
mod provider_errors;
mod request_body;
mod retry;
mod settings;
mod stats;
mod switching;
mod tree;
mod virtual_route;
pub(crate) use known_models::{extension_model, session_models};
pub(crate) use virtual_route::branch_selection;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use pi_agent_core::{
    Agent, AgentTool, BoxError, PrepareRequestContext, RequestUpdate, StreamFn, TurnHooks, Unsubscribe,
};
use pi_ai::options::StreamOptions;
use pi_ai::{AssistantMessage, Model, ThinkingLevel};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use bash::BashResult;
pub use compaction::CompactOutcome;
pub use discover::{ExtensionTheme, extension_themes};
pub use event::{CompactionEnd, CompactionReason, SessionEvent};
pub(crate) use loadout::hide_declarations;
pub use messages::QueueDisposition;
pub(crate) use messages::custom_message;
pub(crate) use nested::NestedCall;
pub use prompt::{PreflightCallback, PromptAuthCheck, PromptDisposition, PromptOptions};
pub use provider_errors::{is_context_overflow, is_retryable_assistant_error};
pub use settings::{RetrySettings, SessionSettings, ShellSettings};
pub use stats::{ContextUsage, SessionStats, TokenStats};
pub use switching::{ForkMessage, ForkOutcome, SwitchOutcome};
pub use tree::{NavigateTreeOptions, NavigateTreeOutcome};

use super::error::SdkError;
use super::system_prompt::SystemPromptOptions;
use crate::extensions::{ExtensionRunner, NotifyEvent};
use crate::messages::{CodingAgentMessage, CodingMessage};
use crate::session::SessionManager;
use crate::settings::{SettingsError, SettingsManager, SettingsScope};

type Listener = Arc<dyn Fn(&SessionEvent) + Send + Sync>;

/// A call made while `agent_settled` was emitted, run after it on the session.
pub(crate) type DeferredAction =
    Box<dyn FnOnce(AgentSession) -> futures::future::BoxFuture<'static, Result<(), SdkError>> + Send>;

/// What a run, a compaction or a retry is doing (pi's private `_…` fields of `AgentSession`).
#[derive(Default)]
pub(crate) struct RunState {
    /// A prompt run (`_startRun`) is active, from preparation to `agent_settled`.
    pub(crate) run_active: bool,
    /// Active tools changed during a run (e.g. by `tool_search`): the next request of the run
    /// declares them, as pi's loop reads the live loadout.
    pub(crate) pending_tools: Option<Vec<Arc<dyn AgentTool>>>,
    /// Declared tools whose declarations requests leave out (pi's `_hiddenDeclarations`, from the
    /// declared tools' `prepare_loadout` hooks).
    pub(crate) hidden_declarations: Vec<String>,
    /// The nested tool calls of the run's tool calls (pi's `NestedToolCallRunner` scopes).
    pub(crate) nested: nested::NestedCalls,
    /// `nestedCalls` records taken at a tool result's `message_start`, for its `message_end`.
    pub(crate) nested_records: std::collections::HashMap<String, nested::NestedRecord>,
    /// `abort()` was called during the active run.
    pub(crate) abort_requested: bool,
    /// 0-based turn index of the run, for `turn_start` / `turn_end`.
    pub(crate) turn_index: u64,
    /// `send_message(deliver_as: next_turn)` messages, prepended to the next prompt.
    pub(crate) pending_next_turn: Vec<CodingAgentMessage>,
    /// Custom messages sent with `trigger_turn: false` while streaming, appended at `turn_end`.
    pub(crate) pending_custom: Vec<CodingAgentMessage>,
    /// `!cmd` results recorded while streaming, appended when the run ends.
    pub(crate) pending_bash: Vec<CodingAgentMessage>,
    /// Cancels of the running user `!cmd`s (pi's `_bashAbortControllers`), by a run number.
    pub(crate) bash_cancels: Vec<(u64, CancellationToken)>,
    /// The number of the next user `!cmd`.
    pub(crate) next_bash: u64,
    /// `agent_settled` is being emitted (pi's `_isEmittingAgentSettled`): prompts and runs
    /// started meanwhile are deferred until it has reached every handler and listener.
    pub(crate) emitting_settled: bool,
    /// The calls deferred while `agent_settled` was emitted (pi's `_deferredSettledActions`).
    pub(crate) deferred_settled: Vec<DeferredAction>,
    /// The system prompt a `before_agent_start` handler forced for this run.
    pub(crate) forced_system_prompt: Option<String>,
    /// The last assistant message of the current low-level run.
    pub(crate) last_assistant: Option<AssistantMessage>,
    /// The virtual selection the run's latest request was routed from, and the model it was
    /// routed to (the loop keeps the routed model for the rest of the run; pi routes every
    /// request from the selection).
    pub(crate) routed: Option<(Model, ThinkingLevel, Model)>,
    /// The failed response an auto-retry repeats, for a virtual model's router (`failed`).
    pub(crate) retry_failed: Option<crate::extensions::RoutedPair>,
    /// Auto-retry attempt (0 when not retrying).
    pub(crate) retry_attempt: u32,
    /// Cancels the retry back-off sleep.
    pub(crate) retry_cancel: Option<CancellationToken>,
    /// Cancels a running manual compaction (pi's `_compactionAbortController`).
    pub(crate) compaction_cancel: Option<CancellationToken>,
    /// Cancels a running threshold or overflow compaction (pi's `_autoCompactionAbortController`).
    pub(crate) auto_compaction_cancel: Option<CancellationToken>,
    /// Cancels a running branch summary.
    pub(crate) branch_summary_cancel: Option<CancellationToken>,
    /// Overflow recovery already compacted once for this prompt.
    pub(crate) overflow_recovery_attempted: bool,
    /// The assistant message being streamed, for `message_update` handlers.
    pub(crate) streaming_partial: Option<pi_ai::PartialMessage>,
    /// Texts of queued steering messages (pi's `_steeringMessages`).
    pub(crate) steering_texts: Vec<String>,
    /// Texts of queued follow-up messages (pi's `_followUpMessages`).
    pub(crate) follow_up_texts: Vec<String>,
    /// The first failure to write the session file, not yet reported (see
    /// `AgentSession::take_persist_error`).
    pub(crate) persist_error: Option<String>,
    /// How the last turn ended (pi's `_lastActivityOutcome`), for `agent_before_settle`.
    pub(crate) last_outcome: crate::extensions::ActivityOutcome,
    /// `turn_end` already reached the extensions from `finish_turn` for the turn ending now.
    pub(crate) turn_end_dispatched: bool,
}

pub(crate) struct SessionShared {
    pub(crate) session_manager: Mutex<SessionManager>,
    /// Copy-on-write: an event is delivered to a snapshot taken without copying the list.
    listeners: Mutex<Arc<Vec<(u64, Listener)>>>,
    next_listener: AtomicU64,
    /// The tool registry. The active tools are the agent's tools (`agent.state.tools` in pi), so a
    /// direct change to them sticks.
    pub(crate) all_tools: Mutex<Vec<Arc<dyn AgentTool>>>,
    pub(crate) prompt_options: Mutex<SystemPromptOptions>,
    /// Prompt templates for `/name args` expansion (see `sdk/expand.rs`).
    pub(crate) prompt_templates: Mutex<Vec<super::prompt_templates::PromptTemplate>>,
    pub(crate) runner: Option<Arc<ExtensionRunner>>,
    /// The request function, also used for summaries.
    pub(crate) stream_fn: StreamFn,
    /// The base request options (API key, headers) summaries reuse.
    pub(crate) stream_options: StreamOptions,
    pub(crate) settings: Mutex<SessionSettings>,
    /// The settings files (or the SDK user's in-memory settings) the session reads and writes.
    pub(crate) settings_manager: Arc<SettingsManager>,
    /// The shell of user `!cmd`s.
    pub(crate) shell: ShellSettings,
    /// Models a switched session may restore (see `CreateAgentSessionOptions::models`).
    pub(crate) models: Vec<Model>,
    /// pi's `modelFallbackMessage` of the last session switch.
    pub(crate) model_fallback_message: Mutex<Option<String>>,
    pub(crate) state: Mutex<RunState>,
    /// Signalled whenever a run settles or a compaction ends.
    pub(crate) idle: tokio::sync::Notify,
    /// Tasks the session spawned (detached extension events and actions), awaited by `dispose`.
    pub(crate) tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The error listener `bind_extensions` registered (removed by `dispose`).
    pub(crate) error_listener: Mutex<Option<crate::extensions::ErrorListenerHandle>>,
    /// The context of the agent's last request, as its stream function received it (after
    /// `transform_context`, `convert_to_llm` and `normalize_context`): the interactive `/context`.
    pub(crate) last_request: Arc<Mutex<Option<pi_ai::transcript::TranscriptContext>>>,
    /// The `Retry-After` of the last failed 429/503 answer (see [`RetryAfter`]).
    pub(crate) retry_after: RetryAfter,
    /// The prompt cache warmer (see `sdk/cache_warmer`).
    pub(crate) cache_warmer: Arc<crate::sdk::cache_warmer::CacheWarmer>,
    /// The session's agent, without keeping it alive (its hooks hold this state).
    pub(crate) agent: std::sync::OnceLock<pi_agent_core::WeakAgent<CodingMessage>>,
    /// What an extension's `ctx.shutdown()` does (the mode's; none in print mode, as pi).
    pub(crate) shutdown_handler: Mutex<Option<Arc<dyn Fn() + Send + Sync>>>,
    /// Theme files `resources_discover` handlers returned (see `discover.rs`).
    pub(crate) extension_themes: Mutex<Vec<std::path::PathBuf>>,
    /// Whether a prompt may go to the current model (see [`PromptAuthCheck`]).
    pub(crate) prompt_auth: Mutex<Option<PromptAuthCheck>>,
}

/// The server-requested delay of the last failed 429/503 response, recorded by the
/// `on_error_response` hook the session installs and taken by the next auto-retry.
#[derive(Clone, Debug, Default)]
pub(crate) struct RetryAfter(Arc<Mutex<Option<std::time::Duration>>>);

impl RetryAfter {
    /// The hook recording it (chained before `user`'s own hook, if any).
    pub(crate) fn hook(&self, user: Option<pi_ai::options::ErrorResponseHook>) -> pi_ai::options::ErrorResponseHook {
        let cell = self.0.clone();
        Arc::new(move |response: &pi_ai::options::ProviderResponse| {
            let wait = matches!(response.status, 429 | 503)
                .then(|| pi_ai::http::server_retry_delay(&response.headers))
                .flatten();
            *lock(&cell) = wait;
            if let Some(user) = &user {
                user(response);
            }
        })
    }

    /// Takes the recorded delay.
    pub(crate) fn take(&self) -> Option<std::time::Duration> {
        lock(&self.0).take()
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What [`SessionShared::new`] needs.
pub(crate) struct SharedParts {
    pub(crate) session_manager: SessionManager,
    pub(crate) all_tools: Vec<Arc<dyn AgentTool>>,
    pub(crate) prompt_options: SystemPromptOptions,
    pub(crate) runner: Option<Arc<ExtensionRunner>>,
    pub(crate) stream_fn: StreamFn,
    pub(crate) stream_options: StreamOptions,
    pub(crate) models: Vec<Model>,
    pub(crate) settings: SessionSettings,
    pub(crate) settings_manager: Arc<SettingsManager>,
    pub(crate) shell: ShellSettings,
    pub(crate) retry_after: RetryAfter,
}

impl SessionShared {
    pub(crate) fn new(parts: SharedParts) -> Self {
        let mut session_manager = parts.session_manager;
        // The session's writes and fsyncs run on the manager's writer thread, never on an async
        // worker; `persist` awaits them before the events that depend on them. A session without
        // a file (`--no-session`) never writes, so it starts no thread.
        if session_manager.is_persisted()
            && let Err(e) = session_manager.write_in_background()
        {
            tracing::warn!(error = %e, "session writes stay on the caller's thread");
        }
        SessionShared {
            session_manager: Mutex::new(session_manager),
            listeners: Mutex::new(Arc::new(Vec::new())),
            next_listener: AtomicU64::new(1),
            all_tools: Mutex::new(parts.all_tools),
            prompt_options: Mutex::new(parts.prompt_options),
            prompt_templates: Mutex::new(Vec::new()),
            runner: parts.runner,
            stream_fn: parts.stream_fn,
            stream_options: parts.stream_options,
            settings: Mutex::new(parts.settings),
            settings_manager: parts.settings_manager,
            shell: parts.shell,
            models: parts.models,
            model_fallback_message: Mutex::new(None),
            state: Mutex::new(RunState::default()),
            idle: tokio::sync::Notify::new(),
            error_listener: Mutex::new(None),
            tasks: Mutex::new(Vec::new()),
            last_request: Arc::new(Mutex::new(None)),
            retry_after: parts.retry_after,
            cache_warmer: Arc::new(crate::sdk::cache_warmer::CacheWarmer::new()),
            agent: std::sync::OnceLock::new(),
            shutdown_handler: Mutex::new(None),
            extension_themes: Mutex::new(Vec::new()),
            prompt_auth: Mutex::new(None),
        }
    }

    pub(crate) fn emit(&self, event: &SessionEvent) {
        let listeners = {
            let registered = lock(&self.listeners);
            if registered.is_empty() {
                return;
            }
            Arc::clone(&registered)
        };
        for (_, l) in listeners.iter() {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l(event))).is_err() {
                tracing::warn!("a session listener panicked; it keeps its registration");
            }
        }
    }

    /// Spawns `work` on the current runtime and tracks it, so `dispose` waits for it. Without a
    /// runtime there is nothing to run it on: it is dropped, as pi drops a detached promise whose
    /// process is exiting.
    pub(crate) fn spawn_tracked(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("no async runtime: a detached session task was not run");
            return;
        };
        let mut tasks = lock(&self.tasks);
        tasks.retain(|t| !t.is_finished());
        tasks.push(handle.spawn(work));
    }

    /// Awaits the session-file writes queued so far (on the manager's writer thread). A failure
    /// stops persisting (the file stays a valid prefix of the session), is logged, and is kept
    /// for [`AgentSession::take_persist_error`], which the modes report.
    pub(crate) async fn settle_writes(&self) -> Result<(), crate::session::SessionError> {
        let pending = lock(&self.session_manager).take_pending_writes();
        if pending.is_empty() {
            return Ok(());
        }
        let outcome = pending.wait().await;
        if let Err(e) = &outcome {
            lock(&self.session_manager).stop_persisting();
            tracing::error!(error = %e, "could not persist the session");
            self.run_state().persist_error.get_or_insert_with(|| e.to_string());
        }
        outcome
    }

    /// [`Self::settle_writes`] for a synchronous caller: a tracked task awaits the writes
    /// (`dispose` waits for it), so a failure still reaches the user.
    pub(crate) fn settle_writes_later(self: &Arc<Self>) {
        let shared = self.clone();
        self.spawn_tracked(async move {
            // The failure was recorded for `take_persist_error`.
            let _ = shared.settle_writes().await;
        });
    }

    /// The registered tools with these names, in this order (unknown names are skipped).
    pub(crate) fn tools_named(&self, names: &[String]) -> Vec<Arc<dyn AgentTool>> {
        let all = lock(&self.all_tools);
        names.iter().filter_map(|name| all.iter().find(|t| t.name() == name).cloned()).collect()
    }

    pub(crate) fn run_state(&self) -> MutexGuard<'_, RunState> {
        lock(&self.state)
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
        ctx: PrepareRequestContext<'_, CodingMessage>,
        _cancel: &CancellationToken,
    ) -> Result<Option<RequestUpdate<CodingMessage>>, BoxError> {
        // The working context is replaced only when it is not already the session's (a resumed
        // session's context holds every message: a copy of it is not made for nothing).
        let mut messages = {
            let sm = lock(&self.shared.session_manager);
            (!sm.context_is(ctx.messages)).then(|| sm.build_session_context().messages)
        };
        let current = messages.as_deref().unwrap_or(ctx.messages);
        let routed = virtual_route::route_request(&self.shared, ctx.model, ctx.thinking_level, current).await?;
        // Under a virtual selection the threshold is the routed model's (pi's `prepareRequest`).
        if let Some((routed, _)) = &routed
            && virtual_route::compact_for_route(&self.shared, routed).await
        {
            messages = Some(lock(&self.shared.session_manager).build_session_context().messages);
        }
        let (model, thinking_level) = routed.map_or((None, None), |(m, l)| (Some(m), Some(l)));
        Ok(Some(RequestUpdate { messages, model, thinking_level, ..Default::default() }))
    }

    /// `turn_end` reaches the extensions here, before the agent's `turn_end` event (pi's
    /// `finishTurn`): a handler may append entries and ask for one more request.
    async fn finish_turn(
        &self,
        turn: pi_agent_core::AgentTurnContext<'_, CodingMessage>,
        _cancel: &CancellationToken,
    ) -> Result<Option<pi_agent_core::TurnDecision>, BoxError> {
        let turn_index = {
            let mut st = self.shared.run_state();
            st.turn_end_dispatched = true;
            st.turn_index
        };
        let again = boundary::dispatch_turn_end(&self.shared, turn_index, turn.message, turn.tool_results).await;
        Ok(again.then_some(pi_agent_core::TurnDecision::Continue))
    }

    /// Tools activated during the run (e.g. by `tool_search`) are declared from the next turn on.
    async fn prepare_next_turn(
        &self,
        _turn: pi_agent_core::AgentTurnContext<'_, CodingMessage>,
        _cancel: &CancellationToken,
    ) -> Result<Option<pi_agent_core::NextTurnUpdate<CodingMessage>>, BoxError> {
        let Some(tools) = self.shared.run_state().pending_tools.take() else { return Ok(None) };
        let update = RequestUpdate { tools: Some(tools), ..Default::default() };
        Ok(Some(pi_agent_core::NextTurnUpdate { update, messages: Vec::new() }))
    }
}

/// A coding-agent session: the agent, its session file, tools, prompt and extensions.
#[derive(Clone)]
pub struct AgentSession {
    pub(crate) agent: Agent<CodingMessage>,
    pub(crate) shared: Arc<SessionShared>,
    pub(crate) cwd: String,
}

impl AgentSession {
    pub(crate) fn new(agent: Agent<CodingMessage>, shared: Arc<SessionShared>, cwd: String) -> Self {
        let session = AgentSession { agent, shared, cwd };
        events::install(&session);
        session
    }

    /// The extension runner (present when extensions were loaded).
    pub fn extension_runner(&self) -> Option<&Arc<ExtensionRunner>> {
        self.shared.runner.as_ref()
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

    /// Runs `f` on the session manager under its lock. The lock cannot outlive the call, so it
    /// is never held across an `.await`; `f` must not block (no I/O waits, no `block_on`).
    pub fn with_session_manager<R>(&self, f: impl FnOnce(&mut SessionManager) -> R) -> R {
        f(&mut lock(&self.shared.session_manager))
    }

    /// The session manager, locked until the guard drops: for the session's own synchronous
    /// sections only (never held across an `.await`; clippy's `await_holding_lock` checks it).
    /// Users of the SDK get [`AgentSession::with_session_manager`] and the getters instead: a
    /// guard handed out could be held across an `.await` and stall every event of the session.
    pub(crate) fn lock_session_manager(&self) -> MutexGuard<'_, SessionManager> {
        lock(&self.shared.session_manager)
    }

    /// The session's name (its latest `session_info` entry).
    pub fn session_name(&self) -> Option<String> {
        self.with_session_manager(|sm| sm.session_name())
    }

    /// The id of the current leaf entry (`None` in an empty session).
    pub fn leaf_id(&self) -> Option<String> {
        self.with_session_manager(|sm| sm.leaf_id().map(str::to_owned))
    }

    /// The entries from the root to `from` (the leaf when `None`), cloned.
    pub fn branch(&self, from: Option<&str>) -> Vec<crate::session::SessionEntry> {
        self.with_session_manager(|sm| sm.get_branch(from).into_iter().cloned().collect())
    }

    /// Registers a listener for session events; returns a handle that removes it.
    pub fn subscribe(&self, listener: impl Fn(&SessionEvent) + Send + Sync + 'static) -> Unsubscribe {
        let id = self.shared.next_listener.fetch_add(1, Ordering::Relaxed);
        Arc::make_mut(&mut lock(&self.shared.listeners)).push((id, Arc::new(listener)));
        let weak = Arc::downgrade(&self.shared);
        Unsubscribe::new(move || {
            if let Some(s) = weak.upgrade() {
                Arc::make_mut(&mut lock(&s.listeners)).retain(|(i, _)| *i != id);
            }
        })
    }

    /// The agent's transcript (refreshed from the session after every run).
    pub fn messages(&self) -> Vec<CodingAgentMessage> {
        self.agent.messages()
    }

    /// pi's `systemPrompt` getter: the prompt the session's options build now (active tools,
    /// resources, skills), or the prompt a `before_agent_start` handler forced for the running
    /// prompt. It is what the next request starts from, also before the first prompt and right
    /// after a tool change. The prompt the transcript holds is
    /// [`AgentSession::transcript_system_prompt`].
    pub fn system_prompt(&self) -> String {
        if let Some(forced) = self.shared.run_state().forced_system_prompt.clone() {
            return forced;
        }
        self.desired_system_prompt().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the system prompt options are invalid");
            String::new()
        })
    }

    /// The system prompt as the transcript replays it (its system messages and `sections`
    /// patches): what the last request was sent, empty before the first prompt.
    pub fn transcript_system_prompt(&self) -> String {
        self.transcript_system_message().map(|m| pi_ai::transcript::system_message_text(&m)).unwrap_or_default()
    }

    /// The system message the transcript replays to, read from the session's branch in place
    /// (a large session's messages are not cloned for it).
    pub(crate) fn transcript_system_message(&self) -> Option<pi_ai::SystemMessage> {
        lock(&self.shared.session_manager).context_system_message()
    }

    pub(crate) fn session_messages(&self) -> Vec<CodingAgentMessage> {
        lock(&self.shared.session_manager).build_session_context().messages
    }

    /// The model.
    pub fn model(&self) -> Model {
        self.agent.with_state(|s| s.model.clone())
    }

    /// Switches the model and records a `model_change` entry; extensions hear `model_select`
    /// (source `set`) when the model changed.
    pub fn set_model(&self, model: Model) -> Result<(), SdkError> {
        let previous = self.model();
        lock(&self.shared.session_manager).append_model_change(&model.provider, &model.id)?;
        self.shared.settle_writes_later();
        self.agent.set_model(model.clone());
        if !previous.same_as(&model) {
            let payload = serde_json::json!({"model": model, "previousModel": previous, "source": "set"});
            self.emit_detached("model_select", payload);
        }
        Ok(())
    }

    /// pi's `setSessionName`: a `session_info` entry; listeners and extensions hear
    /// `session_info_changed`.
    pub fn set_session_name(&self, name: &str) -> Result<(), SdkError> {
        let current = {
            let mut sm = lock(&self.shared.session_manager);
            sm.append_session_info(name)?;
            sm.session_name()
        };
        self.shared.settle_writes_later();
        self.shared.emit(&SessionEvent::SessionInfoChanged { name: current.clone() });
        let mut payload = serde_json::Map::new();
        if let Some(name) = current {
            payload.insert("name".into(), Value::from(name));
        }
        self.emit_detached("session_info_changed", Value::Object(payload));
        Ok(())
    }

    /// Emits a notify event to the extensions without waiting (pi's `void runner.emit(…)`).
    pub(crate) fn emit_detached(&self, kind: &str, payload: Value) {
        let Some(runner) = self.shared.runner.clone() else { return };
        let payload = match payload {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        let event = NotifyEvent::Other { kind: kind.to_owned(), payload };
        self.shared.spawn_tracked(async move {
            runner.emit(event).await;
        });
    }

    /// The thinking level.
    pub fn thinking_level(&self) -> ThinkingLevel {
        self.agent.with_state(|s| s.thinking_level)
    }

    /// Sets the thinking level; when it changes, records a `thinking_level_change` entry,
    /// listeners hear `thinking_level_changed` and extensions `thinking_level_select`.
    pub fn set_thinking_level(&self, level: ThinkingLevel) -> Result<(), SdkError> {
        let previous = self.thinking_level();
        if previous == level {
            return Ok(());
        }
        lock(&self.shared.session_manager).append_thinking_level_change(level.as_str())?;
        self.shared.settle_writes_later();
        self.agent.set_thinking_level(level);
        self.shared.emit(&SessionEvent::ThinkingLevelChanged { level });
        let payload = serde_json::json!({"level": level.as_str(), "previousLevel": previous.as_str()});
        self.emit_detached("thinking_level_select", payload);
        Ok(())
    }

    /// The names of the active tools: the agent's tools, which are declared to the model (pi's
    /// `getActiveToolNames`).
    pub fn active_tool_names(&self) -> Vec<String> {
        self.agent.with_state(|s| s.tools.iter().map(|t| t.name().to_owned()).collect())
    }

    /// The names of every available tool.
    pub fn all_tool_names(&self) -> Vec<String> {
        lock(&self.shared.all_tools).iter().map(|t| t.name().to_owned()).collect()
    }

    /// Activates exactly these tools (unknown names are ignored). The next request declares the
    /// change with a system message (`toolsAdded` / `toolsRemoved`) and patches the `tools` section.
    /// As in pi, tools that stay active keep their place and newly activated ones follow in the
    /// order given.
    pub fn set_active_tools_by_name(&self, names: &[&str]) {
        let known = self.all_tool_names();
        let requested: Vec<&str> = names.iter().copied().filter(|n| known.iter().any(|k| k == n)).collect();
        let mut ordered: Vec<String> =
            self.active_tool_names().into_iter().filter(|n| requested.contains(&n.as_str())).collect();
        for name in requested {
            if !ordered.iter().any(|n| n == name) {
                ordered.push(name.to_owned());
            }
        }
        let tools = self.shared.declare_tools(&ordered);
        if self.is_streaming() {
            self.shared.run_state().pending_tools = Some(tools.clone());
        }
        self.agent.set_tools(tools);
    }

    /// Adds a tool to the available set (inactive until activated).
    pub fn register_tool(&self, tool: Arc<dyn AgentTool>) {
        let mut all = lock(&self.shared.all_tools);
        all.retain(|t| t.name() != tool.name());
        all.push(tool);
    }

    /// The text of the last assistant message, if any.
    pub fn get_last_assistant_text(&self) -> Option<String> {
        self.messages().iter().rev().find_map(|m| m.as_assistant().map(|a| a.text()))
    }

    /// The session file, once something was written.
    pub fn session_file(&self) -> Option<std::path::PathBuf> {
        self.lock_session_manager().session_file().map(|p| p.to_path_buf())
    }

    /// The session id.
    pub fn session_id(&self) -> String {
        self.lock_session_manager().session_id().to_owned()
    }

    /// The session settings (automatic compaction, retry).
    pub fn settings(&self) -> SessionSettings {
        *lock(&self.shared.settings)
    }

    /// The context the agent's last model request carried, exactly as the provider's stream
    /// function received it; `None` before the first request.
    pub fn last_request(&self) -> Option<pi_ai::transcript::TranscriptContext> {
        lock(&self.shared.last_request).clone()
    }

    /// The settings manager the session reads and writes (pi's `settingsManager`).
    pub fn settings_manager(&self) -> &Arc<SettingsManager> {
        &self.shared.settings_manager
    }

    /// Records a failed settings write where [`SettingsManager::drain_errors`] reports it, as
    /// pi's write queue does.
    fn settings_written(&self, result: Result<(), SettingsError>) {
        if let Err(error) = result {
            self.shared.settings_manager.record_error(SettingsScope::Global, error);
        }
    }

    /// pi's `setAutoCompactionEnabled`: the session and the global `compaction.enabled`.
    pub fn set_auto_compaction_enabled(&self, enabled: bool) {
        lock(&self.shared.settings).compaction.enabled = enabled;
        self.settings_written(self.shared.settings_manager.set_compaction_enabled(enabled));
    }

    /// pi's `setAutoRetryEnabled`: the session and the global `retry.enabled`.
    pub fn set_auto_retry_enabled(&self, enabled: bool) {
        lock(&self.shared.settings).retry.enabled = enabled;
        self.settings_written(self.shared.settings_manager.set_retry_enabled(enabled));
    }

    /// How queued steering messages are delivered.
    pub fn steering_mode(&self) -> pi_agent_core::QueueMode {
        self.agent.steering_mode()
    }

    /// How queued follow-up messages are delivered.
    pub fn follow_up_mode(&self) -> pi_agent_core::QueueMode {
        self.agent.follow_up_mode()
    }

    /// pi's `setSteeringMode`: the agent and the global `steeringMode`.
    pub fn set_steering_mode(&self, mode: pi_agent_core::QueueMode) {
        self.agent.set_steering_mode(mode);
        self.settings_written(self.shared.settings_manager.set_steering_mode(mode));
    }

    /// pi's `setFollowUpMode`: the agent and the global `followUpMode`.
    pub fn set_follow_up_mode(&self, mode: pi_agent_core::QueueMode) {
        self.agent.set_follow_up_mode(mode);
        self.settings_written(self.shared.settings_manager.set_follow_up_mode(mode));
    }

    /// Appends a `custom` entry: state for extensions and UIs, **never sent to the model**
    /// (pi's `appendEntry`).
    pub fn append_entry(&self, custom_type: &str, data: Option<Value>) -> Result<String, SdkError> {
        let (id, entry) = {
            let mut sm = lock(&self.shared.session_manager);
            let id = sm.append_custom_entry(custom_type, data)?;
            let entry = sm.entry(&id).cloned();
            (id, entry)
        };
        self.shared.settle_writes_later();
        self.shared.emit(&SessionEvent::EntryPersisted { id: id.clone(), entry_type: "custom" });
        // pi's `entry_appended` event, which its json and rpc modes put on the wire.
        if let Some(entry) = entry {
            self.shared.emit(&SessionEvent::EntryAppended { entry: Arc::new(entry) });
        }
        Ok(id)
    }

    /// pi's `_refreshFinalizedContext`: the agent's transcript from the session.
    /// Left alone when the agent already holds exactly the session's context (a resumed
    /// session's transcript is refreshed before every run: rebuilding it copies every message).
    pub(crate) fn refresh_context(&self) {
        let messages = {
            let sm = lock(&self.shared.session_manager);
            if self.agent.with_state(|s| sm.context_is(&s.messages)) {
                return;
            }
            sm.build_session_context().messages
        };
        self.agent.set_messages(messages);
    }

    /// Aborts any run and user `!cmd`, waits for the tasks the session spawned (detached
    /// extension events and actions), drops every listener, and releases what the providers keep
    /// for the session (cached Codex WebSockets).
    pub async fn dispose(&self) {
        self.shared.cache_warmer.cancel();
        self.abort_bash();
        self.abort().await;
        loop {
            let tasks = std::mem::take(&mut *lock(&self.shared.tasks));
            if tasks.is_empty() {
                break;
            }
            for task in tasks {
                if let Err(e) = task.await
                    && e.is_panic()
                {
                    tracing::warn!("a session task panicked");
                }
            }
        }
        // Whatever is still queued for the session file is on disk before `dispose` returns (a
        // failure was recorded for `take_persist_error`).
        let _ = self.shared.settle_writes().await;
        Arc::make_mut(&mut lock(&self.shared.listeners)).clear();
        if let Some(handle) = lock(&self.shared.error_listener).take() {
            handle.remove();
        }
        // The providers' per-session resources (the Codex WebSocket cache), as pi's
        // `cleanupSessionResources(sessionId)`.
        pi_ai::session_resources::cleanup_session_resources(&self.session_id()).await;
    }
}
