//! The Gemini `contents` list as borrowed, typed wire structs (pi's `convertMessages` of
//! `google-shared`), written in the key order the `@google/genai` SDK sends: the Gemini API
//! (`mldev`) and Vertex AI order a few objects differently.

use std::borrow::Cow;

use crate::handoff::HandedOff;
use crate::http::json_out::{Obj, WriteJson, write_str};
use crate::types::{AssistantBlock, Content, ImageContent, Message, Model, ToolCall, UserBlock};

/// Which backend's key order to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// The Gemini API (`generativelanguage.googleapis.com`).
    Gemini,
    /// Vertex AI.
    Vertex,
}

/// One part of a content.
pub(crate) enum Part<'a> {
    /// `{text, thought?, thoughtSignature?}`.
    Text { text: Cow<'a, str>, thought: bool, signature: Option<&'a str> },
    /// `{inlineData: {mimeType, data}}`.
    Image(&'a ImageContent),
    /// `{functionCall: {name, args, id?}, thoughtSignature?}`.
    Call { call: &'a ToolCall, id: bool, signature: Option<&'a str> },
    /// `{functionResponse: {name, response: {output|error}, parts?, id?}}`.
    Response { name: &'a str, id: Option<&'a str>, error: bool, value: Cow<'a, str>, images: Vec<&'a ImageContent> },
}

/// `{parts, role}`.
pub(crate) struct WireContent<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

/// The contents with the flavor to write them in.
pub(crate) struct Contents<'a> {
    /// Key order.
    pub flavor: Flavor,
    /// The contents.
    pub items: Vec<WireContent<'a>>,
}

fn write_image(out: &mut Vec<u8>, image: &ImageContent) {
    let mut m = Obj::new(out);
    m.str("mimeType", &image.mime_type);
    m.str("data", &image.data);
    m.end();
}

fn write_images(out: &mut Vec<u8>, images: &[&ImageContent]) {
    out.push(b'[');
    for (i, image) in images.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let mut m = Obj::new(out);
        write_image(m.key("inlineData"), image);
        m.end();
    }
    out.push(b']');
}

fn write_response_value(out: &mut Vec<u8>, error: bool, value: &str) {
    let mut r = Obj::new(out);
    r.str(if error { "error" } else { "output" }, value);
    r.end();
}

impl Part<'_> {
    fn write(&self, out: &mut Vec<u8>, flavor: Flavor) {
        let mut m = Obj::new(out);
        match self {
            Part::Text { text, thought, signature } => {
                m.str("text", text);
                if *thought {
                    m.key("thought").extend_from_slice(b"true");
                }
                if let Some(sig) = signature {
                    m.str("thoughtSignature", sig);
                }
            }
            Part::Image(image) => write_image(m.key("inlineData"), image),
            Part::Call { call, id, signature } => {
                let mut f = Obj::new(m.key("functionCall"));
                if flavor == Flavor::Gemini {
                    f.serde("args", &call.arguments);
                    if *id {
                        f.str("id", &call.id);
                    }
                    f.str("name", &call.name);
                } else {
                    f.str("name", &call.name);
                    f.serde("args", &call.arguments);
                    if *id {
                        f.str("id", &call.id);
                    }
                }
                f.end();
                if let Some(sig) = signature {
                    m.str("thoughtSignature", sig);
                }
            }
            Part::Response { name, id, error, value, images } => {
                let mut f = Obj::new(m.key("functionResponse"));
                if flavor == Flavor::Gemini {
                    f.str("name", name);
                    write_response_value(f.key("response"), *error, value);
                    if !images.is_empty() {
                        write_images(f.key("parts"), images);
                    }
                    if let Some(id) = id {
                        f.str("id", id);
                    }
                } else {
                    if let Some(id) = id {
                        f.str("id", id);
                    }
                    f.str("name", name);
                    if !images.is_empty() {
                        write_images(f.key("parts"), images);
                    }
                    write_response_value(f.key("response"), *error, value);
                }
                f.end();
            }
        }
        m.end();
    }
}

impl WriteJson for Contents<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, content) in self.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"parts\":[");
            for (j, part) in content.parts.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                part.write(out, self.flavor);
            }
            out.extend_from_slice(b"],\"role\":");
            write_str(out, content.role);
            out.push(b'}');
        }
        out.push(b']');
    }
}

/// The major version of a `gemini-N…` model id.
pub(crate) fn gemini_major_version(model_id: &str) -> Option<u32> {
    let id = model_id.to_ascii_lowercase();
    let rest = id.strip_prefix("gemini-")?;
    let rest = rest.strip_prefix("live-").unwrap_or(rest);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// pi's `requiresToolCallId`: Claude, gpt-oss and Gemini 3+ take explicit call ids.
pub fn requires_tool_call_id(model_id: &str) -> bool {
    model_id.starts_with("claude-") || model_id.starts_with("gpt-oss-") || gemini_major_version(model_id) >= Some(3)
}

/// Gemini 3+ (and every non-Gemini model) takes images inside `functionResponse.parts`.
fn supports_multimodal_function_response(model_id: &str) -> bool {
    gemini_major_version(model_id).is_none_or(|v| v >= 3)
}

/// pi's tool-call id normaliser for Google (`[^a-zA-Z0-9_-]` → `_`, at most 64 characters).
pub fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    if !requires_tool_call_id(&model.id) {
        return id.to_owned();
    }
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).take(64).collect()
}

/// Gemini thought signatures are base64 (`TYPE_BYTES`).
fn valid_signature(signature: Option<&str>) -> Option<&str> {
    let s = signature?;
    let body = s.trim_end_matches('=');
    let ok = !s.is_empty()
        && s.len() % 4 == 0
        && s.len() - body.len() <= 2
        && !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    ok.then_some(s)
}

fn assistant_parts<'a>(model: &Model, a: &'a crate::types::AssistantMessage) -> Vec<Part<'a>> {
    let same = a.provider == model.provider && a.model == model.id;
    let sig = |s: Option<&'a String>| if same { valid_signature(s.map(String::as_str)) } else { None };
    let mut parts = Vec::with_capacity(a.content.len());
    for block in &a.content {
        match block {
            AssistantBlock::Text(t) => {
                let signature = sig(t.text_signature.as_ref());
                if t.text.trim().is_empty() && signature.is_none() {
                    continue;
                }
                parts.push(Part::Text { text: Cow::Borrowed(&t.text), thought: false, signature });
            }
            AssistantBlock::Thinking(t) => {
                let signature = sig(t.thinking_signature.as_ref());
                if same {
                    if t.thinking.trim().is_empty() && signature.is_none() {
                        continue;
                    }
                    parts.push(Part::Text { text: Cow::Borrowed(&t.thinking), thought: true, signature });
                } else if !t.thinking.trim().is_empty() {
                    parts.push(Part::Text { text: Cow::Borrowed(&t.thinking), thought: false, signature: None });
                }
            }
            AssistantBlock::ToolCall(call) => parts.push(Part::Call {
                call,
                id: requires_tool_call_id(&model.id),
                signature: sig(call.thought_signature.as_ref()),
            }),
        }
    }
    parts
}

fn push_tool_result<'a>(model: &Model, r: &'a crate::types::ToolResultMessage, contents: &mut Vec<WireContent<'a>>) {
    let texts: Vec<&str> = r
        .content
        .iter()
        .filter_map(|b| match b {
            UserBlock::Text(t) => Some(t.text.as_str()),
            UserBlock::Image(_) => None,
        })
        .collect();
    let text = texts.join("\n");
    let images: Vec<&ImageContent> = if model.supports_images() {
        r.content
            .iter()
            .filter_map(|b| match b {
                UserBlock::Image(i) => Some(i),
                UserBlock::Text(_) => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let has_text = !text.trim().is_empty();
    let multimodal = supports_multimodal_function_response(&model.id);
    let value = if has_text {
        Cow::Owned(text)
    } else if images.is_empty() {
        Cow::Borrowed("")
    } else {
        Cow::Borrowed("(see attached image)")
    };
    let separate = if multimodal { Vec::new() } else { images.clone() };
    let part = Part::Response {
        name: &r.tool_name,
        id: requires_tool_call_id(&model.id).then_some(r.tool_call_id.as_str()),
        error: r.is_error,
        value,
        images: if multimodal { images } else { Vec::new() },
    };
    match contents.last_mut() {
        Some(last) if last.role == "user" && last.parts.iter().any(|p| matches!(p, Part::Response { .. })) => {
            last.parts.push(part)
        }
        _ => contents.push(WireContent { role: "user", parts: vec![part] }),
    }
    if !separate.is_empty() {
        let mut parts = vec![Part::Text { text: Cow::Borrowed("Tool result image:"), thought: false, signature: None }];
        parts.extend(separate.into_iter().map(Part::Image));
        contents.push(WireContent { role: "user", parts });
    }
}

/// Converts the handed-off conversation (system messages are skipped: the prompt goes in
/// `systemInstruction`) into Gemini contents.
pub(crate) fn convert<'a>(model: &Model, messages: &'a [HandedOff<'a>]) -> Vec<WireContent<'a>> {
    let mut contents: Vec<WireContent<'a>> = Vec::with_capacity(messages.len());
    for message in messages {
        match &**message {
            Message::System(_) => {}
            Message::User(u) => match &u.content {
                Content::Text(text) => contents.push(WireContent {
                    role: "user",
                    parts: vec![Part::Text { text: Cow::Borrowed(text), thought: false, signature: None }],
                }),
                Content::Blocks(blocks) => {
                    let parts: Vec<Part<'a>> = blocks
                        .iter()
                        .map(|b| match b {
                            UserBlock::Text(t) => {
                                Part::Text { text: Cow::Borrowed(&t.text), thought: false, signature: None }
                            }
                            UserBlock::Image(i) => Part::Image(i),
                        })
                        .collect();
                    if !parts.is_empty() {
                        contents.push(WireContent { role: "user", parts });
                    }
                }
            },
            Message::Assistant(a) => {
                let parts = assistant_parts(model, a);
                if !parts.is_empty() {
                    contents.push(WireContent { role: "model", parts });
                }
            }
            Message::ToolResult(r) => push_tool_result(model, r, &mut contents),
        }
    }
    contents
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_ids() {
        assert_eq!(gemini_major_version("gemini-2.5-flash"), Some(2));
        assert_eq!(gemini_major_version("gemini-live-3-x"), Some(3));
        assert_eq!(gemini_major_version("gemma-4"), None);
        assert!(requires_tool_call_id("gemini-3-pro-preview"));
        assert!(!requires_tool_call_id("gemini-2.5-pro"));
        assert!(requires_tool_call_id("claude-x"));
        assert_eq!(valid_signature(Some("c2ln")), Some("c2ln"));
        assert_eq!(valid_signature(Some("c2l")), None);
        assert_eq!(valid_signature(Some("{\"v\":1}")), None);
    }
}
