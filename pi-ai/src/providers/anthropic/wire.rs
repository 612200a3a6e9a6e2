//! The Anthropic message list as borrowed, typed wire structs (pi's `convertMessages`), serialized
//! straight to bytes in pi's key order.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::compat::AnthropicCompat;
use crate::handoff::HandedOff;
use crate::transcript::{blocks_text, render_system_message_update};
use crate::types::{AssistantBlock, Content, ImageContent, Message, ToolCall, ToolResultMessage, UserBlock};

/// One content block.
pub(crate) enum Block<'a> {
    /// `{type: "text", text}`.
    Text(Cow<'a, str>),
    /// `{type: "image", source: {type: "base64", media_type, data}}`.
    Image(&'a ImageContent),
    /// `{type: "redacted_thinking", data}` (`data` is `null` without a signature).
    RedactedThinking(Option<&'a str>),
    /// `{type: "thinking", thinking, signature}`.
    Thinking { thinking: &'a str, signature: &'a str },
    /// `{type: "tool_use", id, name, input}`.
    ToolUse(&'a ToolCall),
    /// `{type: "tool_result", tool_use_id, content, is_error}`.
    ToolResult { id: &'a str, content: Box<BlockContent<'a>>, is_error: bool },
}

/// A block with an optional trailing `cache_control`.
pub(crate) struct CachedBlock<'a> {
    block: Block<'a>,
    cache_control: Option<Value>,
}

/// `content`: a string or blocks.
pub(crate) enum BlockContent<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<CachedBlock<'a>>),
}

/// `{role, content}`.
pub(crate) struct WireMessage<'a> {
    role: &'static str,
    content: BlockContent<'a>,
}

struct Source<'a>(&'a ImageContent);

impl Serialize for Source<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(Some(3))?;
        m.serialize_entry("type", "base64")?;
        m.serialize_entry("media_type", &self.0.mime_type)?;
        m.serialize_entry("data", &self.0.data)?;
        m.end()
    }
}

impl CachedBlock<'_> {
    fn write<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        match &self.block {
            Block::Text(text) => {
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", text)?;
            }
            Block::Image(image) => {
                m.serialize_entry("type", "image")?;
                m.serialize_entry("source", &Source(image))?;
            }
            Block::RedactedThinking(data) => {
                m.serialize_entry("type", "redacted_thinking")?;
                m.serialize_entry("data", data)?;
            }
            Block::Thinking { thinking, signature } => {
                m.serialize_entry("type", "thinking")?;
                m.serialize_entry("thinking", thinking)?;
                m.serialize_entry("signature", signature)?;
            }
            Block::ToolUse(call) => {
                m.serialize_entry("type", "tool_use")?;
                m.serialize_entry("id", &call.id)?;
                m.serialize_entry("name", &call.name)?;
                m.serialize_entry("input", &call.arguments)?;
            }
            Block::ToolResult { id, content, is_error } => {
                m.serialize_entry("type", "tool_result")?;
                m.serialize_entry("tool_use_id", id)?;
                m.serialize_entry("content", content)?;
                m.serialize_entry("is_error", is_error)?;
            }
        }
        if let Some(c) = &self.cache_control {
            m.serialize_entry("cache_control", c)?;
        }
        Ok(())
    }
}

impl Serialize for CachedBlock<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(None)?;
        self.write(&mut m)?;
        m.end()
    }
}

impl Serialize for BlockContent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            BlockContent::Text(t) => serializer.serialize_str(t),
            BlockContent::Blocks(blocks) => blocks.serialize(serializer),
        }
    }
}

impl Serialize for WireMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(Some(2))?;
        m.serialize_entry("role", self.role)?;
        m.serialize_entry("content", &self.content)?;
        m.end()
    }
}

fn block(block: Block<'_>) -> CachedBlock<'_> {
    CachedBlock { block, cache_control: None }
}

/// pi's `convertContentBlocks`: text only → the texts joined with "\n"; with images → blocks,
/// with "(see attached image)" first when there is no text.
fn tool_result_content(content: &[UserBlock]) -> BlockContent<'_> {
    if !content.iter().any(|b| matches!(b, UserBlock::Image(_))) {
        return BlockContent::Text(match content {
            [UserBlock::Text(t)] => Cow::Borrowed(&t.text),
            _ => Cow::Owned(blocks_text(content, "\n")),
        });
    }
    let mut blocks: Vec<CachedBlock<'_>> = Vec::with_capacity(content.len() + 1);
    if !content.iter().any(|b| matches!(b, UserBlock::Text(_))) {
        blocks.push(block(Block::Text(Cow::Borrowed("(see attached image)"))));
    }
    blocks.extend(content.iter().map(|b| match b {
        UserBlock::Text(t) => block(Block::Text(Cow::Borrowed(&t.text))),
        UserBlock::Image(img) => block(Block::Image(img)),
    }));
    BlockContent::Blocks(blocks)
}

const ERROR_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";

/// pi's `splitErrorToolResultImages`: an error result's images move after all results; what stays
/// is its text with one placeholder per run of images (as the text-only content string).
fn split_error_images(msg: &ToolResultMessage) -> Option<(String, String, Vec<&ImageContent>)> {
    if !msg.is_error {
        return None;
    }
    let images: Vec<&ImageContent> = msg
        .content
        .iter()
        .filter_map(|b| match b {
            UserBlock::Image(i) => Some(i),
            UserBlock::Text(_) => None,
        })
        .collect();
    if images.is_empty() {
        return None;
    }
    let mut texts: Vec<&str> = Vec::new();
    let mut previous_was_placeholder = false;
    for block in &msg.content {
        match block {
            UserBlock::Image(_) => {
                if !previous_was_placeholder {
                    texts.push(ERROR_IMAGE_PLACEHOLDER);
                }
                previous_was_placeholder = true;
            }
            UserBlock::Text(t) => {
                previous_was_placeholder = t.text == ERROR_IMAGE_PLACEHOLDER;
                texts.push(&t.text);
            }
        }
    }
    let caption = format!("Images from the error result of tool call {} ({}):", msg.tool_call_id, msg.tool_name);
    Some((texts.join("\n"), caption, images))
}

/// Converts the conversation (without the leading system message) into Anthropic messages.
pub(crate) fn convert<'a>(
    messages: &'a [HandedOff<'a>],
    cache: Option<&Value>,
    compat: &AnthropicCompat,
) -> Vec<WireMessage<'a>> {
    let mut params: Vec<WireMessage<'a>> = Vec::with_capacity(messages.len());
    let mut pending_system: Vec<WireMessage<'a>> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        match &*messages[i] {
            Message::System(s) => {
                let text = render_system_message_update(s);
                if !text.is_empty() {
                    pending_system.push(WireMessage {
                        role: "system",
                        content: BlockContent::Blocks(vec![block(Block::Text(Cow::Owned(text)))]),
                    });
                }
            }
            Message::User(u) => match &u.content {
                Content::Text(text) => {
                    if !text.trim().is_empty() {
                        params.push(WireMessage { role: "user", content: BlockContent::Text(Cow::Borrowed(text)) });
                    }
                }
                Content::Blocks(blocks) => {
                    let content: Vec<CachedBlock<'a>> = blocks
                        .iter()
                        .filter(|b| !matches!(b, UserBlock::Text(t) if t.text.trim().is_empty()))
                        .map(|b| match b {
                            UserBlock::Text(t) => block(Block::Text(Cow::Borrowed(&t.text))),
                            UserBlock::Image(img) => block(Block::Image(img)),
                        })
                        .collect();
                    if !content.is_empty() {
                        params.push(WireMessage { role: "user", content: BlockContent::Blocks(content) });
                    }
                }
            },
            Message::Assistant(a) => {
                let mut blocks = Vec::with_capacity(a.content.len());
                for b in &a.content {
                    match b {
                        AssistantBlock::Text(t) => {
                            if !t.text.trim().is_empty() {
                                blocks.push(block(Block::Text(Cow::Borrowed(&t.text))));
                            }
                        }
                        AssistantBlock::Thinking(t) => {
                            if t.redacted == Some(true) {
                                blocks.push(block(Block::RedactedThinking(t.thinking_signature.as_deref())));
                                continue;
                            }
                            let signature = t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty());
                            if t.thinking.trim().is_empty() && signature.is_none() {
                                continue;
                            }
                            blocks.push(block(match signature {
                                Some(sig) => Block::Thinking { thinking: &t.thinking, signature: sig },
                                None if compat.allow_empty_signature => {
                                    Block::Thinking { thinking: &t.thinking, signature: "" }
                                }
                                None => Block::Text(Cow::Borrowed(&t.thinking)),
                            }));
                        }
                        AssistantBlock::ToolCall(call) => blocks.push(block(Block::ToolUse(call))),
                    }
                }
                if blocks.is_empty() {
                    i += 1;
                    continue;
                }
                params.append(&mut pending_system);
                params.push(WireMessage { role: "assistant", content: BlockContent::Blocks(blocks) });
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                let mut error_images = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i).map(|m| &**m) {
                    let content = match split_error_images(r) {
                        Some((text, caption, images)) => {
                            error_images.push(block(Block::Text(Cow::Owned(caption))));
                            error_images.extend(images.into_iter().map(|img| block(Block::Image(img))));
                            BlockContent::Text(Cow::Owned(text))
                        }
                        None => tool_result_content(&r.content),
                    };
                    results.push(block(Block::ToolResult {
                        id: &r.tool_call_id,
                        content: Box::new(content),
                        is_error: r.is_error,
                    }));
                    i += 1;
                }
                results.append(&mut error_images);
                params.push(WireMessage { role: "user", content: BlockContent::Blocks(results) });
                continue;
            }
        }
        i += 1;
    }
    params.append(&mut pending_system);
    if let (Some(cache), Some(last)) = (cache, params.last_mut())
        && matches!(last.role, "user" | "system")
    {
        match &mut last.content {
            BlockContent::Blocks(blocks) => {
                if let Some(b) = blocks.last_mut()
                    && matches!(b.block, Block::Text(_) | Block::Image(_) | Block::ToolResult { .. })
                {
                    b.cache_control = Some(cache.clone());
                }
            }
            BlockContent::Text(s) => {
                let text = std::mem::take(s);
                last.content = BlockContent::Blocks(vec![CachedBlock {
                    block: Block::Text(text),
                    cache_control: Some(cache.clone()),
                }]);
            }
        }
    }
    params
}
