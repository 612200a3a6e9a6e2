//! The low-level loop: turns of request → tool calls → results, with the two context hooks called
//! in exactly one place (`stream_assistant_response`) in their fixed order.
//!
//! The [`Agent`](crate::Agent) is built on [`run_agent_loop`] and [`run_agent_loop_continue`];
//! both work alone too, with any [`EventSink`].

use std::sync::Arc;

use futures::StreamExt;
use pi_ai::options::StreamOptions;
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, Context, Model, Shared, StopReason, ThinkingLevel, ToolResultMessage,
};
use tokio_util::sync::CancellationToken;

use crate::event::AgentEvent;
use crate::hooks::{BoxError, ConvertToLlm, TransformContext};
use crate::message::{AgentMessage, CustomMessage};
pub use crate::sink::{EventSink, FnSink};
use crate::sink::{end_assistant, end_message};
use crate::stream_fn::StreamFn;
use crate::tool::AgentTool;
use crate::tool_diff::declare_tool_changes;
use crate::tool_exec::{BatchEnv, ToolExecution, execute_tool_calls, fail_truncated};
use crate::tool_hooks::ToolCallHooks;
use crate::turn_hooks::{AgentTurnContext, PrepareRequestContext, TurnDecision, TurnHooks};

/// The loop's working context: the transcript and the executable tools.
pub struct AgentContext<C> {
    /// The transcript.
    pub messages: Vec<AgentMessage<C>>,
    /// The executable tools.
    pub tools: Vec<Arc<dyn AgentTool>>,
}

/// A source of queued messages (steering or follow-up), drained by the loop.
pub type MessageSource<C> = Arc<dyn Fn() -> Vec<AgentMessage<C>> + Send + Sync>;
/// Resolves an API key for a provider before every request.
pub type ApiKeyFn = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Everything the loop needs besides the context.
#[derive(Clone)]
pub struct AgentLoopConfig<C: CustomMessage> {
    /// The model to call.
    pub model: Model,
    /// Requested thinking level (`Off` sends no reasoning).
    pub thinking_level: ThinkingLevel,
    /// Streams one response.
    pub stream_fn: StreamFn,
    /// Base stream options (API key, session id, budgets, hooks …); the loop sets `reasoning` and
    /// `cancel`.
    pub stream_options: StreamOptions,
    /// The required second hook.
    pub convert_to_llm: Arc<dyn ConvertToLlm<C>>,
    /// The optional first hook.
    pub transform_context: Option<Arc<dyn TransformContext<C>>>,
    /// Called before every request; an empty answer falls back to `stream_options.api_key`.
    pub get_api_key: Option<ApiKeyFn>,
    /// `before_tool_call` / `after_tool_call`.
    pub tool_hooks: Option<Arc<dyn ToolCallHooks<C>>>,
    /// `finish_turn` / `prepare_request` / `prepare_next_turn`.
    pub turn_hooks: Option<Arc<dyn TurnHooks<C>>>,
    /// Parallel (default) or sequential tool execution.
    pub tool_execution: ToolExecution,
    /// Steering messages, polled after each turn.
    pub steering: Option<MessageSource<C>>,
    /// Follow-up messages, polled when the run would end.
    pub follow_up: Option<MessageSource<C>>,
}

impl<C: CustomMessage> AgentLoopConfig<C> {
    /// A config with the default converter and no optional hooks.
    pub fn new(model: Model, stream_fn: StreamFn) -> Self {
        AgentLoopConfig {
            model,
            thinking_level: ThinkingLevel::Off,
            stream_fn,
            stream_options: StreamOptions::default(),
            convert_to_llm: Arc::new(crate::hooks::DefaultConvertToLlm),
            transform_context: None,
            get_api_key: None,
            tool_hooks: None,
            turn_hooks: None,
            tool_execution: ToolExecution::Parallel,
            steering: None,
            follow_up: None,
        }
    }
}

/// Errors that end a low-level run early (the [`Agent`](crate::Agent) turns them into its failure
/// path; they never escape `Agent::prompt`).
#[derive(Debug, thiserror::Error)]
pub enum AgentLoopError {
    /// `continue` on an empty context.
    #[error("Cannot continue: no messages in context")]
    NothingToContinue,
    /// `continue` after an assistant message.
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
    /// A hook or the event sink failed.
    #[error("{0}")]
    Hook(BoxError),
}

impl From<BoxError> for AgentLoopError {
    fn from(e: BoxError) -> Self {
        AgentLoopError::Hook(e)
    }
}

fn drain<C>(source: &Option<MessageSource<C>>) -> Vec<AgentMessage<C>> {
    source.as_ref().map(|f| f()).unwrap_or_default()
}

/// `MessageStart` and `MessageEnd` for each input message; returns them as the sink left them
/// (a `MessageEnd` listener may replace one).
async fn emit_messages<C: CustomMessage>(
    sink: &mut dyn EventSink<C>,
    messages: Vec<AgentMessage<C>>,
) -> Result<Vec<AgentMessage<C>>, BoxError> {
    let mut ended = Vec::with_capacity(messages.len());
    for m in messages {
        sink.emit(AgentEvent::MessageStart { message: m.clone() }).await?;
        ended.push(end_message(sink, m).await?);
    }
    Ok(ended)
}

/// What a request for `messages` sends the model: `transform_context` (prune or inject, still
/// `AgentMessage`s, for this request only), then `convert_to_llm` (the only exit to the model's
/// world), then [`normalize_context`] (the prompt and tools are the transcript's system
/// messages). This is the one place the two hooks run, for the loop and for
/// [`Agent::request_context`](crate::Agent::request_context) alike.
///
/// The transcript is copied once, into the transform's input when there is one, otherwise
/// straight into the model's messages; a copy is one reference count per message, as messages
/// are `Shared`.
pub async fn request_context<C: CustomMessage>(
    messages: &[AgentMessage<C>],
    transform: Option<&dyn TransformContext<C>>,
    convert: &dyn ConvertToLlm<C>,
    cancel: &CancellationToken,
) -> Result<TranscriptContext, BoxError> {
    let llm = match transform {
        Some(transform) => {
            let messages = transform.transform_context(messages.to_vec(), cancel).await?;
            convert.convert_to_llm(messages)?
        }
        None => convert.convert_to_llm_borrowed(messages)?,
    };
    Ok(normalize_context(Context { system_prompt: None, messages: llm, tools: None }))
}

/// Runs a prompt: declares tool changes for `prompts`, emits them, then loops until the agent stops.
/// Returns the messages this run added.
pub async fn run_agent_loop<C: CustomMessage>(
    prompts: Vec<AgentMessage<C>>,
    context: AgentContext<C>,
    config: AgentLoopConfig<C>,
    sink: &mut dyn EventSink<C>,
    cancel: CancellationToken,
) -> Result<Vec<AgentMessage<C>>, AgentLoopError> {
    run_agent_loop_with(prompts, context, config, sink, cancel, true).await
}

/// [`run_agent_loop`], optionally without the startup steering poll (used when the prompt batch
/// itself came from the steering queue).
pub(crate) async fn run_agent_loop_with<C: CustomMessage>(
    prompts: Vec<AgentMessage<C>>,
    context: AgentContext<C>,
    config: AgentLoopConfig<C>,
    sink: &mut dyn EventSink<C>,
    cancel: CancellationToken,
    poll_steering_at_start: bool,
) -> Result<Vec<AgentMessage<C>>, AgentLoopError> {
    let mut ctx = context;
    let initial = declare_tool_changes(&ctx.messages, &ctx.tools, prompts);
    sink.emit(AgentEvent::AgentStart).await?;
    sink.emit(AgentEvent::TurnStart).await?;
    let initial = emit_messages(sink, initial).await?;
    let mut new_messages = initial.clone();
    ctx.messages.extend(initial);
    let pending = if poll_steering_at_start { drain(&config.steering) } else { Vec::new() };
    run_loop(&mut ctx, &mut new_messages, pending, config, sink, &cancel).await?;
    Ok(new_messages)
}

/// Continues from the current context without new input (the last message must not be an
/// assistant message). Returns the messages this run added.
pub async fn run_agent_loop_continue<C: CustomMessage>(
    context: AgentContext<C>,
    config: AgentLoopConfig<C>,
    sink: &mut dyn EventSink<C>,
    cancel: CancellationToken,
) -> Result<Vec<AgentMessage<C>>, AgentLoopError> {
    check_continue(&context.messages)?;
    let mut ctx = context;
    let mut new_messages = Vec::new();
    sink.emit(AgentEvent::AgentStart).await?;
    sink.emit(AgentEvent::TurnStart).await?;
    let pending = drain(&config.steering);
    run_loop(&mut ctx, &mut new_messages, pending, config, sink, &cancel).await?;
    Ok(new_messages)
}

/// The checks `continue` makes before starting.
pub fn check_continue<C>(messages: &[AgentMessage<C>]) -> Result<(), AgentLoopError> {
    match messages.last() {
        None => Err(AgentLoopError::NothingToContinue),
        Some(AgentMessage::Assistant(_)) => Err(AgentLoopError::ContinueFromAssistant),
        Some(_) => Ok(()),
    }
}

struct RunState<'a, C: CustomMessage> {
    model: Model,
    thinking_level: ThinkingLevel,
    config: AgentLoopConfig<C>,
    cancel: &'a CancellationToken,
}

async fn run_loop<C: CustomMessage>(
    ctx: &mut AgentContext<C>,
    new_messages: &mut Vec<AgentMessage<C>>,
    mut pending: Vec<AgentMessage<C>>,
    config: AgentLoopConfig<C>,
    sink: &mut dyn EventSink<C>,
    cancel: &CancellationToken,
) -> Result<(), AgentLoopError> {
    let mut run = RunState { model: config.model.clone(), thinking_level: config.thinking_level, config, cancel };
    let mut last: Option<(Shared<AssistantMessage>, Vec<ToolResultMessage>)> = None;
    let mut explicit = false;
    loop {
        let mut more = true;
        while more || !pending.is_empty() {
            let mut prepared = Vec::new();
            if let Some((message, results)) = &last {
                if let Some(hooks) = run.config.turn_hooks.clone() {
                    let turn =
                        AgentTurnContext { message, tool_results: results, context: &ctx.messages, new_messages };
                    if let Some(update) = hooks.prepare_next_turn(turn, cancel).await? {
                        apply_update(ctx, &mut run, update.update);
                        prepared = update.messages;
                    }
                }
                if pending.is_empty() {
                    pending = drain(&run.config.steering);
                }
                sink.emit(AgentEvent::TurnStart).await?;
            }
            prepared.append(&mut pending);
            let declared = declare_tool_changes(&ctx.messages, &ctx.tools, prepared);
            let declared = emit_messages(sink, declared).await?;
            new_messages.extend(declared.iter().cloned());
            ctx.messages.extend(declared);

            if let Some(hooks) = run.config.turn_hooks.clone() {
                let request = PrepareRequestContext {
                    messages: &ctx.messages,
                    tools: &ctx.tools,
                    model: &run.model,
                    thinking_level: run.thinking_level,
                };
                if let Some(update) = hooks.prepare_request(request, cancel).await? {
                    apply_update(ctx, &mut run, update);
                }
            }

            // The message as the sink left it: a `MessageEnd` listener may have replaced it, and
            // the rest of the turn (stop reason, tool calls, events) reads the replacement.
            let message = stream_assistant_response(ctx, &run, sink).await?;
            new_messages.push(AgentMessage::Assistant(message.clone()));

            if matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
                if let Some(hooks) = run.config.turn_hooks.clone() {
                    let turn =
                        AgentTurnContext { message: &message, tool_results: &[], context: &ctx.messages, new_messages };
                    // The decision is ignored for failed turns.
                    let _ = hooks.finish_turn(turn, cancel).await?;
                }
                sink.emit(AgentEvent::TurnEnd { message, tool_results: Vec::new() }).await?;
                sink.emit(AgentEvent::AgentEnd { messages: new_messages.clone() }).await?;
                return Ok(());
            }

            let calls: Vec<&pi_ai::ToolCall> = message.tool_calls().collect();
            let mut results = Vec::new();
            more = false;
            if !calls.is_empty() {
                let batch = {
                    let env = BatchEnv {
                        tools: &ctx.tools,
                        assistant: &message,
                        context: &ctx.messages,
                        hooks: run.config.tool_hooks.as_ref(),
                        cancel,
                    };
                    if message.stop_reason == StopReason::Length {
                        fail_truncated(&calls, sink).await?
                    } else {
                        execute_tool_calls(&env, &calls, run.config.tool_execution, sink).await?
                    }
                };
                more = !batch.terminate;
                for r in &batch.messages {
                    ctx.messages.push(AgentMessage::ToolResult(r.clone()));
                    new_messages.push(AgentMessage::ToolResult(r.clone()));
                }
                results = batch.messages.iter().map(|r| ToolResultMessage::clone(r)).collect();
            }

            let mut decision = None;
            if let Some(hooks) = run.config.turn_hooks.clone() {
                let turn = AgentTurnContext {
                    message: &message,
                    tool_results: &results,
                    context: &ctx.messages,
                    new_messages,
                };
                decision = hooks.finish_turn(turn, cancel).await?;
            }
            sink.emit(AgentEvent::TurnEnd { message: message.clone(), tool_results: results.clone() }).await?;
            last = Some((message, results));
            if decision == Some(TurnDecision::End) {
                sink.emit(AgentEvent::AgentEnd { messages: new_messages.clone() }).await?;
                return Ok(());
            }
            explicit = decision == Some(TurnDecision::Continue);
            pending = drain(&run.config.steering);
            if more || !pending.is_empty() {
                explicit = false;
            }
        }
        let follow_up = drain(&run.config.follow_up);
        if !follow_up.is_empty() {
            explicit = false;
            pending = follow_up;
            continue;
        }
        if explicit {
            explicit = false;
            continue;
        }
        break;
    }
    sink.emit(AgentEvent::AgentEnd { messages: new_messages.clone() }).await?;
    Ok(())
}

fn apply_update<C: CustomMessage>(
    ctx: &mut AgentContext<C>,
    run: &mut RunState<'_, C>,
    update: crate::turn_hooks::RequestUpdate<C>,
) {
    if let Some(messages) = update.messages {
        ctx.messages = messages;
    }
    if let Some(tools) = update.tools {
        ctx.tools = tools;
    }
    if let Some(model) = update.model {
        run.model = model;
    }
    if let Some(level) = update.thinking_level {
        run.thinking_level = level;
    }
}

/// One request: the two hooks in their fixed order, the stream, and its events.
///
/// This is the only place the hooks run: `transform_context` first (optional), then
/// `convert_to_llm` (required), then `normalize_context`, then the stream function.
async fn stream_assistant_response<C: CustomMessage>(
    ctx: &mut AgentContext<C>,
    run: &RunState<'_, C>,
    sink: &mut dyn EventSink<C>,
) -> Result<Shared<AssistantMessage>, AgentLoopError> {
    let config = &run.config;
    let transcript =
        request_context(&ctx.messages, config.transform_context.as_deref(), &*config.convert_to_llm, run.cancel)
            .await?;

    let mut options = config.stream_options.clone();
    if let Some(key) = config.get_api_key.as_ref().and_then(|f| f(&run.model.provider)).filter(|k| !k.is_empty()) {
        options.api_key = Some(key);
    }
    options.reasoning = (run.thinking_level != ThinkingLevel::Off).then_some(run.thinking_level);
    options.cancel = Some(run.cancel.clone());

    let mut stream = (config.stream_fn)(&run.model, transcript, options);
    let mut started = false;
    let mut final_message: Option<AssistantMessage> = None;
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Start { partial } => {
                started = true;
                sink.emit(AgentEvent::MessageStart { message: AgentMessage::Assistant((*partial).into()) }).await?;
            }
            AssistantMessageEvent::Done { message, .. } | AssistantMessageEvent::Error { error: message, .. } => {
                final_message = Some(*message);
                break;
            }
            update => {
                // A delta is handed on without a future per event when no listener has to be
                // awaited for it.
                if started && let Some(pending) = sink.emit_update(update)? {
                    pending.await?;
                }
            }
        }
    }
    let mut message = match final_message {
        Some(m) => m,
        None => stream.result().await,
    };
    message.thinking_level = Some(run.thinking_level);
    // One copy shared by the events, the transcript and the rest of the turn.
    let shared: Shared<AssistantMessage> = message.into();
    if !started {
        sink.emit(AgentEvent::MessageStart { message: AgentMessage::Assistant(shared.clone()) }).await?;
    }
    let ended = end_assistant(sink, shared).await?;
    ctx.messages.push(AgentMessage::Assistant(ended.clone()));
    Ok(ended)
}
