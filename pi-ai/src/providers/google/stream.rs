//! Gemini `streamGenerateContent?alt=sse` chunks → events (pi's loop over the SDK's stream).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::http::{ProviderOutput, SseHandler, StreamContext};
use crate::sse::SseEventRef;
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

    fn on_text(&mut self, thinking: bool, signature: Option<&str>, text: &str, out: &mut ProviderOutput) {
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
        if let Some(sig) = signature.filter(|s| !s.is_empty()) {
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
        out.emit(E::ToolCallStart { content_index: index, tool_call: Box::new(tool_call.clone()) });
        out.emit(E::ToolCallDelta { content_index: index, delta });
        out.emit(E::ToolCallEnd { content_index: index, tool_call: Box::new(tool_call) });
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
                    let thinking = part.get("thought") == Some(&Value::Bool(true));
                    let signature = part.get("thoughtSignature").and_then(Value::as_str);
                    self.on_text(thinking, signature, text, out);
                }
                if let Some(call) = part.get("functionCall").filter(|c| c.is_object()) {
                    self.on_call(part, call, out);
                }
            }
        }
        if let Some(reason) = candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str) {
            finish_reason(reason, out)?;
        }
        if let Some(usage) = chunk.get("usageMetadata").filter(|u| u.is_object()) {
            let n = |k: &str| usage.get(k).and_then(Value::as_u64);
            let counts = UsageCounts {
                prompt: n("promptTokenCount"),
                candidates: n("candidatesTokenCount"),
                thoughts: n("thoughtsTokenCount"),
                cached: n("cachedContentTokenCount"),
                total: n("totalTokenCount"),
            };
            counts.apply(ctx, out);
        }
        Ok(())
    }

    /// [`GoogleStream::on_chunk`] for a chunk read as a [`TextChunk`].
    fn on_text_chunk(
        &mut self,
        chunk: TextChunk<'_>,
        ctx: &StreamContext,
        out: &mut ProviderOutput,
    ) -> Result<(), String> {
        if out.message().response_id.is_none()
            && let Some(id) = chunk.response_id.filter(|s| !s.is_empty())
        {
            out.message_mut().response_id = Some(id.into_owned());
        }
        let candidate = chunk.candidates.into_iter().flatten().next();
        let (parts, reason) = match candidate {
            Some(c) => (c.content.and_then(|c| c.parts).unwrap_or_default(), c.finish_reason),
            None => (Vec::new(), None),
        };
        for part in parts {
            if let Some(text) = part.text {
                self.on_text(part.thought == Some(true), part.thought_signature.as_deref(), &text, out);
            }
        }
        if let Some(reason) = reason {
            finish_reason(&reason, out)?;
        }
        if let Some(usage) = chunk.usage_metadata {
            usage.apply(ctx, out);
        }
        Ok(())
    }
}

/// Sets the stop reason a `finishReason` maps to (an unknown one is an error).
fn finish_reason(reason: &str, out: &mut ProviderOutput) -> Result<(), String> {
    let stop = map_stop_reason(reason)?;
    let has_calls = out.message().content.iter().any(|b| matches!(b, AssistantBlock::ToolCall(_)));
    let m = out.message_mut();
    m.raw_stop_reason = Some(reason.to_owned());
    m.stop_reason = if has_calls && stop == StopReason::Stop { StopReason::ToolUse } else { stop };
    Ok(())
}

/// A chunk's `usageMetadata` counts (a missing one, or one of another type, counts 0).
#[derive(Default, serde::Deserialize)]
struct UsageCounts {
    #[serde(default, rename = "promptTokenCount")]
    prompt: Option<u64>,
    #[serde(default, rename = "candidatesTokenCount")]
    candidates: Option<u64>,
    #[serde(default, rename = "thoughtsTokenCount")]
    thoughts: Option<u64>,
    #[serde(default, rename = "cachedContentTokenCount")]
    cached: Option<u64>,
    #[serde(default, rename = "totalTokenCount")]
    total: Option<u64>,
}

impl UsageCounts {
    fn apply(&self, ctx: &StreamContext, out: &mut ProviderOutput) {
        let u = &mut out.message_mut().usage;
        let cached = self.cached.unwrap_or(0);
        let thoughts = self.thoughts.unwrap_or(0);
        u.input = self.prompt.unwrap_or(0).saturating_sub(cached);
        u.output = self.candidates.unwrap_or(0) + thoughts;
        u.cache_read = cached;
        u.cache_write = 0;
        u.reasoning = Some(thoughts);
        u.total_tokens = self.total.unwrap_or(0);
        crate::http::shared::calculate_cost(&ctx.model, u);
    }
}

/// The chunk almost every streamed delta is: text (or thought) parts of the first candidate,
/// perhaps a finish reason and usage counts. It is read typed and borrowing; any other chunk (a
/// function call, an error, a field of another type, a duplicate key) takes the `Value` path,
/// which reads every shape.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TextChunk<'a> {
    #[serde(borrow, default, deserialize_with = "crate::providers::typed::borrowed")]
    response_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    candidates: Option<Vec<TextCandidate<'a>>>,
    #[serde(default)]
    usage_metadata: Option<UsageCounts>,
    #[serde(default, deserialize_with = "crate::providers::typed::present")]
    error: bool,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TextCandidate<'a> {
    #[serde(borrow, default)]
    content: Option<TextContentOf<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::providers::typed::borrowed")]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct TextContentOf<'a> {
    #[serde(borrow, default)]
    parts: Option<Vec<TextPart<'a>>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TextPart<'a> {
    #[serde(borrow, default, deserialize_with = "crate::providers::typed::borrowed")]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(borrow, default, deserialize_with = "crate::providers::typed::borrowed")]
    thought_signature: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "crate::providers::typed::present")]
    function_call: bool,
}

impl<'a> TextChunk<'a> {
    /// The chunk, when the typed path handles it exactly as the `Value` path would.
    fn read(data: &'a str) -> Option<Self> {
        let chunk: TextChunk<'a> = serde_json::from_str(data).ok()?;
        let plain = !chunk.error
            && chunk
                .candidates
                .iter()
                .flatten()
                .next()
                .is_none_or(|c| c.content.iter().flat_map(|c| c.parts.iter().flatten()).all(|p| !p.function_call));
        plain.then_some(chunk)
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
    fn on_event(
        &mut self,
        event: SseEventRef<'_>,
        ctx: &StreamContext,
        out: &mut ProviderOutput,
    ) -> Result<(), String> {
        if event.data.trim().is_empty() {
            return Ok(());
        }
        // No one sees the raw chunk: the common one is read typed, borrowing the event's text.
        if ctx.options.on_provider_stream_event.is_none()
            && let Some(chunk) = TextChunk::read(event.data)
        {
            return self.on_text_chunk(chunk, ctx, out);
        }
        let chunk: Value = serde_json::from_str(event.data).map_err(|e| json_error(&e))?;
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
