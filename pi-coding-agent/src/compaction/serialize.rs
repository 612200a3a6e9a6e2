//! Conversation serialization for summaries, and file-operation tracking.

use std::collections::BTreeSet;

use indexmap::IndexSet;
use pi_agent_core::AgentMessage;
use pi_ai::transcript::{blocks_text, content_text_with};
use pi_ai::{AssistantBlock, Message};
use serde_json::{Map, Value};

use crate::compaction::tokens::js_len;
use crate::messages::CodingAgentMessage;

/// Maximum characters of one tool result in a serialized conversation.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// The first `max` UTF-16 units of `text`, never splitting a surrogate pair (pi's `sliceHead`).
fn slice_head_utf16(text: &str, max: usize) -> &str {
    let mut units = 0;
    for (i, c) in text.char_indices() {
        let n = c.len_utf16();
        if units + n > max {
            return &text[..i];
        }
        units += n;
    }
    text
}

fn truncate_for_summary(text: &str, max: usize) -> String {
    let len = js_len(text);
    if len <= max {
        return text.to_owned();
    }
    format!("{}\n\n[... {} more characters truncated]", slice_head_utf16(text, max), len - max)
}

/// Serializes model messages as text for a summary request (`[User]: …`, `[Assistant]: …`,
/// `[Assistant tool calls]: name(k=JSON, …); …`, `[Tool result]: …` cut to 2000 chars), joined
/// by blank lines. Thinking and system messages are omitted.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut parts = Vec::new();
    for m in messages {
        match m {
            Message::User(u) => {
                let text = content_text_with(&u.content, "");
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Message::Assistant(a) => {
                let calls: Vec<String> = a
                    .tool_calls()
                    .map(|c| {
                        let args: Vec<String> = c
                            .arguments
                            .iter()
                            .map(|(k, v)| format!("{k}={}", serde_json::to_string(v).unwrap_or_default()))
                            .collect();
                        format!("{}({})", c.name, args.join(", "))
                    })
                    .collect();
                if a.content.iter().any(|b| matches!(b, AssistantBlock::Text(_))) {
                    parts.push(format!("[Assistant]: {}", blocks_text(&a.content, "\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(t) => {
                let text = blocks_text(&t.content, "");
                if !text.is_empty() {
                    parts.push(format!("[Tool result]: {}", truncate_for_summary(&text, TOOL_RESULT_MAX_CHARS)));
                }
            }
            Message::System(_) => {}
        }
    }
    parts.join("\n\n")
}

/// Files touched by `read`, `write` and `edit` tool calls (insertion-ordered sets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileOps {
    /// Paths read.
    pub read: IndexSet<String>,
    /// Paths written.
    pub written: IndexSet<String>,
    /// Paths edited.
    pub edited: IndexSet<String>,
}

fn add_file_op(tool: &str, args: Option<&Map<String, Value>>, ops: &mut FileOps) {
    let Some(path) = args.and_then(|a| a.get("path")).and_then(Value::as_str).filter(|p| !p.is_empty()) else {
        return;
    };
    let set = match tool {
        "read" => &mut ops.read,
        "write" => &mut ops.written,
        "edit" => &mut ops.edited,
        _ => return,
    };
    set.insert(path.to_owned());
}

/// Records the file operations of an assistant message's tool calls, or of the nested calls a
/// tool result recorded.
pub fn extract_file_ops_from_message(message: &CodingAgentMessage, ops: &mut FileOps) {
    match message {
        AgentMessage::ToolResult(t) => {
            let calls = t.nested_calls.as_ref().and_then(|n| n.get("calls")).and_then(Value::as_array);
            for call in calls.into_iter().flatten() {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                add_file_op(name, call.get("arguments").and_then(Value::as_object), ops);
            }
        }
        AgentMessage::Assistant(a) => {
            for c in a.tool_calls() {
                add_file_op(&c.name, Some(&c.arguments), ops);
            }
        }
        _ => {}
    }
}

/// Adds the `readFiles` / `modifiedFiles` of a previous pi-generated summary's details.
pub fn add_details_file_ops(details: Option<&Value>, ops: &mut FileOps) {
    let Some(d) = details else { return };
    for f in d.get("readFiles").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        ops.read.insert(f.to_owned());
    }
    for f in d.get("modifiedFiles").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        ops.edited.insert(f.to_owned());
    }
}

/// `(readFiles, modifiedFiles)`: files only read, and files edited or written; each sorted.
pub fn compute_file_lists(ops: &FileOps) -> (Vec<String>, Vec<String>) {
    let modified: BTreeSet<&String> = ops.edited.iter().chain(ops.written.iter()).collect();
    let mut read: Vec<String> = ops.read.iter().filter(|f| !modified.contains(f)).cloned().collect();
    read.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    let mut modified: Vec<String> = modified.into_iter().cloned().collect();
    modified.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    (read, modified)
}

/// `\n\n<read-files>\n…\n</read-files>\n\n<modified-files>\n…\n</modified-files>` (empty lists
/// omitted; `""` when both are empty).
pub fn format_file_operations(read: &[String], modified: &[String]) -> String {
    let mut sections = Vec::new();
    if !read.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read.join("\n")));
    }
    if !modified.is_empty() {
        sections.push(format!("<modified-files>\n{}\n</modified-files>", modified.join("\n")));
    }
    if sections.is_empty() { String::new() } else { format!("\n\n{}", sections.join("\n\n")) }
}
