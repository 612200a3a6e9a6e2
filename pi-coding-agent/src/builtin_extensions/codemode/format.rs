//! The `codemode` result (pi's `execute.ts`): output items laid out for the model, the token
//! budget with the full text spilled to a temp file, images saved to temp files, and the
//! "Script completed" / "Script failed" header.

use std::collections::HashMap;

use base64::Engine;
use pi_ai::{ImageContent, TextContent, UserBlock};

use super::sandbox::{OutputItem, ScriptError};
use crate::mcp::content::write_output_file;
use crate::tools::truncate::format_size;

/// Default token budget of the output.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 10_000;
const CHARS_PER_TOKEN: usize = 4;

/// One call a script made, as the result's `details` list it.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    /// `<toolCallId>/?` until the call has an id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Arguments preview.
    pub args: String,
    /// `running`, `ok`, `error` or `cancelled`.
    pub status: String,
    /// Duration in milliseconds.
    pub duration_ms: Option<f64>,
    /// Error preview.
    pub error: Option<String>,
    /// Cost in USD of a model call that reported usage.
    pub cost: Option<f64>,
}

impl CallRecord {
    /// As JSON (`{ id, name, args, status, durationMs?, error? }`).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({"id": self.id, "name": self.name, "args": self.args, "status": self.status});
        if let Some(d) = self.duration_ms {
            v["durationMs"] = serde_json::json!(d);
        }
        if let Some(e) = &self.error {
            v["error"] = serde_json::json!(e);
        }
        if let Some(c) = self.cost {
            v["cost"] = serde_json::json!(c);
        }
        v
    }
}

/// Items of the result before the header.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// Text.
    Text(String),
    /// An image: base64 data and MIME type.
    Image(String, String),
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The first `max` UTF-16 units of `text`, never splitting a character.
pub fn slice_head(text: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, c) in text.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &text[..i];
        }
    }
    text
}

/// The last `max` UTF-16 units of `text`, never splitting a character.
pub fn slice_tail(text: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, c) in text.char_indices().rev() {
        units += c.len_utf16();
        if units > max {
            return &text[i + c.len_utf8()..];
        }
    }
    text
}

/// `text` cut to `max` units with `...`.
pub fn truncate_text(text: &str, max: usize) -> String {
    if utf16_len(text) > max { format!("{}...", slice_head(text, max.saturating_sub(3))) } else { text.to_owned() }
}

/// pi's `formatOutput`: `==> text N/M <==` lines when there are several text items, `console`
/// lines in one `<console_output>` block at the end.
pub fn format_output(output: &[OutputItem]) -> Vec<Item> {
    let total = output.iter().filter(|i| matches!(i, OutputItem::Text { console: false, .. })).count();
    let mut items = Vec::new();
    let mut console_lines = Vec::new();
    let mut index = 0;
    for item in output {
        match item {
            OutputItem::Image { data, mime_type } => items.push(Item::Image(data.clone(), mime_type.clone())),
            OutputItem::Text { text, console: true } => console_lines.push(text.as_str()),
            OutputItem::Text { text, console: false } => {
                index += 1;
                items.push(Item::Text(if total > 1 {
                    format!("==> text {index}/{total} <==\n{text}")
                } else {
                    text.clone()
                }));
            }
        }
    }
    if !console_lines.is_empty() {
        items.push(Item::Text(format!("<console_output>\n{}\n</console_output>", console_lines.join("\n"))));
    }
    items
}

/// Adjacent text items joined into one, each part on its own line.
pub fn join_adjacent_text(items: Vec<Item>) -> Vec<Item> {
    let mut joined = Vec::new();
    let mut parts = String::new();
    let mut has_parts = false;
    let mut last_part_ends_newline = true;
    for item in items {
        match item {
            Item::Text(text) => {
                if !last_part_ends_newline {
                    parts.push('\n');
                    last_part_ends_newline = true;
                }
                if !text.is_empty() {
                    last_part_ends_newline = text.ends_with('\n');
                }
                parts.push_str(&text);
                has_parts = true;
            }
            image => {
                if has_parts {
                    joined.push(Item::Text(std::mem::take(&mut parts)));
                }
                has_parts = false;
                last_part_ends_newline = true;
                joined.push(image);
            }
        }
    }
    if has_parts {
        joined.push(Item::Text(parts));
    }
    joined
}

/// The error text after `Script error:` (with the calls made before the failure).
pub fn format_error(error: &ScriptError, calls: &[CallRecord]) -> String {
    let head = match error {
        ScriptError::Script { name, message, stack } => {
            stack.clone().unwrap_or_else(|| format!("{}: {message}", name.as_deref().unwrap_or("Error")))
        }
        ScriptError::Timeout(m) => format!("Script timed out: {m}"),
        ScriptError::Aborted(m) => format!("Script aborted: {m}"),
        ScriptError::Sandbox(m) => format!("Script sandbox failed: {m}"),
    };
    let summary = if calls.is_empty() {
        "No tool calls were made.".to_owned()
    } else {
        format!(
            "Tool calls made before the failure (they are not undone): {}",
            calls.iter().map(|c| format!("{} ({})", c.name, c.status)).collect::<Vec<_>>().join(", ")
        )
    };
    format!("{head}\n\n{summary}")
}

/// pi's `truncateOutput`: past the budget, the text items become one item keeping the start and
/// end, images follow it, and the full text goes to a temp file (its path is returned).
pub fn truncate_output(items: Vec<Item>, max_tokens: u64) -> (Vec<Item>, Option<String>) {
    let texts: Vec<&str> =
        items.iter().filter_map(|i| if let Item::Text(t) = i { Some(t.as_str()) } else { None }).collect();
    let combined = texts.join("\n");
    let budget = (max_tokens as usize).saturating_mul(CHARS_PER_TOKEN);
    let length = utf16_len(&combined);
    if texts.is_empty() || length <= budget {
        return (items, None);
    }
    let head_chars = budget / 2;
    let tail_chars = budget - head_chars;
    let removed = length - head_chars - tail_chars;
    let mut text = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{}…{} tokens truncated…{}",
        length.div_ceil(CHARS_PER_TOKEN),
        combined.split('\n').count(),
        slice_head(&combined, head_chars),
        removed.div_ceil(CHARS_PER_TOKEN),
        slice_tail(&combined, tail_chars)
    );
    let spilled = write_output_file("pi-codemode", ".txt", combined.as_bytes());
    let path = match spilled {
        Ok(path) => {
            let path = path.display().to_string();
            text.push_str(&format!("\n\n[Full output: {path} (read with offset/limit)]"));
            Some(path)
        }
        Err(e) => {
            text.push_str(&format!("\n\n[Could not save the full output: {e}]"));
            None
        }
    };
    let mut out = vec![Item::Text(text)];
    out.extend(items.into_iter().filter(|i| matches!(i, Item::Image(..))));
    (out, path)
}

fn image_extension(mime: &str) -> Option<&'static str> {
    Some(match mime {
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        _ => return None,
    })
}

/// Saves each image to a temp file and puts a text item with its path before it (once per image).
pub fn save_images(items: Vec<Item>) -> Vec<Item> {
    let mut labels: HashMap<String, String> = HashMap::new();
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        if let Item::Image(data, mime) = &item {
            let label = labels
                .entry(data.clone())
                .or_insert_with(|| {
                    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap_or_default();
                    let kind = format!("{mime}, {}", format_size(bytes.len()));
                    match image_extension(mime).map(|ext| write_output_file("pi-codemode", ext, &bytes)) {
                        Some(Ok(path)) => format!("[Image saved to {} ({kind})]", path.display()),
                        Some(Err(e)) => format!("[Image ({kind}) could not be saved: {e}]"),
                        None => format!("[Image ({kind}) could not be saved: No file extension for image type {mime}]"),
                    }
                })
                .clone();
            out.push(Item::Text(label));
        }
        out.push(item);
    }
    out
}

/// The items as content blocks.
pub fn to_blocks(items: Vec<Item>) -> Vec<UserBlock> {
    items
        .into_iter()
        .map(|i| match i {
            Item::Text(t) => UserBlock::Text(TextContent::new(t)),
            Item::Image(data, mime) => UserBlock::Image(ImageContent::new(data, mime)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let out = vec![
            OutputItem::Text { text: "a".into(), console: false },
            OutputItem::Text { text: "log".into(), console: true },
            OutputItem::Text { text: "b".into(), console: false },
        ];
        let items = join_adjacent_text(format_output(&out));
        assert_eq!(
            items,
            vec![Item::Text(
                "==> text 1/2 <==\na\n==> text 2/2 <==\nb\n<console_output>\nlog\n</console_output>".into()
            )]
        );
        assert_eq!(slice_tail("héllo", 3), "llo");
        assert_eq!(truncate_text("abcdef", 5), "ab...");
    }
}
