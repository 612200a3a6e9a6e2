//! Chat Completions SSE → events (pi's `for await (const chunk of openaiStream)` loop).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::chunk::TextChunk;
use super::compat::CompletionsCompat;
use crate::http::shared::{finish_tool_arguments, settle_open_tool_calls};
use crate::http::{ProviderOutput, SseHandler, StreamContext};
use crate::json::frame::StringFrame;
use crate::providers::constrained::GrammarInput;
use crate::sse::SseEventRef;
use crate::stream::AssistantMessageEvent as E;
use crate::types::{AssistantBlock, Model, StopReason, TextContent, ThinkingContent, ToolCall, Usage};

/// The stream state of one Chat Completions response.
#[derive(Debug)]
pub struct CompletionsStream {
    compat: CompletionsCompat,
    text: Option<usize>,
    thinking: Option<usize>,
    tools_by_index: HashMap<i64, usize>,
    tools_by_id: HashMap<String, usize>,
    has_finish_reason: bool,
    reasoning_details: Option<Vec<Value>>,
    done: bool,
    /// Grammar tool name → input property.
    grammar: HashMap<String, String>,
    /// Per custom tool-call block: its input property and the input streamed so far.
    custom: HashMap<usize, (String, GrammarInput)>,
    /// The last text delta read typed, when its other members have no effect applied again.
    frame: StringFrame,
}

impl CompletionsStream {
    /// A handler for a request made with `compat`.
    pub fn new(compat: CompletionsCompat) -> Self {
        CompletionsStream {
            compat,
            text: None,
            thinking: None,
            tools_by_index: HashMap::new(),
            tools_by_id: HashMap::new(),
            has_finish_reason: false,
            reasoning_details: None,
            done: false,
            grammar: HashMap::new(),
            custom: HashMap::new(),
            frame: StringFrame::default(),
        }
    }

    /// Maps the calls of grammar tools (name → input property) back to their arguments.
    pub fn with_grammar_tools(mut self, grammar: HashMap<String, String>) -> Self {
        self.grammar = grammar;
        self
    }

    fn ensure_thinking(&mut self, signature: &str, out: &mut ProviderOutput) -> usize {
        if let Some(i) = self.thinking {
            return i;
        }
        let index = out.message().content.len();
        let block = ThinkingContent { thinking_signature: Some(signature.to_owned()), ..Default::default() };
        out.emit(E::ThinkingStart { content_index: index, block });
        self.thinking = Some(index);
        index
    }

    fn ensure_text(&mut self, out: &mut ProviderOutput) -> usize {
        if let Some(i) = self.text {
            return i;
        }
        let index = out.message().content.len();
        out.emit(E::TextStart { content_index: index, block: TextContent::default() });
        self.text = Some(index);
        index
    }

    fn tool_call(&mut self, fragment: &Value, out: &mut ProviderOutput) -> Result<(), String> {
        let stream_index = fragment.get("index").and_then(Value::as_i64);
        let id = fragment.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
        let function = fragment.get("function");
        let custom = fragment.get("custom").filter(|_| function.is_none());
        let name = function.or(custom).and_then(|f| f.get("name")).and_then(Value::as_str);
        let index = self.tool_block(stream_index, id, name, out);
        if custom.is_some() && !self.custom.contains_key(&index) {
            let call_name = match out.message().content.get(index) {
                Some(AssistantBlock::ToolCall(call)) => call.name.clone(),
                _ => String::new(),
            };
            let property = self.grammar.get(&call_name).cloned().unwrap_or_else(|| "input".to_owned());
            self.custom.insert(index, (property, GrammarInput::default()));
        }
        let delta = match (custom, self.custom.get_mut(&index)) {
            (Some(custom), Some((property, buffer))) => {
                let input = custom.get("input").and_then(Value::as_str).unwrap_or_default();
                buffer.append(property, input)?.unwrap_or_default()
            }
            _ => function
                .and_then(|f| f.get("arguments"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .unwrap_or_default()
                .to_owned(),
        };
        out.emit(E::ToolCallDelta { content_index: index, delta });
        Ok(())
    }

    /// The block of a tool-call fragment (found by stream index, then id; else a new one started),
    /// with its id and name filled in when they were still empty.
    fn tool_block(
        &mut self,
        stream_index: Option<i64>,
        id: Option<&str>,
        name: Option<&str>,
        out: &mut ProviderOutput,
    ) -> usize {
        let mut found = stream_index.and_then(|i| self.tools_by_index.get(&i).copied());
        if found.is_none() {
            found = id.and_then(|id| self.tools_by_id.get(id).copied());
        }
        let index = match found {
            Some(index) => index,
            None => {
                let index = out.message().content.len();
                let call = ToolCall::new(id.unwrap_or_default(), name.unwrap_or_default(), Default::default());
                if let Some(si) = stream_index {
                    self.tools_by_index.insert(si, index);
                }
                out.emit(E::ToolCallStart { content_index: index, tool_call: Box::new(call) });
                index
            }
        };
        if let Some(si) = stream_index {
            self.tools_by_index.entry(si).or_insert(index);
        }
        if let Some(id) = id {
            self.tools_by_id.insert(id.to_owned(), index);
        }
        if let Some(AssistantBlock::ToolCall(call)) = out.message_mut().content.get_mut(index) {
            if call.id.is_empty()
                && let Some(id) = id
            {
                call.id = id.to_owned();
            }
            if call.name.is_empty()
                && let Some(name) = name
            {
                call.name = name.to_owned();
            }
        }
        index
    }

    fn on_chunk(&mut self, chunk: &Value, ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        let message = out.message_mut();
        if message.response_id.as_deref().is_none_or(str::is_empty)
            && let Some(id) = chunk.get("id").and_then(Value::as_str)
        {
            message.response_id = Some(id.to_owned());
        }
        if let Some(m) = chunk.get("model").and_then(Value::as_str)
            && !m.is_empty()
            && m != ctx.model.id
            && message.response_model.is_none()
        {
            message.response_model = Some(m.to_owned());
        }
        let usage = chunk.get("usage").filter(|u| u.is_object());
        if let Some(u) = usage {
            message.usage = parse_usage(u, &ctx.model);
        }
        let Some(choice) = chunk.get("choices").and_then(Value::as_array).and_then(|c| c.first()) else {
            return Ok(());
        };
        if usage.is_none()
            && let Some(u) = choice.get("usage").filter(|u| u.is_object())
        {
            message.usage = parse_usage(u, &ctx.model);
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            apply_finish_reason(message, reason);
            self.has_finish_reason = true;
        }
        let Some(delta) = choice.get("delta").filter(|d| d.is_object()) else {
            return Ok(());
        };
        let reasoning = ["reasoning_content", "reasoning", "reasoning_text"]
            .into_iter()
            .find_map(|f| delta.get(f).and_then(Value::as_str).filter(|s| !s.is_empty()).map(|s| (f, s)));
        if let Some((field, text)) = reasoning {
            self.reasoning(field, text.to_owned(), ctx, out);
        }
        if let Some(details) = delta.get("reasoning_details").and_then(Value::as_array) {
            for detail in details.iter().filter(|d| is_reasoning_detail(d)) {
                self.ensure_thinking("", out);
                append_reasoning_detail(self.reasoning_details.get_or_insert_with(Vec::new), detail);
            }
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            let index = self.ensure_text(out);
            out.emit(E::TextDelta { content_index: index, delta: text.to_owned() });
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for fragment in calls {
                self.tool_call(fragment, out)?;
            }
        }
        Ok(())
    }

    /// A reasoning delta read from `field`.
    fn reasoning(&mut self, field: &str, text: String, ctx: &StreamContext, out: &mut ProviderOutput) {
        let signature =
            if ctx.model.provider == "opencode-go" && field == "reasoning" { "reasoning_content" } else { field };
        let index = self.ensure_thinking(signature, out);
        out.emit(E::ThinkingDelta { content_index: index, delta: text });
    }

    fn apply_reasoning_details(&self, out: &mut ProviderOutput) {
        if let (Some(details), Some(index)) = (&self.reasoning_details, self.thinking)
            && let Some(AssistantBlock::Thinking(t)) = out.message_mut().content.get_mut(index)
        {
            t.thinking_signature = Some(Value::Array(details.clone()).to_string());
        }
    }

    /// Emits every `*_end`, in content order.
    fn finish_blocks(&mut self, out: &mut ProviderOutput) {
        self.apply_reasoning_details(out);
        for index in 0..out.message().content.len() {
            let event = match &out.message().content[index] {
                AssistantBlock::Text(t) => E::TextEnd { content_index: index, block: t.clone() },
                AssistantBlock::Thinking(t) => E::ThinkingEnd { content_index: index, block: t.clone() },
                AssistantBlock::ToolCall(call) => match self.custom.remove(&index) {
                    Some((property, mut buffer)) => {
                        let call = call.clone();
                        if let Ok(Some(delta)) = buffer.close(&property, None) {
                            out.emit(E::ToolCallDelta { content_index: index, delta });
                        }
                        let mut arguments = serde_json::Map::new();
                        arguments.insert(property, Value::String(buffer.input));
                        E::ToolCallEnd {
                            content_index: index,
                            tool_call: Box::new(ToolCall { arguments, arguments_error: None, ..call }),
                        }
                    }
                    None => {
                        let text = out.partial().tool_arguments_text(index).unwrap_or_default();
                        let (arguments, arguments_error) = finish_tool_arguments(text);
                        let tool_call = ToolCall { arguments, arguments_error, ..call.clone() };
                        E::ToolCallEnd { content_index: index, tool_call: Box::new(tool_call) }
                    }
                },
            };
            out.emit(event);
        }
    }
}

impl CompletionsStream {
    /// [`CompletionsStream::on_chunk`] for a chunk read as a [`TextChunk`].
    fn on_text_chunk(&mut self, chunk: TextChunk<'_>, ctx: &StreamContext, out: &mut ProviderOutput) {
        // The message is only read unless something changes (taking it mutably is an atomic
        // check of its sharing, paid per delta otherwise).
        if out.message().response_id.as_deref().is_none_or(str::is_empty)
            && let Some(id) = chunk.id
        {
            out.message_mut().response_id = Some(id.into_owned());
        }
        if let Some(m) = chunk.model
            && !m.is_empty()
            && m != ctx.model.id
            && out.message().response_model.is_none()
        {
            out.message_mut().response_model = Some(m.into_owned());
        }
        let Some(choice) = chunk.choice else {
            return;
        };
        if let Some(reason) = choice.finish_reason.as_deref().filter(|s| !s.is_empty()) {
            apply_finish_reason(out.message_mut(), reason);
            self.has_finish_reason = true;
        }
        let Some(delta) = choice.delta else { return };
        let reasoning = [
            ("reasoning_content", delta.reasoning_content),
            ("reasoning", delta.reasoning),
            ("reasoning_text", delta.reasoning_text),
        ]
        .into_iter()
        .find_map(|(field, text)| text.filter(|s| !s.is_empty()).map(|text| (field, text)));
        if let Some((field, text)) = reasoning {
            self.reasoning(field, text.into_owned(), ctx, out);
        }
        if let Some(text) = delta.content {
            self.on_text(text, out);
        }
        for fragment in delta.tool_calls.into_iter().flatten() {
            let id = fragment.id.as_deref().filter(|s| !s.is_empty());
            let function = fragment.function.unwrap_or_default();
            let index = self.tool_block(fragment.index, id, function.name.as_deref(), out);
            let delta = function.arguments.map(Cow::into_owned).unwrap_or_default();
            out.emit(E::ToolCallDelta { content_index: index, delta });
        }
    }

    /// A delta's `content`.
    #[inline]
    fn on_text(&mut self, text: Cow<'_, str>, out: &mut ProviderOutput) {
        if !text.is_empty() {
            let index = self.ensure_text(out);
            out.emit(E::TextDelta { content_index: index, delta: text.into_owned() });
        }
    }
}

/// Sets the stop reason a `finish_reason` maps to.
fn apply_finish_reason(message: &mut crate::types::AssistantMessage, reason: &str) {
    message.raw_stop_reason = Some(reason.to_owned());
    let (stop, error) = map_stop_reason(reason);
    message.stop_reason = stop;
    if let Some(error) = error {
        message.error_message = Some(error);
    }
}

impl SseHandler for CompletionsStream {
    fn on_event(
        &mut self,
        event: SseEventRef<'_>,
        ctx: &StreamContext,
        out: &mut ProviderOutput,
    ) -> Result<(), String> {
        if self.done {
            return Ok(());
        }
        if event.data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        // No one sees the raw chunk and it is no error event: the common chunk is read typed,
        // and a text delta that only differs from the last one in its text is read in its frame.
        if ctx.options.on_provider_stream_event.is_none() && event.event != Some("error") {
            if let Some(text) = self.frame.string(event.data) {
                self.on_text(text, out);
                return Ok(());
            }
            if let Some(chunk) = TextChunk::read(event.data) {
                match chunk.text_only_span() {
                    Some(span) => self.frame.set(event.data, span),
                    None => self.frame.clear(),
                }
                self.on_text_chunk(chunk, ctx, out);
                return Ok(());
            }
        }
        self.frame.clear();
        let chunk = crate::http::shared::parse_openai_sse_data(event)?;
        ctx.raw_event(&chunk);
        if !chunk.is_object() {
            return Ok(());
        }
        self.on_chunk(&chunk, ctx, out)
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn on_end(&mut self, _ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        self.finish_blocks(out);
        let message = out.message_mut();
        if message.stop_reason == StopReason::Aborted {
            return Err("Request was aborted".to_owned());
        }
        if !self.has_finish_reason && !self.compat.supports_finish_reason {
            message.stop_reason =
                if message.tool_calls().next().is_some() { StopReason::ToolUse } else { StopReason::Stop };
        }
        if message.stop_reason == StopReason::Error {
            return Err(message
                .error_message
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "Provider returned an error stop reason".to_owned()));
        }
        if (self.compat.supports_finish_reason && !self.has_finish_reason) || message.stop_reason == StopReason::Pending
        {
            return Err("Stream ended without finish_reason".to_owned());
        }
        Ok(())
    }

    /// The SDK ends the stream quietly on abort: blocks are finished, then pi reports the abort.
    fn on_abort(&mut self, _ctx: &StreamContext, out: &mut ProviderOutput) -> String {
        self.finish_blocks(out);
        "Request was aborted".to_owned()
    }

    fn on_error(&mut self, out: &mut ProviderOutput) {
        self.apply_reasoning_details(out);
        settle_open_tool_calls(out);
    }
}

/// pi's `mapStopReason` for `finish_reason`.
pub fn map_stop_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" | "end" => (StopReason::Stop, None),
        "length" => (StopReason::Length, None),
        "function_call" | "tool_calls" => (StopReason::ToolUse, None),
        other => (StopReason::Error, Some(format!("Provider finish_reason: {other}"))),
    }
}

fn u64_of(v: Option<&Value>) -> Option<u64> {
    v.and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0) as u64)))
}

/// pi's `parseChunkUsage`, cost included.
pub fn parse_usage(raw: &Value, model: &Model) -> Usage {
    let prompt = u64_of(raw.get("prompt_tokens")).unwrap_or(0);
    let details = raw.get("prompt_tokens_details");
    let cache_read = u64_of(details.and_then(|d| d.get("cached_tokens")))
        .or_else(|| u64_of(raw.get("prompt_cache_hit_tokens")))
        .or_else(|| u64_of(raw.get("cached_tokens")))
        .unwrap_or(0);
    let cache_write = u64_of(details.and_then(|d| d.get("cache_write_tokens"))).unwrap_or(0);
    let input = prompt.saturating_sub(cache_read + cache_write);
    let output = u64_of(raw.get("completion_tokens")).unwrap_or(0);
    let reasoning = u64_of(raw.get("completion_tokens_details").and_then(|d| d.get("reasoning_tokens")))
        .filter(|r| *r > 0)
        .or_else(|| u64_of(raw.get("reasoning_tokens")))
        .unwrap_or(0);
    let mut usage = Usage {
        input,
        output,
        cache_read,
        cache_write,
        reasoning: Some(reasoning),
        total_tokens: input + output + cache_read + cache_write,
        ..Default::default()
    };
    crate::http::shared::calculate_cost(model, &mut usage);
    usage
}

fn is_reasoning_detail(d: &Value) -> bool {
    match d.get("type").and_then(Value::as_str) {
        Some("reasoning.summary") => d.get("summary").is_some_and(Value::is_string),
        Some("reasoning.encrypted") => d.get("data").is_some_and(Value::is_string),
        Some("reasoning.text") => d.get("text").is_some_and(Value::is_string),
        _ => false,
    }
}

fn append_reasoning_detail(details: &mut Vec<Value>, detail: &Value) {
    let kind = detail["type"].as_str().unwrap_or_default();
    if let Some(last) = details.last_mut().and_then(Value::as_object_mut)
        && last.get("type").and_then(Value::as_str) == Some(kind)
        && (kind == "reasoning.text" || kind == "reasoning.summary")
    {
        let field = if kind == "reasoning.text" { "text" } else { "summary" };
        let extra = detail[field].as_str().unwrap_or_default();
        if let Some(Value::String(s)) = last.get_mut(field) {
            s.push_str(extra);
        }
        if kind == "reasoning.text"
            && last.get("signature").is_none_or(|s| s.as_str().is_none_or(str::is_empty))
            && let Some(sig) = detail.get("signature").filter(|s| !s.is_null())
        {
            last.insert("signature".into(), sig.clone());
        }
        for key in ["id", "index"] {
            if last.get(key).is_none_or(Value::is_null)
                && let Some(v) = detail.get(key)
            {
                last.insert(key.into(), v.clone());
            }
        }
        if last.get("format").and_then(Value::as_str).is_none_or(str::is_empty)
            && let Some(v) = detail.get("format")
        {
            last.insert("format".into(), v.clone());
        }
        return;
    }
    details.push(detail.clone());
}
