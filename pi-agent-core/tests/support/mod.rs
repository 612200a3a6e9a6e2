//! Test seam: a scripted stream function (the loop's only dependency on a model) and helpers to
//! record events compactly.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pi_agent_core::{AgentEvent, AgentMessage, AgentTool, AgentToolResult, StreamFn, ToolContext, ToolError};
use pi_ai::transcript::TranscriptContext;
use pi_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Model, StopReason,
    TextContent, ToolCall, now_ms,
};
use serde_json::{Map, Value, json};

/// A model description for tests.
pub fn model() -> Model {
    serde_json::from_value(json!({
        "id": "script-1", "name": "Script", "api": "script", "provider": "script", "baseUrl": "http://127.0.0.1:0",
        "reasoning": false, "input": ["text"], "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000, "maxTokens": 16384
    }))
    .unwrap()
}

/// One scripted reply.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub enum Step {
    Reply(AssistantMessage),
    /// Fails before the stream starts (an HTTP error).
    FailBeforeStart(String),
}

pub fn text(t: &str) -> Step {
    reply(vec![AssistantBlock::Text(TextContent::new(t))], StopReason::Stop)
}

pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Step {
    let blocks = calls
        .iter()
        .map(|(id, name, args)| {
            let args: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
            AssistantBlock::ToolCall(ToolCall::new(*id, *name, args))
        })
        .collect();
    reply(blocks, StopReason::ToolUse)
}

pub fn reply(content: Vec<AssistantBlock>, stop_reason: StopReason) -> Step {
    Step::Reply(AssistantMessage { content, stop_reason, ..Default::default() })
}

/// Scripted stream function: records every request, streams replies in 4-char chunks, honours
/// cancellation before and during the stream.
#[derive(Clone, Default)]
pub struct Script {
    steps: Arc<Mutex<VecDeque<Step>>>,
    pub requests: Arc<Mutex<Vec<TranscriptContext>>>,
    pub chunk_delay: Option<Duration>,
}

impl Script {
    pub fn new(steps: Vec<Step>) -> Self {
        Script { steps: Arc::new(Mutex::new(steps.into())), ..Default::default() }
    }

    pub fn push(&self, step: Step) {
        self.steps.lock().unwrap().push_back(step);
    }

    pub fn requests(&self) -> Vec<TranscriptContext> {
        self.requests.lock().unwrap().clone()
    }

    pub fn request_json(&self, i: usize) -> Value {
        serde_json::to_value(self.requests()[i].messages()).unwrap()
    }

    pub fn stream_fn(&self) -> StreamFn {
        let me = self.clone();
        Arc::new(move |model: &Model, ctx: TranscriptContext, options: pi_ai::options::StreamOptions| {
            me.requests.lock().unwrap().push(ctx);
            let step = me.steps.lock().unwrap().pop_front();
            let cancel = options.cancel_token();
            let delay = me.chunk_delay;
            let base = AssistantMessage {
                api: model.api.clone(),
                provider: model.provider.clone(),
                model: model.id.clone(),
                stop_reason: StopReason::Pending,
                timestamp: now_ms(),
                ..Default::default()
            };
            AssistantMessageEventStream::new(async_stream::stream! {
                let aborted = |mut m: AssistantMessage| {
                    m.stop_reason = StopReason::Aborted;
                    m.error_message = Some("Request was aborted".into());
                    AssistantMessageEvent::Error { reason: StopReason::Aborted, error: Box::new(m) }
                };
                if cancel.is_cancelled() {
                    yield aborted(base.clone());
                    return;
                }
                let step = match step {
                    None => {
                        let mut m = base.clone();
                        m.stop_reason = StopReason::Error;
                        m.error_message = Some("No more faux responses queued".into());
                        yield AssistantMessageEvent::Error { reason: StopReason::Error, error: Box::new(m) };
                        return;
                    }
                    Some(Step::FailBeforeStart(text)) => {
                        let mut m = base.clone();
                        m.stop_reason = StopReason::Error;
                        m.error_message = Some(text);
                        yield AssistantMessageEvent::Error { reason: StopReason::Error, error: Box::new(m) };
                        return;
                    }
                    Some(Step::Reply(r)) => r,
                };
                let mut out = base.clone();
                yield AssistantMessageEvent::Start { partial: Box::new(base.clone()) };
                for (i, block) in step.content.iter().enumerate() {
                    match block {
                        AssistantBlock::Text(t) => {
                            out.content.push(AssistantBlock::Text(TextContent::new("")));
                            yield AssistantMessageEvent::TextStart { content_index: i, block: TextContent::new("") };
                            for chunk in chunks(&t.text) {
                                if let Some(d) = delay { tokio::time::sleep(d).await; }
                                tokio::task::yield_now().await;
                                if cancel.is_cancelled() { yield aborted(out.clone()); return; }
                                if let AssistantBlock::Text(b) = &mut out.content[i] { b.text.push_str(&chunk); }
                                yield AssistantMessageEvent::TextDelta { content_index: i, delta: chunk };
                            }
                            out.content[i] = block.clone();
                            yield AssistantMessageEvent::TextEnd { content_index: i, block: t.clone() };
                        }
                        AssistantBlock::Thinking(t) => {
                            out.content.push(block.clone());
                            yield AssistantMessageEvent::ThinkingStart { content_index: i, block: pi_ai::ThinkingContent::new("") };
                            yield AssistantMessageEvent::ThinkingDelta { content_index: i, delta: t.thinking.clone() };
                            yield AssistantMessageEvent::ThinkingEnd { content_index: i, block: t.clone() };
                        }
                        AssistantBlock::ToolCall(c) => {
                            let start = ToolCall::new(c.id.clone(), c.name.clone(), Map::new());
                            out.content.push(AssistantBlock::ToolCall(start.clone()));
                            yield AssistantMessageEvent::ToolCallStart { content_index: i, tool_call: Box::new(start) };
                            let args = serde_json::to_string(&c.arguments).unwrap();
                            for chunk in chunks(&args) {
                                tokio::task::yield_now().await;
                                if cancel.is_cancelled() { yield aborted(out.clone()); return; }
                                yield AssistantMessageEvent::ToolCallDelta { content_index: i, delta: chunk };
                            }
                            out.content[i] = block.clone();
                            yield AssistantMessageEvent::ToolCallEnd { content_index: i, tool_call: Box::new(c.clone()) };
                        }
                    }
                }
                out.stop_reason = step.stop_reason;
                out.error_message = step.error_message.clone();
                if matches!(step.stop_reason, StopReason::Error | StopReason::Aborted) {
                    yield AssistantMessageEvent::Error { reason: step.stop_reason, error: Box::new(out) };
                } else {
                    yield AssistantMessageEvent::Done { reason: step.stop_reason, message: Box::new(out) };
                }
            })
        })
    }
}

fn chunks(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(4).map(|c| c.iter().collect()).collect()
}

/// A compact, stable description of an event for snapshots.
pub fn describe<C: pi_agent_core::CustomMessage>(e: &AgentEvent<C>) -> String {
    let role = |m: &AgentMessage<C>| match m {
        AgentMessage::Assistant(a) => format!("assistant {}", a.stop_reason.as_str()),
        other => other.role().to_owned(),
    };
    match e {
        AgentEvent::AgentEnd { messages } => {
            format!("agent_end [{}]", messages.iter().map(role).collect::<Vec<_>>().join(", "))
        }
        AgentEvent::TurnEnd { message, tool_results } => format!(
            "turn_end {} results=[{}]",
            message.stop_reason.as_str(),
            tool_results.iter().map(|r| r.tool_call_id.as_str()).collect::<Vec<_>>().join(",")
        ),
        AgentEvent::MessageStart { message } => format!("message_start {}", role(message)),
        AgentEvent::MessageEnd { message } => format!("message_end {}", role(message)),
        AgentEvent::MessageUpdate { assistant_message_event } => {
            format!("message_update {}", assistant_message_event.kind())
        }
        AgentEvent::ToolExecutionStart { tool_call_id, args, .. } => {
            format!("tool_execution_start {tool_call_id} {}", Value::Object(args.clone()))
        }
        AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => format!("tool_execution_update {tool_call_id}"),
        AgentEvent::ToolExecutionEnd { tool_call_id, is_error, result, .. } => format!(
            "tool_execution_end {tool_call_id} isError={is_error} {:?}",
            result.content.iter().filter_map(|b| b.as_text()).collect::<Vec<_>>()
        ),
        other => other.kind().to_owned(),
    }
}

/// Collapses consecutive identical lines (the number of deltas is not part of pi's contract).
pub fn collapse(lines: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in lines {
        if out.last() != Some(&l) {
            out.push(l);
        }
    }
    out
}

/// Echo tool: returns `echo: <text>`, streams one update, optional delay.
pub struct Echo {
    pub name: &'static str,
    pub delay: Duration,
    pub schema: Value,
    pub sequential: bool,
}

impl Echo {
    pub fn new(name: &'static str) -> Self {
        Echo {
            name,
            delay: Duration::ZERO,
            schema: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            sequential: false,
        }
    }
}

#[async_trait]
impl AgentTool for Echo {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Echo the text back"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execution_mode(&self) -> Option<pi_agent_core::ExecutionMode> {
        self.sequential.then_some(pi_agent_core::ExecutionMode::Sequential)
    }
    async fn execute(
        &self,
        _id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let text = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
        if !self.delay.is_zero() {
            tokio::select! {
                _ = tokio::time::sleep(self.delay) => {}
                _ = ctx.cancel_token().cancelled() => return Err(ToolError::new("cancelled while sleeping")),
            }
        }
        ctx.update(AgentToolResult::text(format!("working on {text}")));
        if text == "boom" {
            return Err(ToolError::new("boom failed"));
        }
        Ok(AgentToolResult::text(format!("echo: {text}")).with_details(json!({"length": text.len()})))
    }
}
