//! Responses SSE → events (pi's `processResponsesStream`, function tools only).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Value, json};

use crate::http::shared::{finish_tool_arguments, parse_openai_sse_data, settle_open_tool_calls};
use crate::http::{ProviderOutput, SseHandler, StreamContext};
use crate::json::scan::{Reject, Scan, Scanner, read_once};
use crate::providers::constrained::GrammarInput;
use crate::sse::SseEventRef;
use crate::stream::AssistantMessageEvent as E;
use crate::types::{AssistantBlock, StopReason, TextContent, ThinkingContent, ToolCall, Usage};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Thinking,
    Text,
    ToolCall,
}

/// The stream state of one Responses answer: one slot per `output_index`.
#[derive(Debug, Default)]
pub struct ResponsesStream {
    /// Keyed by `output_index`; a missing index is a key of its own (`None`), as JS's `undefined`
    /// is (llama.cpp omits it).
    slots: HashMap<Option<u64>, (Kind, usize)>,
    /// Argument text per tool-call block (kept here because `…arguments.done` may replace it).
    args: HashMap<usize, String>,
    unfinished: Vec<usize>,
    reasoning_by_id: HashMap<String, usize>,
    saw_terminal: bool,
    /// Grammar tool name → input property.
    grammar: HashMap<String, String>,
    /// Per custom tool-call block: its input property, the input streamed so far and the JSON
    /// argument text not yet sent.
    custom: HashMap<usize, (String, GrammarInput, String)>,
}

impl ResponsesStream {
    /// A fresh handler.
    pub fn new() -> Self {
        ResponsesStream::default()
    }

    /// Maps the calls of grammar tools (name → input property) back to their arguments.
    pub fn with_grammar_tools(mut self, grammar: HashMap<String, String>) -> Self {
        self.grammar = grammar;
        self
    }

    /// Sends a custom tool's JSON argument piece (with any text held back since its start).
    fn custom_piece(&mut self, index: usize, piece: Option<String>, out: &mut ProviderOutput) {
        let Some((_, _, unsent)) = self.custom.get_mut(&index) else { return };
        let text = std::mem::take(unsent) + piece.as_deref().unwrap_or_default();
        if !text.is_empty() {
            self.tool_delta(index, text, out);
        }
    }

    fn custom_append(&mut self, index: usize, delta: &str, out: &mut ProviderOutput) -> Result<(), String> {
        let Some((property, buffer, _)) = self.custom.get_mut(&index) else { return Ok(()) };
        let piece = buffer.append(property, delta)?;
        self.custom_piece(index, piece, out);
        Ok(())
    }

    fn custom_close(&mut self, index: usize, input: Option<&str>, out: &mut ProviderOutput) -> Result<(), String> {
        let Some((property, buffer, _)) = self.custom.get_mut(&index) else { return Ok(()) };
        let piece = buffer.close(property, input)?;
        self.custom_piece(index, piece, out);
        Ok(())
    }

    fn slot(&self, event: &Value, kind: Kind) -> Option<usize> {
        let index = event.get("output_index").and_then(Value::as_u64);
        self.slots.get(&index).filter(|(k, _)| *k == kind).map(|(_, i)| *i)
    }

    fn apply_phase(item: &Value, out: &mut ProviderOutput) {
        if item.get("type").and_then(Value::as_str) == Some("message")
            && item.get("phase").and_then(Value::as_str) == Some("final_answer")
        {
            out.message_mut().stop_reason = StopReason::Stop;
        }
    }

    fn create_slot(
        &mut self,
        output_index: Option<u64>,
        item: &Value,
        out: &mut ProviderOutput,
    ) -> Option<(Kind, usize)> {
        let index = out.message().content.len();
        let slot = match item.get("type").and_then(Value::as_str)? {
            "reasoning" => {
                out.emit(E::ThinkingStart { content_index: index, block: ThinkingContent::default() });
                (Kind::Thinking, index)
            }
            "message" => {
                Self::apply_phase(item, out);
                out.emit(E::TextStart { content_index: index, block: TextContent::default() });
                (Kind::Text, index)
            }
            "function_call" => {
                let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or_default();
                let initial = s("arguments").to_owned();
                let mut call = ToolCall::new(
                    format!("{}|{}", s("call_id"), item.get("id").and_then(Value::as_str).unwrap_or("undefined")),
                    s("name"),
                    Default::default(),
                );
                if !initial.is_empty() {
                    call.arguments = crate::http::shared::partial_arguments(&initial);
                }
                if let Some(ns) = item.get("namespace").and_then(Value::as_str) {
                    call.namespace = Some(ns.to_owned());
                }
                out.emit(E::ToolCallStart { content_index: index, tool_call: Box::new(call) });
                self.args.insert(index, initial);
                self.unfinished.push(index);
                (Kind::ToolCall, index)
            }
            "custom_tool_call" => {
                let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or_default();
                let property = self.grammar.get(s("name")).cloned().unwrap_or_else(|| "input".to_owned());
                let input = s("input");
                let mut arguments = serde_json::Map::new();
                arguments.insert(property.clone(), Value::String(input.to_owned()));
                let mut call = ToolCall::new(
                    format!("{}|{}", s("call_id"), item.get("id").and_then(Value::as_str).unwrap_or("undefined")),
                    s("name"),
                    arguments,
                );
                if let Some(ns) = item.get("namespace").and_then(Value::as_str) {
                    call.namespace = Some(ns.to_owned());
                }
                let mut buffer = GrammarInput::default();
                let unsent = buffer.append(&property, input).ok().flatten().unwrap_or_default();
                out.emit(E::ToolCallStart { content_index: index, tool_call: Box::new(call) });
                self.args.insert(index, String::new());
                self.custom.insert(index, (property, buffer, unsent));
                self.unfinished.push(index);
                (Kind::ToolCall, index)
            }
            _ => return None,
        };
        self.slots.insert(output_index, slot);
        Some(slot)
    }

    fn tool_delta(&mut self, index: usize, delta: String, out: &mut ProviderOutput) {
        self.args.entry(index).or_default().push_str(&delta);
        out.emit(E::ToolCallDelta { content_index: index, delta });
    }

    /// `ToolCallArgumentsStream.replace`: emits the missing suffix, or restarts from `full`.
    fn replace_args(&mut self, index: usize, full: &str, out: &mut ProviderOutput) {
        let current = self.args.get(&index).cloned().unwrap_or_default();
        match full.strip_prefix(current.as_str()) {
            Some("") => {}
            Some(suffix) => self.tool_delta(index, suffix.to_owned(), out),
            None => {
                self.args.insert(index, full.to_owned());
            }
        }
    }

    fn item_done(&mut self, event: &Value, out: &mut ProviderOutput) -> Result<(), String> {
        let item = &event["item"];
        Self::apply_phase(item, out);
        let output_index = event.get("output_index").and_then(Value::as_u64);
        let slot = match self.slots.get(&output_index).copied() {
            Some(slot) => Some(slot),
            None => self.create_slot(output_index, item, out),
        };
        let Some((kind, index)) = slot else { return Ok(()) };
        match (item.get("type").and_then(Value::as_str), kind) {
            (Some("custom_tool_call"), Kind::ToolCall) if self.custom.contains_key(&index) => {
                self.custom_close(index, item.get("input").and_then(Value::as_str), out)?;
                let Some((property, buffer, _)) = self.custom.remove(&index) else { return Ok(()) };
                self.args.remove(&index);
                let AssistantBlock::ToolCall(current) = &out.message().content[index] else { return Ok(()) };
                let mut arguments = serde_json::Map::new();
                arguments.insert(property, Value::String(buffer.input));
                let mut call = ToolCall { arguments, arguments_error: None, ..current.clone() };
                if let Some(ns) = item.get("namespace").and_then(Value::as_str) {
                    call.namespace = Some(ns.to_owned());
                }
                self.unfinished.retain(|i| *i != index);
                out.emit(E::ToolCallEnd { content_index: index, tool_call: Box::new(call) });
            }
            (Some("reasoning"), Kind::Thinking) => {
                let join = |key: &str, field: &str| {
                    item.get(key)
                        .and_then(Value::as_array)
                        .map(|parts| {
                            parts
                                .iter()
                                .filter_map(|p| p.get(field).and_then(Value::as_str))
                                .collect::<Vec<_>>()
                                .join("\n\n")
                        })
                        .unwrap_or_default()
                };
                let summary = join("summary", "text");
                let content = join("content", "text");
                let AssistantBlock::Thinking(current) = &out.message().content[index] else { return Ok(()) };
                let thinking = if !summary.is_empty() {
                    summary
                } else if !content.is_empty() {
                    content
                } else {
                    current.thinking.clone()
                };
                let block = ThinkingContent { thinking, thinking_signature: Some(item.to_string()), ..current.clone() };
                if let Some(id) = item.get("id").and_then(Value::as_str) {
                    self.reasoning_by_id.insert(id.to_owned(), index);
                }
                out.emit(E::ThinkingEnd { content_index: index, block });
            }
            (Some("message"), Kind::Text) => {
                let text: String = item
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|c| {
                                if c.get("type").and_then(Value::as_str) == Some("output_text") {
                                    c.get("text")
                                } else {
                                    c.get("refusal")
                                }
                                .and_then(Value::as_str)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let mut signature = serde_json::Map::new();
                signature.insert("v".into(), json!(1));
                signature.insert("id".into(), item.get("id").cloned().unwrap_or(Value::Null));
                if let Some(phase) = item.get("phase").filter(|p| !p.is_null()) {
                    signature.insert("phase".into(), phase.clone());
                }
                let block = TextContent {
                    text,
                    text_signature: Some(Value::Object(signature).to_string()),
                    ..Default::default()
                };
                out.emit(E::TextEnd { content_index: index, block });
            }
            (Some("function_call"), Kind::ToolCall) => {
                if let Some(full) = item.get("arguments").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    // pi replaces silently here: no delta event.
                    let current = self.args.get(&index).cloned().unwrap_or_default();
                    if !full.starts_with(current.as_str()) || full.len() != current.len() {
                        self.args.insert(index, full.to_owned());
                    }
                }
                let text = self.args.remove(&index).unwrap_or_default();
                let (arguments, arguments_error) = finish_tool_arguments(&text);
                let AssistantBlock::ToolCall(current) = &out.message().content[index] else { return Ok(()) };
                let mut call = ToolCall { arguments, arguments_error, ..current.clone() };
                if let Some(ns) = item.get("namespace").and_then(Value::as_str) {
                    call.namespace = Some(ns.to_owned());
                }
                self.unfinished.retain(|i| *i != index);
                out.emit(E::ToolCallEnd { content_index: index, tool_call: Box::new(call) });
            }
            _ => return Ok(()),
        }
        self.slots.remove(&output_index);
        Ok(())
    }

    fn finalize(&mut self, response: &Value, ctx: &StreamContext, out: &mut ProviderOutput) {
        self.saw_terminal = true;
        if let Some(items) = response.get("output").and_then(Value::as_array) {
            for item in items {
                let (Some(id), Some(enc)) = (item.get("id").and_then(Value::as_str), item.get("encrypted_content"))
                else {
                    continue;
                };
                if item.get("type").and_then(Value::as_str) != Some("reasoning")
                    || enc.as_str().is_none_or(str::is_empty)
                {
                    continue;
                }
                let Some(&index) = self.reasoning_by_id.get(id) else { continue };
                if let Some(AssistantBlock::Thinking(t)) = out.message_mut().content.get_mut(index)
                    && let Some(mut stored) =
                        t.thinking_signature.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok())
                    && stored
                        .get("encrypted_content")
                        .is_none_or(|e| e.as_str().is_none_or(str::is_empty) && !e.is_string() || e.is_null())
                {
                    stored["encrypted_content"] = enc.clone();
                    t.thinking_signature = Some(stored.to_string());
                }
            }
        }
        let m = out.message_mut();
        if let Some(id) = response.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            m.response_id = Some(id.to_owned());
        }
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            let n = |p: &str| usage.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            let cached = n("/input_tokens_details/cached_tokens");
            let write = n("/input_tokens_details/cache_write_tokens");
            m.usage = Usage {
                input: n("/input_tokens").saturating_sub(cached + write),
                output: n("/output_tokens"),
                cache_read: cached,
                cache_write: write,
                reasoning: Some(n("/output_tokens_details/reasoning_tokens")),
                total_tokens: n("/total_tokens"),
                ..Default::default()
            };
        }
        crate::http::shared::calculate_cost(&ctx.model, &mut m.usage);
        let status = response.get("status").and_then(Value::as_str);
        let reason = response.pointer("/incomplete_details/reason").and_then(Value::as_str);
        m.raw_stop_reason = match (status, reason) {
            (Some(s), Some(r)) => Some(format!("{s}.{r}")),
            (s, None) => s.map(str::to_owned),
            (None, Some(r)) => Some(format!("undefined.{r}")),
        };
        let (stop, error) = map_stop_reason(status, reason);
        m.stop_reason = stop;
        m.error_message = error;
        if m.stop_reason == StopReason::Stop && m.tool_calls().next().is_some() {
            m.stop_reason = StopReason::ToolUse;
        }
    }
}

/// The event almost every streamed delta is: a text, refusal, reasoning or argument delta. It is
/// read in place by [`Scanner`]; any other event (or one with an `error` member, a member of
/// another type, a duplicate member, anything the scanner declines) takes the `Value` path,
/// which reads every shape.
pub(crate) struct ResponsesDelta<'a> {
    kind: Cow<'a, str>,
    output_index: Option<u64>,
    delta: Option<Cow<'a, str>>,
}

impl<'a> ResponsesDelta<'a> {
    /// The event, when it is a delta the typed path handles exactly as the `Value` path would.
    pub(crate) fn read(data: &'a str) -> Option<Self> {
        let mut s = Scanner::new(data);
        let event = Self::scan(&mut s).ok()?;
        s.end().ok()?;
        let delta = matches!(
            &*event.kind,
            "response.output_text.delta"
                | "response.refusal.delta"
                | "response.reasoning_summary_text.delta"
                | "response.reasoning_text.delta"
                | "response.function_call_arguments.delta"
        );
        delta.then_some(event)
    }

    fn scan(s: &mut Scanner<'a>) -> Scan<Self> {
        let (mut kind, mut output_index, mut delta) = (None, None, None);
        let mut seen = [false; 3];
        s.object(|s, key| match &*key {
            "type" => read_once(s, &mut seen[0], &mut kind, |s| s.string().map(Some)),
            "output_index" => read_once(s, &mut seen[1], &mut output_index, |s| {
                if s.null()? { Ok(None) } else { u64::try_from(s.integer()?).map(Some).map_err(|_| Reject) }
            }),
            "delta" => read_once(s, &mut seen[2], &mut delta, Scanner::null_or_string),
            // An event with an error member, even a null one, is the `Value` path's.
            "error" => Err(Reject),
            _ => s.skip(),
        })?;
        Ok(Self { kind: kind.ok_or(Reject)?, output_index, delta })
    }
}

impl ResponsesStream {
    /// The `on_event` arms of the deltas, for an event read as a [`ResponsesDelta`].
    pub(crate) fn typed_delta(&mut self, event: ResponsesDelta<'_>, out: &mut ProviderOutput) {
        let kind = match &*event.kind {
            "response.output_text.delta" | "response.refusal.delta" => Kind::Text,
            "response.function_call_arguments.delta" => Kind::ToolCall,
            _ => Kind::Thinking,
        };
        let Some(index) = self.slots.get(&event.output_index).filter(|(k, _)| *k == kind).map(|(_, i)| *i) else {
            return;
        };
        let delta = event.delta.map(Cow::into_owned).unwrap_or_default();
        match kind {
            Kind::Text => out.emit(E::TextDelta { content_index: index, delta }),
            Kind::Thinking => out.emit(E::ThinkingDelta { content_index: index, delta }),
            Kind::ToolCall => self.tool_delta(index, delta, out),
        }
    }
}

impl SseHandler for ResponsesStream {
    fn on_event(
        &mut self,
        event: SseEventRef<'_>,
        ctx: &StreamContext,
        out: &mut ProviderOutput,
    ) -> Result<(), String> {
        if event.data == "[DONE]" {
            return Ok(());
        }
        // No one sees the raw event and it is no error event: the common delta is read typed.
        if ctx.options.on_provider_stream_event.is_none()
            && event.event != Some("error")
            && let Some(delta) = ResponsesDelta::read(event.data)
        {
            self.typed_delta(delta, out);
            return Ok(());
        }
        let event = parse_openai_sse_data(event)?;
        ctx.raw_event(&event);
        let text = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        match event.get("type").and_then(Value::as_str).unwrap_or_default() {
            "response.created" => {
                if let Some(id) = event.pointer("/response/id").and_then(Value::as_str) {
                    out.message_mut().response_id = Some(id.to_owned());
                }
            }
            "response.output_item.added" => {
                self.create_slot(event.get("output_index").and_then(Value::as_u64), &event["item"], out);
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(index) = self.slot(&event, Kind::Thinking) {
                    out.emit(E::ThinkingDelta { content_index: index, delta: text("delta") });
                }
            }
            "response.reasoning_summary_part.done" => {
                if let Some(index) = self.slot(&event, Kind::Thinking) {
                    out.emit(E::ThinkingDelta { content_index: index, delta: "\n\n".into() });
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(index) = self.slot(&event, Kind::Text) {
                    out.emit(E::TextDelta { content_index: index, delta: text("delta") });
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(index) = self.slot(&event, Kind::ToolCall) {
                    self.tool_delta(index, text("delta"), out);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(index) = self.slot(&event, Kind::ToolCall) {
                    self.replace_args(index, &text("arguments"), out);
                }
            }
            "response.output_item.done" => self.item_done(&event, out)?,
            "response.custom_tool_call_input.delta" => {
                if let Some(index) = self.slot(&event, Kind::ToolCall) {
                    self.custom_append(index, &text("delta"), out)?;
                }
            }
            "response.custom_tool_call_input.done" => {
                if let Some(index) = self.slot(&event, Kind::ToolCall) {
                    let input = event.get("input").and_then(Value::as_str).map(str::to_owned);
                    self.custom_close(index, input.as_deref(), out)?;
                }
            }
            "response.completed" | "response.incomplete" => self.finalize(&event["response"], ctx, out),
            "error" => {
                let code = event
                    .get("code")
                    .map_or("undefined".to_owned(), |c| c.as_str().map_or(c.to_string(), str::to_owned));
                let message = event
                    .get("message")
                    .map_or("undefined".to_owned(), |c| c.as_str().map_or(c.to_string(), str::to_owned));
                return Err(format!("Error Code {code}: {message}"));
            }
            "response.failed" => {
                self.saw_terminal = true;
                out.message_mut().raw_stop_reason =
                    event.pointer("/response/status").and_then(Value::as_str).map(str::to_owned);
                let error = event.pointer("/response/error").filter(|e| !e.is_null());
                let reason = event.pointer("/response/incomplete_details/reason").and_then(Value::as_str);
                let field = |e: &Value, k: &str, d: &str| {
                    e.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).unwrap_or(d).to_owned()
                };
                return Err(match (error, reason) {
                    (Some(e), _) => format!("{}: {}", field(e, "code", "unknown"), field(e, "message", "no message")),
                    (None, Some(r)) => format!("incomplete: {r}"),
                    (None, None) => "Unknown error (no error details in response)".to_owned(),
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn on_end(&mut self, _ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        if !self.saw_terminal {
            return Err("OpenAI Responses stream ended before a terminal response event".to_owned());
        }
        let m = out.message();
        if m.stop_reason == StopReason::ToolUse
            && let Some(&index) = self.unfinished.first()
            && let Some(AssistantBlock::ToolCall(call)) = m.content.get(index)
        {
            return Err(format!(
                "OpenAI Responses stream completed with an unfinished tool call: {} ({})",
                call.name, call.id
            ));
        }
        match m.stop_reason {
            StopReason::Pending => Err("OpenAI Responses stream ended without a stop reason".to_owned()),
            StopReason::Aborted | StopReason::Error => Err(m
                .error_message
                .clone()
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "An unknown error occurred".to_owned())),
            _ => Ok(()),
        }
    }

    /// The SDK ends the stream quietly on abort, so pi's end-of-stream checks report it.
    fn on_abort(&mut self, ctx: &StreamContext, out: &mut ProviderOutput) -> String {
        match self.on_end(ctx, out) {
            Err(message) if !self.saw_terminal => message,
            _ => "Request was aborted".to_owned(),
        }
    }

    fn on_error(&mut self, out: &mut ProviderOutput) {
        settle_open_tool_calls(out);
    }
}

/// pi's `mapStopReason` for a Responses status.
pub fn map_stop_reason(status: Option<&str>, incomplete_reason: Option<&str>) -> (StopReason, Option<String>) {
    match status {
        None | Some("completed" | "in_progress" | "queued") => (StopReason::Stop, None),
        Some("incomplete") => match incomplete_reason {
            Some("max_output_tokens") => (StopReason::Length, None),
            Some(r) => (StopReason::Error, Some(format!("Response incomplete: {r}"))),
            None => (StopReason::Error, Some("Response incomplete without a provider reason".to_owned())),
        },
        Some(_) => (StopReason::Error, None),
    }
}

#[cfg(test)]
mod delta_tests {
    use super::*;

    #[test]
    fn deltas_are_read_in_place_and_the_rest_left_to_the_value_path() {
        let event = ResponsesDelta::read(
            r#"{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg","output_index":1,"content_index":0,"delta":"Hi","logprobs":[],"obfuscation":"x"}"#,
        )
        .expect("a text delta");
        assert_eq!((event.output_index, event.delta.as_deref()), (Some(1), Some("Hi")));
        for data in [
            r#"{"type":"response.output_text.done","output_index":1,"text":"Hi"}"#,
            r#"{"type":"response.output_text.delta","output_index":1,"delta":"Hi","error":null}"#,
            r#"{"type":"response.output_text.delta","output_index":-1,"delta":"Hi"}"#,
            r#"{"type":"response.output_text.delta","delta":"a","delta":"b"}"#,
            r#"{"output_index":1,"delta":"Hi"}"#,
        ] {
            assert!(ResponsesDelta::read(data).is_none(), "{data}");
        }
    }
}
