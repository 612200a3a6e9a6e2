//! Mistral chat-completion chunks → events (pi's `consumeChatStream`).

use std::borrow::Cow;
use std::ops::Range;

use indexmap::IndexMap;
use serde_json::Value;

use crate::http::shared::{finish_tool_arguments, settle_open_tool_calls};
use crate::http::{ProviderOutput, SseHandler, StreamContext};
use crate::json::frame::StringFrame;
use crate::json::scan::{Reject, Scan, Scanner, once, read_once};
use crate::sse::SseEventRef;
use crate::stream::AssistantMessageEvent as E;
use crate::types::{AssistantBlock, StopReason, TextContent, ThinkingContent, ToolCall};

/// The stream state of one Mistral response.
#[derive(Debug, Default)]
pub struct MistralStream {
    /// The open text or thinking block.
    open: Option<usize>,
    /// Open tool calls by Mistral's `index` (or id), in arrival order → content index.
    calls: IndexMap<String, usize>,
    done: bool,
    /// The last text delta read typed, when nothing else in it has an effect applied again.
    frame: StringFrame,
}

impl MistralStream {
    /// A fresh handler.
    pub fn new() -> Self {
        MistralStream::default()
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

    fn push_text(&mut self, thinking: bool, delta: String, out: &mut ProviderOutput) {
        if delta.is_empty() {
            return;
        }
        let open_is_thinking = self.open.map(|i| matches!(out.message().content[i], AssistantBlock::Thinking(_)));
        if open_is_thinking != Some(thinking) {
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
        out.emit(if thinking {
            E::ThinkingDelta { content_index: index, delta }
        } else {
            E::TextDelta { content_index: index, delta }
        });
    }

    fn on_tool_call(&mut self, call: &Value, out: &mut ProviderOutput) {
        self.close_open(out);
        let index_key = call.get("index").and_then(Value::as_u64);
        let id = match call.get("id").and_then(Value::as_str).filter(|id| *id != "null" && !id.is_empty()) {
            Some(id) => id.to_owned(),
            None => super::derive_tool_call_id(&format!("toolcall:{}", index_key.unwrap_or(0)), 0),
        };
        let key = index_key.map_or_else(|| id.clone(), |i| format!("#{i}"));
        let function = call.get("function").unwrap_or(&Value::Null);
        let content_index = match self.calls.get(&key) {
            Some(&i) => i,
            None => {
                let name = function.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                let i = out.message().content.len();
                out.emit(E::ToolCallStart {
                    content_index: i,
                    tool_call: Box::new(ToolCall::new(id, name, Default::default())),
                });
                self.calls.insert(key, i);
                i
            }
        };
        let delta = match function.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(v) if !v.is_null() && v != &Value::Bool(false) => v.to_string(),
            _ => "{}".to_owned(),
        };
        out.emit(E::ToolCallDelta { content_index, delta });
    }

    fn on_chunk(&mut self, chunk: &Value, ctx: &StreamContext, out: &mut ProviderOutput) {
        if out.message().response_id.is_none()
            && let Some(id) = chunk.get("id").and_then(Value::as_str).filter(|s| !s.is_empty())
        {
            out.message_mut().response_id = Some(id.to_owned());
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |v: Option<&Value>| v.and_then(Value::as_u64);
            let prompt = n(usage.get("prompt_tokens")).unwrap_or(0);
            let cached = [
                "/promptTokensDetails/cachedTokens",
                "/prompt_tokens_details/cached_tokens",
                "/promptTokenDetails/cachedTokens",
                "/prompt_token_details/cached_tokens",
                "/numCachedTokens",
                "/num_cached_tokens",
            ]
            .iter()
            .find_map(|p| n(usage.pointer(p)))
            .unwrap_or(0)
            .min(prompt);
            let u = &mut out.message_mut().usage;
            u.input = prompt - cached;
            u.output = n(usage.get("completion_tokens")).unwrap_or(0);
            u.cache_read = cached;
            u.cache_write = 0;
            u.total_tokens =
                n(usage.get("total_tokens")).filter(|t| *t > 0).unwrap_or(u.input + u.output + u.cache_read);
            crate::http::shared::calculate_cost(&ctx.model, u);
        }
        let Some(choice) = chunk.pointer("/choices/0") else { return };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            finish_reason(reason, out);
        }
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        match delta.get("content") {
            Some(Value::String(s)) => self.push_text(false, s.clone(), out),
            Some(Value::Array(items)) => {
                for item in items {
                    match item {
                        Value::String(s) => self.push_text(false, s.clone(), out),
                        _ => match item.get("type").and_then(Value::as_str) {
                            Some("thinking") => {
                                let text: String = item
                                    .get("thinking")
                                    .and_then(Value::as_array)
                                    .into_iter()
                                    .flatten()
                                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                                    .collect();
                                self.push_text(true, text, out);
                            }
                            Some("text") => {
                                let text = item.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
                                self.push_text(false, text, out);
                            }
                            _ => {}
                        },
                    }
                }
            }
            _ => {}
        }
        for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            self.on_tool_call(call, out);
        }
    }
}

impl MistralStream {
    /// [`MistralStream::on_chunk`] for a chunk read as a [`TextChunk`].
    fn on_text_chunk(&mut self, chunk: TextChunk<'_>, out: &mut ProviderOutput) {
        if out.message().response_id.is_none()
            && let Some(id) = chunk.id.filter(|s| !s.is_empty())
        {
            out.message_mut().response_id = Some(id.into_owned());
        }
        let Some(Choice { finish_reason: reason, content, .. }) = chunk.choice else { return };
        if let Some(reason) = reason {
            finish_reason(&reason, out);
        }
        if let Some(text) = content {
            self.push_text(false, text.into_owned(), out);
        }
    }
}

/// Sets the stop reason a non-empty `finish_reason` maps to.
fn finish_reason(reason: &str, out: &mut ProviderOutput) {
    if reason.is_empty() {
        return;
    }
    let (stop, error) = map_stop_reason(reason);
    let m = out.message_mut();
    m.raw_stop_reason = Some(reason.to_owned());
    m.stop_reason = stop;
    if error.is_some() {
        m.error_message = error;
    }
}

/// The chunk almost every streamed delta is: text content in its first choice, perhaps a finish
/// reason. It is read in place by [`Scanner`]; any other chunk (usage, tool calls, content parts,
/// a member of another type, a duplicate member, anything the scanner declines) takes the `Value`
/// path, which reads every shape.
struct TextChunk<'a> {
    id: Option<Cow<'a, str>>,
    /// `choices[0]`: its finish reason and delta text.
    choice: Option<Choice<'a>>,
}

/// A first choice's finish reason and delta text.
struct Choice<'a> {
    finish_reason: Option<Cow<'a, str>>,
    content: Option<Cow<'a, str>>,
    /// Where `content`'s raw text lies in the chunk's text, when it is a string.
    content_span: Option<Range<usize>>,
}

impl<'a> TextChunk<'a> {
    /// The chunk, when the typed path handles it exactly as the `Value` path would.
    fn read(data: &'a str) -> Option<Self> {
        let mut s = Scanner::new(data);
        let chunk = Self::scan(&mut s).ok()?;
        s.end().ok()?;
        Some(chunk)
    }

    fn scan(s: &mut Scanner<'a>) -> Scan<Self> {
        let (mut id, mut choice, mut choices) = (None, None, false);
        let mut seen_id = false;
        s.object(|s, key| match &*key {
            "id" => read_once(s, &mut seen_id, &mut id, Scanner::null_or_string),
            // Usage, even a null one, is the `Value` path's.
            "usage" => Err(Reject),
            "choices" => {
                once(&mut choices)?;
                s.array(|s, index| {
                    if index == 0 {
                        choice = Some(scan_choice(s)?);
                        Ok(())
                    } else {
                        s.skip()
                    }
                })
            }
            _ => s.skip(),
        })?;
        if !choices {
            return Err(Reject);
        }
        Ok(Self { id, choice })
    }

    /// Where the text of a chunk that is a text delta and nothing else lies in its text (its
    /// `id` is only taken while the message has none, so it has no effect applied again): the
    /// next chunk that differs from it only in that text can be read in its frame
    /// ([`crate::json::frame`]).
    fn text_only_span(&self) -> Option<Range<usize>> {
        let choice = self.choice.as_ref()?;
        if choice.finish_reason.as_deref().is_some_and(|r| !r.is_empty()) {
            return None;
        }
        choice.content_span.clone()
    }
}

/// A first choice: its `finish_reason` and `delta.content`; tool calls (even `null`) decline.
fn scan_choice<'a>(s: &mut Scanner<'a>) -> Scan<Choice<'a>> {
    let mut choice = Choice { finish_reason: None, content: None, content_span: None };
    let mut seen = [false; 3];
    s.object(|s, key| match &*key {
        "finish_reason" => read_once(s, &mut seen[0], &mut choice.finish_reason, Scanner::null_or_string),
        "delta" => {
            once(&mut seen[1])?;
            if s.null()? {
                return Ok(());
            }
            s.object(|s, key| match &*key {
                "content" => {
                    once(&mut seen[2])?;
                    (choice.content, choice.content_span) = s.null_or_string_span()?.unzip();
                    Ok(())
                }
                "tool_calls" => Err(Reject),
                _ => s.skip(),
            })
        }
        _ => s.skip(),
    })?;
    Ok(choice)
}

/// `JSON.parse`'s wording for a chunk cut short, else serde's.
fn json_error(error: &serde_json::Error) -> String {
    if error.is_eof() {
        "Unexpected end of JSON input".to_owned()
    } else {
        format!("Unexpected token in JSON: {error}")
    }
}

impl SseHandler for MistralStream {
    fn on_event(
        &mut self,
        event: SseEventRef<'_>,
        ctx: &StreamContext,
        out: &mut ProviderOutput,
    ) -> Result<(), String> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        // No one sees the raw chunk: the common one is read typed, borrowing the event's text,
        // and a text delta that only differs from the last one in its text is read in its frame.
        if ctx.options.on_provider_stream_event.is_none() {
            if let Some(text) = self.frame.string(data) {
                self.push_text(false, text.into_owned(), out);
                return Ok(());
            }
            if let Some(chunk) = TextChunk::read(data) {
                match chunk.text_only_span() {
                    Some(span) => self.frame.set(data, span),
                    None => self.frame.clear(),
                }
                self.on_text_chunk(chunk, out);
                return Ok(());
            }
        }
        self.frame.clear();
        let chunk: Value = serde_json::from_str(data).map_err(|e| json_error(&e))?;
        if !chunk.get("choices").is_some_and(Value::is_array) {
            return Err("Invalid Mistral streaming event".to_owned());
        }
        ctx.raw_event(&chunk);
        self.on_chunk(&chunk, ctx, out);
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn on_end(&mut self, _ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        self.close_open(out);
        for (_, index) in std::mem::take(&mut self.calls) {
            let AssistantBlock::ToolCall(call) = &out.message().content[index] else { continue };
            let (arguments, arguments_error) =
                finish_tool_arguments(out.partial().tool_arguments_text(index).unwrap_or_default());
            let tool_call = ToolCall { arguments, arguments_error, ..call.clone() };
            out.emit(E::ToolCallEnd { content_index: index, tool_call: Box::new(tool_call) });
        }
        let m = out.message();
        match m.stop_reason {
            StopReason::Pending => Err("Mistral stream ended without a finish reason".to_owned()),
            StopReason::Aborted | StopReason::Error => Err(m
                .error_message
                .clone()
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "An unknown error occurred".to_owned())),
            _ => Ok(()),
        }
    }

    fn on_error(&mut self, out: &mut ProviderOutput) {
        settle_open_tool_calls(out);
    }

    fn on_abort(&mut self, _ctx: &StreamContext, _out: &mut ProviderOutput) -> String {
        "This operation was aborted".to_owned()
    }
}

/// pi's `mapChatStopReason` for Mistral: the stop reason and, for errors, the message.
pub fn map_stop_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" => (StopReason::Stop, None),
        "length" | "model_length" => (StopReason::Length, None),
        "tool_calls" => (StopReason::ToolUse, None),
        "error" => (StopReason::Error, Some("Provider stopped with: error (server error)".to_owned())),
        other => (StopReason::Error, Some(format!("Provider stopped with: {other}"))),
    }
}
