//! Mistral chat messages as borrowed, typed wire structs (pi's `toChatMessages` after
//! `toMistralWirePayload`, which moves renamed keys such as `tool_calls` to the end).

use std::borrow::Cow;

use crate::handoff::HandedOff;
use crate::http::json_out::{Obj, WriteJson, write_str};
use crate::transcript::{render_system_message_update, system_message_text};
use crate::types::{AssistantBlock, Content, Message, ToolCall, UserBlock};

/// One content chunk.
pub(crate) enum Chunk<'a> {
    /// `{type: "text", text}`.
    Text(Cow<'a, str>),
    /// `{type: "thinking", thinking: [{type: "text", text}]}`.
    Thinking(&'a str),
    /// `{type: "image_url", image_url: "data:…"}`.
    Image(String),
}

/// `content`: a string or chunks.
pub(crate) enum ChunkContent<'a> {
    Text(Cow<'a, str>),
    Chunks(Vec<Chunk<'a>>),
}

/// One message.
pub(crate) enum WireMessage<'a> {
    /// `{role: "system" | "user", content}`.
    Plain { role: &'static str, content: ChunkContent<'a> },
    /// `{role: "assistant", prefix: false, content?, tool_calls?}`.
    Assistant { content: Vec<Chunk<'a>>, calls: Vec<&'a ToolCall> },
    /// `{role: "tool", name, content, tool_call_id}`.
    Tool { name: &'a str, content: Vec<Chunk<'a>>, id: &'a str },
}

impl WriteJson for Chunk<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut m = Obj::new(out);
        match self {
            Chunk::Text(text) => {
                m.str("type", "text");
                m.str("text", text);
            }
            Chunk::Thinking(text) => {
                m.str("type", "thinking");
                let list = m.key("thinking");
                list.push(b'[');
                let mut t = Obj::new(list);
                t.str("type", "text");
                t.str("text", text);
                t.end();
                list.push(b']');
            }
            Chunk::Image(url) => {
                m.str("type", "image_url");
                m.str("image_url", url);
            }
        }
        m.end();
    }
}

impl WriteJson for ChunkContent<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            ChunkContent::Text(text) => write_str(out, text),
            ChunkContent::Chunks(chunks) => chunks.write_json(out),
        }
    }
}

impl WriteJson for WireMessage<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut m = Obj::new(out);
        match self {
            WireMessage::Plain { role, content } => {
                m.str("role", role);
                m.json("content", content);
            }
            WireMessage::Assistant { content, calls } => {
                m.str("role", "assistant");
                m.key("prefix").extend_from_slice(b"false");
                if !content.is_empty() {
                    m.json("content", content);
                }
                if !calls.is_empty() {
                    let list = m.key("tool_calls");
                    list.push(b'[');
                    for (i, call) in calls.iter().enumerate() {
                        if i > 0 {
                            list.push(b',');
                        }
                        let mut c = Obj::new(list);
                        c.str("id", &call.id);
                        c.str("type", "function");
                        let mut f = Obj::new(c.key("function"));
                        f.str("name", &call.name);
                        f.str("arguments", &serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into()));
                        f.end();
                        c.key("index").push(b'0');
                        c.end();
                    }
                    list.push(b']');
                }
            }
            WireMessage::Tool { name, content, id } => {
                m.str("role", "tool");
                m.str("name", name);
                m.json("content", content);
                m.str("tool_call_id", id);
            }
        }
        m.end();
    }
}

const NO_IMAGES: &str = "(image omitted: model does not support images)";

fn image_url(mime: &str, data: &str) -> String {
    crate::http::shared::data_url(mime, data)
}

/// pi's `buildToolResultText`.
fn tool_result_text(text: &str, has_images: bool, supports_images: bool, is_error: bool) -> String {
    let trimmed = text.trim();
    let prefix = if is_error { "[tool error] " } else { "" };
    if !trimmed.is_empty() {
        let suffix =
            if has_images && !supports_images { "\n[tool image omitted: model does not support images]" } else { "" };
        return format!("{prefix}{trimmed}{suffix}");
    }
    let body = match (has_images, supports_images) {
        (true, true) => "(see attached image)",
        (true, false) => NO_IMAGES,
        (false, _) => "(no tool output)",
    };
    format!("{prefix}{body}")
}

/// Converts the handed-off transcript into Mistral messages.
pub(crate) fn convert<'a>(messages: &'a [HandedOff<'a>], supports_images: bool) -> Vec<WireMessage<'a>> {
    let mut result = Vec::with_capacity(messages.len());
    for (index, message) in messages.iter().enumerate() {
        match &**message {
            Message::System(s) => {
                let text = if index == 0 { system_message_text(s) } else { render_system_message_update(s) };
                if !text.is_empty() {
                    result.push(WireMessage::Plain { role: "system", content: ChunkContent::Text(Cow::Owned(text)) });
                }
            }
            Message::User(u) => match &u.content {
                Content::Text(text) => {
                    result.push(WireMessage::Plain { role: "user", content: ChunkContent::Text(Cow::Borrowed(text)) })
                }
                Content::Blocks(blocks) => {
                    let had_images = blocks.iter().any(|b| matches!(b, UserBlock::Image(_)));
                    let chunks: Vec<Chunk<'a>> = blocks
                        .iter()
                        .filter_map(|b| match b {
                            UserBlock::Text(t) => Some(Chunk::Text(Cow::Borrowed(&t.text))),
                            UserBlock::Image(i) if supports_images => {
                                Some(Chunk::Image(image_url(&i.mime_type, &i.data)))
                            }
                            UserBlock::Image(_) => None,
                        })
                        .collect();
                    if !chunks.is_empty() {
                        result.push(WireMessage::Plain { role: "user", content: ChunkContent::Chunks(chunks) });
                    } else if had_images && !supports_images {
                        result.push(WireMessage::Plain {
                            role: "user",
                            content: ChunkContent::Text(Cow::Borrowed(NO_IMAGES)),
                        });
                    }
                }
            },
            Message::Assistant(a) => {
                let mut content = Vec::new();
                let mut calls = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantBlock::Text(t) if !t.text.trim().is_empty() => {
                            content.push(Chunk::Text(Cow::Borrowed(&t.text)))
                        }
                        AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                            content.push(Chunk::Thinking(&t.thinking))
                        }
                        AssistantBlock::ToolCall(call) => calls.push(call),
                        _ => {}
                    }
                }
                if !content.is_empty() || !calls.is_empty() {
                    result.push(WireMessage::Assistant { content, calls });
                }
            }
            Message::ToolResult(r) => {
                let texts: Vec<&str> = r
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        UserBlock::Text(t) => Some(t.text.as_str()),
                        UserBlock::Image(_) => None,
                    })
                    .collect();
                let has_images = r.content.iter().any(|b| matches!(b, UserBlock::Image(_)));
                let mut content = vec![Chunk::Text(Cow::Owned(tool_result_text(
                    &texts.join("\n"),
                    has_images,
                    supports_images,
                    r.is_error,
                )))];
                if supports_images {
                    content.extend(r.content.iter().filter_map(|b| match b {
                        UserBlock::Image(i) => Some(Chunk::Image(image_url(&i.mime_type, &i.data))),
                        UserBlock::Text(_) => None,
                    }));
                }
                result.push(WireMessage::Tool { name: &r.tool_name, content, id: &r.tool_call_id });
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_result_texts() {
        assert_eq!(
            tool_result_text(" x ", true, false, true),
            "[tool error] x\n[tool image omitted: model does not support images]"
        );
        assert_eq!(tool_result_text("", true, true, false), "(see attached image)");
        assert_eq!(tool_result_text("", false, true, true), "[tool error] (no tool output)");
    }
}
