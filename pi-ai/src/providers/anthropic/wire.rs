//! The Anthropic message list as borrowed, typed wire structs (pi's `convertMessages`), serialized
//! straight to bytes in pi's key order.

use std::borrow::Cow;

use serde_json::Value;

use super::compat::AnthropicCompat;
use crate::handoff::HandedOff;
use crate::http::json_out::{Obj, WriteJson, write_str};
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
    /// `{type: "tool_use", id, name, input}`; the name in Claude Code's casing with a subscription
    /// token.
    ToolUse(&'a ToolCall, bool),
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

impl WriteJson for CachedBlock<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut m = Obj::new(out);
        match &self.block {
            Block::Text(text) => {
                m.str("type", "text");
                m.str("text", text);
            }
            Block::Image(image) => {
                m.str("type", "image");
                let mut source = Obj::new(m.key("source"));
                source.str("type", "base64");
                source.str("media_type", &image.mime_type);
                source.str("data", &image.data);
                source.end();
            }
            Block::RedactedThinking(data) => {
                m.str("type", "redacted_thinking");
                match data {
                    Some(data) => m.str("data", data),
                    None => m.key("data").extend_from_slice(b"null"),
                }
            }
            Block::Thinking { thinking, signature } => {
                m.str("type", "thinking");
                m.str("thinking", thinking);
                m.str("signature", signature);
            }
            Block::ToolUse(call, claude_code) => {
                m.str("type", "tool_use");
                m.str("id", &call.id);
                m.str("name", if *claude_code { super::oauth::to_claude_code_name(&call.name) } else { &call.name });
                m.serde("input", &call.arguments);
            }
            Block::ToolResult { id, content, is_error } => {
                m.str("type", "tool_result");
                m.str("tool_use_id", id);
                m.json("content", &**content);
                m.key("is_error").extend_from_slice(if *is_error { b"true" } else { b"false" });
            }
        }
        if let Some(c) = &self.cache_control {
            m.serde("cache_control", c);
        }
        m.end();
    }
}

impl WriteJson for BlockContent<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            BlockContent::Text(t) => write_str(out, t),
            BlockContent::Blocks(blocks) => blocks.write_json(out),
        }
    }
}

impl WriteJson for WireMessage<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut m = Obj::new(out);
        m.str("role", self.role);
        m.json("content", &self.content);
        m.end();
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
                        AssistantBlock::ToolCall(call) => {
                            blocks.push(block(Block::ToolUse(call, compat.claude_code_identity)))
                        }
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
