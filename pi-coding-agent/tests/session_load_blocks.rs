//! Large session files are read in blocks whose halves are parsed on two threads (issue 20): the
//! entries and the warnings (with their line numbers) come out in file order, across half and
//! block boundaries, with a line longer than a block, and with a torn last line.

use pi_coding_agent::session::{LoadWarning, ReadOutcome, SessionEntry, read_session};
use serde_json::json;

fn user(id: usize, text: &str) -> String {
    let parent = if id == 0 { None } else { Some(format!("e{}", id - 1)) };
    json!({"type":"message","id":format!("e{id}"),"parentId":parent,"timestamp":"2026-01-01T00:00:00.000Z",
        "message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":1}})
    .to_string()
}

/// What a warning says, without the parser's wording.
fn shape(w: &LoadWarning) -> String {
    match w {
        LoadWarning::MalformedLine { line, .. } => format!("malformed {line}"),
        LoadWarning::TornLastLine { line, .. } => format!("torn {line}"),
        LoadWarning::NotAnObject { line } => format!("not-object {line}"),
        LoadWarning::UnknownEntryType { line, entry_type } => format!("unknown {line} {entry_type}"),
        LoadWarning::MissingId { line } => format!("missing-id {line}"),
        LoadWarning::ExtraHeader { line } => format!("extra-header {line}"),
        other => other.to_string(),
    }
}

/// A file of about 20 MB (three blocks) with faults spread over it; returns the bytes, the ids of
/// the entries in order and the expected warnings.
fn faulty_file(torn_tail: bool) -> (Vec<u8>, Vec<String>, Vec<String>) {
    let header = json!({"type":"session","version":3,"id":"0193f1a2-0000-7000-8000-000000000001",
        "timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"})
    .to_string();
    let mut lines = vec![header];
    let mut ids = Vec::new();
    let mut warnings = Vec::new();
    let text = "x".repeat(2000);
    let mut id = 0;
    while lines.len() < 10_000 {
        let line_no = lines.len() + 1;
        match line_no % 997 {
            13 => {
                lines.push("{\"type\":\"message\",\"id\":".to_owned());
                warnings.push(format!("malformed {line_no}"));
            }
            101 => {
                lines.push(json!({"type":"future_thing","id":format!("f{line_no}"),"parentId":null}).to_string());
                ids.push(format!("f{line_no}"));
                warnings.push(format!("unknown {line_no} future_thing"));
            }
            202 => lines.push("   ".to_owned()),
            303 => {
                lines.push("[1,2]".to_owned());
                warnings.push(format!("not-object {line_no}"));
            }
            404 => {
                lines.push(lines[0].clone());
                warnings.push(format!("extra-header {line_no}"));
            }
            _ => {
                // One entry longer than a block (8 MiB).
                let t = if line_no == 5000 { "y".repeat(9 << 20) } else { text.clone() };
                lines.push(user(id, &t));
                ids.push(format!("e{id}"));
                id += 1;
            }
        }
    }
    let mut bytes = lines.join("\n").into_bytes();
    if torn_tail {
        bytes.extend_from_slice(b"\n{\"type\":\"message\",\"id\":\"torn\"");
        warnings.push(format!("torn {}", lines.len() + 1));
    } else {
        bytes.push(b'\n');
    }
    (bytes, ids, warnings)
}

fn read(bytes: &[u8]) -> pi_coding_agent::session::LoadedFile {
    match read_session(std::io::Cursor::new(bytes)) {
        Ok(ReadOutcome::Session(f)) => f,
        Ok(_) => panic!("not read as a session"),
        Err(e) => panic!("read failed: {e}"),
    }
}

#[test]
fn a_large_file_reads_in_file_order_with_every_warning_at_its_line() {
    for torn in [false, true] {
        let (bytes, ids, warnings) = faulty_file(torn);
        assert!(bytes.len() > 20 << 20, "the file spans several blocks");
        let file = read(&bytes);
        let got: Vec<&str> = file.entries.iter().map(SessionEntry::id).collect();
        assert_eq!(got, ids, "entries in file order (torn tail: {torn})");
        let got: Vec<String> = file.warnings.iter().map(shape).collect();
        assert_eq!(got, warnings, "warnings (torn tail: {torn})");
        assert_eq!(file.needs_newline, torn);
    }
}

#[test]
fn a_header_without_a_newline_still_needs_one() {
    let header = json!({"type":"session","version":3,"id":"0193f1a2-0000-7000-8000-000000000001",
        "timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"})
    .to_string();
    let file = read(header.as_bytes());
    assert!(file.entries.is_empty());
    assert!(file.needs_newline);
    let file = read(format!("{header}\n").as_bytes());
    assert!(!file.needs_newline);
    let file = read(format!("{header}\n{}", user(0, "hi")).as_bytes());
    assert_eq!(file.entries.len(), 1);
    assert!(file.needs_newline);
    assert!(file.warnings.is_empty());
}

/// A loaded message's content lists hold no spare room (a list read block by block grows to room
/// for four), and an entry is not the size of the largest, rarest kinds (issue 20: a 100 MB
/// session holds tens of thousands of both).
#[test]
fn loaded_entries_and_their_content_lists_are_compact() {
    let header = json!({"type":"session","version":3,"id":"0193f1a2-0000-7000-8000-000000000002",
        "timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"})
    .to_string();
    let assistant = json!({"type":"message","id":"e1","parentId":"e0","timestamp":"2026-01-01T00:00:00.000Z",
        "message":{"role":"assistant","content":[{"type":"thinking","thinking":"t"},
            {"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],
            "api":"openai-completions","provider":"p","model":"m",
            "usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,
                "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},
            "stopReason":"toolUse","timestamp":2}})
    .to_string();
    let result = json!({"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z",
        "message":{"role":"toolResult","toolCallId":"c1","toolName":"read",
            "content":[{"type":"text","text":"body"}],"isError":false,"timestamp":3}})
    .to_string();
    let text = format!("{header}\n{}\n{assistant}\n{result}\n", user(0, "hi"));
    let loaded = read(text.as_bytes());
    assert_eq!(loaded.entries.len(), 3);
    let mut seen = 0;
    for entry in &loaded.entries {
        let SessionEntry::Message(m) = entry else { panic!("not a message: {entry:?}") };
        let (len, capacity) = match &m.message {
            pi_agent_core::AgentMessage::User(u) => match &u.content {
                pi_ai::Content::Blocks(b) => (b.len(), b.capacity()),
                pi_ai::Content::Text(_) => panic!("blocks expected"),
            },
            pi_agent_core::AgentMessage::Assistant(a) => (a.content.len(), a.content.capacity()),
            pi_agent_core::AgentMessage::ToolResult(t) => (t.content.len(), t.content.capacity()),
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(capacity, len, "{entry:?}");
        seen += 1;
    }
    assert_eq!(seen, 3);
    // Before the usage, compaction and branch_summary kinds were boxed, every entry took about
    // 600 bytes; the largest kept inline now are custom_message and context_edit.
    assert!(
        std::mem::size_of::<SessionEntry>() <= 256,
        "SessionEntry is {} bytes",
        std::mem::size_of::<SessionEntry>()
    );
}
