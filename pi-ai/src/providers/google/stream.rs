//! Gemini `streamGenerateContent?alt=sse` chunks → events (pi's loop over the SDK's stream).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::http::{ProviderOutput, SseHandler, StreamContext};
use crate::sse::SseEvent;
use crate::stream::AssistantMessageEvent as E;
use crate::types::{AssistantBlock, StopReason, TextContent, ThinkingContent, ToolCall, now_ms};

/// Ids for calls that arrive without one (or with a duplicate), as pi's module-level counter.
static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The stream state of one Gemini response.
#[derive(Debug)]
pub struct GoogleStream {
    /// Index of the open text or thinking block.
    open: Option<usize>,
    /// The text of "ended without a finish reason" (`Google` or `Google Vertex`).
    name: &'static str,
}

impl GoogleStream {
    /// A handler; `name` is how pi names the API in its end-of-stream error.
    pub fn new(name: &'static str) -> Self {
        GoogleStream { open: None, name }
    }

    fn close_open(&mut self, out: &mut ProviderOutput) {
        let Some(index) = self.open.take() else { return };
        let end = match &out.message().content[index] {
            AssistantBlock::Text(t) => E::TextEnd { content_index: index, block: t.clone() },
            AssistantBlock::Thinking(t) => E::ThinkingEnd { content_index: index, block: t.clone() },
            AssistantBlock::ToolCall(_) => return,
        };
        out.emit(end);
    }

    fn on_text(&mut self, part: &Value, text: &str, out: &mut ProviderOutput) {
        let thinking = part.get("thought") == Some(&Value::Bool(true));
        let open_kind = self.open.map(|i| matches!(out.message().content[i], AssistantBlock::Thinking(_)));
        if open_kind != Some(thinking) {
            self.close_open(out);
            let index = out.message().content.len();
            out.emit(if thinking {
                E::ThinkingStart { content_index: index, block: ThinkingContent::default() }
            } else {
                E::TextStart { content_index: index, block: TextContent::new("") }
            });
            self.open = Some(index);
        }
        let Some(index) = self.open else { return };
        let signature = part.get("thoughtSignature").and_then(Value::as_str).filter(|s| !s.is_empty());
        if let Some(sig) = signature {
            match out.message_mut().content.get_mut(index) {
                Some(AssistantBlock::Thinking(t)) => t.thinking_signature = Some(sig.to_owned()),
                Some(AssistantBlock::Text(t)) => t.text_signature = Some(sig.to_owned()),
                _ => {}
            }
        }
        let delta = text.to_owned();
        out.emit(if thinking {
            E::ThinkingDelta { content_index: index, delta }
        } else {
            E::TextDelta { content_index: index, delta }
        });
    }

    fn on_call(&mut self, part: &Value, call: &Value, out: &mut ProviderOutput) {
        self.close_open(out);
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        let provided = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
        let duplicate =
            |id: &str| out.message().content.iter().any(|b| matches!(b, AssistantBlock::ToolCall(c) if c.id == id));
        let id = match provided {
            Some(id) if !duplicate(id) => id.to_owned(),
            _ => format!("{name}_{}_{}", now_ms(), TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1),
        };
        let arguments = call.get("args").and_then(Value::as_object).cloned().unwrap_or_default();
        let delta = serde_json::to_string(&arguments).unwrap_or_else(|_| "{}".to_owned());
        let mut tool_call = ToolCall::new(id, name, arguments);
        tool_call.thought_signature =
            part.get("thoughtSignature").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
        let index = out.message().content.len();
        out.emit(E::ToolCallStart { content_index: index, tool_call: tool_call.clone() });
        out.emit(E::ToolCallDelta { content_index: index, delta });
        out.emit(E::ToolCallEnd { content_index: index, tool_call });
    }

    fn on_chunk(&mut self, chunk: &Value, ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        if out.message().response_id.is_none()
            && let Some(id) = chunk.get("responseId").and_then(Value::as_str).filter(|s| !s.is_empty())
        {
            out.message_mut().response_id = Some(id.to_owned());
        }
        let candidate = chunk.pointer("/candidates/0");
        if let Some(parts) = candidate.and_then(|c| c.pointer("/content/parts")).and_then(Value::as_array) {
            for part in parts {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    self.on_text(part, text, out);
                }
                if let Some(call) = part.get("functionCall").filter(|c| c.is_object()) {
                    self.on_call(part, call, out);
                }
            }
        }
        if let Some(reason) = candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str) {
            let stop = map_stop_reason(reason)?;
            let has_calls = out.message().content.iter().any(|b| matches!(b, AssistantBlock::ToolCall(_)));
            let m = out.message_mut();
            m.raw_stop_reason = Some(reason.to_owned());
            m.stop_reason = if has_calls && stop == StopReason::Stop { StopReason::ToolUse } else { stop };
        }
        if let Some(usage) = chunk.get("usageMetadata").filter(|u| u.is_object()) {
            let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
            let u = &mut out.message_mut().usage;
            let cached = n("cachedContentTokenCount");
            u.input = n("promptTokenCount").saturating_sub(cached);
            u.output = n("candidatesTokenCount") + n("thoughtsTokenCount");
            u.cache_read = cached;
            u.cache_write = 0;
            u.reasoning = Some(n("thoughtsTokenCount"));
            u.total_tokens = n("totalTokenCount");
            crate::http::shared::calculate_cost(&ctx.model, u);
        }
        Ok(())
    }
}

/// `JSON.parse`'s wording for the usual broken chunk (cut short), else serde's.
fn json_error(error: &serde_json::Error) -> String {
    if error.is_eof() {
        "Unexpected end of JSON input".to_owned()
    } else {
        format!("Unexpected token in JSON: {error}")
    }
}

impl SseHandler for GoogleStream {
    fn on_event(&mut self, event: SseEvent, ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        if event.data.trim().is_empty() {
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(&event.data).map_err(|e| json_error(&e))?;
        ctx.raw_event(&chunk);
        if let Some(error) = chunk.get("error").filter(|e| e.is_object()) {
            return Err(serde_json::json!({ "error": error }).to_string());
        }
        self.on_chunk(&chunk, ctx, out)
    }

    fn on_end(&mut self, _ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        self.close_open(out);
        let m = out.message();
        match m.stop_reason {
            StopReason::Pending => Err(format!("{} stream ended without a finish reason", self.name)),
            StopReason::Aborted | StopReason::Error => Err(m
                .raw_stop_reason
                .as_ref()
                .map_or_else(|| "An unknown error occurred".to_owned(), |r| format!("Provider stopped with: {r}"))),
            _ => Ok(()),
        }
    }

    fn on_abort(&mut self, _ctx: &StreamContext, _out: &mut ProviderOutput) -> String {
        "This operation was aborted".to_owned()
    }
}

/// pi's `mapStopReason` for Gemini finish reasons (an unknown one is an error).
pub fn map_stop_reason(reason: &str) -> Result<StopReason, String> {
    Ok(match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" | "CONTINUATION" => StopReason::Length,
        "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "SAFETY"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "IMAGE_OTHER"
        | "RECITATION"
        | "FINISH_REASON_UNSPECIFIED"
        | "OTHER"
        | "LANGUAGE"
        | "MALFORMED_FUNCTION_CALL"
        | "UNEXPECTED_TOOL_CALL"
        | "TOO_MANY_TOOL_CALLS"
        | "NO_IMAGE" => StopReason::Error,
        other => return Err(format!("Unhandled stop reason: {other}")),
    })
}
