//! Finds pi's math tokens in Markdown source before comrak parses it: display blocks split the
//! document (each part parsed on its own), and inline math is replaced by placeholders that
//! comrak keeps as text and that become [`Inline::Latex`] tokens afterwards. Code spans and
//! backslash escapes are skipped, as marked's inline lexer skips them.

use super::ast::{self, Block, Inline, Item};
use super::math::{Math, block_math, inline_math};

const PLACEHOLDER_START: char = '\u{e000}';
const PLACEHOLDER_END: char = '\u{e001}';

/// Markdown blocks with pi's math tokens.
pub(crate) fn parse(source: &str, keep_escapes: bool) -> Vec<Block> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some((offset, math)) = find_block(rest) {
        out.extend(segment(&rest[..offset], keep_escapes));
        let after = &rest[offset + math.raw.len()..];
        out.push(Block::Latex(math));
        // marked's space token after the block; one newline alone ends the block's line.
        let blank = blank_prefix(after);
        if blank > 1 {
            out.push(Block::Space);
        }
        rest = &after[blank..];
    }
    out.extend(segment(rest, keep_escapes));
    out
}

/// Length of `^(?:[ \t]*(?:\n|$))+`.
fn blank_prefix(source: &str) -> usize {
    let mut end = 0;
    loop {
        let rest = &source[end..];
        let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if rest[blanks..].starts_with('\n') {
            end += blanks + 1;
        } else {
            if blanks > 0 && blanks == rest.len() {
                end += blanks;
            }
            return end;
        }
    }
}

/// Byte offset of each line's start.
fn line_starts(source: &str) -> Vec<usize> {
    std::iter::once(0).chain(source.match_indices('\n').map(|(i, _)| i + 1)).collect()
}

/// The first top-level line that starts a display math block, and the block.
fn find_block(source: &str) -> Option<(usize, Math)> {
    if !source.contains("$$") && !source.contains("\\[") {
        return None;
    }
    let outline = ast::outline(source);
    for (index, &start) in line_starts(source).iter().enumerate() {
        let line_number = index + 1;
        if outline.closed.iter().any(|&(a, b)| (a..=b).contains(&line_number)) {
            continue;
        }
        let line = &source[start..];
        let trimmed = line.trim_start_matches(' ');
        if line.len() - trimmed.len() > 3 || !(trimmed.starts_with("$$") || trimmed.starts_with("\\[")) {
            continue;
        }
        if let Some(math) = block_math(line) {
            return Some((start, math));
        }
    }
    None
}

/// A part of the document without display blocks, its inline math resolved.
fn segment(source: &str, keep_escapes: bool) -> Vec<Block> {
    if source.trim().is_empty() {
        return Vec::new();
    }
    if !source.contains('$') && !source.contains("\\(") && !source.contains("\\[") {
        return ast::parse(source, keep_escapes);
    }
    let starts = line_starts(source);
    let line_end = |line: usize| starts.get(line).map_or(source.len(), |&next| next - 1);
    let mut edits: Vec<(usize, usize)> = Vec::new();
    let mut spans = Vec::new();
    for (first, last, table) in ast::outline(source).inline {
        let (Some(&from), true) = (starts.get(first - 1), last >= first) else { continue };
        let to = line_end(last).max(from);
        if table {
            for line in first..=last {
                let (a, b) = (starts[line - 1], line_end(line));
                for (cell_from, cell_to) in cells(source, a, b) {
                    scan(source, cell_from, cell_to, &mut edits, &mut spans);
                }
            }
        } else {
            scan(source, from, to, &mut edits, &mut spans);
        }
    }
    if spans.is_empty() {
        return ast::parse(source, keep_escapes);
    }
    let mut order: Vec<usize> = (0..edits.len()).collect();
    order.sort_by_key(|&i| edits[i].0);
    let mut text = String::with_capacity(source.len());
    let mut position = 0;
    for i in order {
        let (from, to) = edits[i];
        if from < position {
            continue;
        }
        text.push_str(&source[position..from]);
        text.push_str(&format!("{PLACEHOLDER_START}{i}{PLACEHOLDER_END}"));
        position = to;
    }
    text.push_str(&source[position..]);
    let mut blocks = ast::parse(&text, keep_escapes);
    resolve_blocks(&mut blocks, &spans);
    blocks
}

/// A table row's cells: byte ranges between unescaped `|`.
fn cells(source: &str, from: usize, to: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = from;
    let bytes = source.as_bytes();
    let mut i = from;
    while i < to {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == b'|' {
            out.push((start, i));
            start = i + 1;
        }
        i += 1;
    }
    out.push((start, to.max(start)));
    out
}

/// Finds inline math in `source[from..to]`, as marked's inline lexer meets it.
fn scan(source: &str, from: usize, to: usize, edits: &mut Vec<(usize, usize)>, spans: &mut Vec<Math>) {
    let bytes = source.as_bytes();
    let mut i = from;
    while i < to {
        match bytes[i] {
            b'`' => {
                let run = bytes[i..to].iter().take_while(|&&b| b == b'`').count();
                i = closing_backticks(bytes, i + run, to, run).unwrap_or(i + run);
            }
            b'\\' if !matches!(bytes.get(i + 1), Some(b'(' | b'[')) => {
                i += if bytes.get(i + 1).is_some_and(u8::is_ascii_punctuation) { 2 } else { 1 };
            }
            b'\\' | b'$' => match inline_math(&source[i..to]) {
                Some(math) => {
                    edits.push((i, i + math.raw.len()));
                    i += math.raw.len();
                    spans.push(math);
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
}

/// The end of the backtick run of exactly `run` characters closing a code span.
fn closing_backticks(bytes: &[u8], mut i: usize, to: usize, run: usize) -> Option<usize> {
    while i < to {
        if bytes[i] == b'`' {
            let length = bytes[i..to].iter().take_while(|&&b| b == b'`').count();
            if length == run {
                return Some(i + length);
            }
            i += length;
        } else {
            i += 1;
        }
    }
    None
}

fn resolve_blocks(blocks: &mut [Block], spans: &[Math]) {
    for block in blocks {
        match block {
            Block::Heading(_, inlines) | Block::Paragraph(inlines) => resolve_inlines(inlines, spans),
            Block::List { items, .. } => {
                for Item { blocks, .. } in items {
                    resolve_blocks(blocks, spans);
                    *blocks = split_display(std::mem::take(blocks));
                }
            }
            Block::Quote(blocks) => {
                resolve_blocks(blocks, spans);
                *blocks = split_display(std::mem::take(blocks));
            }
            Block::Table { header, rows, raw } => {
                for cell in header.iter_mut().chain(rows.iter_mut().flatten()) {
                    resolve_inlines(cell, spans);
                }
                *raw = restore(raw, spans);
            }
            _ => {}
        }
    }
}

/// Text with placeholders back to its source.
fn restore(text: &str, spans: &[Math]) -> String {
    split(text, spans)
        .into_iter()
        .map(|inline| match inline {
            Inline::Latex(math) => math.raw,
            Inline::Text(text) => text,
            _ => String::new(),
        })
        .collect()
}

fn resolve_inlines(inlines: &mut Vec<Inline>, spans: &[Math]) {
    let mut out = Vec::with_capacity(inlines.len());
    for mut inline in inlines.drain(..) {
        match &mut inline {
            Inline::Text(text) if text.contains(PLACEHOLDER_START) => {
                out.extend(split(text, spans));
                continue;
            }
            Inline::Strong(children) | Inline::Em(children) | Inline::Del(children) => {
                resolve_inlines(children, spans);
            }
            Inline::Link { children, text, .. } => {
                resolve_inlines(children, spans);
                *text = restore(text, spans);
            }
            _ => {}
        }
        out.push(inline);
    }
    *inlines = out;
}

/// Text split at placeholders into text and math tokens.
fn split(text: &str, spans: &[Math]) -> Vec<Inline> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(PLACEHOLDER_START) {
        let after = &rest[start + PLACEHOLDER_START.len_utf8()..];
        let Some(end) = after.find(PLACEHOLDER_END) else { break };
        let Some(math) = after[..end].parse::<usize>().ok().and_then(|i| spans.get(i)) else { break };
        if start > 0 {
            out.push(Inline::Text(rest[..start].to_string()));
        }
        out.push(Inline::Latex(math.clone()));
        rest = &after[end + PLACEHOLDER_END.len_utf8()..];
    }
    if !rest.is_empty() {
        out.push(Inline::Text(rest.to_string()));
    }
    out
}

/// Inside lists and quotes (parsed as one piece): a paragraph line that is display math
/// (`$$…$$` or `\[…\]` alone on its line) becomes a display block, as marked's block
/// extension makes it there, splitting the paragraph around it.
fn split_display(blocks: Vec<Block>) -> Vec<Block> {
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        let Block::Paragraph(inlines) = block else {
            out.push(block);
            continue;
        };
        let mut current: Vec<Inline> = Vec::new();
        let mut iter = inlines.into_iter().peekable();
        while let Some(inline) = iter.next() {
            let line_start = current.last().is_none_or(|last| matches!(last, Inline::Text(t) if t.ends_with('\n')));
            let line_end = match iter.peek() {
                None => true,
                Some(Inline::Text(t)) => t.trim_start_matches([' ', '\t']).starts_with('\n'),
                Some(_) => false,
            };
            match inline {
                Inline::Latex(math)
                    if line_start && line_end && (math.raw.starts_with("$$") || math.raw.starts_with("\\[")) =>
                {
                    if let Some(Inline::Text(t)) = current.last_mut() {
                        t.pop();
                    }
                    current.retain(|i| !matches!(i, Inline::Text(t) if t.is_empty()));
                    if !current.is_empty() {
                        out.push(Block::Paragraph(std::mem::take(&mut current)));
                    }
                    let text = if math.pending { math.text.clone() } else { latex_trim(&math.text) };
                    out.push(Block::Latex(Math { text, ..math }));
                    if let Some(Inline::Text(t)) = iter.peek_mut() {
                        let rest = t.trim_start_matches([' ', '\t']);
                        *t = rest.strip_prefix('\n').unwrap_or(rest).to_string();
                    }
                }
                other => current.push(other),
            }
        }
        current.retain(|i| !matches!(i, Inline::Text(t) if t.is_empty()));
        if !current.is_empty() {
            out.push(Block::Paragraph(current));
        }
    }
    out
}

fn latex_trim(text: &str) -> String {
    crate::latex::text::trim(text).to_string()
}
