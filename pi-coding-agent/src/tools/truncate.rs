//! Output truncation shared by the tools: pi's `truncateHead`, `truncateTail`, `truncateLine` and
//! `formatSize`.
//!
//! Two independent limits apply, whichever is hit first: a line limit and a byte limit (UTF-8
//! bytes). Lines are counted the way pi counts them: split on `\n`, and a trailing newline does not
//! start another line.

use serde::Serialize;

/// Default line limit of tool output (pi's `DEFAULT_MAX_LINES`).
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Default byte limit of tool output, 50 KiB (pi's `DEFAULT_MAX_BYTES`).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Longest grep line shown, in UTF-16 code units as pi counts them (`GREP_MAX_LINE_LENGTH`).
pub const GREP_MAX_LINE_LENGTH: usize = 500;
/// JavaScript's `Number.MAX_SAFE_INTEGER`: the "no line limit" of grep, find and ls.
pub const NO_LINE_LIMIT: usize = 9_007_199_254_740_991;

/// Which limit cut the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    /// The line limit.
    Lines,
    /// The byte limit.
    Bytes,
}

/// What a truncation did; serializes as pi's `TruncationResult` (camelCase, same key order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TruncationResult {
    /// The kept text.
    pub content: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Which limit cut it (`null` when nothing was cut).
    pub truncated_by: Option<TruncatedBy>,
    /// Lines of the whole input.
    pub total_lines: usize,
    /// UTF-8 bytes of the whole input.
    pub total_bytes: usize,
    /// Lines kept.
    pub output_lines: usize,
    /// UTF-8 bytes kept.
    pub output_bytes: usize,
    /// Tail truncation kept only the end of the last line.
    pub last_line_partial: bool,
    /// Head truncation: the first line alone is over the byte limit, so nothing was kept.
    pub first_line_exceeds_limit: bool,
    /// The line limit used.
    pub max_lines: usize,
    /// The byte limit used.
    pub max_bytes: usize,
}

/// Line and byte limits of a truncation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TruncationOptions {
    /// Most lines kept.
    pub max_lines: usize,
    /// Most UTF-8 bytes kept.
    pub max_bytes: usize,
}

impl Default for TruncationOptions {
    fn default() -> Self {
        TruncationOptions { max_lines: DEFAULT_MAX_LINES, max_bytes: DEFAULT_MAX_BYTES }
    }
}

/// pi's `formatSize`: `"512B"`, `"1.5KB"`, `"2.0MB"`.
///
/// ```
/// use pi_coding_agent::tools::truncate::format_size;
/// assert_eq!(format_size(1023), "1023B");
/// assert_eq!(format_size(51200), "50.0KB");
/// assert_eq!(format_size(3 * 1024 * 1024), "3.0MB");
/// ```
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", js_round1(bytes as f64 / 1024.0))
    } else {
        format!("{:.1}MB", js_round1(bytes as f64 / (1024.0 * 1024.0)))
    }
}

/// Rounds to one decimal like JavaScript's `toFixed(1)` (half away from zero on the exact value).
fn js_round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// Splits text into lines as pi counts them: no lines for `""`, and a trailing `\n` ends the last
/// line instead of starting an empty one.
pub fn split_lines_for_counting(content: &str) -> Vec<&str> {
    if content.is_empty() {
        return Vec::new();
    }
    let body = content.strip_suffix('\n').unwrap_or(content);
    body.split('\n').collect()
}

fn untruncated(content: String, lines: usize, bytes: usize, o: TruncationOptions) -> TruncationResult {
    TruncationResult {
        content,
        truncated: false,
        truncated_by: None,
        total_lines: lines,
        total_bytes: bytes,
        output_lines: lines,
        output_bytes: bytes,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines: o.max_lines,
        max_bytes: o.max_bytes,
    }
}

/// Keeps the first lines (pi's `truncateHead`), never a partial line. When the first line alone is
/// over the byte limit, nothing is kept and `first_line_exceeds_limit` is set.
///
/// ```
/// use pi_coding_agent::tools::truncate::{truncate_head, TruncationOptions};
/// let r = truncate_head("a\nb\nc\n", TruncationOptions { max_lines: 2, max_bytes: 100 });
/// assert_eq!(r.content, "a\nb");
/// assert_eq!(r.total_lines, 3);
/// ```
pub fn truncate_head(content: &str, options: TruncationOptions) -> TruncationResult {
    let lines = split_lines_for_counting(content);
    truncate_head_lines(&lines, lines.len(), content.len(), options)
}

/// [`truncate_head`] over lines already split, with the totals of the whole text.
///
/// `lines` may hold only the first lines of a longer text (at least one line past either limit, or
/// all of them): the result is the same as over the whole text. Used to truncate files and search
/// results without holding them whole.
pub fn truncate_head_lines<S: AsRef<str>>(
    lines: &[S],
    total_lines: usize,
    total_bytes: usize,
    options: TruncationOptions,
) -> TruncationResult {
    let TruncationOptions { max_lines, max_bytes } = options;
    if total_lines <= max_lines && total_bytes <= max_bytes {
        let content = join_lines(lines);
        return untruncated(content, total_lines, total_bytes, options);
    }
    let first_bytes = lines.first().map_or(0, |l| l.as_ref().len());
    if first_bytes > max_bytes {
        return TruncationResult {
            content: String::new(),
            truncated: true,
            truncated_by: Some(TruncatedBy::Bytes),
            total_lines,
            total_bytes,
            output_lines: 0,
            output_bytes: 0,
            last_line_partial: false,
            first_line_exceeds_limit: true,
            max_lines,
            max_bytes,
        };
    }
    let mut kept = 0usize;
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    for (i, line) in lines.iter().enumerate() {
        if i >= max_lines {
            break;
        }
        let line_bytes = line.as_ref().len() + usize::from(i > 0);
        if bytes + line_bytes > max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        kept += 1;
        bytes += line_bytes;
    }
    if kept >= max_lines && bytes <= max_bytes {
        by = TruncatedBy::Lines;
    }
    let content = join_lines(&lines[..kept]);
    let output_bytes = content.len();
    TruncationResult {
        content,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes,
        output_lines: kept,
        output_bytes,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

fn join_lines<S: AsRef<str>>(lines: &[S]) -> String {
    let len = lines.iter().map(|l| l.as_ref().len() + 1).sum::<usize>();
    let mut out = String::with_capacity(len);
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(l.as_ref());
    }
    out
}

/// Keeps the last lines (pi's `truncateTail`). When the last line alone is over the byte limit, its
/// end is kept and `last_line_partial` is set.
///
/// ```
/// use pi_coding_agent::tools::truncate::{truncate_tail, TruncationOptions};
/// let r = truncate_tail("a\nb\nc\n", TruncationOptions { max_lines: 2, max_bytes: 100 });
/// assert_eq!(r.content, "b\nc");
/// ```
pub fn truncate_tail(content: &str, options: TruncationOptions) -> TruncationResult {
    let TruncationOptions { max_lines, max_bytes } = options;
    let total_bytes = content.len();
    let lines = split_lines_for_counting(content);
    let total_lines = lines.len();
    if total_lines <= max_lines && total_bytes <= max_bytes {
        return untruncated(content.to_owned(), total_lines, total_bytes, options);
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    let mut partial = false;
    for line in lines.iter().rev() {
        if kept.len() >= max_lines {
            break;
        }
        let line_bytes = line.len() + usize::from(!kept.is_empty());
        if bytes + line_bytes > max_bytes {
            by = TruncatedBy::Bytes;
            if kept.is_empty() {
                let tail = str_tail_bytes(line, max_bytes);
                bytes = tail.len();
                kept.push(tail);
                partial = true;
            }
            break;
        }
        kept.push(line);
        bytes += line_bytes;
    }
    if kept.len() >= max_lines && bytes <= max_bytes {
        by = TruncatedBy::Lines;
    }
    kept.reverse();
    let content = kept.join("\n");
    let output_bytes = content.len();
    TruncationResult {
        content,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes,
        output_lines: kept.len(),
        output_bytes,
        last_line_partial: partial,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// The last `max_bytes` bytes of `s`, moved forward to a character boundary.
pub fn str_tail_bytes(s: &str, max_bytes: usize) -> &str {
    if s.len() <= max_bytes {
        return s;
    }
    let mut start = s.len() - max_bytes;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Length of `s` in UTF-16 code units (JavaScript's `string.length`).
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// At most the first `max_units` UTF-16 code units of `s`, never splitting a character (pi's
/// `sliceHead`).
pub fn slice_head_utf16(s: &str, max_units: usize) -> &str {
    let mut units = 0usize;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > max_units {
            return &s[..i];
        }
    }
    s
}

/// Cuts a line longer than `max_chars` UTF-16 units and appends `... [truncated]` (pi's
/// `truncateLine`). Returns the text and whether it was cut.
///
/// ```
/// use pi_coding_agent::tools::truncate::truncate_line;
/// assert_eq!(truncate_line("abcdef", 3), ("abc... [truncated]".to_string(), true));
/// assert_eq!(truncate_line("abc", 3), ("abc".to_string(), false));
/// ```
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    if utf16_len(line) <= max_chars {
        return (line.to_owned(), false);
    }
    (format!("{}... [truncated]", slice_head_utf16(line, max_chars)), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_size_matches_pi() {
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(1024), "1.0KB");
        assert_eq!(format_size(60000), "58.6KB");
        assert_eq!(format_size(52005), "50.8KB");
        assert_eq!(format_size(1024 * 1024 - 1), "1024.0KB");
    }

    #[test]
    fn head_counts_lines_like_pi() {
        let r = truncate_head("", TruncationOptions::default());
        assert_eq!((r.total_lines, r.truncated), (0, false));
        let r = truncate_head("a\n", TruncationOptions::default());
        assert_eq!(r.total_lines, 1);
        let r = truncate_head("x\nyy\nzzz", TruncationOptions { max_lines: 10, max_bytes: 5 });
        assert_eq!(r.content, "x\nyy");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        let r = truncate_head("long\nb", TruncationOptions { max_lines: 10, max_bytes: 3 });
        assert!(r.first_line_exceeds_limit);
    }

    #[test]
    fn tail_keeps_partial_last_line() {
        let r = truncate_tail("aé€", TruncationOptions { max_lines: 10, max_bytes: 4 });
        assert_eq!(r.content, "€");
        assert!(r.last_line_partial);
    }

    #[test]
    fn truncate_line_never_splits_surrogates() {
        let s = format!("{}🙈", "a".repeat(499));
        assert_eq!(truncate_line(&s, 500).0, format!("{}... [truncated]", "a".repeat(499)));
    }
}
