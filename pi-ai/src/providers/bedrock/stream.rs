//! Converse stream events → pi events (`handleContentBlockStart/Delta/Stop`, `handleMetadata`,
//! `mapStopReason`). Text and reasoning blocks have no start event: their first delta opens them.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::eventstream::Message as Frame;
use crate::http::shared::finish_tool_arguments;
use crate::http::{ProviderOutput, StreamContext};
use crate::stream::AssistantMessageEvent as E;
use crate::types::{AssistantBlock, StopReason, TextContent, ThinkingContent, ToolCall};

const REDACTED_THINKING_PLACEHOLDER: &str = "[Reasoning redacted]";

/// Human-readable prefixes of Bedrock's exception names (the retry logic matches them).
pub fn error_prefix(name: &str) -> &str {
    match name {
        "InternalServerException" | "internalServerException" => "Internal server error",
        "ModelStreamErrorException" | "modelStreamErrorException" => "Model stream error",
        "ValidationException" | "validationException" => "Validation error",
        "ThrottlingException" | "throttlingException" => "Throttling error",
        "ServiceUnavailableException" | "serviceUnavailableException" => "Service unavailable",
        other => other,
    }
}

#[derive(Debug, Default)]
struct Open {
    index: usize,
    redacted: Vec<u8>,
}

/// The stream state of one Converse response.
#[derive(Debug, Default)]
pub struct BedrockStream {
    open: HashMap<u64, Open>,
}

impl BedrockStream {
    /// A fresh handler.
    pub fn new() -> Self {
        BedrockStream::default()
    }

    /// Handles one decoded frame. `Err` ends the response with that text.
    pub fn on_frame(&mut self, frame: &Frame, ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        match frame.header(":message-type").unwrap_or("event") {
            "error" => return Err(frame.header(":error-message").unwrap_or("An unknown error occurred").to_owned()),
            "exception" => {
                let name = frame.header(":exception-type").unwrap_or("UnknownError");
                let payload: Value = serde_json::from_slice(&frame.payload).unwrap_or(Value::Null);
                let message = payload
                    .get("message")
                    .or_else(|| payload.get("Message"))
                    .and_then(Value::as_str)
                    .unwrap_or("An unknown error occurred");
                return Err(format!("{}: {message}", error_prefix(name)));
            }
            _ => {}
        }
        let kind = frame.header(":event-type").unwrap_or_default();
        // No one sees the raw event: the common delta is read typed, borrowing the payload.
        if kind == "contentBlockDelta"
            && ctx.options.on_provider_stream_event.is_none()
            && let Some(delta) = TypedBlockDelta::read(&frame.payload)
        {
            self.typed_delta(delta, out);
            return Ok(());
        }
        let payload: Value =
            serde_json::from_slice(&frame.payload).map_err(|e| format!("Could not parse Bedrock event {kind}: {e}"))?;
        if let Some(hook) = &ctx.options.on_provider_stream_event {
            let mut raw = serde_json::Map::new();
            raw.insert(kind.to_owned(), payload.clone());
            hook(&Value::Object(raw), &ctx.model);
        }
        self.on_event(kind, &payload, ctx, out)
    }

    /// Handles one event by its type.
    pub fn on_event(
        &mut self,
        kind: &str,
        p: &Value,
        ctx: &StreamContext,
        out: &mut ProviderOutput,
    ) -> Result<(), String> {
        match kind {
            "messageStart" if p.get("role").and_then(Value::as_str) != Some("assistant") => {
                return Err("Unexpected assistant message start but got user message start instead".to_owned());
            }
            "contentBlockStart" => self.block_start(p, out),
            "contentBlockDelta" => self.block_delta(p, out),
            "contentBlockStop" => self.block_stop(p, out),
            "messageStop" => {
                let reason = p.get("stopReason").and_then(Value::as_str);
                let m = out.message_mut();
                m.raw_stop_reason = reason.map(str::to_owned);
                let (stop, error) = map_stop_reason(reason);
                m.stop_reason = stop;
                if let Some(error) = error {
                    m.error_message = Some(error);
                }
            }
            "metadata" => {
                if let Some(usage) = p.get("usage").filter(|u| u.is_object()) {
                    let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
                    let u = &mut out.message_mut().usage;
                    u.input = n("inputTokens");
                    u.output = n("outputTokens");
                    u.cache_read = n("cacheReadInputTokens");
                    u.cache_write = n("cacheWriteInputTokens");
                    u.cache_write_1h = Some(
                        usage
                            .get("cacheDetails")
                            .and_then(Value::as_array)
                            .map(|d| {
                                d.iter()
                                    .filter(|x| x.get("ttl").and_then(Value::as_str) == Some("1h"))
                                    .filter_map(|x| x.get("inputTokens").and_then(Value::as_u64))
                                    .sum()
                            })
                            .unwrap_or(0),
                    );
                    u.total_tokens = match n("totalTokens") {
                        0 => u.input + u.output,
                        t => t,
                    };
                    crate::http::shared::calculate_cost(&ctx.model, u);
                }
            }
            "internalServerException"
            | "modelStreamErrorException"
            | "validationException"
            | "throttlingException"
            | "serviceUnavailableException" => {
                let message = p.get("message").and_then(Value::as_str).unwrap_or("An unknown error occurred");
                return Err(format!("{}: {message}", error_prefix(kind)));
            }
            _ => {}
        }
        Ok(())
    }

    fn block_start(&mut self, p: &Value, out: &mut ProviderOutput) {
        let Some(tool) = p.pointer("/start/toolUse") else { return };
        let index = out.message().content.len();
        let s = |k: &str| tool.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        out.emit(E::ToolCallStart {
            content_index: index,
            tool_call: Box::new(ToolCall::new(s("toolUseId"), s("name"), Default::default())),
        });
        let block = p.get("contentBlockIndex").and_then(Value::as_u64).unwrap_or(0);
        self.open.insert(block, Open { index, redacted: Vec::new() });
    }

    fn block_delta(&mut self, p: &Value, out: &mut ProviderOutput) {
        let block = p.get("contentBlockIndex").and_then(Value::as_u64).unwrap_or(0);
        let Some(delta) = p.get("delta") else { return };
        if let Some(text) = delta.get("text").and_then(Value::as_str) {
            self.text_delta(block, text, out);
        } else if let Some(tool) = delta.get("toolUse") {
            self.tool_delta(block, tool.get("input").and_then(Value::as_str).unwrap_or_default(), out);
        } else if let Some(reasoning) = delta.get("reasoningContent") {
            let s = |k: &str| reasoning.get(k).and_then(Value::as_str);
            self.reasoning_delta(block, s("text"), s("signature"), s("redactedContent"), out);
        }
    }

    fn text_delta(&mut self, block: u64, text: &str, out: &mut ProviderOutput) {
        let index = match self.open.get(&block) {
            Some(open) => open.index,
            None => {
                let index = out.message().content.len();
                out.emit(E::TextStart { content_index: index, block: TextContent::new("") });
                self.open.insert(block, Open { index, redacted: Vec::new() });
                index
            }
        };
        if matches!(out.message().content.get(index), Some(AssistantBlock::Text(_))) {
            out.emit(E::TextDelta { content_index: index, delta: text.to_owned() });
        }
    }

    fn tool_delta(&mut self, block: u64, input: &str, out: &mut ProviderOutput) {
        let Some(open) = self.open.get(&block) else { return };
        if matches!(out.message().content.get(open.index), Some(AssistantBlock::ToolCall(_))) {
            out.emit(E::ToolCallDelta { content_index: open.index, delta: input.to_owned() });
        }
    }

    /// [`BedrockStream::block_delta`] for a delta read as a [`TypedBlockDelta`].
    fn typed_delta(&mut self, event: TypedBlockDelta<'_>, out: &mut ProviderOutput) {
        let block = event.block.unwrap_or(0);
        let delta = event.delta;
        if let Some(text) = delta.text {
            self.text_delta(block, &text, out);
        } else if let Some(Some(tool)) = delta.tool_use {
            self.tool_delta(block, tool.input.as_deref().unwrap_or_default(), out);
        } else if let Some(reasoning) = delta.reasoning {
            self.reasoning_delta(block, reasoning.text.as_deref(), None, None, out);
        }
    }

    fn reasoning_delta(
        &mut self,
        block: u64,
        text: Option<&str>,
        signature: Option<&str>,
        redacted_content: Option<&str>,
        out: &mut ProviderOutput,
    ) {
        let open = self.open.entry(block).or_insert_with(|| {
            let index = out.message().content.len();
            out.emit(E::ThinkingStart {
                content_index: index,
                block: ThinkingContent { thinking_signature: Some(String::new()), ..Default::default() },
            });
            Open { index, redacted: Vec::new() }
        });
        let index = open.index;
        if !matches!(out.message().content.get(index), Some(AssistantBlock::Thinking(_))) {
            return;
        }
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            out.emit(E::ThinkingDelta { content_index: index, delta: text.to_owned() });
        }
        let redacted = |out: &ProviderOutput| matches!(out.message().content.get(index), Some(AssistantBlock::Thinking(t)) if t.redacted == Some(true));
        if let Some(signature) = signature.filter(|s| !s.is_empty())
            && !redacted(out)
            && let Some(AssistantBlock::Thinking(t)) = out.message_mut().content.get_mut(index)
        {
            t.thinking_signature.get_or_insert_with(String::new).push_str(signature);
        }
        let payload = redacted_content.and_then(|b| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(b).ok().filter(|b| !b.is_empty())
        });
        if let Some(bytes) = payload {
            if !redacted(out) {
                if let Some(AssistantBlock::Thinking(t)) = out.message_mut().content.get_mut(index) {
                    t.redacted = Some(true);
                    t.thinking_signature = Some(String::new());
                }
                out.emit(E::ThinkingDelta { content_index: index, delta: REDACTED_THINKING_PLACEHOLDER.to_owned() });
            }
            open.redacted.extend_from_slice(&bytes);
        }
    }

    fn flush_redacted(open: &mut Open, out: &mut ProviderOutput) {
        if open.redacted.is_empty() {
            return;
        }
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(std::mem::take(&mut open.redacted));
        if let Some(AssistantBlock::Thinking(t)) = out.message_mut().content.get_mut(open.index) {
            t.thinking_signature = Some(encoded);
        }
    }

    fn block_stop(&mut self, p: &Value, out: &mut ProviderOutput) {
        let block = p.get("contentBlockIndex").and_then(Value::as_u64).unwrap_or(0);
        let Some(mut open) = self.open.remove(&block) else { return };
        let index = open.index;
        Self::flush_redacted(&mut open, out);
        let end = match &out.message().content[index] {
            AssistantBlock::Text(t) => E::TextEnd { content_index: index, block: t.clone() },
            AssistantBlock::Thinking(t) => E::ThinkingEnd { content_index: index, block: t.clone() },
            AssistantBlock::ToolCall(call) => {
                let (arguments, arguments_error) =
                    finish_tool_arguments(out.partial().tool_arguments_text(index).unwrap_or_default());
                E::ToolCallEnd {
                    content_index: index,
                    tool_call: Box::new(ToolCall { arguments, arguments_error, ..call.clone() }),
                }
            }
        };
        out.emit(end);
    }

    /// Ends the stream state of blocks the stream never stopped (only redacted payloads settle).
    pub fn flush(&mut self, out: &mut ProviderOutput) {
        for (_, mut open) in self.open.drain() {
            Self::flush_redacted(&mut open, out);
        }
    }

    /// After the body ended: pi's checks of the stop reason.
    pub fn on_end(&mut self, out: &mut ProviderOutput) -> Result<(), String> {
        let m = out.message();
        match m.stop_reason {
            StopReason::Pending => Err("Bedrock stream ended without a stop reason".to_owned()),
            StopReason::Error | StopReason::Aborted => Err(m
                .error_message
                .clone()
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "An unknown error occurred".to_owned())),
            _ => {
                self.flush(out);
                Ok(())
            }
        }
    }
}

/// pi's `mapStopReason` for Bedrock.
pub fn map_stop_reason(reason: Option<&str>) -> (StopReason, Option<String>) {
    match reason {
        Some("end_turn" | "stop_sequence") => (StopReason::Stop, None),
        Some("max_tokens" | "model_context_window_exceeded") => (StopReason::Length, None),
        Some("tool_use") => (StopReason::ToolUse, None),
        Some(other) => (StopReason::Error, Some(format!("Provider stopped with: {other}"))),
        None => (StopReason::Error, None),
    }
}

/// The event almost every streamed delta is: `contentBlockDelta` with text, tool input or reasoning
/// text. It is read typed and borrowing; any other shape (a signature or redacted reasoning, a
/// `null` member, a field of another type, a duplicate key) takes the `Value` path, which reads
/// every shape.
#[derive(serde::Deserialize)]
struct TypedBlockDelta<'a> {
    #[serde(rename = "contentBlockIndex", default)]
    block: Option<u64>,
    #[serde(borrow)]
    delta: TypedDeltaBody<'a>,
}

#[derive(serde::Deserialize)]
struct TypedDeltaBody<'a> {
    #[serde(borrow, default, deserialize_with = "crate::providers::typed::borrowed")]
    text: Option<Cow<'a, str>>,
    #[serde(rename = "toolUse", borrow, default, deserialize_with = "crate::providers::typed::nullable")]
    tool_use: Option<Option<TypedToolUse<'a>>>,
    #[serde(rename = "reasoningContent", borrow, default)]
    reasoning: Option<TypedReasoning<'a>>,
}

#[derive(serde::Deserialize)]
struct TypedToolUse<'a> {
    #[serde(borrow, default, deserialize_with = "crate::providers::typed::borrowed")]
    input: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct TypedReasoning<'a> {
    #[serde(borrow, default, deserialize_with = "crate::providers::typed::borrowed")]
    text: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "crate::providers::typed::present")]
    signature: bool,
    #[serde(rename = "redactedContent", default, deserialize_with = "crate::providers::typed::present")]
    redacted_content: bool,
}

impl<'a> TypedBlockDelta<'a> {
    /// The event, when the typed path handles it exactly as the `Value` path would.
    fn read(payload: &'a [u8]) -> Option<Self> {
        let event: TypedBlockDelta<'a> = serde_json::from_slice(payload).ok()?;
        let d = &event.delta;
        let handled = d.text.is_some()
            || match &d.tool_use {
                Some(tool) => tool.is_some(),
                None => d.reasoning.as_ref().is_some_and(|r| !r.signature && !r.redacted_content),
            };
        handled.then_some(event)
    }
}
