//! The Converse message list as borrowed, typed wire structs (pi's `convertMessages`), serialized
//! in the key order the AWS SDK writes.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

use super::models::{is_anthropic_claude, supports_thinking_signature};
use crate::handoff::HandedOff;
use crate::http::json_out::{WriteJson, write_serde};
use crate::types::{AssistantBlock, Content, ImageContent, Message, Model, ToolResultMessage, UserBlock};

const EMPTY_TEXT_PLACEHOLDER: &str = "<empty>";
const ERROR_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";

/// `{bytes}` of an image (base64, as the SDK writes a blob).
#[derive(Serialize)]
pub(crate) struct Source<'a> {
    bytes: &'a str,
}

/// `{format, source}`.
#[derive(Serialize)]
pub(crate) struct Image<'a> {
    format: &'static str,
    source: Source<'a>,
}

/// `{toolUseId, name, input}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolUse<'a> {
    tool_use_id: &'a str,
    name: &'a str,
    input: Cow<'a, Map<String, Value>>,
}

/// `{toolUseId, content, status}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolResult<'a> {
    tool_use_id: &'a str,
    content: Vec<Block<'a>>,
    status: &'static str,
}

/// `{text, signature?}`.
#[derive(Serialize)]
pub(crate) struct ReasoningText<'a> {
    text: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signature: Option<&'a str>,
}

/// `{reasoningText}` or `{redactedContent}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Reasoning<'a> {
    /// Readable reasoning.
    ReasoningText(ReasoningText<'a>),
    /// Encrypted reasoning, base64.
    RedactedContent(String),
}

/// `{type: "default", ttl?}`.
#[derive(Serialize, Clone)]
pub(crate) struct CachePoint {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<&'static str>,
}

impl CachePoint {
    pub(crate) fn new(long: bool) -> Self {
        CachePoint { kind: "default", ttl: long.then_some("1h") }
    }
}

/// One content block.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Block<'a> {
    /// `{text}`.
    Text(Cow<'a, str>),
    /// `{image}`.
    Image(Image<'a>),
    /// `{toolUse}`.
    ToolUse(ToolUse<'a>),
    /// `{toolResult}`.
    ToolResult(ToolResult<'a>),
    /// `{reasoningContent}`.
    ReasoningContent(Reasoning<'a>),
    /// `{cachePoint}`.
    CachePoint(CachePoint),
}

/// `{role, content}`.
#[derive(Serialize)]
pub(crate) struct WireMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

impl WriteJson for WireMessage<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        write_serde(out, self);
    }
}

fn image_format(mime: &str) -> Result<&'static str, String> {
    Ok(match mime {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => return Err(format!("Unknown image type: {other}")),
    })
}

fn image(i: &ImageContent) -> Result<Block<'_>, String> {
    Ok(Block::Image(Image { format: image_format(&i.mime_type)?, source: Source { bytes: &i.data } }))
}

/// pi's `sanitizeSurrogates` has nothing to do on Rust strings (always valid UTF-8).
fn non_blank(text: &str) -> Option<Block<'_>> {
    (!text.trim().is_empty()).then_some(Block::Text(Cow::Borrowed(text)))
}

/// Drops empty keys at every depth (`sanitizeBedrockDocument`), borrowing when nothing changes.
fn sanitize(map: &Map<String, Value>) -> Cow<'_, Map<String, Value>> {
    fn has_empty_key(v: &Value) -> bool {
        match v {
            Value::Object(o) => o.iter().any(|(k, v)| k.is_empty() || has_empty_key(v)),
            Value::Array(a) => a.iter().any(has_empty_key),
            _ => false,
        }
    }
    fn clean(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                Value::Object(o.iter().filter(|(k, _)| !k.is_empty()).map(|(k, v)| (k.clone(), clean(v))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(clean).collect()),
            other => other.clone(),
        }
    }
    if map.iter().any(|(k, v)| k.is_empty() || has_empty_key(v)) {
        Cow::Owned(map.iter().filter(|(k, _)| !k.is_empty()).map(|(k, v)| (k.clone(), clean(v))).collect())
    } else {
        Cow::Borrowed(map)
    }
}

fn user_content(content: &Content<UserBlock>) -> Result<Vec<Block<'_>>, String> {
    let mut blocks = Vec::new();
    match content {
        Content::Text(text) => {
            blocks.push(non_blank(text).unwrap_or(Block::Text(Cow::Borrowed(EMPTY_TEXT_PLACEHOLDER))));
            return Ok(blocks);
        }
        Content::Blocks(items) => {
            for b in items {
                match b {
                    UserBlock::Text(t) => blocks.extend(non_blank(&t.text)),
                    UserBlock::Image(i) => blocks.push(image(i)?),
                }
            }
        }
    }
    if blocks.is_empty() {
        blocks.push(Block::Text(Cow::Borrowed(EMPTY_TEXT_PLACEHOLDER)));
    }
    Ok(blocks)
}

fn assistant_content<'a>(blocks: &'a [AssistantBlock], model: &Model) -> Vec<Block<'a>> {
    let mut out = Vec::new();
    for b in blocks {
        match b {
            AssistantBlock::Text(t) => out.extend(non_blank(&t.text)),
            AssistantBlock::ToolCall(c) => {
                out.push(Block::ToolUse(ToolUse { tool_use_id: &c.id, name: &c.name, input: sanitize(&c.arguments) }))
            }
            AssistantBlock::Thinking(t) => {
                if t.redacted == Some(true) {
                    if let Some(payload) = t.thinking_signature.as_deref().and_then(redacted_payload) {
                        out.push(Block::ReasoningContent(Reasoning::RedactedContent(payload)));
                    }
                    continue;
                }
                if t.thinking.trim().is_empty() {
                    continue;
                }
                let text = Cow::Borrowed(t.thinking.as_str());
                if supports_thinking_signature(model) {
                    match t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty()) {
                        None => out.push(Block::Text(text)),
                        Some(signature) => out.push(Block::ReasoningContent(Reasoning::ReasoningText(ReasoningText {
                            text,
                            signature: Some(signature),
                        }))),
                    }
                } else {
                    out.push(Block::ReasoningContent(Reasoning::ReasoningText(ReasoningText {
                        text,
                        signature: None,
                    })));
                }
            }
        }
    }
    out
}

/// A stored redacted payload re-encoded as the SDK sends the decoded bytes (`None` when it is not
/// base64 or empty: the block is dropped, as pi drops it).
fn redacted_payload(signature: &str) -> Option<String> {
    use base64::Engine;
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine.decode(signature.trim()).ok().filter(|b| !b.is_empty())?;
    Some(engine.encode(bytes))
}

/// `(content, caption + images)` of one tool result; for Claude an error result's images move
/// after all results of the turn (pi's `splitErrorToolResultImages`).
fn tool_result<'a>(msg: &'a ToolResultMessage, claude: bool) -> Result<(Block<'a>, Vec<Block<'a>>), String> {
    let status = if msg.is_error { "error" } else { "success" };
    let has_images = msg.content.iter().any(|b| matches!(b, UserBlock::Image(_)));
    let mut content = Vec::new();
    let mut moved = Vec::new();
    if claude && msg.is_error && has_images {
        let mut previous_was_placeholder = false;
        for b in &msg.content {
            match b {
                UserBlock::Image(i) => {
                    if !previous_was_placeholder {
                        content.push(Block::Text(Cow::Borrowed(ERROR_IMAGE_PLACEHOLDER)));
                    }
                    previous_was_placeholder = true;
                    moved.push(image(i)?);
                }
                UserBlock::Text(t) => {
                    previous_was_placeholder = t.text == ERROR_IMAGE_PLACEHOLDER;
                    content.extend(non_blank(&t.text));
                }
            }
        }
        let caption = format!("Images from the error result of tool call {} ({}):", msg.tool_call_id, msg.tool_name);
        moved.insert(0, Block::Text(Cow::Owned(caption)));
    } else {
        for b in &msg.content {
            match b {
                UserBlock::Image(i) => content.push(image(i)?),
                UserBlock::Text(t) => content.extend(non_blank(&t.text)),
            }
        }
    }
    if content.is_empty() {
        content.push(Block::Text(Cow::Borrowed(EMPTY_TEXT_PLACEHOLDER)));
    }
    Ok((Block::ToolResult(ToolResult { tool_use_id: &msg.tool_call_id, content, status }), moved))
}

/// Converts the conversation (after the handoff, without the leading system message).
pub(crate) fn convert<'a>(
    messages: &'a [HandedOff<'a>],
    model: &Model,
    cache: Option<&CachePoint>,
) -> Result<Vec<WireMessage<'a>>, String> {
    let claude = is_anthropic_claude(model);
    let mut result: Vec<WireMessage<'a>> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let message: &'a Message = match &messages[i] {
            HandedOff::Borrowed(m) => m,
            HandedOff::Owned(m) => m,
        };
        i += 1;
        match message {
            Message::User(u) => result.push(WireMessage { role: "user", content: user_content(&u.content)? }),
            Message::Assistant(a) => {
                let content = assistant_content(&a.content, model);
                if !content.is_empty() {
                    result.push(WireMessage { role: "assistant", content });
                }
            }
            Message::ToolResult(first) => {
                let mut results = Vec::new();
                let mut images = Vec::new();
                let (block, moved) = tool_result(first, claude)?;
                results.push(block);
                images.extend(moved);
                while i < messages.len() {
                    let next: &'a Message = match &messages[i] {
                        HandedOff::Borrowed(m) => m,
                        HandedOff::Owned(m) => m,
                    };
                    let Message::ToolResult(next) = next else { break };
                    let (block, moved) = tool_result(next, claude)?;
                    results.push(block);
                    images.extend(moved);
                    i += 1;
                }
                results.extend(images);
                result.push(WireMessage { role: "user", content: results });
            }
            _ => {}
        }
    }
    if let Some(cache) = cache
        && let Some(last) = result.last_mut()
        && last.role == "user"
    {
        last.content.push(Block::CachePoint(cache.clone()));
    }
    Ok(result)
}
