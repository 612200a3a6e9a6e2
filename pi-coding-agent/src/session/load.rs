//! Reading a session file: every valid entry is kept, everything skipped is reported.
//!
//! pi's reader silently skips blank and malformed lines. This one does the same, keeps entries it
//! cannot type (unknown types, unreadable fields) as [`RawEntry`], and returns a typed list of
//! [`LoadWarning`]s (each also logged with `tracing::warn!`). Reading never modifies the file.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use pi_agent_core::AgentMessage;
use pi_ai::Content;
use serde::Deserialize;
use serde_json::Value;

use crate::session::context::{EntryIndex, index_entries};
use crate::session::entries::{CURRENT_SESSION_VERSION, FileEntry, RawEntry, SessionEntry, SessionHeader};
use crate::session::migrate::migrate_values;

mod blocks;

/// Something in a session file that was skipped or needs attention. Nothing valid is ever dropped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LoadWarning {
    /// A line in the middle of the file is not JSON; it was skipped.
    #[error("line {line}: malformed JSON skipped: {error}")]
    MalformedLine {
        /// 1-based line number.
        line: usize,
        /// The parser's message.
        error: String,
    },
    /// The last line is incomplete (a writer died mid-append); it was skipped.
    #[error("line {line}: torn last line skipped ({bytes} bytes): {error}")]
    TornLastLine {
        /// 1-based line number.
        line: usize,
        /// Its length in bytes.
        bytes: usize,
        /// The parser's message.
        error: String,
    },
    /// A line that is JSON but not an object.
    #[error("line {line}: not a JSON object, skipped")]
    NotAnObject {
        /// 1-based line number.
        line: usize,
    },
    /// An entry of a type this version does not know; kept verbatim, adds no context.
    #[error("line {line}: unknown entry type {entry_type:?} kept as raw")]
    UnknownEntryType {
        /// 1-based line number.
        line: usize,
        /// Its `type`.
        entry_type: String,
    },
    /// A known entry type whose fields could not be read; kept verbatim, adds no context.
    #[error("line {line}: unreadable {entry_type:?} entry kept as raw: {error}")]
    UnreadableEntry {
        /// 1-based line number.
        line: usize,
        /// Its `type`.
        entry_type: String,
        /// The parser's message.
        error: String,
    },
    /// An entry without a string `id` cannot join the tree; it was skipped.
    #[error("line {line}: entry without an id skipped")]
    MissingId {
        /// 1-based line number.
        line: usize,
    },
    /// A second header line; it was skipped.
    #[error("line {line}: extra session header skipped")]
    ExtraHeader {
        /// 1-based line number.
        line: usize,
    },
    /// The file was written by a newer format version; entries were read as well as possible.
    #[error("session format version {version} is newer than {CURRENT_SESSION_VERSION}")]
    NewerVersion {
        /// The file's version.
        version: u64,
    },
    /// The parent links of some entries form a cycle; a branch through it stops at its first
    /// repeated entry (the entries before the repeat are kept).
    #[error("entry {id:?}: parent links form a cycle; the branch stops at its first repeated entry")]
    ParentCycle {
        /// The entry at which the cycle closes.
        id: String,
    },
    /// A migrated file had skipped lines; its original bytes were saved before the rewrite.
    #[error("original of the migrated file saved to {path}")]
    MigrationBackup {
        /// Where the original bytes are.
        path: String,
    },
}

impl LoadWarning {
    /// The line number of a warning about one line.
    fn line_mut(&mut self) -> Option<&mut usize> {
        match self {
            LoadWarning::MalformedLine { line, .. }
            | LoadWarning::TornLastLine { line, .. }
            | LoadWarning::NotAnObject { line }
            | LoadWarning::UnknownEntryType { line, .. }
            | LoadWarning::UnreadableEntry { line, .. }
            | LoadWarning::MissingId { line }
            | LoadWarning::ExtraHeader { line } => Some(line),
            LoadWarning::NewerVersion { .. }
            | LoadWarning::ParentCycle { .. }
            | LoadWarning::MigrationBackup { .. } => None,
        }
    }
}

/// A session file as read.
#[derive(Clone, Debug, Default)]
pub struct LoadedFile {
    /// The header (first parsed line).
    pub header: SessionHeader,
    /// Every entry, in file order.
    pub entries: Vec<SessionEntry>,
    /// What was skipped or kept raw.
    pub warnings: Vec<LoadWarning>,
    /// The file does not end with `\n` (a newline must precede the next append).
    pub needs_newline: bool,
    /// The file was older than v3 and the entries were migrated in memory.
    pub migrated: bool,
    /// The entries' ids to their positions (the last entry wins on a duplicate id), built once
    /// while reading (the cycle check needs it, and so does a session manager).
    pub index: EntryIndex,
}

/// The result of reading a file.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per file read, destructured at once; boxing buys nothing
pub enum ReadOutcome {
    /// A session.
    Session(LoadedFile),
    /// No line parsed at all (an empty, blank or entirely malformed file).
    Empty,
    /// The first parsed line is not a session header with a string id.
    NotASession,
}

#[allow(clippy::large_enum_variant)] // short-lived, moved straight into the entry list
enum Parsed {
    Entry(FileEntry),
    Skip,
}

fn parse_line(bytes: &[u8], line: usize, last_unterminated: bool, warnings: &mut Vec<LoadWarning>) -> Parsed {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Skip;
    }
    // A line that is valid UTF-8 as a whole (all of them but a corrupt one) is checked once and
    // read as text: reading bytes, serde_json checks each string on its own, a call per string.
    let typed = match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str::<FileEntry>(text),
        Err(_) => serde_json::from_slice::<FileEntry>(bytes),
    };
    match typed {
        Ok(e) => {
            if let FileEntry::Entry(SessionEntry::Raw(r)) = &e {
                warnings.push(LoadWarning::UnknownEntryType { line, entry_type: r.entry_type().to_owned() });
            }
            Parsed::Entry(e)
        }
        Err(typed_err) => match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(obj)) => {
                let raw = RawEntry(obj);
                warnings.push(LoadWarning::UnreadableEntry {
                    line,
                    entry_type: raw.entry_type().to_owned(),
                    error: typed_err.to_string(),
                });
                Parsed::Entry(FileEntry::Entry(SessionEntry::Raw(raw)))
            }
            Ok(_) => {
                warnings.push(LoadWarning::NotAnObject { line });
                Parsed::Skip
            }
            Err(e) => {
                warnings.push(if last_unterminated {
                    LoadWarning::TornLastLine { line, bytes: bytes.len(), error: e.to_string() }
                } else {
                    LoadWarning::MalformedLine { line, error: e.to_string() }
                });
                Parsed::Skip
            }
        },
    }
}

fn header_of(entry: &FileEntry) -> Option<&SessionHeader> {
    match entry {
        FileEntry::Header(h) => Some(h),
        _ => None,
    }
}

/// Reads a session file from any reader (see [`read_session_file`]).
pub fn read_session<R: Read>(reader: R) -> std::io::Result<ReadOutcome> {
    let mut reader = BufReader::with_capacity(1 << 20, reader);
    let mut warnings = Vec::new();
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut line_no = 0usize;
    let mut header: Option<SessionHeader> = None;
    let mut entries: Vec<SessionEntry> = Vec::new();
    // Files older than v3 are collected as JSON values and migrated at the end.
    let mut legacy: Option<Vec<(usize, Value)>> = None;
    let mut needs_newline = false;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let terminated = buf.last() == Some(&b'\n');
        needs_newline = !terminated;
        let bytes = if terminated { &buf[..buf.len() - 1] } else { &buf[..] };
        if let Some(values) = legacy.as_mut() {
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Value>(bytes) {
                Ok(v @ Value::Object(_)) => values.push((line_no, v)),
                Ok(_) => warnings.push(LoadWarning::NotAnObject { line: line_no }),
                Err(e) => warnings.push(if terminated {
                    LoadWarning::MalformedLine { line: line_no, error: e.to_string() }
                } else {
                    LoadWarning::TornLastLine { line: line_no, bytes: bytes.len(), error: e.to_string() }
                }),
            }
            continue;
        }
        let entry = match parse_line(bytes, line_no, !terminated, &mut warnings) {
            Parsed::Entry(e) => e,
            Parsed::Skip => continue,
        };
        if header.is_none() {
            let Some(h) = header_of(&entry) else {
                return Ok(ReadOutcome::NotASession);
            };
            let version = h.version.unwrap_or(1);
            if version > CURRENT_SESSION_VERSION {
                warnings.push(LoadWarning::NewerVersion { version });
            }
            if version < CURRENT_SESSION_VERSION {
                legacy = Some(vec![(line_no, serde_json::to_value(h).map_err(std::io::Error::other)?)]);
            }
            header = Some(h.clone());
            if legacy.is_none() {
                // A current file: the rest is read in blocks, parsed on two threads.
                let tail = blocks::read_blocks(
                    &mut reader,
                    blocks::BLOCK_BYTES,
                    line_no,
                    needs_newline,
                    &mut entries,
                    &mut warnings,
                )?;
                needs_newline = tail.needs_newline;
                break;
            }
            continue;
        }
        take_entry(entry, line_no, &mut entries, &mut warnings);
    }
    let Some(mut header) = header else {
        return Ok(ReadOutcome::Empty);
    };
    let migrated = legacy.is_some();
    if let Some(values) = legacy {
        let (lines, mut values): (Vec<usize>, Vec<Value>) = values.into_iter().unzip();
        migrate_values(&mut values);
        let mut it = lines.into_iter().zip(values);
        if let Some((_, h)) = it.next() {
            header = SessionHeader::deserialize(&h).map_err(std::io::Error::other)?;
        }
        for (line, v) in it {
            let entry = match FileEntry::deserialize(&v) {
                Ok(e) => e,
                Err(err) => {
                    let raw = RawEntry(match v {
                        Value::Object(o) => o,
                        _ => Default::default(),
                    });
                    warnings.push(LoadWarning::UnreadableEntry {
                        line,
                        entry_type: raw.entry_type().to_owned(),
                        error: err.to_string(),
                    });
                    FileEntry::Entry(SessionEntry::Raw(raw))
                }
            };
            match entry {
                FileEntry::Header(_) => warnings.push(LoadWarning::ExtraHeader { line }),
                FileEntry::Entry(e) if e.id().is_empty() => warnings.push(LoadWarning::MissingId { line }),
                FileEntry::Entry(e) => {
                    if let SessionEntry::Raw(r) = &e
                        && !warnings
                            .iter()
                            .any(|w| matches!(w, LoadWarning::UnreadableEntry { line: l, .. } if *l == line))
                    {
                        warnings.push(LoadWarning::UnknownEntryType { line, entry_type: r.entry_type().to_owned() });
                    }
                    entries.push(e);
                }
            }
        }
    }
    let index = index_entries(&entries);
    warnings.extend(parent_cycles(&entries, &index).into_iter().map(|id| LoadWarning::ParentCycle { id }));
    for w in &warnings {
        tracing::warn!(target: "pi_coding_agent::session", "{w}");
    }
    Ok(ReadOutcome::Session(LoadedFile { header, entries, warnings, needs_newline, migrated, index }))
}

/// Keeps a parsed line after the header: a second header or an untyped entry without an id is
/// skipped with a warning.
fn take_entry(entry: FileEntry, line: usize, entries: &mut Vec<SessionEntry>, warnings: &mut Vec<LoadWarning>) {
    match entry {
        FileEntry::Header(_) => warnings.push(LoadWarning::ExtraHeader { line }),
        FileEntry::Entry(e) => {
            if e.id().is_empty() && matches!(e, SessionEntry::Raw(_)) {
                warnings.push(LoadWarning::MissingId { line });
            } else {
                let mut e = e;
                trim_content_lists(&mut e);
                entries.push(e);
            }
        }
    }
}

/// Drops the spare capacity of a freshly read message's content lists (a list read element by
/// element grows to room for four blocks; most hold one or two, and a large session holds tens of
/// thousands of them). The message is not shared yet, so nothing is copied.
fn trim_content_lists(entry: &mut SessionEntry) {
    let SessionEntry::Message(m) = entry else {
        return;
    };
    match &mut m.message {
        AgentMessage::User(u) => {
            if let Content::Blocks(blocks) = &mut u.make_mut().content {
                blocks.shrink_to_fit();
            }
        }
        AgentMessage::Assistant(a) => a.make_mut().content.shrink_to_fit(),
        AgentMessage::ToolResult(t) => t.make_mut().content.shrink_to_fit(),
        AgentMessage::System(_) | AgentMessage::Custom(_) => {}
    }
}

/// The ids at which parent links close a cycle (one per cycle), in file order. Ids resolve as
/// the session does: the last entry with an id wins.
fn parent_cycles(entries: &[SessionEntry], index: &EntryIndex) -> Vec<String> {
    let distinct = index.len() == entries.len();
    // 0: not seen, 1: on the walk in progress, 2: known to end at a root.
    let mut state = vec![0u8; entries.len()];
    let mut cycles = Vec::new();
    let mut walk = Vec::new();
    for start in 0..entries.len() {
        let mut at = Some(start);
        while let Some(i) = at {
            match state[i] {
                2 => break,
                1 => {
                    cycles.push(entries[i].id().to_owned());
                    break;
                }
                _ => {
                    state[i] = 1;
                    walk.push(i);
                    // Every id distinct: a parent just before is known without hashing its id.
                    at = entries[i].parent_id().and_then(|p| match i.checked_sub(1) {
                        Some(before) if distinct && entries[before].id() == p => Some(before),
                        _ => index.get(p).copied(),
                    });
                }
            }
        }
        for i in walk.drain(..) {
            state[i] = 2;
        }
    }
    cycles
}

/// One line saying what reading a session file skipped or could not use (line numbers grouped
/// by what happened), for `Warning: …` on stderr; `None` when nothing was.
///
/// ```
/// use pi_coding_agent::session::{LoadWarning, summarize_load_warnings};
/// let w = [
///     LoadWarning::MalformedLine { line: 3, error: "x".into() },
///     LoadWarning::MalformedLine { line: 5, error: "y".into() },
///     LoadWarning::TornLastLine { line: 9, bytes: 4, error: "z".into() },
/// ];
/// assert_eq!(summarize_load_warnings(&w).unwrap(),
///     "lines 3, 5: malformed JSON skipped; line 9: torn last line skipped");
/// ```
pub fn summarize_load_warnings(warnings: &[LoadWarning]) -> Option<String> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut others = Vec::new();
    for w in warnings {
        let (label, line) = match w {
            LoadWarning::MalformedLine { line, .. } => ("malformed JSON skipped", *line),
            LoadWarning::TornLastLine { line, .. } => ("torn last line skipped", *line),
            LoadWarning::NotAnObject { line } => ("not a JSON object, skipped", *line),
            LoadWarning::UnknownEntryType { line, .. } => ("unknown entry type, kept but not used", *line),
            LoadWarning::UnreadableEntry { line, .. } => ("unreadable entry, kept but not used", *line),
            LoadWarning::MissingId { line } => ("entry without an id skipped", *line),
            LoadWarning::ExtraHeader { line } => ("extra session header skipped", *line),
            other => {
                others.push(other.to_string());
                continue;
            }
        };
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, lines)) => lines.push(line),
            None => groups.push((label, vec![line])),
        }
    }
    let mut parts: Vec<String> = groups
        .into_iter()
        .map(|(label, lines)| {
            let list: Vec<String> = lines.iter().map(usize::to_string).collect();
            let noun = if lines.len() == 1 { "line" } else { "lines" };
            format!("{noun} {}: {label}", list.join(", "))
        })
        .collect();
    parts.extend(others);
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Reads a session file. Never modifies it.
pub fn read_session_file(path: &Path) -> std::io::Result<ReadOutcome> {
    let outcome = read_session(File::open(path)?)?;
    if let ReadOutcome::Session(f) = &outcome
        && !f.warnings.is_empty()
    {
        tracing::warn!(target: "pi_coding_agent::session", path = %path.display(), warnings = f.warnings.len(), "session file loaded with warnings");
    }
    Ok(outcome)
}

/// Reads only the header of a session file (the first parsed line), scanning at most 1 MiB.
/// `None` when the file is unreadable or not a session.
pub fn read_session_header(path: &Path) -> Option<SessionHeader> {
    let file = File::open(path).ok()?;
    let mut reader = BufReader::new(file.take(1 << 20));
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).ok()? == 0 {
            return None;
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<FileEntry>(&buf) {
            Ok(FileEntry::Header(h)) => return Some(h),
            Ok(_) => return None,
            Err(_) => continue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{LoadWarning, ReadOutcome, read_session};

    /// Lines 2..=`last` of unknown entries (padded by `pad(n)` bytes), every `malformed`-th one
    /// broken, then a torn line: the text and the warnings a read gives, in order.
    pub(super) fn generated(
        last: usize,
        malformed: usize,
        pad: impl Fn(usize) -> usize,
    ) -> (String, Vec<(&'static str, usize)>) {
        let mut file = String::new();
        let mut expected = Vec::new();
        for n in 2..=last {
            if n % malformed == 0 {
                file.push_str("{broken\n");
                expected.push(("malformed", n));
            } else {
                let pad = "b".repeat(pad(n));
                file.push_str(&format!(
                    "{{\"type\":\"x_unknown\",\"id\":\"{n}\",\"parentId\":null,\"timestamp\":\"t\",\"pad\":\"{pad}\"}}\n"
                ));
                expected.push(("unknown", n));
            }
        }
        file.push_str("{\"type\":\"x_un");
        expected.push(("torn", last + 1));
        (file, expected)
    }

    /// The kind and line of each warning.
    pub(super) fn warning_lines(warnings: &[LoadWarning]) -> Vec<(&'static str, usize)> {
        warnings
            .iter()
            .map(|w| match w {
                LoadWarning::UnknownEntryType { line, .. } => ("unknown", *line),
                LoadWarning::MalformedLine { line, .. } => ("malformed", *line),
                LoadWarning::TornLastLine { line, .. } => ("torn", *line),
                other => panic!("unexpected warning: {other}"),
            })
            .collect()
    }

    #[test]
    fn line_numbers_hold_across_the_pieces_of_a_block() {
        // About 800 KB after the header: one block, parsed in pieces on two threads.
        let (body, expected) = generated(3000, 97, |_| 200);
        let file = format!("{{\"type\":\"session\",\"version\":3,\"id\":\"s\"}}\n{body}");
        let Ok(ReadOutcome::Session(loaded)) = read_session(std::io::Cursor::new(file.into_bytes())) else {
            panic!("not read as a session");
        };
        assert_eq!(warning_lines(&loaded.warnings), expected);
        assert_eq!(loaded.entries.len(), expected.iter().filter(|(kind, _)| *kind == "unknown").count());
    }

    #[test]
    fn a_line_that_is_not_utf8_is_malformed_and_the_rest_loads() {
        let mut file = b"{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n".to_vec();
        file.extend_from_slice(
            b"{\"type\":\"x-one\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"note\":\"caf\xe9\"}\n",
        );
        file.extend_from_slice(
            "{\"type\":\"x-two\",\"id\":\"b\",\"parentId\":null,\"timestamp\":\"t\",\"note\":\"café\"}\n".as_bytes(),
        );
        let Ok(ReadOutcome::Session(loaded)) = read_session(std::io::Cursor::new(file)) else {
            panic!("not read as a session");
        };
        assert_eq!(warning_lines(&loaded.warnings), [("malformed", 2), ("unknown", 3)]);
        assert_eq!(loaded.entries.iter().map(|e| e.id()).collect::<Vec<_>>(), ["b"]);
    }
}
