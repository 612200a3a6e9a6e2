//! `wrap_text_with_ansi`: word wrapping that keeps styles across breaks.

use super::tracker::AnsiCodeTracker;
use super::width::{is_cjk_break, visible_width};
use super::{ansi_code_len, extract_ansi_codes, is_printable_ascii, next_code_start};

/// JavaScript's `String.prototype.trimEnd()` (Unicode White_Space plus U+FEFF).
pub(crate) fn js_trim_end(s: &str) -> &str {
    s.trim_end_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// A token whose visible text is only whitespace (codes are skipped; a lone ESC is visible).
fn is_whitespace_token(token: &str) -> bool {
    let mut i = 0;
    while i < token.len() {
        let b = token.as_bytes()[i];
        if b == 0x1b {
            let len = ansi_code_len(token, i);
            if len == 0 {
                return false;
            }
            i += len;
        } else if b == b' ' || (0x09..=0x0d).contains(&b) {
            i += 1;
        } else if b < 0x80 {
            return false;
        } else {
            let Some(c) = token[i..].chars().next() else {
                return false;
            };
            if !(c.is_whitespace() || c == '\u{feff}') {
                return false;
            }
            i += c.len_utf8();
        }
    }
    true
}

#[derive(PartialEq, Clone, Copy)]
enum Kind {
    Space,
    Word,
}

/// Split into runs of spaces / non-spaces; each CJK grapheme is its own token; pending escape
/// codes attach to the next visible character. Tokens are contiguous slices of `text` (codes
/// glued to a token always sit right before or after its characters), so nothing is copied.
fn split_into_tokens(text: &str) -> Vec<&str> {
    let mut tokens: Vec<(usize, usize)> = Vec::new();
    // Start of the token being built, start of pending codes, and the kind of the token.
    let mut current: Option<usize> = None;
    let mut current_end = 0;
    let mut pending: Option<usize> = None;
    let mut kind: Option<Kind> = None;
    let mut i = 0;
    while i < text.len() {
        let len = ansi_code_len(text, i);
        if len > 0 {
            pending.get_or_insert(i);
            i += len;
            continue;
        }
        let end = next_code_start(text, i + 1);
        let chunk = &text[i..end];
        let ascii = is_printable_ascii(chunk);
        let mut handle = |at: usize, seg: &str| {
            let seg_end = at + seg.len();
            let is_space = seg == " ";
            if !ascii && !is_space && is_cjk_break(seg) {
                if let Some(c) = current.take() {
                    tokens.push((c, current_end));
                    kind = None;
                }
                let from = pending.take().unwrap_or(at);
                tokens.push((from, seg_end));
                return;
            }
            let k = if is_space { Kind::Space } else { Kind::Word };
            if let Some(c) = current
                && kind != Some(k)
            {
                tokens.push((c, current_end));
                current = None;
            }
            let from = pending.take().unwrap_or(at);
            current.get_or_insert(from);
            current_end = seg_end;
            kind = Some(k);
        };
        if ascii {
            // Runs of spaces or non-spaces behave like their characters one by one.
            let cb = chunk.as_bytes();
            let mut k = 0;
            while k < cb.len() {
                let space = cb[k] == b' ';
                let mut e = k + 1;
                while e < cb.len() && (cb[e] == b' ') == space {
                    e += 1;
                }
                handle(i + k, &chunk[k..k + 1]);
                if e > k + 1 {
                    // Same kind: extends the current token to the end of the run.
                    handle(i + e - 1, &chunk[e - 1..e]);
                }
                k = e;
            }
        } else {
            for (k, g) in super::graphemes(chunk) {
                handle(i + k, g);
            }
        }
        i = end;
    }
    if let Some(p) = pending {
        if current.is_some() {
            current_end = text.len();
        } else if let Some(last) = tokens.last_mut() {
            // The codes follow the last token directly: extend it to the end.
            last.1 = text.len();
        } else {
            current = Some(p);
            current_end = text.len();
        }
    }
    if let Some(c) = current {
        tokens.push((c, current_end));
    }
    tokens.into_iter().map(|(a, b)| &text[a..b]).collect()
}

fn break_long_word(word: &str, width: usize, tracker: &mut AnsiCodeTracker) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = tracker.active_codes();
    let mut current_width = 0;
    let mut i = 0;
    while i < word.len() {
        let len = ansi_code_len(word, i);
        if len > 0 {
            let code = &word[i..i + len];
            current.push_str(code);
            tracker.process(code);
            i += len;
            continue;
        }
        let end = next_code_start(word, i + 1);
        for (_, g) in super::graphemes(&word[i..end]) {
            let gw = visible_width(g);
            if current_width + gw > width {
                current.push_str(&tracker.line_end_reset());
                lines.push(std::mem::take(&mut current));
                current = tracker.active_codes();
                current_width = 0;
            }
            current.push_str(g);
            current_width += gw;
        }
        i = end;
    }
    if !current.is_empty() {
        lines.push(current);
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

fn wrap_single_line(line: &str, width: usize) -> Vec<String> {
    if line.is_empty() {
        return vec![String::new()];
    }
    if visible_width(line) <= width {
        return vec![line.to_string()];
    }
    let mut wrapped: Vec<String> = Vec::new();
    let mut tracker = AnsiCodeTracker::new();
    let mut current = String::new();
    let mut current_len = 0usize;
    for token in split_into_tokens(line) {
        let token_len = visible_width(token);
        let is_ws = is_whitespace_token(token);
        if token_len > width && !is_ws {
            if !current.is_empty() {
                let mut l = js_trim_end(&current).to_string();
                l.push_str(&tracker.line_end_reset());
                wrapped.push(l);
                current.clear();
            }
            let mut broken = break_long_word(token, width, &mut tracker);
            current = broken.pop().unwrap_or_default();
            wrapped.extend(broken);
            current_len = visible_width(&current);
            continue;
        }
        let total = current_len + token_len;
        if total > width && current_len > 0 {
            let mut l = js_trim_end(&current).to_string();
            if is_ws {
                l.push_str(&extract_ansi_codes(token));
                tracker.update_from_text(token);
            }
            l.push_str(&tracker.line_end_reset());
            wrapped.push(l);
            if is_ws {
                current = tracker.active_codes();
                current_len = 0;
                continue;
            }
            current = tracker.active_codes();
            current.push_str(token);
            current_len = token_len;
        } else if is_ws && total > width && token.contains('\x1b') {
            current.push_str(&extract_ansi_codes(token));
        } else {
            current.push_str(token);
            current_len += token_len;
        }
        tracker.update_from_text(token);
    }
    if !current.is_empty() {
        wrapped.push(current);
    }
    if wrapped.is_empty() {
        return vec![String::new()];
    }
    wrapped
        .into_iter()
        .map(|l| {
            let t = js_trim_end(&l);
            if t.len() == l.len() { l } else { t.to_string() }
        })
        .collect()
}

/// Split `text` on `\r\n|\r|\n` like JavaScript's `split(/\r\n|\r|\n/)`.
pub(crate) fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\r' => {
                out.push(&text[start..i]);
                i += if b.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                start = i;
            }
            b'\n' => {
                out.push(&text[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push(&text[start..]);
    out
}

/// Wrap `text` to `width` columns keeping ANSI styles: lines that fit are untouched; at a break
/// the line is right-trimmed and gets a partial close (underline, strikethrough, hyperlink), and the
/// next line re-opens every active code. No padding, no background.
pub fn wrap_text_with_ansi(text: &str, width: usize) -> Vec<String> {
    if text.is_empty() {
        return vec![String::new()];
    }
    let mut result: Vec<String> = Vec::new();
    let mut tracker = AnsiCodeTracker::new();
    for input_line in split_lines(text) {
        let line = if result.is_empty() {
            std::borrow::Cow::Borrowed(input_line)
        } else {
            std::borrow::Cow::Owned(tracker.active_codes() + input_line)
        };
        result.extend(wrap_single_line(&line, width));
        tracker.update_from_text(input_line);
    }
    if result.is_empty() {
        result.push(String::new());
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_wraps() {
        assert_eq!(
            wrap_text_with_ansi("\x1b[31mred words that wrap around\x1b[0m", 10),
            ["\x1b[31mred words", "\x1b[31mthat wrap", "\x1b[31maround\x1b[0m"]
        );
        assert_eq!(
            wrap_text_with_ansi("\x1b[4munderlined text here\x1b[24m", 8),
            ["\x1b[4munderlin\x1b[24m", "\x1b[4med text\x1b[24m", "\x1b[4mhere\x1b[24m"]
        );
        assert_eq!(wrap_text_with_ansi("    indented text that wraps", 10), ["", "indented", "text that", "wraps"]);
        assert_eq!(wrap_text_with_ansi("日本語のテキスト", 5), ["日本", "語の", "テキ", "スト"]);
        assert_eq!(wrap_text_with_ansi("👍👍👍👍", 5), ["👍👍", "👍👍"]);
        assert_eq!(
            wrap_text_with_ansi("\x1b[1mbold\nstill\x1b[22m plain", 20),
            ["\x1b[1mbold", "\x1b[1mstill\x1b[22m plain"]
        );
        assert_eq!(
            wrap_text_with_ansi("\x1b]8;;http://x.y\x07link text\x1b]8;;\x07", 6),
            ["\x1b]8;;http://x.y\x07link\x1b]8;;\x07", "\x1b]8;;http://x.y\x07text\x1b]8;;\x07"]
        );
    }
}
