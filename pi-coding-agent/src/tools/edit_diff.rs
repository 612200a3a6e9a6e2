//! The diff in an edit result's details (pi's `generateEditDiff`): a display diff with line
//! numbers and 4 context lines, a unified patch, and the first changed line. Only windows around
//! the replacements are diffed, so the cost follows the change, not the file.

use serde::Serialize;
use similar::{Algorithm, ChangeTag, TextDiff};

use super::edit_match::Replacement;

const CONTEXT_LINES: usize = 4;
/// Unchanged lines diffed on each side of a replacement (pi's `DIFF_WINDOW_MARGIN_LINES`).
const DIFF_WINDOW_MARGIN_LINES: usize = 32;

/// `details` of an edit result: `{diff, patch, firstChangedLine}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditDiff {
    /// Display diff: `+N text`, `-N text`, ` N text`, ` ... ` for skipped lines.
    pub diff: String,
    /// Unified patch with `--- path` / `+++ path` headers.
    pub patch: String,
    /// First changed line in the new file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_changed_line: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Equal,
    Removed,
    Added,
}

/// A run of lines of one kind (jsdiff's change object); lines keep their `\n`.
struct Part<'a> {
    kind: Kind,
    lines: Vec<&'a str>,
}

fn diff_lines<'a>(old: &'a str, new: &'a str) -> Vec<Part<'a>> {
    let diff = TextDiff::configure().algorithm(Algorithm::Myers).diff_lines(old, new);
    let mut parts: Vec<Part<'a>> = Vec::new();
    // Within one change, removals come before additions, as in jsdiff.
    let mut removed: Vec<&'a str> = Vec::new();
    let mut added: Vec<&'a str> = Vec::new();
    let flush = |parts: &mut Vec<Part<'a>>, removed: &mut Vec<&'a str>, added: &mut Vec<&'a str>| {
        if !removed.is_empty() {
            parts.push(Part { kind: Kind::Removed, lines: std::mem::take(removed) });
        }
        if !added.is_empty() {
            parts.push(Part { kind: Kind::Added, lines: std::mem::take(added) });
        }
    };
    for change in diff.iter_all_changes() {
        let line = change.value();
        match change.tag() {
            ChangeTag::Delete => removed.push(line),
            ChangeTag::Insert => added.push(line),
            ChangeTag::Equal => {
                flush(&mut parts, &mut removed, &mut added);
                match parts.last_mut() {
                    Some(p) if p.kind == Kind::Equal => p.lines.push(line),
                    _ => parts.push(Part { kind: Kind::Equal, lines: vec![line] }),
                }
            }
        }
    }
    flush(&mut parts, &mut removed, &mut added);
    parts
}

fn strip_nl(line: &str) -> &str {
    line.strip_suffix('\n').unwrap_or(line)
}

/// pi's `formatDisplayDiff`.
fn format_display_diff(
    parts: &[Part<'_>],
    old_start: usize,
    new_start: usize,
    width: usize,
    out: &mut Vec<String>,
) -> Option<usize> {
    let mut old_no = old_start;
    let mut new_no = new_start;
    let mut last_was_change = false;
    let mut first_changed = None;
    let skip = || format!(" {} ...", " ".repeat(width));
    for (i, part) in parts.iter().enumerate() {
        let raw: Vec<&str> = part.lines.iter().map(|l| strip_nl(l)).collect();
        match part.kind {
            Kind::Added | Kind::Removed => {
                first_changed.get_or_insert(new_no);
                for line in raw {
                    if part.kind == Kind::Added {
                        out.push(format!("+{new_no:>width$} {line}"));
                        new_no += 1;
                    } else {
                        out.push(format!("-{old_no:>width$} {line}"));
                        old_no += 1;
                    }
                }
                last_was_change = true;
            }
            Kind::Equal => {
                let next_is_change = parts.get(i + 1).is_some_and(|p| p.kind != Kind::Equal);
                let context = |lines: &[&str], out: &mut Vec<String>, old_no: &mut usize, new_no: &mut usize| {
                    for line in lines {
                        out.push(format!(" {:>width$} {line}", *old_no));
                        *old_no += 1;
                        *new_no += 1;
                    }
                };
                if last_was_change && next_is_change {
                    if raw.len() <= CONTEXT_LINES * 2 {
                        context(&raw, out, &mut old_no, &mut new_no);
                    } else {
                        let skipped = raw.len() - 2 * CONTEXT_LINES;
                        context(&raw[..CONTEXT_LINES], out, &mut old_no, &mut new_no);
                        out.push(skip());
                        old_no += skipped;
                        new_no += skipped;
                        context(&raw[raw.len() - CONTEXT_LINES..], out, &mut old_no, &mut new_no);
                    }
                } else if last_was_change {
                    let shown = raw.len().min(CONTEXT_LINES);
                    context(&raw[..shown], out, &mut old_no, &mut new_no);
                    let skipped = raw.len() - shown;
                    if skipped > 0 {
                        out.push(skip());
                        old_no += skipped;
                        new_no += skipped;
                    }
                } else if next_is_change {
                    let skipped = raw.len().saturating_sub(CONTEXT_LINES);
                    if skipped > 0 {
                        out.push(skip());
                        old_no += skipped;
                        new_no += skipped;
                    }
                    context(&raw[skipped..], out, &mut old_no, &mut new_no);
                } else {
                    old_no += raw.len();
                    new_no += raw.len();
                }
                last_was_change = false;
            }
        }
    }
    first_changed
}

/// A hunk of a unified patch.
struct Hunk {
    old_start: usize,
    old_lines: usize,
    new_start: usize,
    new_lines: usize,
    lines: Vec<String>,
}

/// jsdiff's `structuredPatch` hunks over diff parts, with `CONTEXT_LINES` of context.
fn structured_hunks(parts: &[Part<'_>]) -> Vec<Hunk> {
    let ctx = CONTEXT_LINES;
    let mut hunks = Vec::new();
    let (mut old_range, mut new_range) = (0usize, 0usize);
    let mut cur: Vec<String> = Vec::new();
    let (mut old_line, mut new_line) = (1usize, 1usize);
    // A trailing empty equal part closes the last hunk, as jsdiff's sentinel does.
    let sentinel = Part { kind: Kind::Equal, lines: Vec::new() };
    let all: Vec<&Part<'_>> = parts.iter().chain(std::iter::once(&sentinel)).collect();
    for (i, part) in all.iter().enumerate() {
        if part.kind != Kind::Equal {
            if old_range == 0 {
                old_range = old_line;
                new_range = new_line;
                if i > 0 {
                    let prev = &all[i - 1].lines;
                    let take = prev.len().min(ctx);
                    cur = prev[prev.len() - take..].iter().map(|l| format!(" {l}")).collect();
                    old_range -= cur.len();
                    new_range -= cur.len();
                }
            }
            let sign = if part.kind == Kind::Added { '+' } else { '-' };
            cur.extend(part.lines.iter().map(|l| format!("{sign}{l}")));
            if part.kind == Kind::Added {
                new_line += part.lines.len();
            } else {
                old_line += part.lines.len();
            }
        } else {
            if old_range != 0 {
                if part.lines.len() <= ctx * 2 && i + 2 < all.len() {
                    cur.extend(part.lines.iter().map(|l| format!(" {l}")));
                } else {
                    let size = part.lines.len().min(ctx);
                    cur.extend(part.lines[..size].iter().map(|l| format!(" {l}")));
                    hunks.push(Hunk {
                        old_start: old_range,
                        old_lines: old_line - old_range + size,
                        new_start: new_range,
                        new_lines: new_line - new_range + size,
                        lines: std::mem::take(&mut cur),
                    });
                    old_range = 0;
                    new_range = 0;
                }
            }
            old_line += part.lines.len();
            new_line += part.lines.len();
        }
    }
    for h in &mut hunks {
        let mut lines = Vec::with_capacity(h.lines.len() + 2);
        for l in h.lines.drain(..) {
            if let Some(s) = l.strip_suffix('\n') {
                lines.push(s.to_owned());
            } else {
                lines.push(l);
                lines.push("\\ No newline at end of file".to_owned());
            }
        }
        h.lines = lines;
    }
    hunks
}

fn count_line_feeds(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

/// Start of the line containing `offset`.
fn line_start_before(text: &str, offset: usize) -> usize {
    if offset == 0 { 0 } else { text[..offset].rfind('\n').map_or(0, |i| i + 1) }
}

struct Window {
    old_start: usize,
    old_end: usize,
    old_line: usize,
    new_start: usize,
    new_end: usize,
    new_line: usize,
}

/// pi's `getDiffWindows`: whole-line windows with margin around sorted, disjoint replacements.
fn diff_windows(base: &str, replacements: &[Replacement]) -> Vec<Window> {
    let mut windows: Vec<Window> = Vec::new();
    let (mut offset_delta, mut line_delta) = (0isize, 0isize);
    let (mut cursor_offset, mut cursor_line) = (0usize, 0usize);
    for r in replacements {
        let match_end = r.match_index + r.match_length;
        let mut start = line_start_before(base, r.match_index);
        for _ in 0..DIFF_WINDOW_MARGIN_LINES {
            if start == 0 {
                break;
            }
            start = line_start_before(base, start - 1);
        }
        let mut end = match_end;
        for i in 0..=DIFF_WINDOW_MARGIN_LINES {
            if end >= base.len() {
                break;
            }
            let from = if i == 0 { match_end.saturating_sub(1).max(r.match_index) } else { end };
            end = base[from..].find('\n').map_or(base.len(), |j| from + j + 1);
        }
        let rep_offset_delta = r.new_text.len() as isize - r.match_length as isize;
        let rep_line_delta =
            count_line_feeds(&r.new_text) as isize - count_line_feeds(&base[r.match_index..match_end]) as isize;
        match windows.last_mut() {
            Some(prev) if start <= prev.old_end => {
                prev.old_end = prev.old_end.max(end);
                prev.new_end = (prev.old_end as isize + offset_delta + rep_offset_delta) as usize;
            }
            _ => {
                cursor_line += count_line_feeds(&base[cursor_offset..start]);
                cursor_offset = start;
                windows.push(Window {
                    old_start: start,
                    old_end: end,
                    old_line: cursor_line,
                    new_start: (start as isize + offset_delta) as usize,
                    new_end: (end as isize + offset_delta + rep_offset_delta) as usize,
                    new_line: (cursor_line as isize + line_delta) as usize,
                });
            }
        }
        offset_delta += rep_offset_delta;
        line_delta += rep_line_delta;
    }
    windows
}

/// pi's `generateEditDiff` for `replacements` (sorted, disjoint) turning `base` into `new`.
pub fn generate_edit_diff(path: &str, base: &str, new: &str, replacements: &[Replacement]) -> EditDiff {
    let width = (count_line_feeds(base) + 1).max(count_line_feeds(new) + 1).to_string().len();
    let skip_marker = format!(" {} ...", " ".repeat(width));
    let mut output: Vec<String> = Vec::new();
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut first_changed = None;
    for w in diff_windows(base, replacements) {
        let old_text = &base[w.old_start..w.old_end];
        let new_text = new.get(w.new_start..w.new_end).unwrap_or("");
        let parts = diff_lines(old_text, new_text);
        let mut shown = Vec::new();
        let first = format_display_diff(&parts, w.old_line + 1, w.new_line + 1, width, &mut shown);
        if first_changed.is_none() {
            first_changed = first;
        }
        if output.last() == Some(&skip_marker) && shown.first() == Some(&skip_marker) {
            shown.remove(0);
        }
        output.extend(shown);
        for mut h in structured_hunks(&parts) {
            h.old_start += w.old_line;
            h.new_start += w.new_line;
            hunks.push(h);
        }
    }
    let mut patch = format!("--- {path}\n+++ {path}");
    for h in &hunks {
        let old_start = if h.old_lines == 0 { h.old_start - 1 } else { h.old_start };
        let new_start = if h.new_lines == 0 { h.new_start - 1 } else { h.new_start };
        patch += &format!("\n@@ -{old_start},{} +{new_start},{} @@", h.old_lines, h.new_lines);
        for l in &h.lines {
            patch.push('\n');
            patch.push_str(l);
        }
    }
    patch.push('\n');
    EditDiff { diff: output.join("\n"), patch, first_changed_line: first_changed }
}
