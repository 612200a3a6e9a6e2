//! The `Agent`: state, queues, listeners and the run lifecycle around the loop.
//!
//! - `state`: [`AgentState`] and the reducer that applies each event to it;
//! - `builder`: [`AgentBuilder`];
//! - `queue`: the steering and follow-up queues ([`QueueMode`]);
//! - `listeners`: subscriptions and the event sink that calls them;
//! - `run`: `prompt`, `continue` and the failure path;
//! - this module: the [`Agent`] handle, its shared inner state and its simple accessors.

mod builder;
mod error;
mod input;
mod listeners;
mod queue;
mod run;
mod state;

use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};

use pi_ai::options::StreamOptions;
use pi_ai::transcript::current_system_message;
use pi_ai::{Model, ThinkingLevel};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use builder::AgentBuilder;
pub use error::AgentError;
pub use input::PromptInput;
pub use listeners::Unsubscribe;
pub use queue::QueueMode;
pub use state::{AgentState, StreamingMessage};

use crate::agent_loop::ApiKeyFn;
use crate::hooks::{ConvertToLlm, TransformContext};
use crate::message::{AgentMessage, CustomMessage, UnknownMessage};
use crate::stream_fn::StreamFn;
use crate::tool::AgentTool;
use crate::tool_exec::ToolExecution;
use crate::tool_hooks::ToolCallHooks;
use crate::turn_hooks::TurnHooks;
use listeners::Listener;

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

/// The registered listeners with their ids, in registration order.
type Listeners<C> = Arc<Vec<(u64, Listener<C>)>>;

struct Inner<C: CustomMessage> {
    state: Mutex<AgentState<C>>,
    hooks: Mutex<Hooks<C>>,
    /// Copied on write: a run's event takes a snapshot (one reference count), not a new list.
    listeners: Mutex<Listeners<C>>,
    next_listener: AtomicU64,
    steering: Mutex<VecDeque<AgentMessage<C>>>,
    follow_up: Mutex<VecDeque<AgentMessage<C>>>,
    steering_mode: Mutex<QueueMode>,
    follow_up_mode: Mutex<QueueMode>,
    active: Mutex<Option<CancellationToken>>,
    /// Runs begun so far (the active run's number, see [`Agent::signal_with_run`]).
    runs: AtomicU64,
    idle: watch::Sender<bool>,
}

/// Aborts an agent's active run; holds the agent weakly (see [`Agent::abort_handle`]).
pub struct AbortHandle<C: CustomMessage = UnknownMessage> {
    inner: std::sync::Weak<Inner<C>>,
}

impl<C: CustomMessage> Clone for AbortHandle<C> {
    fn clone(&self) -> Self {
        AbortHandle { inner: self.inner.clone() }
    }
}

impl<C: CustomMessage> AbortHandle<C> {
    /// Cancels the active run, if the agent still exists and runs (as [`Agent::abort`]).
    pub fn abort(&self) {
        if let Some(inner) = self.inner.upgrade()
            && let Some(token) = lock(&inner.active).as_ref()
        {
            token.cancel();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking listener cannot leave the state half-written (updates are single assignments),
    // so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
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

/// A handle to an [`Agent`] that does not keep it alive (for hooks the agent itself holds).
pub struct WeakAgent<C: CustomMessage = UnknownMessage> {
    inner: std::sync::Weak<Inner<C>>,
}

impl<C: CustomMessage> Clone for WeakAgent<C> {
    fn clone(&self) -> Self {
        WeakAgent { inner: self.inner.clone() }
    }
}

impl<C: CustomMessage> WeakAgent<C> {
    /// The agent, while it exists.
    pub fn upgrade(&self) -> Option<Agent<C>> {
        self.inner.upgrade().map(|inner| Agent { inner })
    }
}

impl<C: CustomMessage> Agent<C> {
    /// A handle that does not keep the agent alive.
    pub fn downgrade(&self) -> WeakAgent<C> {
        WeakAgent { inner: Arc::downgrade(&self.inner) }
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

    /// Sets the session id requests carry (providers use it as their cache key), as pi's
    /// `agent.sessionId`.
    pub fn set_session_id(&self, session_id: Option<String>) {
        lock(&self.inner.hooks).stream_options.session_id = session_id;
    }

    /// The session id requests carry.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.inner.hooks).stream_options.session_id.clone()
    }

    /// Replaces the converter.
    pub fn set_convert_to_llm(&self, convert: impl ConvertToLlm<C> + 'static) {
        lock(&self.inner.hooks).convert_to_llm = Arc::new(convert);
    }

    /// Replaces (or removes) the context transform.
    pub fn set_transform_context(&self, transform: Option<Arc<dyn TransformContext<C>>>) {
        lock(&self.inner.hooks).transform_context = transform;
    }

    /// The active run's cancellation token, if a run is active.
    pub fn signal(&self) -> Option<CancellationToken> {
        lock(&self.inner.active).clone()
    }

    /// The active run's cancellation token with the run's number (1 for the first run of this
    /// agent, then counting up), to tell one run's token from the next one's.
    pub fn signal_with_run(&self) -> Option<(u64, CancellationToken)> {
        let active = lock(&self.inner.active);
        active.clone().map(|token| (self.inner.runs.load(std::sync::atomic::Ordering::Acquire), token))
    }

    /// Cancels the active run (no-op when idle).
    pub fn abort(&self) {
        if let Some(token) = lock(&self.inner.active).as_ref() {
            token.cancel();
        }
    }

    /// A handle that aborts this agent's active run without keeping the agent alive (for
    /// listeners of the agent itself, which must not hold an `Agent`).
    pub fn abort_handle(&self) -> AbortHandle<C> {
        AbortHandle { inner: Arc::downgrade(&self.inner) }
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
            state.messages = head.map(AgentMessage::from).into_iter().collect();
            state.is_streaming = false;
            state.streaming_message = None;
            state.pending_tool_calls.clear();
            state.error_message = None;
        }
        self.clear_all_queues();
        Ok(())
    }
}
