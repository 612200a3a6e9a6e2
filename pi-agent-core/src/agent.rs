//! The `Agent`: state, queues, listeners and the run lifecycle around the loop.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use futures::FutureExt;
use futures::future::BoxFuture;
use pi_ai::options::StreamOptions;
use pi_ai::transcript::{
    create_initial_system_message, current_system_message, current_system_prompt, to_tool_declaration,
};
use pi_ai::{
    AssistantBlock, AssistantMessage, ImageContent, Model, PartialMessage, StopReason, SystemMessage, TextContent,
    ThinkingLevel, UserBlock, UserMessage, now_ms,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{
    AgentContext, AgentLoopConfig, ApiKeyFn, EventSink, MessageSource, check_continue, run_agent_loop_continue,
    run_agent_loop_with,
};
use crate::event::AgentEvent;
use crate::hooks::{BoxError, ConvertToLlm, DefaultConvertToLlm, TransformContext};
use crate::message::{AgentMessage, CustomMessage, UnknownMessage};
use crate::stream_fn::StreamFn;
use crate::tool::AgentTool;
use crate::tool_exec::ToolExecution;
use crate::tool_hooks::ToolCallHooks;
use crate::turn_hooks::TurnHooks;

/// How a queue is drained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QueueMode {
    /// The oldest message per drain (pi's default).
    #[default]
    OneAtATime,
    /// Everything queued.
    All,
}

/// The message currently streaming: an assistant partial, or another message between its start and end.
#[derive(Clone, Debug)]
pub enum StreamingMessage<C> {
    /// The assistant response being streamed (updates applied).
    Assistant(PartialMessage),
    /// A non-assistant message between `message_start` and `message_end`.
    Other(AgentMessage<C>),
}

/// The agent's state. Listeners see it already updated for the event they receive.
#[derive(Clone)]
pub struct AgentState<C> {
    /// The model.
    pub model: Model,
    /// The requested thinking level.
    pub thinking_level: ThinkingLevel,
    /// The executable tools (the transcript declares them on the next request when they differ).
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// The transcript.
    pub messages: Vec<AgentMessage<C>>,
    /// True from run start until the run settled, `agent_end` listeners included.
    pub is_streaming: bool,
    /// The message between `message_start` and `message_end`.
    pub streaming_message: Option<StreamingMessage<C>>,
    /// Tool calls between `tool_execution_start` and `tool_execution_end`.
    pub pending_tool_calls: Vec<String>,
    /// The last failed turn's error text (cleared when a run starts).
    pub error_message: Option<String>,
}

impl<C: CustomMessage> AgentState<C> {
    /// The system prompt: a replay of the transcript's system messages. Read-only; change it by
    /// appending a system message (for example with `Agent::prompt`).
    pub fn system_prompt(&self) -> String {
        current_system_prompt(&self.messages)
    }

    /// The replayed system head (prompt, sections, current tools).
    pub fn system_message(&self) -> Option<SystemMessage> {
        current_system_message(&self.messages)
    }
}

/// What `Agent::prompt` accepts: text (with optional images), one message, or several.
#[derive(Clone, Debug)]
pub enum PromptInput<C> {
    /// A user text and images, sent as `[{type:"text"}, …images]`.
    Text(String, Vec<ImageContent>),
    /// Messages used as they are (may include system and custom messages; may be empty).
    Messages(Vec<AgentMessage<C>>),
}

impl<C> From<&str> for PromptInput<C> {
    fn from(text: &str) -> Self {
        PromptInput::Text(text.to_owned(), Vec::new())
    }
}

impl<C> From<String> for PromptInput<C> {
    fn from(text: String) -> Self {
        PromptInput::Text(text, Vec::new())
    }
}

impl<C> From<AgentMessage<C>> for PromptInput<C> {
    fn from(m: AgentMessage<C>) -> Self {
        PromptInput::Messages(vec![m])
    }
}

impl<C> From<Vec<AgentMessage<C>>> for PromptInput<C> {
    fn from(m: Vec<AgentMessage<C>>) -> Self {
        PromptInput::Messages(m)
    }
}

impl<C> From<UserMessage> for PromptInput<C> {
    fn from(m: UserMessage) -> Self {
        PromptInput::Messages(vec![AgentMessage::User(m)])
    }
}

/// Errors of the Agent's own API. Failures inside a run never surface here: they end the run
/// with an error message in the transcript.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// `prompt` while a run is active.
    #[error(
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    )]
    AlreadyPrompting,
    /// `continue` while a run is active.
    #[error("Agent is already processing. Wait for completion before continuing.")]
    AlreadyContinuing,
    /// `reset` while a run is active.
    #[error("Agent is already processing. Wait for completion before resetting.")]
    AlreadyResetting,
    /// `continue` with nothing to continue from.
    #[error("No messages to continue from")]
    NoMessages,
    /// `continue` after an assistant message with empty queues.
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
    /// A listener failed again while the failure path reported a first failure.
    #[error("{0}")]
    Listener(BoxError),
}

type SyncListener<C> = Arc<dyn Fn(&AgentEvent<C>) + Send + Sync>;
type AsyncListener<C> = Arc<dyn Fn(AgentEvent<C>) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync>;

#[derive(Clone)]
enum Listener<C> {
    Sync(SyncListener<C>),
    Async(AsyncListener<C>),
}

/// Hooks and options of an Agent; fixed for a run at its start.
#[derive(Clone)]
struct Hooks<C: CustomMessage> {
    stream_fn: StreamFn,
    convert_to_llm: Arc<dyn ConvertToLlm<C>>,
    transform_context: Option<Arc<dyn TransformContext<C>>>,
    get_api_key: Option<ApiKeyFn>,
    tool_hooks: Option<Arc<dyn ToolCallHooks<C>>>,
    turn_hooks: Option<Arc<dyn TurnHooks<C>>>,
    tool_execution: ToolExecution,
    stream_options: StreamOptions,
}

struct Inner<C: CustomMessage> {
    state: Mutex<AgentState<C>>,
    hooks: Mutex<Hooks<C>>,
    listeners: Mutex<Vec<(u64, Listener<C>)>>,
    next_listener: AtomicU64,
    steering: Mutex<VecDeque<AgentMessage<C>>>,
    follow_up: Mutex<VecDeque<AgentMessage<C>>>,
    steering_mode: Mutex<QueueMode>,
    follow_up_mode: Mutex<QueueMode>,
    active: Mutex<Option<CancellationToken>>,
    idle: watch::Sender<bool>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking listener cannot leave the state half-written (updates are single assignments),
    // so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Builds an [`Agent`].
pub struct AgentBuilder<C: CustomMessage = UnknownMessage> {
    model: Model,
    thinking_level: ThinkingLevel,
    system_prompt: Option<String>,
    tools: Vec<Arc<dyn AgentTool>>,
    messages: Vec<AgentMessage<C>>,
    hooks: Hooks<C>,
    steering_mode: QueueMode,
    follow_up_mode: QueueMode,
}

impl<C: CustomMessage> AgentBuilder<C> {
    /// The model.
    pub fn model(mut self, model: Model) -> Self {
        self.model = model;
        self
    }

    /// The thinking level.
    pub fn thinking_level(mut self, level: ThinkingLevel) -> Self {
        self.thinking_level = level;
        self
    }

    /// The initial system prompt (ignored when the initial messages already start with a system message).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The executable tools.
    pub fn tools(mut self, tools: Vec<Arc<dyn AgentTool>>) -> Self {
        self.tools = tools;
        self
    }

    /// The initial transcript.
    pub fn messages(mut self, messages: Vec<AgentMessage<C>>) -> Self {
        self.messages = messages;
        self
    }

    /// The required converter (default: [`DefaultConvertToLlm`], which drops custom roles).
    pub fn convert_to_llm(mut self, convert: impl ConvertToLlm<C> + 'static) -> Self {
        self.hooks.convert_to_llm = Arc::new(convert);
        self
    }

    /// The optional context transform.
    pub fn transform_context(mut self, transform: impl TransformContext<C> + 'static) -> Self {
        self.hooks.transform_context = Some(Arc::new(transform));
        self
    }

    /// Resolves an API key per provider before every request.
    pub fn get_api_key(mut self, f: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.hooks.get_api_key = Some(Arc::new(f));
        self
    }

    /// `before_tool_call` / `after_tool_call`.
    pub fn tool_hooks(mut self, hooks: Arc<dyn ToolCallHooks<C>>) -> Self {
        self.hooks.tool_hooks = Some(hooks);
        self
    }

    /// `finish_turn` / `prepare_request` / `prepare_next_turn`.
    pub fn turn_hooks(mut self, hooks: Arc<dyn TurnHooks<C>>) -> Self {
        self.hooks.turn_hooks = Some(hooks);
        self
    }

    /// Parallel (default) or sequential tool execution.
    pub fn tool_execution(mut self, mode: ToolExecution) -> Self {
        self.hooks.tool_execution = mode;
        self
    }

    /// Base stream options (API key, session id, budgets, retries, provider hooks).
    pub fn stream_options(mut self, options: StreamOptions) -> Self {
        self.hooks.stream_options = options;
        self
    }

    /// Steering queue mode.
    pub fn steering_mode(mut self, mode: QueueMode) -> Self {
        self.steering_mode = mode;
        self
    }

    /// Follow-up queue mode.
    pub fn follow_up_mode(mut self, mode: QueueMode) -> Self {
        self.follow_up_mode = mode;
        self
    }

    /// Builds the agent. The initial system message (prompt plus tool declarations) is prepended
    /// only when the messages do not already start with a system message.
    pub fn build(self) -> Agent<C> {
        let mut messages = self.messages;
        if !matches!(messages.first(), Some(AgentMessage::System(_))) {
            let declarations: Vec<pi_ai::Tool> =
                self.tools.iter().map(|t| to_tool_declaration(&t.declaration())).collect();
            if let Some(head) = create_initial_system_message(self.system_prompt.as_deref(), &declarations) {
                messages.insert(0, AgentMessage::System(head));
            }
        }
        let state = AgentState {
            model: self.model,
            thinking_level: self.thinking_level,
            tools: self.tools,
            messages,
            is_streaming: false,
            streaming_message: None,
            pending_tool_calls: Vec::new(),
            error_message: None,
        };
        let (idle, _) = watch::channel(true);
        Agent {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                hooks: Mutex::new(self.hooks),
                listeners: Mutex::new(Vec::new()),
                next_listener: AtomicU64::new(1),
                steering: Mutex::new(VecDeque::new()),
                follow_up: Mutex::new(VecDeque::new()),
                steering_mode: Mutex::new(self.steering_mode),
                follow_up_mode: Mutex::new(self.follow_up_mode),
                active: Mutex::new(None),
                idle,
            }),
        }
    }
}

/// A stateful agent: a transcript, tools, queues and listeners around the loop.
///
/// Cloning an `Agent` gives another handle to the same agent (for `abort` or `steer` from another
/// task while `prompt` runs).
///
/// ```
/// # async fn demo(stream_fn: pi_agent_core::StreamFn, model: pi_ai::Model) {
/// use pi_agent_core::{Agent, AgentEvent};
/// let agent: Agent = Agent::builder(model, stream_fn).system_prompt("You are terse.").build();
/// agent.subscribe(|event: &AgentEvent| tracing::info!(kind = event.kind()));
/// agent.prompt("hello").await.unwrap();
/// assert_eq!(agent.with_state(|s| s.system_prompt()), "You are terse.");
/// # }
/// ```
pub struct Agent<C: CustomMessage = UnknownMessage> {
    inner: Arc<Inner<C>>,
}

impl<C: CustomMessage> Clone for Agent<C> {
    fn clone(&self) -> Self {
        Agent { inner: self.inner.clone() }
    }
}

/// Removes a listener when called.
pub struct Unsubscribe(Box<dyn FnOnce() + Send>);

impl Unsubscribe {
    /// A handle that runs `f` when unsubscribing.
    pub fn new(f: impl FnOnce() + Send + 'static) -> Self {
        Unsubscribe(Box::new(f))
    }

    /// Removes the listener.
    pub fn unsubscribe(self) {
        (self.0)()
    }
}

impl<C: CustomMessage> Agent<C> {
    /// A builder with the model and the stream function; everything else has pi's defaults.
    pub fn builder(model: Model, stream_fn: StreamFn) -> AgentBuilder<C> {
        AgentBuilder {
            model,
            thinking_level: ThinkingLevel::Off,
            system_prompt: None,
            tools: Vec::new(),
            messages: Vec::new(),
            hooks: Hooks {
                stream_fn,
                convert_to_llm: Arc::new(DefaultConvertToLlm),
                transform_context: None,
                get_api_key: None,
                tool_hooks: None,
                turn_hooks: None,
                tool_execution: ToolExecution::Parallel,
                stream_options: StreamOptions::default(),
            },
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
        }
    }

    /// Reads the state under its lock. Do not call other `Agent` methods from inside `f`.
    pub fn with_state<R>(&self, f: impl FnOnce(&AgentState<C>) -> R) -> R {
        f(&lock(&self.inner.state))
    }

    /// A copy of the transcript.
    pub fn messages(&self) -> Vec<AgentMessage<C>> {
        self.with_state(|s| s.messages.clone())
    }

    /// The system prompt, replayed from the transcript.
    pub fn system_prompt(&self) -> String {
        self.with_state(|s| s.system_prompt())
    }

    /// Replaces the transcript (takes effect at the next run).
    pub fn set_messages(&self, messages: Vec<AgentMessage<C>>) {
        lock(&self.inner.state).messages = messages;
    }

    /// Replaces the executable tools; the next request declares the change in the transcript.
    pub fn set_tools(&self, tools: Vec<Arc<dyn AgentTool>>) {
        lock(&self.inner.state).tools = tools;
    }

    /// Sets the model for the next run.
    pub fn set_model(&self, model: Model) {
        lock(&self.inner.state).model = model;
    }

    /// Sets the thinking level for the next run.
    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        lock(&self.inner.state).thinking_level = level;
    }

    /// Replaces the converter.
    pub fn set_convert_to_llm(&self, convert: impl ConvertToLlm<C> + 'static) {
        lock(&self.inner.hooks).convert_to_llm = Arc::new(convert);
    }

    /// Replaces (or removes) the context transform.
    pub fn set_transform_context(&self, transform: Option<Arc<dyn TransformContext<C>>>) {
        lock(&self.inner.hooks).transform_context = transform;
    }

    /// Registers a listener, called for every event after the state was updated, in registration
    /// order. A panicking listener ends the run through the failure path.
    pub fn subscribe(&self, listener: impl Fn(&AgentEvent<C>) + Send + Sync + 'static) -> Unsubscribe {
        self.add_listener(Listener::Sync(Arc::new(listener)))
    }

    /// Registers an async listener; the run waits for it (a barrier, as in pi).
    pub fn subscribe_async(
        &self,
        listener: impl Fn(AgentEvent<C>) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync + 'static,
    ) -> Unsubscribe {
        self.add_listener(Listener::Async(Arc::new(listener)))
    }

    fn add_listener(&self, listener: Listener<C>) -> Unsubscribe {
        let id = self.inner.next_listener.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.listeners).push((id, listener));
        let inner = Arc::downgrade(&self.inner);
        Unsubscribe(Box::new(move || {
            if let Some(inner) = inner.upgrade() {
                lock(&inner.listeners).retain(|(i, _)| *i != id);
            }
        }))
    }

    /// Queues a steering message, injected after the current turn.
    pub fn steer(&self, message: impl Into<AgentMessage<C>>) {
        lock(&self.inner.steering).push_back(message.into());
    }

    /// Queues a follow-up message, injected when the agent would otherwise stop.
    pub fn follow_up(&self, message: impl Into<AgentMessage<C>>) {
        lock(&self.inner.follow_up).push_back(message.into());
    }

    /// Empties the steering queue.
    pub fn clear_steering_queue(&self) {
        lock(&self.inner.steering).clear();
    }

    /// Empties the follow-up queue.
    pub fn clear_follow_up_queue(&self) {
        lock(&self.inner.follow_up).clear();
    }

    /// Empties both queues.
    pub fn clear_all_queues(&self) {
        self.clear_steering_queue();
        self.clear_follow_up_queue();
    }

    /// Whether a queue holds messages.
    pub fn has_queued_messages(&self) -> bool {
        !lock(&self.inner.steering).is_empty() || !lock(&self.inner.follow_up).is_empty()
    }

    /// The next drain without consuming it: the steering batch if any, else the follow-up batch.
    pub fn peek_queued_messages(&self) -> Vec<AgentMessage<C>> {
        let peek = |q: &VecDeque<AgentMessage<C>>, mode: QueueMode| match mode {
            QueueMode::All => q.iter().cloned().collect(),
            QueueMode::OneAtATime => q.front().cloned().into_iter().collect::<Vec<_>>(),
        };
        let steering = peek(&lock(&self.inner.steering), self.steering_mode());
        if !steering.is_empty() {
            return steering;
        }
        peek(&lock(&self.inner.follow_up), self.follow_up_mode())
    }

    /// The steering queue mode.
    pub fn steering_mode(&self) -> QueueMode {
        *lock(&self.inner.steering_mode)
    }

    /// Sets the steering queue mode (applies at the next drain).
    pub fn set_steering_mode(&self, mode: QueueMode) {
        *lock(&self.inner.steering_mode) = mode;
    }

    /// The follow-up queue mode.
    pub fn follow_up_mode(&self) -> QueueMode {
        *lock(&self.inner.follow_up_mode)
    }

    /// Sets the follow-up queue mode.
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        *lock(&self.inner.follow_up_mode) = mode;
    }

    /// The active run's cancellation token, if a run is active.
    pub fn signal(&self) -> Option<CancellationToken> {
        lock(&self.inner.active).clone()
    }

    /// Cancels the active run (no-op when idle).
    pub fn abort(&self) {
        if let Some(token) = lock(&self.inner.active).as_ref() {
            token.cancel();
        }
    }

    /// Resolves when no run is active (after `agent_end` listeners).
    pub async fn wait_for_idle(&self) {
        let mut rx = self.inner.idle.subscribe();
        let _ = rx.wait_for(|idle| *idle).await;
    }

    /// Keeps only the replayed system head and clears runtime state and queues.
    pub fn reset(&self) -> Result<(), AgentError> {
        if lock(&self.inner.active).is_some() {
            return Err(AgentError::AlreadyResetting);
        }
        {
            let mut state = lock(&self.inner.state);
            let head = current_system_message(&state.messages);
            state.messages = head.map(AgentMessage::System).into_iter().collect();
            state.is_streaming = false;
            state.streaming_message = None;
            state.pending_tool_calls.clear();
            state.error_message = None;
        }
        self.clear_all_queues();
        Ok(())
    }

    /// Runs a prompt to completion. Failures inside the run do not surface here: they end the run
    /// with an error message in the transcript (see `AgentState::error_message`).
    pub async fn prompt(&self, input: impl Into<PromptInput<C>>) -> Result<(), AgentError> {
        let messages = match input.into() {
            PromptInput::Text(text, images) => {
                let mut content = vec![UserBlock::Text(TextContent::new(text))];
                content.extend(images.into_iter().map(UserBlock::Image));
                vec![AgentMessage::User(UserMessage::new(content))]
            }
            PromptInput::Messages(m) => m,
        };
        let cancel = self.begin_run(AgentError::AlreadyPrompting)?;
        self.run(cancel, RunKind::Prompt { messages, poll_steering: true }).await
    }

    /// Continues from the current transcript (pi's `continue()`): after an assistant message, runs
    /// queued steering or follow-up messages; otherwise makes a request from the existing context.
    #[doc(alias = "continue")]
    pub async fn continue_run(&self) -> Result<(), AgentError> {
        if lock(&self.inner.active).is_some() {
            return Err(AgentError::AlreadyContinuing);
        }
        let last_is_assistant = {
            let state = lock(&self.inner.state);
            if state.messages.iter().all(|m| matches!(m, AgentMessage::System(_))) {
                return Err(AgentError::NoMessages);
            }
            matches!(state.messages.last(), Some(AgentMessage::Assistant(_)))
        };
        let kind = if last_is_assistant {
            let steering = drain_queue(&self.inner.steering, self.steering_mode());
            if !steering.is_empty() {
                RunKind::Prompt { messages: steering, poll_steering: false }
            } else {
                let follow_up = drain_queue(&self.inner.follow_up, self.follow_up_mode());
                if follow_up.is_empty() {
                    return Err(AgentError::ContinueFromAssistant);
                }
                RunKind::Prompt { messages: follow_up, poll_steering: true }
            }
        } else {
            RunKind::Continue
        };
        let cancel = self.begin_run(AgentError::AlreadyContinuing)?;
        self.run(cancel, kind).await
    }

    fn begin_run(&self, busy: AgentError) -> Result<CancellationToken, AgentError> {
        let mut active = lock(&self.inner.active);
        if active.is_some() {
            return Err(busy);
        }
        let token = CancellationToken::new();
        *active = Some(token.clone());
        drop(active);
        self.inner.idle.send_replace(false);
        let mut state = lock(&self.inner.state);
        state.is_streaming = true;
        state.streaming_message = None;
        state.error_message = None;
        Ok(token)
    }

    fn loop_config(&self) -> (AgentContext<C>, AgentLoopConfig<C>) {
        let hooks = lock(&self.inner.hooks).clone();
        let state = lock(&self.inner.state);
        let inner_s = Arc::downgrade(&self.inner);
        let inner_f = Arc::downgrade(&self.inner);
        let steering: MessageSource<C> = Arc::new(move || {
            inner_s
                .upgrade()
                .map(|i| {
                    let mode = *lock(&i.steering_mode);
                    drain_queue(&i.steering, mode)
                })
                .unwrap_or_default()
        });
        let follow_up: MessageSource<C> = Arc::new(move || {
            inner_f
                .upgrade()
                .map(|i| {
                    let mode = *lock(&i.follow_up_mode);
                    drain_queue(&i.follow_up, mode)
                })
                .unwrap_or_default()
        });
        let config = AgentLoopConfig {
            model: state.model.clone(),
            thinking_level: state.thinking_level,
            stream_fn: hooks.stream_fn,
            stream_options: hooks.stream_options,
            convert_to_llm: hooks.convert_to_llm,
            transform_context: hooks.transform_context,
            get_api_key: hooks.get_api_key,
            tool_hooks: hooks.tool_hooks,
            turn_hooks: hooks.turn_hooks,
            tool_execution: hooks.tool_execution,
            steering: Some(steering),
            follow_up: Some(follow_up),
        };
        let context = AgentContext { messages: state.messages.clone(), tools: state.tools.clone() };
        (context, config)
    }

    async fn run(&self, cancel: CancellationToken, kind: RunKind<C>) -> Result<(), AgentError> {
        let (context, config) = self.loop_config();
        let mut sink = AgentSink { inner: self.inner.clone() };
        let outcome = match kind {
            RunKind::Prompt { messages, poll_steering } => {
                run_agent_loop_with(messages, context, config, &mut sink, cancel.clone(), poll_steering).await
            }
            RunKind::Continue => match check_continue(&context.messages) {
                Ok(()) => run_agent_loop_continue(context, config, &mut sink, cancel.clone()).await,
                Err(e) => Err(e),
            },
        };
        let result = match outcome {
            Ok(_) => Ok(()),
            Err(e) => self.fail(&mut sink, &cancel, e.to_string()).await,
        };
        {
            let mut state = lock(&self.inner.state);
            state.is_streaming = false;
            state.streaming_message = None;
            state.pending_tool_calls.clear();
        }
        *lock(&self.inner.active) = None;
        self.inner.idle.send_replace(true);
        result
    }

    /// The failure path: a substitute error message, `turn_end` and `agent_end` with only it.
    async fn fail(&self, sink: &mut AgentSink<C>, cancel: &CancellationToken, text: String) -> Result<(), AgentError> {
        let model = self.with_state(|s| s.model.clone());
        let message = AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::new(""))],
            api: model.api,
            provider: model.provider,
            model: model.id,
            stop_reason: if cancel.is_cancelled() { StopReason::Aborted } else { StopReason::Error },
            error_message: Some(text),
            timestamp: now_ms(),
            ..Default::default()
        };
        let am = AgentMessage::Assistant(message.clone());
        let events = [
            AgentEvent::MessageStart { message: am.clone() },
            AgentEvent::MessageEnd { message: am.clone() },
            AgentEvent::TurnEnd { message, tool_results: Vec::new() },
            AgentEvent::AgentEnd { messages: vec![am] },
        ];
        for event in events {
            sink.emit(event).await.map_err(AgentError::Listener)?;
        }
        Ok(())
    }
}

enum RunKind<C> {
    Prompt { messages: Vec<AgentMessage<C>>, poll_steering: bool },
    Continue,
}

fn drain_queue<C>(queue: &Mutex<VecDeque<AgentMessage<C>>>, mode: QueueMode) -> Vec<AgentMessage<C>> {
    let mut q = lock(queue);
    match mode {
        QueueMode::All => q.drain(..).collect(),
        QueueMode::OneAtATime => q.pop_front().into_iter().collect(),
    }
}

/// Updates the state for each event, then calls the listeners in order.
struct AgentSink<C: CustomMessage> {
    inner: Arc<Inner<C>>,
}

impl<C: CustomMessage> AgentSink<C> {
    fn reduce(&self, event: &AgentEvent<C>) {
        let mut state = lock(&self.inner.state);
        match event {
            AgentEvent::MessageStart { message } => {
                state.streaming_message = Some(match message {
                    AgentMessage::Assistant(a) => StreamingMessage::Assistant(PartialMessage::new(a.clone())),
                    other => StreamingMessage::Other(other.clone()),
                });
            }
            AgentEvent::MessageUpdate { assistant_message_event } => {
                if let Some(StreamingMessage::Assistant(partial)) = &mut state.streaming_message {
                    partial.apply(assistant_message_event);
                }
            }
            AgentEvent::MessageEnd { message } => {
                state.streaming_message = None;
                state.messages.push(message.clone());
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => state.pending_tool_calls.push(tool_call_id.clone()),
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                state.pending_tool_calls.retain(|id| id != tool_call_id)
            }
            AgentEvent::TurnEnd { message, .. } => {
                if let Some(e) = &message.error_message {
                    state.error_message = Some(e.clone());
                }
            }
            AgentEvent::AgentEnd { .. } => state.streaming_message = None,
            AgentEvent::AgentStart | AgentEvent::TurnStart | AgentEvent::ToolExecutionUpdate { .. } => {}
        }
    }
}

#[async_trait]
impl<C: CustomMessage> EventSink<C> for AgentSink<C> {
    async fn emit(&mut self, event: AgentEvent<C>) -> Result<(), BoxError> {
        self.reduce(&event);
        let listeners: Vec<Listener<C>> = lock(&self.inner.listeners).iter().map(|(_, l)| l.clone()).collect();
        for listener in listeners {
            match listener {
                Listener::Sync(f) => {
                    std::panic::catch_unwind(AssertUnwindSafe(|| f(&event)))
                        .map_err(|p| -> BoxError { format!("listener panicked: {}", panic_message(&p)).into() })?;
                }
                Listener::Async(f) => {
                    AssertUnwindSafe(f(event.clone()))
                        .catch_unwind()
                        .await
                        .map_err(|p| -> BoxError { format!("listener panicked: {}", panic_message(&p)).into() })??;
                }
            }
        }
        Ok(())
    }
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
