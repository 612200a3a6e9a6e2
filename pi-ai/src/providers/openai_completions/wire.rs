//! The Chat Completions message list as borrowed, typed wire structs (pi's `convertMessages`),
//! serialized straight to bytes in pi's key order.

use std::borrow::Cow;

use serde_json::Value;

use super::compat::CompletionsCompat;
use super::request::{REASONING_FIELDS, convert_tools, parse_reasoning_details};
use crate::handoff::HandedOff;
use crate::http::json_out::{Obj, WriteJson, write_str};
use crate::http::shared::data_url;
use crate::transcript::{ResolvedTools, render_system_message_update, system_message_text};
use crate::types::{AssistantBlock, Content, Message, Model, ThinkingContent, UserBlock};

/// One content part: `{type: "text", text, cache_control?}` or
/// `{type: "image_url", image_url: {url}}`.
pub(crate) enum Part<'a> {
    Text { text: Cow<'a, str>, cache_control: Option<Value> },
    Image { url: String },
}

/// A message's `content`: `null`, a string or parts.
pub(crate) enum MessageContent<'a> {
    Null,
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
}

/// A tool call: `{id, type: "function", function: {name, arguments}}`, or a grammar tool's
/// `{id, type: "custom", custom: {name, input}}` (`arguments` then holds the raw input).
pub(crate) struct WireToolCall<'a> {
    id: &'a str,
    name: &'a str,
    arguments: String,
    custom: bool,
}

/// One Chat Completions message. Keys are written in this order, absent ones skipped; no
/// message kind uses more than its own subset. What only reasoning assistant messages and tool
/// declarations carry is boxed, so a long transcript's message list stays small (it is built once
/// per request).
pub(crate) struct WireMessage<'a> {
    role: &'static str,
    content: Option<MessageContent<'a>>,
    tool_calls: Vec<WireToolCall<'a>>,
    extra: Option<Box<WireExtra<'a>>>,
    tool_call_id: Option<&'a str>,
    name: Option<&'a str>,
}

/// The keys of a [`WireMessage`] that only some messages have.
#[derive(Default)]
struct WireExtra<'a> {
    tools: Option<Vec<Value>>,
    reasoning: Option<(&'static str, Cow<'a, str>)>,
    reasoning_details: Option<Value>,
    empty_reasoning_content: bool,
}

impl WireExtra<'_> {
    fn is_empty(&self) -> bool {
        self.tools.is_none()
            && self.reasoning.is_none()
            && self.reasoning_details.is_none()
            && !self.empty_reasoning_content
    }
}

impl<'a> WireMessage<'a> {
    fn new(role: &'static str, content: Option<MessageContent<'a>>) -> Self {
        WireMessage { role, content, tool_calls: Vec::new(), extra: None, tool_call_id: None, name: None }
    }
}

impl WriteJson for Part<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut m = Obj::new(out);
        match self {
            Part::Text { text, cache_control } => {
                m.str("type", "text");
                m.str("text", text);
                if let Some(c) = cache_control {
                    m.serde("cache_control", c);
                }
            }
            Part::Image { url } => {
                m.str("type", "image_url");
                let mut image = Obj::new(m.key("image_url"));
                image.str("url", url);
                image.end();
            }
        }
        m.end();
    }
}

impl WriteJson for MessageContent<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            MessageContent::Null => out.extend_from_slice(b"null"),
            MessageContent::Text(t) => write_str(out, t),
            MessageContent::Parts(parts) => parts.write_json(out),
        }
    }
}

impl WriteJson for WireToolCall<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut m = Obj::new(out);
        m.str("id", self.id);
        if self.custom {
            m.str("type", "custom");
            let mut custom = Obj::new(m.key("custom"));
            custom.str("name", self.name);
            custom.str("input", &self.arguments);
            custom.end();
        } else {
            m.str("type", "function");
            let mut function = Obj::new(m.key("function"));
            function.str("name", self.name);
            function.str("arguments", &self.arguments);
            function.end();
        }
        m.end();
    }
}

impl WriteJson for WireMessage<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut m = Obj::new(out);
        m.str("role", self.role);
        if let Some(content) = &self.content {
            m.json("content", content);
        }
        if let Some(extra) = &self.extra {
            if let Some(tools) = &extra.tools {
                m.serde("tools", tools);
            }
            if let Some((field, text)) = &extra.reasoning {
                m.str(field, text);
            }
        }
        if !self.tool_calls.is_empty() {
            m.json("tool_calls", &self.tool_calls);
        }
        if let Some(extra) = &self.extra {
            if let Some(details) = &extra.reasoning_details {
                m.serde("reasoning_details", details);
            }
            if extra.empty_reasoning_content {
                m.str("reasoning_content", "");
            }
        }
        if let Some(id) = self.tool_call_id {
            m.str("tool_call_id", id);
        }
        if let Some(name) = self.name {
            m.str("name", name);
        }
        m.end();
    }
}

/// `texts` joined with `sep`, borrowed when there is only one.
fn join<'a>(texts: &[&'a str], sep: &str) -> Cow<'a, str> {
    match texts {
        [] => Cow::Borrowed(""),
        [one] => Cow::Borrowed(one),
        many => Cow::Owned(many.join(sep)),
    }
}

fn image_part<'a>(img: &crate::types::ImageContent) -> Part<'a> {
    Part::Image { url: data_url(&img.mime_type, &img.data) }
}

const PROCESSED: &str = "I have processed the tool results.";

/// Converts the handed-off transcript into Chat Completions messages (pi's `convertMessages`).
pub(crate) fn convert<'a>(
    model: &Model,
    messages: &'a [HandedOff<'a>],
    compat: &CompletionsCompat,
    tools: &ResolvedTools,
    grammar: &std::collections::HashMap<String, String>,
) -> Vec<WireMessage<'a>> {
    let mut params: Vec<WireMessage<'a>> = Vec::with_capacity(messages.len());
    convert_each(model, messages, compat, tools, grammar, &mut |m| params.push(m));
    params
}

/// The message list written as it is converted, one message at a time, never held whole (the
/// same bytes as [`convert`]'s list written): for a body without cache markers, which need the
/// whole list.
pub(crate) struct StreamedWire<'a> {
    pub(crate) model: &'a Model,
    pub(crate) messages: &'a [HandedOff<'a>],
    pub(crate) compat: &'a CompletionsCompat,
    pub(crate) tools: ResolvedTools,
    pub(crate) grammar: std::collections::HashMap<String, String>,
}

impl WriteJson for StreamedWire<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.write_json_flushing(out, &mut |_| {});
    }

    fn write_json_flushing(&self, out: &mut Vec<u8>, flush: &mut dyn FnMut(&mut Vec<u8>)) {
        out.push(b'[');
        let mut first = true;
        convert_each(self.model, self.messages, self.compat, &self.tools, &self.grammar, &mut |m| {
            if !first {
                out.push(b',');
            }
            first = false;
            m.write_json(out);
            flush(out);
        });
        out.push(b']');
    }
}

/// The message list of a request: converted whole (when cache markers are placed on it) or
/// written as it is converted.
pub(crate) enum WireList<'a> {
    /// Converted whole.
    Built(Vec<WireMessage<'a>>),
    /// Converted while it is written.
    Streamed(StreamedWire<'a>),
}

impl WriteJson for WireList<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            WireList::Built(list) => list.write_json(out),
            WireList::Streamed(list) => list.write_json(out),
        }
    }

    fn write_json_flushing(&self, out: &mut Vec<u8>, flush: &mut dyn FnMut(&mut Vec<u8>)) {
        match self {
            WireList::Built(list) => list.write_json_flushing(out, flush),
            WireList::Streamed(list) => list.write_json_flushing(out, flush),
        }
    }
}

/// [`convert`], handing each message to `emit` as it is converted.
fn convert_each<'a>(
    model: &Model,
    messages: &'a [HandedOff<'a>],
    compat: &CompletionsCompat,
    tools: &ResolvedTools,
    grammar: &std::collections::HashMap<String, String>,
    emit: &mut dyn FnMut(WireMessage<'a>),
) {
    let instruction_role = if model.reasoning && compat.supports_developer_role { "developer" } else { "system" };
    let mut last_role: Option<&str> = None;
    let mut system_index = 0usize;
    let mut i = 0usize;
    while i < messages.len() {
        let msg: &'a Message = &messages[i];
        if compat.requires_assistant_after_tool_result
            && last_role == Some("toolResult")
            && matches!(msg, Message::User(_))
        {
            emit(WireMessage::new("assistant", Some(MessageContent::Text(Cow::Borrowed(PROCESSED)))));
        }
        match msg {
            Message::System(s) => {
                let index = system_index;
                system_index += 1;
                if index >= tools.folded_system_messages {
                    let added = s.tools_added.as_deref().unwrap_or_default();
                    if !added.is_empty() {
                        let mut m = WireMessage::new("system", None);
                        m.extra = Some(Box::new(WireExtra {
                            tools: Some(convert_tools(added, compat)),
                            ..Default::default()
                        }));
                        emit(m);
                    }
                }
                let text = if i == 0 { system_message_text(s) } else { render_system_message_update(s) };
                if !text.is_empty() {
                    emit(WireMessage::new(instruction_role, Some(MessageContent::Text(Cow::Owned(text)))));
                }
                last_role = Some("system");
            }
            Message::User(u) => {
                match &u.content {
                    Content::Text(text) => {
                        emit(WireMessage::new("user", Some(MessageContent::Text(Cow::Borrowed(text)))))
                    }
                    Content::Blocks(blocks) => {
                        let content: Vec<Part<'a>> = blocks
                            .iter()
                            .filter(|b| !matches!(b, UserBlock::Text(t) if t.text.is_empty()))
                            .map(|b| match b {
                                UserBlock::Text(t) => Part::Text { text: Cow::Borrowed(&t.text), cache_control: None },
                                UserBlock::Image(img) => image_part(img),
                            })
                            .collect();
                        if content.is_empty() {
                            i += 1;
                            continue;
                        }
                        emit(WireMessage::new("user", Some(MessageContent::Parts(content))));
                    }
                }
                last_role = Some("user");
            }
            Message::Assistant(a) => {
                let non_null =
                    compat.requires_assistant_after_tool_result || compat.requires_non_null_assistant_content;
                let mut extra = WireExtra::default();
                let mut out = WireMessage::new(
                    "assistant",
                    Some(if non_null { MessageContent::Text(Cow::Borrowed("")) } else { MessageContent::Null }),
                );
                let texts: Vec<&'a str> =
                    a.content.iter().filter_map(AssistantBlock::as_text).filter(|t| !t.trim().is_empty()).collect();
                let joined = join(&texts, "");
                let thinking: Vec<&'a ThinkingContent> = a
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => Some(t),
                        _ => None,
                    })
                    .collect();
                let reasoning_details = a.content.iter().find_map(|b| match b {
                    AssistantBlock::Thinking(t) => parse_reasoning_details(t.thinking_signature.as_deref()),
                    _ => None,
                });
                let thinking_texts = || thinking.iter().map(|t| t.thinking.as_str()).collect::<Vec<_>>();
                if !thinking.is_empty() {
                    if compat.requires_thinking_as_text {
                        let mut parts = vec![Part::Text { text: join(&thinking_texts(), "\n\n"), cache_control: None }];
                        parts.extend(texts.iter().map(|t| Part::Text { text: Cow::Borrowed(t), cache_control: None }));
                        out.content = Some(MessageContent::Parts(parts));
                    } else {
                        if !joined.is_empty() {
                            out.content = Some(MessageContent::Text(joined));
                        }
                        if reasoning_details.is_none() {
                            let mut signature = thinking[0].thinking_signature.as_deref();
                            if model.provider == "opencode-go" && signature == Some("reasoning") {
                                signature = Some("reasoning_content");
                            }
                            if let Some(field) = REASONING_FIELDS.iter().find(|f| signature == Some(**f)) {
                                extra.reasoning = Some((field, join(&thinking_texts(), "\n")));
                            }
                        }
                    }
                } else if !joined.is_empty() {
                    out.content = Some(MessageContent::Text(joined));
                }
                out.tool_calls = a
                    .tool_calls()
                    .map(|tc| match grammar.get(&tc.name) {
                        // A call without its string input was refused before the body was built.
                        Some(property) => WireToolCall {
                            id: &tc.id,
                            name: &tc.name,
                            arguments: tc
                                .arguments
                                .get(property)
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                            custom: true,
                        },
                        None => WireToolCall {
                            id: &tc.id,
                            name: &tc.name,
                            arguments: serde_json::to_string(&tc.arguments).unwrap_or_else(|_| "{}".to_owned()),
                            custom: false,
                        },
                    })
                    .collect();
                extra.reasoning_details = reasoning_details;
                extra.empty_reasoning_content = compat.requires_reasoning_content_on_assistant_messages
                    && model.reasoning
                    && !matches!(extra.reasoning, Some(("reasoning_content", _)));
                let has_content = match &out.content {
                    Some(MessageContent::Text(s)) => !s.is_empty(),
                    Some(MessageContent::Parts(p)) => !p.is_empty(),
                    _ => false,
                };
                if !has_content && out.tool_calls.is_empty() {
                    i += 1;
                    continue;
                }
                if !extra.is_empty() {
                    out.extra = Some(Box::new(extra));
                }
                emit(out);
                last_role = Some("assistant");
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                let mut j = i;
                while let Some(Message::ToolResult(r)) = messages.get(j).map(|m| &**m) {
                    let texts: Vec<&'a str> = r.content.iter().filter_map(UserBlock::as_text).collect();
                    let text = join(&texts, "\n");
                    let has_images = r.content.iter().any(|b| matches!(b, UserBlock::Image(_)));
                    let text = if !text.trim().is_empty() {
                        text
                    } else if has_images {
                        Cow::Borrowed("(see attached image)")
                    } else {
                        Cow::Borrowed("(no tool output)")
                    };
                    let mut m = WireMessage::new("tool", Some(MessageContent::Text(text)));
                    m.tool_call_id = Some(&r.tool_call_id);
                    if compat.requires_tool_result_name && !r.tool_name.is_empty() {
                        m.name = Some(&r.tool_name);
                    }
                    emit(m);
                    if has_images && model.supports_images() {
                        for b in &r.content {
                            if let UserBlock::Image(img) = b {
                                images.push(image_part(img));
                            }
                        }
                    }
                    j += 1;
                }
                if images.is_empty() {
                    last_role = Some("toolResult");
                } else {
                    if compat.requires_assistant_after_tool_result {
                        emit(WireMessage::new("assistant", Some(MessageContent::Text(Cow::Borrowed(PROCESSED)))));
                    }
                    let mut content = vec![Part::Text {
                        text: Cow::Borrowed("Attached image(s) from tool result:"),
                        cache_control: None,
                    }];
                    content.extend(images);
                    emit(WireMessage::new("user", Some(MessageContent::Parts(content))));
                    last_role = Some("user");
                }
                i = j;
                continue;
            }
        }
        i += 1;
    }
}

/// Anthropic-style cache markers: the first system/developer message, the last tool, and the last
/// user/assistant/tool message that takes one.
pub(crate) fn apply_cache_control(messages: &mut [WireMessage<'_>], tools: Option<&mut Vec<Value>>, marker: &Value) {
    if let Some(m) = messages.iter_mut().find(|m| matches!(m.role, "system" | "developer")) {
        add_cache_control(m, marker);
    }
    if let Some(last) = tools.and_then(|t| t.last_mut()).and_then(Value::as_object_mut) {
        last.insert("cache_control".into(), marker.clone());
    }
    for m in messages.iter_mut().rev() {
        if matches!(m.role, "user" | "assistant" | "tool") && add_cache_control(m, marker) {
            break;
        }
    }
}

fn add_cache_control(message: &mut WireMessage<'_>, marker: &Value) -> bool {
    match &mut message.content {
        Some(MessageContent::Text(s)) => {
            if s.is_empty() {
                return false;
            }
            let text = std::mem::take(s);
            message.content =
                Some(MessageContent::Parts(vec![Part::Text { text, cache_control: Some(marker.clone()) }]));
            true
        }
        Some(MessageContent::Parts(parts)) => {
            match parts.iter_mut().rev().find_map(|p| match p {
                Part::Text { cache_control, .. } => Some(cache_control),
                Part::Image { .. } => None,
            }) {
                Some(cache_control) => {
                    *cache_control = Some(marker.clone());
                    true
                }
                None => false,
            }
        }
        _ => false,
    }
}
