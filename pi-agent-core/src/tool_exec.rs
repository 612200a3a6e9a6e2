//! Tool execution for one assistant message: preparation, execution, finalisation, and the
//! parallel and sequential orders of pi (spec §3.4).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use pi_ai::{AssistantMessage, Shared, TextContent, ToolCall, ToolResultMessage, UserBlock, now_ms};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::event::AgentEvent;
use crate::hooks::BoxError;
use crate::message::{AgentMessage, CustomMessage};
use crate::sink::{EventSink, end_tool_result};
use crate::tool::{AgentTool, AgentToolResult, ExecutionMode, ToolContext};
use crate::tool_hooks::{AfterToolCallContext, BeforeToolCallContext, ToolCallHooks};

/// How a batch of tool calls runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ToolExecution {
    /// Prepare in order, execute concurrently, report results in source order (pi's default).
    #[default]
    Parallel,
    /// One call after another.
    Sequential,
}

/// The results of one batch.
pub(crate) struct ToolBatch {
    /// The result messages as the sink left them (see [`EventSink::emit_message_end`]).
    pub messages: Vec<Shared<ToolResultMessage>>,
    pub terminate: bool,
}

/// A finished call.
struct Outcome {
    result: AgentToolResult,
    is_error: bool,
    duration_ms: Option<u64>,
}

impl Outcome {
    fn error(text: impl Into<String>) -> Self {
        Outcome { result: error_result(text), is_error: true, duration_ms: None }
    }
}

/// pi's error-result shape: one text block and `details: {}`, the flag kept separately.
fn error_result(text: impl Into<String>) -> AgentToolResult {
    AgentToolResult {
        content: vec![UserBlock::Text(TextContent::new(text))],
        details: Value::Object(Map::new()),
        ..Default::default()
    }
}

const ABORTED: &str = "Operation aborted";

enum Prepared {
    Immediate(Box<Outcome>),
    Ready { tool: Arc<dyn AgentTool>, args: Map<String, Value> },
}

/// Everything the batch needs besides the calls.
pub(crate) struct BatchEnv<'a, C> {
    pub tools: &'a [Arc<dyn AgentTool>],
    pub assistant: &'a AssistantMessage,
    pub context: &'a [AgentMessage<C>],
    pub hooks: Option<&'a Arc<dyn ToolCallHooks<C>>>,
    pub cancel: &'a CancellationToken,
}

fn validate(tool: &dyn AgentTool, call: &ToolCall, args: Map<String, Value>) -> Result<Map<String, Value>, String> {
    if let Some(err) = &call.arguments_error {
        return Err(format!("Invalid arguments for tool \"{}\": {err}", call.name));
    }
    pi_ai::validate::validate_arguments(tool.name(), tool.parameters(), &args).map_err(|e| e.to_string())
}

async fn prepare<C: CustomMessage>(env: &BatchEnv<'_, C>, call: &ToolCall) -> Prepared {
    if env.cancel.is_cancelled() {
        return Prepared::Immediate(Box::new(Outcome::error(ABORTED)));
    }
    let Some(tool) = env.tools.iter().find(|t| t.name() == call.name).cloned() else {
        return Prepared::Immediate(Box::new(Outcome::error(format!("Tool {} not found", call.name))));
    };
    let prepared = match std::panic::catch_unwind(AssertUnwindSafe(|| tool.prepare_arguments(call.arguments.clone()))) {
        Ok(args) => args,
        Err(panic) => return Prepared::Immediate(Box::new(Outcome::error(panic_text(&panic)))),
    };
    let args = match validate(tool.as_ref(), call, prepared) {
        Ok(args) => args,
        Err(text) => return Prepared::Immediate(Box::new(Outcome::error(text))),
    };
    if let Some(hooks) = env.hooks {
        let ctx = BeforeToolCallContext {
            assistant_message: env.assistant,
            tool_call: call,
            args: &args,
            context: env.context,
        };
        let answer = AssertUnwindSafe(hooks.before_tool_call(ctx, env.cancel)).catch_unwind().await;
        match answer {
            Err(panic) => return Prepared::Immediate(Box::new(Outcome::error(panic_text(&panic)))),
            Ok(Err(e)) => return Prepared::Immediate(Box::new(Outcome::error(e.to_string()))),
            Ok(Ok(decision)) => {
                if env.cancel.is_cancelled() {
                    return Prepared::Immediate(Box::new(Outcome::error(ABORTED)));
                }
                if let Some(d) = decision.filter(|d| d.block) {
                    let mut outcome =
                        Outcome::error(d.reason.unwrap_or_else(|| "Tool execution was blocked".to_owned()));
                    outcome.result.terminate = d.terminate;
                    return Prepared::Immediate(Box::new(outcome));
                }
            }
        }
    }
    Prepared::Ready { tool, args }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    format!("panicked: {what}")
}

type Updates = mpsc::UnboundedSender<(usize, AgentToolResult)>;

/// Executes one prepared call and finalises it with `after_tool_call`.
async fn execute<C: CustomMessage>(
    env: &BatchEnv<'_, C>,
    index: usize,
    call: &ToolCall,
    tool: Arc<dyn AgentTool>,
    args: Map<String, Value>,
    updates: Updates,
) -> Outcome {
    let on_update: Arc<dyn Fn(AgentToolResult) + Send + Sync> = Arc::new(move |partial| {
        let _ = updates.send((index, partial));
    });
    let ctx = ToolContext::new(env.cancel.clone(), Some(on_update));
    let started = Instant::now();
    let ran = AssertUnwindSafe(tool.execute(&call.id, args.clone(), ctx.clone())).catch_unwind().await;
    ctx.close();
    let duration_ms = Some(started.elapsed().as_millis() as u64);
    let (result, is_error) = match ran {
        Ok(Ok(result)) => {
            let is_error = result.is_error;
            (result, is_error)
        }
        Ok(Err(e)) => (error_result(e.message()), true),
        Err(panic) => (error_result(format!("Tool {} {}", call.name, panic_text(&panic))), true),
    };
    let mut outcome = Outcome { result, is_error, duration_ms };
    if let Some(hooks) = env.hooks {
        let ctx = AfterToolCallContext {
            assistant_message: env.assistant,
            tool_call: call,
            args: &args,
            result: &outcome.result,
            is_error: outcome.is_error,
            context: env.context,
        };
        match AssertUnwindSafe(hooks.after_tool_call(ctx, env.cancel)).catch_unwind().await {
            Ok(Ok(Some(o))) => {
                let content_overridden = o.content.is_some();
                if let Some(content) = o.content {
                    outcome.result.content = content;
                }
                if let Some(details) = o.details {
                    outcome.result.details = details;
                }
                if let Some(usage) = o.usage {
                    outcome.result.usage = Some(usage);
                }
                if let Some(terminate) = o.terminate {
                    outcome.result.terminate = terminate;
                }
                if let Some(is_error) = o.is_error {
                    outcome.is_error = is_error;
                }
                outcome.result.structured_content = match o.structured_content {
                    Some(s) => Some(s),
                    None if content_overridden => None,
                    None => outcome.result.structured_content.take(),
                };
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => {
                outcome.result = error_result(e.to_string());
                outcome.is_error = true;
            }
            Err(panic) => {
                outcome.result = error_result(panic_text(&panic));
                outcome.is_error = true;
            }
        }
    }
    outcome.result.is_error = outcome.is_error;
    outcome
}

fn result_message(call: &ToolCall, outcome: &Outcome) -> ToolResultMessage {
    let details = match &outcome.result.details {
        Value::Null => None,
        d => Some(d.clone()),
    };
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: outcome.result.content.clone(),
        details,
        usage: outcome.result.usage.clone(),
        is_error: outcome.is_error,
        duration_ms: outcome.duration_ms,
        timestamp: now_ms(),
        ..Default::default()
    }
}

fn start_event<C>(call: &ToolCall) -> AgentEvent<C> {
    AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    }
}

fn end_event<C>(call: &ToolCall, outcome: &Outcome) -> AgentEvent<C> {
    AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: Box::new(outcome.result.clone()),
        is_error: outcome.is_error,
        duration_ms: outcome.duration_ms,
    }
}

fn update_event<C>(call: &ToolCall, partial: AgentToolResult) -> AgentEvent<C> {
    AgentEvent::ToolExecutionUpdate {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
        partial_result: Box::new(partial),
    }
}

/// `MessageStart` and `MessageEnd` for one tool result; returns it as the sink left it (a
/// `MessageEnd` listener may replace it; the replacement is what the transcript and `TurnEnd` get).
async fn emit_result_message<C: CustomMessage>(
    sink: &mut dyn EventSink<C>,
    message: ToolResultMessage,
) -> Result<Shared<ToolResultMessage>, BoxError> {
    let message: Shared<ToolResultMessage> = message.into();
    sink.emit(AgentEvent::MessageStart { message: AgentMessage::ToolResult(message.clone()) }).await?;
    end_tool_result(sink, message).await
}

/// Whether a batch ends the run: every call asked to terminate (read from the results as the
/// tools gave them, not from replaced messages, as in pi).
fn terminates(outcomes: &[Outcome]) -> bool {
    !outcomes.is_empty() && outcomes.iter().all(|o| o.result.terminate)
}

/// Every call of a response cut by the output limit gets an error result; nothing runs.
pub(crate) async fn fail_truncated<C: CustomMessage>(
    calls: &[&ToolCall],
    sink: &mut dyn EventSink<C>,
) -> Result<ToolBatch, BoxError> {
    let mut messages = Vec::with_capacity(calls.len());
    for call in calls {
        sink.emit(start_event(call)).await?;
        let outcome = Outcome::error(format!(
            "Tool call \"{}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.",
            call.name
        ));
        sink.emit(end_event(call, &outcome)).await?;
        messages.push(emit_result_message(sink, result_message(call, &outcome)).await?);
    }
    Ok(ToolBatch { messages, terminate: false })
}

/// Runs the tool calls of `env.assistant` in pi's order and emits their events.
pub(crate) async fn execute_tool_calls<C: CustomMessage>(
    env: &BatchEnv<'_, C>,
    calls: &[&ToolCall],
    mode: ToolExecution,
    sink: &mut dyn EventSink<C>,
) -> Result<ToolBatch, BoxError> {
    let sequential = mode == ToolExecution::Sequential
        || calls.iter().any(|c| {
            env.tools
                .iter()
                .find(|t| t.name() == c.name)
                .is_some_and(|t| t.execution_mode() == Some(ExecutionMode::Sequential))
        });
    let (tx, mut rx) = mpsc::unbounded_channel::<(usize, AgentToolResult)>();

    if sequential {
        let mut outcomes = Vec::with_capacity(calls.len());
        let mut messages = Vec::with_capacity(calls.len());
        for (i, call) in calls.iter().enumerate() {
            sink.emit(start_event(call)).await?;
            let outcome = match prepare(env, call).await {
                Prepared::Immediate(o) => *o,
                Prepared::Ready { tool, args } => {
                    let mut fut = std::pin::pin!(execute(env, i, call, tool, args, tx.clone()));
                    loop {
                        tokio::select! {
                            biased;
                            Some((_, partial)) = rx.recv() => sink.emit(update_event(call, partial)).await?,
                            o = &mut fut => break o,
                        }
                    }
                }
            };
            while let Ok((_, partial)) = rx.try_recv() {
                sink.emit(update_event(call, partial)).await?;
            }
            sink.emit(end_event(call, &outcome)).await?;
            messages.push(emit_result_message(sink, result_message(call, &outcome)).await?);
            outcomes.push(outcome);
        }
        return Ok(ToolBatch { messages, terminate: terminates(&outcomes) });
    }

    // Parallel: prepare every call in order first; nothing executes until all are prepared.
    let mut outcomes: Vec<Option<Outcome>> = (0..calls.len()).map(|_| None).collect();
    let mut ready = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        sink.emit(start_event(call)).await?;
        match prepare(env, call).await {
            Prepared::Immediate(o) => {
                sink.emit(end_event(call, &o)).await?;
                outcomes[i] = Some(*o);
            }
            Prepared::Ready { tool, args } => ready.push((i, tool, args)),
        }
    }
    let mut running: FuturesUnordered<_> = ready
        .into_iter()
        .map(|(i, tool, args)| {
            let tx = tx.clone();
            let call = calls[i];
            async move {
                if env.cancel.is_cancelled() {
                    return (i, Outcome::error(ABORTED));
                }
                (i, execute(env, i, call, tool, args, tx).await)
            }
        })
        .collect();
    while !running.is_empty() {
        tokio::select! {
            biased;
            Some((i, partial)) = rx.recv() => sink.emit(update_event(calls[i], partial)).await?,
            Some((i, outcome)) = running.next() => {
                while let Ok((j, partial)) = rx.try_recv() {
                    sink.emit(update_event(calls[j], partial)).await?;
                }
                sink.emit(end_event(calls[i], &outcome)).await?;
                outcomes[i] = Some(outcome);
            }
        }
    }
    let outcomes: Vec<Outcome> = outcomes.into_iter().map(|o| o.unwrap_or_else(|| Outcome::error(ABORTED))).collect();
    let mut messages = Vec::with_capacity(calls.len());
    for (call, outcome) in calls.iter().zip(&outcomes) {
        messages.push(emit_result_message(sink, result_message(call, outcome)).await?);
    }
    Ok(ToolBatch { messages, terminate: terminates(&outcomes) })
}
