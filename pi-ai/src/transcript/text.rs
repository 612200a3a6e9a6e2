//! Text helpers: joining content and rendering system messages as prompt text.

use crate::types::{Content, MaybeText, SystemMessage};

/// Joins the text of `content` with `"\n"`: a plain string is returned as it is; of an array,
/// only text blocks count. This is pi's `contentText(c)`.
///
/// ```
/// use pi_ai::{Content, ImageContent, TextContent, UserBlock};
/// use pi_ai::transcript::content_text;
/// let c = Content::Blocks(vec![
///     UserBlock::Text(TextContent::new("a")),
///     UserBlock::Image(ImageContent::new("AAA=", "image/png")),
///     UserBlock::Text(TextContent::new("b")),
/// ]);
/// assert_eq!(content_text(&c), "a\nb");
/// ```
pub fn content_text<B: MaybeText>(content: &Content<B>) -> String {
    content_text_with(content, "\n")
}

/// [`content_text`] with a custom separator (`contentText(c, sep)`).
///
/// ```
/// use pi_ai::{Content, TextContent};
/// use pi_ai::transcript::content_text_with;
/// let c = Content::Blocks(vec![TextContent::new("a"), TextContent::new("b")]);
/// assert_eq!(content_text_with(&c, ""), "ab");
/// ```
pub fn content_text_with<B: MaybeText>(content: &Content<B>, separator: &str) -> String {
    match content {
        Content::Text(s) => s.clone(),
        Content::Blocks(blocks) => blocks_text(blocks, separator),
    }
}

/// Joins the text blocks of `blocks` with `separator`.
///
/// ```
/// use pi_ai::TextContent;
/// assert_eq!(pi_ai::transcript::blocks_text(&[TextContent::new("x"), TextContent::new("y")], "-"), "x-y");
/// ```
pub fn blocks_text<B: MaybeText>(blocks: &[B], separator: &str) -> String {
    let mut out = String::new();
    let mut first = true;
    for text in blocks.iter().filter_map(MaybeText::maybe_text) {
        if !first {
            out.push_str(separator);
        }
        first = false;
        out.push_str(text);
    }
    out
}

/// A system message rendered as a complete prompt: its content, then each non-deleted section,
/// empty parts dropped, joined with `"\n\n"` (`getSystemMessageText`).
///
/// ```
/// use pi_ai::SystemMessage;
/// use pi_ai::transcript::system_message_text;
/// let m = SystemMessage::new("").with_sections([
///     ("a", Some("A".to_owned())), ("b", Some(String::new())), ("c", Some("C".to_owned())),
/// ]);
/// assert_eq!(system_message_text(&m), "A\n\nC");
/// ```
pub fn system_message_text(message: &SystemMessage) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let content = content_text(&message.content);
    parts.push(&content);
    if let Some(sections) = &message.sections {
        parts.extend(sections.iter().filter_map(|(_, v)| v));
    }
    parts.retain(|p| !p.is_empty());
    parts.join("\n\n")
}

/// A later system message rendered for an API that takes system messages mid-conversation
/// (`renderSystemMessageUpdate`): the content, then one part per section, framed by name. Empty
/// section values are kept.
///
/// ```
/// use pi_ai::SystemMessage;
/// use pi_ai::transcript::render_system_message_update;
/// let m = SystemMessage::new("Note")
///     .with_sections([("rules", Some("<rules>new</rules>".to_owned())), ("old", None)]);
/// assert_eq!(
///     render_system_message_update(&m),
///     "Note\n\nUpdated system prompt section \"rules\":\n\n<rules>new</rules>\n\nRemoved system prompt section \"old\"."
/// );
/// ```
pub fn render_system_message_update(message: &SystemMessage) -> String {
    let mut parts: Vec<String> = Vec::new();
    let text = content_text(&message.content);
    if !text.is_empty() {
        parts.push(text);
    }
    if let Some(sections) = &message.sections {
        for (name, value) in sections.iter() {
            parts.push(match value {
                None => format!("Removed system prompt section \"{name}\"."),
                Some(v) => format!("Updated system prompt section \"{name}\":\n\n{v}"),
            });
        }
    }
    parts.join("\n\n")
}
