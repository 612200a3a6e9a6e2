//! Anthropic Messages SSE → events.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use serde_json::Value;

use crate::http::shared::{finish_tool_arguments, settle_open_tool_calls};
use crate::http::{ProviderOutput, SseHandler, StreamContext};
use crate::json::frame::StringFrame;
use crate::json::scan::{Reject, Scan, Scanner, once};
use crate::sse::SseEventRef;
use crate::stream::AssistantMessageEvent as E;
use crate::types::{AssistantBlock, StopReason, TextContent, ThinkingContent, ToolCall};

const MESSAGE_EVENTS: [&str; 6] = [
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
];

/// The stream state of one Anthropic response. Blocks are keyed by Anthropic's `index`, so a
/// block may start before the previous one stopped (llama.cpp does this with parallel calls).
#[derive(Clone, Debug, Default)]
pub struct AnthropicStream {
    open: HashMap<u64, usize>,
    saw_start: bool,
    saw_stop: bool,
    tool_names: Option<Vec<String>>,
    /// The last delta read typed, framed around its one string ([`crate::json::frame`]).
    frame: StringFrame,
    /// The framed delta's block index and type.
    framed: Option<(u64, &'static str)>,
}

impl AnthropicStream {
    /// A fresh handler.
    pub fn new() -> Self {
        AnthropicStream::default()
    }

    /// A handler that maps tool-call names back to `names` ignoring case (a Claude subscription
    /// request sends tool names in Claude Code's casing).
    pub fn with_tool_names(mut self, names: Vec<String>) -> Self {
        self.tool_names = Some(names);
        self
    }

    fn tool_name(&self, name: String) -> String {
        match &self.tool_names {
            Some(names) => super::oauth::from_claude_code_name(&name, names),
            None => name,
        }
    }

    fn on_message(&mut self, event: &Value, ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        let n = |v: Option<&Value>| v.and_then(Value::as_u64);
        match event.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message_start" => {
                self.saw_start = true;
                let message = &event["message"];
                let m = out.message_mut();
                m.response_id = message.get("id").and_then(Value::as_str).map(str::to_owned);
                if let Some(model) = message.get("model").and_then(Value::as_str)
                    && model != ctx.model.id
                {
                    m.response_model = Some(model.to_owned());
                }
                let usage = &message["usage"];
                let u = &mut m.usage;
                u.input = n(usage.get("input_tokens")).unwrap_or(0);
                u.output = n(usage.get("output_tokens")).unwrap_or(0);
                u.cache_read = n(usage.get("cache_read_input_tokens")).unwrap_or(0);
                u.cache_write = n(usage.get("cache_creation_input_tokens")).unwrap_or(0);
                u.cache_write_1h = Some(n(usage.pointer("/cache_creation/ephemeral_1h_input_tokens")).unwrap_or(0));
                u.total_tokens = u.input + u.output + u.cache_read + u.cache_write;
                crate::http::shared::calculate_cost(&ctx.model, u);
            }
            "message_stop" => self.saw_stop = true,
            "content_block_start" => self.block_start(event, out),
            "content_block_delta" => self.block_delta(event, out),
            "content_block_stop" => {
                let Some(index) = event.get("index").and_then(Value::as_u64).and_then(|i| self.open.remove(&i)) else {
                    return Ok(());
                };
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
            "message_delta" => {
                let m = out.message_mut();
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    m.raw_stop_reason = Some(reason.to_owned());
                    let (stop, error) = map_stop_reason(reason, event.pointer("/delta/stop_details"))?;
                    m.stop_reason = stop;
                    if let Some(error) = error {
                        m.error_message = Some(error);
                    }
                }
                if let Some(usage) = event.get("usage").filter(|u| u.is_object()) {
                    let u = &mut m.usage;
                    if let Some(v) = n(usage.get("input_tokens")) {
                        u.input = v;
                    }
                    if let Some(v) = n(usage.get("output_tokens")) {
                        u.output = v;
                    }
                    if let Some(v) = n(usage.get("cache_read_input_tokens")) {
                        u.cache_read = v;
                    }
                    if let Some(v) = n(usage.get("cache_creation_input_tokens")) {
                        u.cache_write = v;
                    }
                    if let Some(v) = n(usage.pointer("/cache_creation/ephemeral_1h_input_tokens")) {
                        u.cache_write_1h = Some(v);
                    }
                    if let Some(v) = n(usage.pointer("/output_tokens_details/thinking_tokens")) {
                        u.reasoning = Some(v);
                    }
                }
                let u = &mut m.usage;
                u.total_tokens = u.input + u.output + u.cache_read + u.cache_write;
                crate::http::shared::calculate_cost(&ctx.model, u);
            }
            _ => {}
        }
        Ok(())
    }

    fn block_start(&mut self, event: &Value, out: &mut ProviderOutput) {
        let Some(anthropic_index) = event.get("index").and_then(Value::as_u64) else { return };
        let block = &event["content_block"];
        let index = out.message().content.len();
        let str_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let start = match block.get("type").and_then(Value::as_str) {
            Some("text") => E::TextStart { content_index: index, block: TextContent::new(str_of("text")) },
            Some("thinking") => E::ThinkingStart {
                content_index: index,
                block: ThinkingContent {
                    thinking: str_of("thinking"),
                    thinking_signature: Some(str_of("signature")),
                    ..Default::default()
                },
            },
            Some("redacted_thinking") => E::ThinkingStart {
                content_index: index,
                block: ThinkingContent {
                    thinking: "[Reasoning redacted]".into(),
                    thinking_signature: block.get("data").and_then(Value::as_str).map(str::to_owned),
                    redacted: Some(true),
                    ..Default::default()
                },
            },
            Some("tool_use") => {
                let arguments = block.get("input").and_then(Value::as_object).cloned().unwrap_or_default();
                E::ToolCallStart {
                    content_index: index,
                    tool_call: Box::new(ToolCall::new(str_of("id"), self.tool_name(str_of("name")), arguments)),
                }
            }
            _ => return,
        };
        self.open.insert(anthropic_index, index);
        out.emit(start);
    }

    fn block_delta(&mut self, event: &Value, out: &mut ProviderOutput) {
        let Some(&index) = event.get("index").and_then(Value::as_u64).and_then(|i| self.open.get(&i)) else { return };
        let delta = &event["delta"];
        let text = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let block = &out.message().content[index];
        match (delta.get("type").and_then(Value::as_str), block) {
            (Some("text_delta"), AssistantBlock::Text(_)) => {
                out.emit(E::TextDelta { content_index: index, delta: text("text") })
            }
            (Some("thinking_delta"), AssistantBlock::Thinking(_)) => {
                out.emit(E::ThinkingDelta { content_index: index, delta: text("thinking") })
            }
            (Some("input_json_delta"), AssistantBlock::ToolCall(_)) => {
                out.emit(E::ToolCallDelta { content_index: index, delta: text("partial_json") })
            }
            (Some("signature_delta"), AssistantBlock::Thinking(_)) => {
                if let Some(AssistantBlock::Thinking(t)) = out.message_mut().content.get_mut(index) {
                    t.thinking_signature.get_or_insert_with(String::new).push_str(&text("signature"));
                }
            }
            _ => {}
        }
    }
}

/// The event almost every streamed delta is: `content_block_delta` with a text, thinking or
/// argument delta. It is read in place by [`Scanner`]; an event that does not read as this
/// (another delta type, a member of another type, a duplicate member, anything the scanner
/// declines) takes the `Value` path, which reads every shape.
struct BlockDelta<'a> {
    index: u64,
    delta: DeltaBody<'a>,
}

struct DeltaBody<'a> {
    kind: Cow<'a, str>,
    text: Option<Cow<'a, str>>,
    thinking: Option<Cow<'a, str>>,
    partial_json: Option<Cow<'a, str>>,
    /// Where the raw text of `text`, `thinking` and `partial_json` lies, each when a string.
    spans: [Option<Range<usize>>; 3],
}

/// The delta types read typed, each with the member that holds its text.
const DELTA_KINDS: [&str; 3] = ["text_delta", "thinking_delta", "input_json_delta"];

impl<'a> BlockDelta<'a> {
    /// The event, when it is a text, thinking or argument delta the typed path handles exactly as
    /// the `Value` path would.
    fn read(data: &'a str) -> Option<Self> {
        let mut s = Scanner::new(data);
        let event = Self::scan(&mut s).ok()?;
        s.end().ok()?;
        let known = DELTA_KINDS.contains(&&*event.delta.kind);
        known.then_some(event)
    }

    /// The block index, the delta type and where its text lies, when the text is a string:
    /// then every other member is the same whatever that text, and nothing in the delta but
    /// its text has an effect, so it can frame the next ones.
    fn frame(&self) -> Option<(u64, &'static str, Range<usize>)> {
        let slot = DELTA_KINDS.iter().position(|k| *k == self.delta.kind)?;
        Some((self.index, DELTA_KINDS[slot], self.delta.spans[slot].clone()?))
    }

    /// A delta of `kind` to block `index` whose text is `text`.
    fn of(index: u64, kind: &'static str, text: Cow<'a, str>) -> Self {
        let mut delta = DeltaBody {
            kind: Cow::Borrowed(kind),
            text: None,
            thinking: None,
            partial_json: None,
            spans: Default::default(),
        };
        *match kind {
            "text_delta" => &mut delta.text,
            "thinking_delta" => &mut delta.thinking,
            _ => &mut delta.partial_json,
        } = Some(text);
        BlockDelta { index, delta }
    }

    fn scan(s: &mut Scanner<'a>) -> Scan<Self> {
        let (mut kind, mut index, mut delta) = (None, None, None);
        s.object(|s, key| match &*key {
            "type" if kind.is_none() => {
                kind = Some(s.string()?);
                Ok(())
            }
            "index" if index.is_none() => {
                index = Some(u64::try_from(s.integer()?).map_err(|_| Reject)?);
                Ok(())
            }
            "delta" if delta.is_none() => {
                delta = Some(DeltaBody::scan(s)?);
                Ok(())
            }
            "type" | "index" | "delta" => Err(Reject),
            _ => s.skip(),
        })?;
        match (kind, index, delta) {
            (Some(kind), Some(index), Some(delta)) if kind == "content_block_delta" => Ok(Self { index, delta }),
            _ => Err(Reject),
        }
    }
}

impl<'a> DeltaBody<'a> {
    fn scan(s: &mut Scanner<'a>) -> Scan<Self> {
        let mut kind = None;
        let mut body = (None, None, None);
        let mut spans: [Option<Range<usize>>; 3] = Default::default();
        let mut seen = [false; 3];
        s.object(|s, key| {
            let (slot, field) = match &*key {
                "type" if kind.is_none() => {
                    kind = Some(s.string()?);
                    return Ok(());
                }
                "type" => return Err(Reject),
                "text" => (0, &mut body.0),
                "thinking" => (1, &mut body.1),
                "partial_json" => (2, &mut body.2),
                _ => return s.skip(),
            };
            once(&mut seen[slot])?;
            (*field, spans[slot]) = s.null_or_string_span()?.unzip();
            Ok(())
        })?;
        let (text, thinking, partial_json) = body;
        Ok(Self { kind: kind.ok_or(Reject)?, text, thinking, partial_json, spans })
    }
}

impl AnthropicStream {
    /// [`AnthropicStream::block_delta`] for a delta read as a [`BlockDelta`].
    fn typed_delta(&mut self, event: BlockDelta<'_>, out: &mut ProviderOutput) {
        let Some(&index) = self.open.get(&event.index) else { return };
        let delta = event.delta;
        let owned = |text: Option<Cow<'_, str>>| text.map(Cow::into_owned).unwrap_or_default();
        match (&*delta.kind, &out.message().content[index]) {
            ("text_delta", AssistantBlock::Text(_)) => {
                out.emit(E::TextDelta { content_index: index, delta: owned(delta.text) })
            }
            ("thinking_delta", AssistantBlock::Thinking(_)) => {
                out.emit(E::ThinkingDelta { content_index: index, delta: owned(delta.thinking) })
            }
            ("input_json_delta", AssistantBlock::ToolCall(_)) => {
                out.emit(E::ToolCallDelta { content_index: index, delta: owned(delta.partial_json) })
            }
            _ => {}
        }
    }
}

impl SseHandler for AnthropicStream {
    fn on_replaced_payload(&self, payload: &mut Value) {
        force_stream(payload);
    }

    fn on_event(
        &mut self,
        event: SseEventRef<'_>,
        ctx: &StreamContext,
        out: &mut ProviderOutput,
    ) -> Result<(), String> {
        let name = event.event.unwrap_or_default();
        if name == "error" {
            return Err(event.data.to_owned());
        }
        if !MESSAGE_EVENTS.contains(&name) {
            return Ok(());
        }
        // No one sees the raw event: the common delta is read typed, borrowing the event's text,
        // and one that only differs from the last one in its text is read in its frame.
        if name == "content_block_delta" && ctx.options.on_provider_stream_event.is_none() {
            if let Some((index, kind)) = self.framed
                && let Some(text) = self.frame.string(event.data)
            {
                self.typed_delta(BlockDelta::of(index, kind, text), out);
                return Ok(());
            }
            if let Some(delta) = BlockDelta::read(event.data) {
                self.framed = delta.frame().map(|(index, kind, span)| {
                    self.frame.set(event.data, span);
                    (index, kind)
                });
                self.typed_delta(delta, out);
                return Ok(());
            }
        }
        self.framed = None;
        let parsed: Value = crate::tool_args::parse_json_with_repair(event.data).map_err(|e| {
            format!(
                "Could not parse Anthropic SSE event {name}: {e}; data={}; raw=event: {name}\\ndata: {}",
                event.data, event.data
            )
        })?;
        ctx.raw_event(&parsed);
        self.on_message(&parsed, ctx, out)
    }

    fn on_end(&mut self, _ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String> {
        if self.saw_start && !self.saw_stop {
            return Err("Anthropic stream ended before message_stop".to_owned());
        }
        let m = out.message();
        match m.stop_reason {
            StopReason::Pending => Err("Anthropic stream ended without a stop reason".to_owned()),
            StopReason::Aborted | StopReason::Error => Err(m
                .error_message
                .clone()
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "An unknown error occurred".to_owned())),
            _ => Ok(()),
        }
    }

    /// pi reads the body itself; the aborted read rejects with the DOM abort error.
    fn on_abort(&mut self, _ctx: &StreamContext, _out: &mut ProviderOutput) -> String {
        "This operation was aborted".to_owned()
    }

    fn on_error(&mut self, out: &mut ProviderOutput) {
        settle_open_tool_calls(out);
    }
}

/// pi's `mapStopReason` for Anthropic: unknown reasons are an error.
pub fn map_stop_reason(reason: &str, details: Option<&Value>) -> Result<(StopReason, Option<String>), String> {
    Ok(match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => (StopReason::Stop, None),
        "max_tokens" => (StopReason::Length, None),
        "tool_use" => (StopReason::ToolUse, None),
        "refusal" => (
            StopReason::Error,
            Some(
                details
                    .and_then(|d| d.get("explanation"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .unwrap_or("The model refused to complete the request")
                    .to_owned(),
            ),
        ),
        "sensitive" => (StopReason::Error, Some("Provider stopped with: sensitive".to_owned())),
        other => return Err(format!("Unhandled stop reason: {other}")),
    })
}

/// The Anthropic SDK's `messages.stream({...params, stream: true})` over a body the payload hook
/// replaced. Only an object has a `stream` field; a hook returning anything else is sent as it is.
pub(crate) fn force_stream(payload: &mut Value) {
    if let Some(object) = payload.as_object_mut() {
        object.insert("stream".into(), Value::Bool(true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_deltas_are_read_in_place() {
        let text =
            BlockDelta::read(r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#)
                .expect("a text delta");
        assert_eq!(text.index, 1);
        assert!(matches!(text.delta.text, Some(Cow::Borrowed("Hi"))));
        let json = BlockDelta::read(
            r#"{"index":0,"delta":{"partial_json":"{\"a\"","type":"input_json_delta"},"type":"content_block_delta"}"#,
        )
        .expect("an argument delta");
        assert_eq!(json.delta.partial_json.as_deref(), Some("{\"a\""));
        assert!(
            BlockDelta::read(
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#
            )
            .is_some()
        );
    }

    #[test]
    fn other_events_are_left_to_the_value_path() {
        for data in [
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}"#,
            r#"{"type":"content_block_start","index":0,"delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"index":1,"delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","text":"b"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"text":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}"#,
        ] {
            assert!(BlockDelta::read(data).is_none(), "{data}");
        }
    }
}
