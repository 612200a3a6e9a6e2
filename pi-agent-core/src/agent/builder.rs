//! [`AgentBuilder`]: the model, stream function, hooks and initial transcript of a new [`Agent`].

use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use pi_ai::options::StreamOptions;
use pi_ai::transcript::{create_initial_system_message, to_tool_declaration};
use pi_ai::{Model, ThinkingLevel};
use tokio::sync::watch;

use super::queue::QueueMode;
use super::state::AgentState;
use super::{Agent, Hooks, Inner};
use crate::hooks::{ConvertToLlm, DefaultConvertToLlm, TransformContext};
use crate::message::{AgentMessage, CustomMessage, UnknownMessage};
use crate::stream_fn::StreamFn;
use crate::tool::AgentTool;
use crate::tool_exec::ToolExecution;
use crate::tool_hooks::ToolCallHooks;
use crate::turn_hooks::TurnHooks;

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
                messages.insert(0, AgentMessage::System(head.into()));
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
                listeners: Mutex::new(Arc::new(Vec::new())),
                next_listener: AtomicU64::new(1),
                steering: Mutex::new(VecDeque::new()),
                follow_up: Mutex::new(VecDeque::new()),
                steering_mode: Mutex::new(self.steering_mode),
                follow_up_mode: Mutex::new(self.follow_up_mode),
                active: Mutex::new(None),
                runs: AtomicU64::new(0),
                idle,
            }),
        }
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
}
