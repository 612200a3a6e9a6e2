//! pi's LaTeX tokens in Markdown: display math blocks (`$$…$$`, `\[…\]` starting a line) and
//! inline math (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`), each possibly pending (unclosed while a
//! message streams), as pi-tui's `latexBlock` and `latex` marked extensions find them.

use crate::latex::text::{is_space, trim};

/// A math token: its source as written, the expression, and whether it is still unclosed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Math {
    pub raw: String,
    pub text: String,
    pub pending: bool,
}

/// Whether unclosed `$` text looks like math (so it is held back as pending math).
fn looks_like_pending_dollar_math(source: &str) -> bool {
    let chars: Vec<char> = source.chars().collect();
    chars.iter().enumerate().any(|(i, &c)| {
        (c == '\\' && chars.get(i + 1).is_some_and(char::is_ascii_alphabetic))
            || "_^=+*/<>()[]|±≤≥≠≈∈→⇒∞∫∑√-".contains(c)
    })
}

fn is_escaped(source: &str, index: usize) -> bool {
    source[..index].bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

fn find_closing(source: &str, closing: &str, start: usize) -> Option<usize> {
    let mut from = start;
    loop {
        let index = from + source.get(from..)?.find(closing)?;
        if !is_escaped(source, index) {
            return Some(index);
        }
        from = index + closing.len();
    }
}

/// `^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$`
fn is_table_delimiter_row(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let body = line[indent..].trim_end_matches([' ', '\t']);
    let body = body.strip_prefix('|').unwrap_or(body);
    let body = body.strip_suffix('|').unwrap_or(body);
    !body.is_empty()
        && body.split('|').all(|cell| {
            let cell = cell.trim_matches([' ', '\t']);
            let cell = cell.strip_prefix(':').unwrap_or(cell);
            let cell = cell.strip_suffix(':').unwrap_or(cell);
            !cell.is_empty() && cell.chars().all(|c| c == '-')
        })
}

/// Whether a GFM table starts in `source` (display math never spans one).
fn contains_table_start(source: &str) -> bool {
    let lines: Vec<&str> = source.split('\n').collect();
    lines.windows(2).any(|pair| (pair[1].contains('|') || pair[0].contains('|')) && is_table_delimiter_row(pair[1]))
}

/// After ` {0,3}` and the opener: `[ \t]*` and an optional newline; the index after them.
fn skip_opening_blanks(source: &str, from: usize) -> usize {
    let rest = &source[from..];
    let after_blanks = from + (rest.len() - rest.trim_start_matches([' ', '\t']).len());
    if source[after_blanks..].starts_with('\n') { after_blanks + 1 } else { after_blanks }
}

/// A closed display block: `opener … closer[ \t]*(\n|$)`, the body the shortest such.
fn closed_block(source: &str, body_start: usize, closer: &str) -> Option<(usize, usize)> {
    let mut from = body_start;
    while let Some(found) = source[from..].find(closer) {
        let close = from + found;
        let after = close + closer.len();
        let rest = &source[after..];
        let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let tail = &rest[blanks..];
        if tail.is_empty() {
            return Some((close, after + blanks));
        }
        if tail.starts_with('\n') {
            return Some((close, after + blanks + 1));
        }
        from = close + 1;
    }
    None
}

/// `tokenizeBlockLatex` at the start of `source`.
pub(crate) fn block_math(source: &str) -> Option<Math> {
    let indent = source.len() - source.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let (opener, closer) = if source[indent..].starts_with("$$") {
        ("$$", "$$")
    } else if source[indent..].starts_with("\\[") {
        ("\\[", "\\]")
    } else {
        return None;
    };
    let body_start = skip_opening_blanks(source, indent + opener.len());
    if let Some((close, end)) = closed_block(source, body_start, closer) {
        let body = &source[body_start..close];
        if !body.is_empty() && !contains_table_start(body) {
            return Some(Math { raw: source[..end].to_string(), text: trim(body).to_string(), pending: false });
        }
    }
    let body = &source[body_start..];
    let pending =
        !body.is_empty() && (opener == "\\[" || looks_like_pending_dollar_math(body)) && !contains_table_start(body);
    pending.then(|| Math { raw: source.to_string(), text: body.to_string(), pending: true })
}

/// Whether the text between `$`s reads as prose (`$5 and $10`, `$HOME`) rather than math.
fn dollar_is_prose(text: &str, after: &str) -> bool {
    let constant = {
        let mut chars = text.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_uppercase() || c == '_');
        let body: Vec<char> = chars.collect();
        let word = body.iter().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == '_').count();
        let tail = &body[word..];
        first_ok
            && (tail.is_empty()
                || (tail.len() == 1 && !(tail[0].is_ascii_alphanumeric() || tail[0] == '_' || is_space(tail[0]))))
    };
    text.chars().next_back().is_some_and(is_space)
        || after.starts_with(|c: char| c.is_ascii_digit())
        || (constant && after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        || text.contains('`')
}

/// `tokenizeInlineLatex` at the start of `source` (the rest of the inline text).
pub(crate) fn inline_math(source: &str) -> Option<Math> {
    let (opener, closer) = if source.starts_with("$$") {
        ("$$", "$$")
    } else if source.starts_with("\\(") {
        ("\\(", "\\)")
    } else if source.starts_with("\\[") {
        ("\\[", "\\]")
    } else if source.starts_with('$') && !source[1..].starts_with(is_space) {
        ("$", "$")
    } else {
        return None;
    };
    let Some(close) = find_closing(source, closer, opener.len()) else {
        let text = &source[opener.len()..];
        let pending = opener.starts_with('\\') || looks_like_pending_dollar_math(text);
        return pending.then(|| Math { raw: source.to_string(), text: text.to_string(), pending: true });
    };
    let text = &source[opener.len()..close];
    if opener == "$" && dollar_is_prose(text, &source[close + 1..]) {
        return None;
    }
    if text.is_empty() || text.contains('\n') {
        return None;
    }
    Some(Math { raw: source[..close + closer.len()].to_string(), text: text.to_string(), pending: false })
}
