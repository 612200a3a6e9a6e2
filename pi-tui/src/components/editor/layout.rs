//! Editor layout helpers: pi's `wordWrapLine` and the scroll border.

use crate::ansi::{is_cjk_break, visible_width};

/// Byte ranges of paste markers (`[paste #N +L lines]`, `[paste #N C chars]`, `[paste #N]`) whose
/// id is in `valid`.
pub(super) fn paste_markers(text: &str, valid: &dyn Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(off) = text[from..].find("[paste #") {
        let start = from + off;
        let rest = &text[start + 8..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        from = start + 1;
        if digits == 0 {
            continue;
        }
        let id: usize = rest[..digits].parse().unwrap_or(0);
        let after = &rest[digits..];
        let suffix_len = if after.starts_with(']') {
            Some(0)
        } else if let Some(s) = after.strip_prefix(" +") {
            let n = s.bytes().take_while(u8::is_ascii_digit).count();
            (n > 0 && s[n..].starts_with(" lines]")).then_some(2 + n + 6)
        } else if let Some(s) = after.strip_prefix(' ') {
            let n = s.bytes().take_while(u8::is_ascii_digit).count();
            (n > 0 && s[n..].starts_with(" chars]")).then_some(1 + n + 6)
        } else {
            None
        };
        if let Some(len) = suffix_len
            && valid(id)
        {
            let end = start + 8 + digits + len + 1;
            out.push((start, end));
            from = end;
        }
    }
    out
}

/// Grapheme clusters of `text` with each valid paste marker merged into one atomic segment.
pub(super) fn segments<'a>(text: &'a str, markers: &[(usize, usize)]) -> Vec<(usize, &'a str)> {
    let mut out = Vec::new();
    let mut m = markers.iter().peekable();
    for (i, g) in crate::ansi::graphemes(text) {
        while m.peek().is_some_and(|(_, e)| *e <= i) {
            m.next();
        }
        match m.peek() {
            Some(&&(s, e)) if i >= s && i < e => {
                if i == s {
                    out.push((s, &text[s..e]));
                }
            }
            _ => out.push((i, g)),
        }
    }
    out
}

pub(super) struct Chunk {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// pi's `wordWrapLine`: wrap at whitespace (or between CJK characters), else by grapheme.
pub(super) fn word_wrap_line(line: &str, max: usize, markers: &[(usize, usize)]) -> Vec<Chunk> {
    if line.is_empty() || max == 0 {
        return vec![Chunk { text: String::new(), start: 0, end: 0 }];
    }
    if visible_width(line) <= max {
        return vec![Chunk { text: line.to_string(), start: 0, end: line.len() }];
    }
    let segs = segments(line, markers);
    let is_marker = |idx: usize| markers.iter().any(|(s, _)| *s == idx);
    // pi's `isWhitespaceChar` tests whether the segment contains whitespace.
    let has_ws = |s: &str| s.chars().any(char::is_whitespace);
    let mut chunks = Vec::new();
    let (mut width, mut start) = (0usize, 0usize);
    let (mut opp, mut opp_width): (Option<usize>, usize) = (None, 0);
    for (i, &(idx, g)) in segs.iter().enumerate() {
        let gw = visible_width(g);
        let marker = is_marker(idx);
        let is_ws = !marker && has_ws(g);
        if width + gw > max {
            if let Some(o) = opp.filter(|_| width - opp_width + gw <= max) {
                chunks.push(Chunk { text: line[start..o].to_string(), start, end: o });
                start = o;
                width -= opp_width;
            } else if start < idx {
                chunks.push(Chunk { text: line[start..idx].to_string(), start, end: idx });
                start = idx;
                width = 0;
            }
            opp = None;
        }
        if gw > max {
            // A segment wider than the line (a long paste marker) wraps on its own.
            let mut sub = word_wrap_line(g, max, &[]);
            let last = sub.pop();
            for c in sub {
                chunks.push(Chunk { text: c.text, start: idx + c.start, end: idx + c.end });
            }
            if let Some(last) = last {
                start = idx + last.start;
                width = visible_width(&last.text);
            }
            opp = None;
            continue;
        }
        width += gw;
        if let Some(&(nidx, next)) = segs.get(i + 1) {
            let next_marker = is_marker(nidx);
            if is_ws && (next_marker || !has_ws(next)) {
                opp = Some(nidx);
                opp_width = width;
            } else if !is_ws && !has_ws(next) {
                let cjk = (!marker && is_cjk_break(g)) || (!next_marker && is_cjk_break(next));
                if cjk {
                    opp = Some(nidx);
                    opp_width = width;
                }
            }
        }
    }
    chunks.push(Chunk { text: line[start..].to_string(), start, end: line.len() });
    chunks
}

pub(super) fn scroll_border(direction: &str, hidden: usize, width: usize) -> String {
    let label = format!(" {direction} {hidden} more ");
    let lw = visible_width(&label);
    if lw + 2 <= width {
        let left = (width - lw) / 2;
        return format!("{}{label}{}", "─".repeat(left), "─".repeat(width - left - lw));
    }
    let indicator = format!("─── {direction} {hidden} more ");
    let iw = visible_width(&indicator);
    if iw <= width {
        return indicator + &"─".repeat(width - iw);
    }
    let ell = &"..."[..width.min(3)];
    crate::ansi::slice_by_column(&indicator, 0, width - ell.len(), true) + ell
}
