//! Column operations on styled lines: truncation, slicing, overlay compositing.

use super::tracker::AnsiCodeTracker;
use super::width::{grapheme_width, visible_width};
use super::{SEGMENT_RESET, active_osc8_close, ansi_code_len, is_printable_ascii, next_code_start};

/// Pad `line` with spaces to `width` and pass the whole padded line to `bg`.
pub fn apply_background_to_line(line: &str, width: usize, bg: &dyn Fn(&str) -> String) -> String {
    let pad = width.saturating_sub(visible_width(line));
    let mut padded = String::with_capacity(line.len() + pad);
    padded.push_str(line);
    padded.extend(std::iter::repeat_n(' ', pad));
    bg(&padded)
}

fn truncate_fragment(text: &str, max: usize) -> (String, usize) {
    if max == 0 || text.is_empty() {
        return (String::new(), 0);
    }
    if is_printable_ascii(text) {
        let n = text.len().min(max);
        return (text[..n].to_string(), n);
    }
    let mut out = String::new();
    let mut width = 0;
    let mut pending = String::new();
    let mut i = 0;
    while i < text.len() {
        let len = ansi_code_len(text, i);
        if len > 0 {
            pending.push_str(&text[i..i + len]);
            i += len;
            continue;
        }
        let end = next_code_start(text, i + 1);
        for (_, g) in super::graphemes(&text[i..end]) {
            let w = grapheme_width(g);
            if width + w > max {
                return (out, width);
            }
            out.push_str(&pending);
            pending.clear();
            out.push_str(g);
            width += w;
        }
        i = end;
    }
    (out, width)
}

fn finalize(prefix: &str, prefix_width: usize, ellipsis: &str, ellipsis_width: usize, max: usize, pad: bool) -> String {
    let mut out = String::with_capacity(prefix.len() + ellipsis.len() + 16);
    out.push_str(prefix);
    out.push_str(active_osc8_close(prefix));
    out.push_str("\x1b[0m");
    if !ellipsis.is_empty() {
        out.push_str(ellipsis);
        out.push_str("\x1b[0m");
    }
    if pad {
        let w = prefix_width + ellipsis_width;
        out.extend(std::iter::repeat_n(' ', max.saturating_sub(w)));
    }
    out
}

fn padded(text: &str, pad: usize) -> String {
    let mut s = String::with_capacity(text.len() + pad);
    s.push_str(text);
    s.extend(std::iter::repeat_n(' ', pad));
    s
}

/// `truncate_to_width(text, max, "...", false)`.
pub fn truncate_to_width(text: &str, max: usize) -> String {
    truncate_to_width_with(text, max, "...", false)
}

/// Truncate `text` to `max` columns. A text that fits is returned unchanged (padded with spaces
/// when `pad`); otherwise the longest prefix of width `<= max - width(ellipsis)` is kept and
/// followed by an OSC 8 close if a link is open, `ESC[0m`, the ellipsis and another `ESC[0m`.
pub fn truncate_to_width_with(text: &str, max: usize, ellipsis: &str, pad: bool) -> String {
    if max == 0 {
        return String::new();
    }
    if text.is_empty() {
        return if pad { " ".repeat(max) } else { String::new() };
    }
    let ellipsis_width = visible_width(ellipsis);
    if ellipsis_width >= max {
        let tw = visible_width(text);
        if tw <= max {
            return if pad { padded(text, max - tw) } else { text.to_string() };
        }
        let (clipped, cw) = truncate_fragment(ellipsis, max);
        if cw == 0 {
            return if pad { " ".repeat(max) } else { String::new() };
        }
        return finalize("", 0, &clipped, cw, max, pad);
    }
    if is_printable_ascii(text) {
        if text.len() <= max {
            return if pad { padded(text, max - text.len()) } else { text.to_string() };
        }
        let target = max - ellipsis_width;
        return finalize(&text[..target], target, ellipsis, ellipsis_width, max, pad);
    }
    let target = max - ellipsis_width;
    let mut result = String::new();
    let mut pending = String::new();
    let mut visible_so_far = 0;
    let mut kept = 0;
    let mut contiguous = true;
    let mut overflowed = false;
    let mut i = 0;
    let mut visit = |g: &str, w: usize, pending: &mut String, result: &mut String| -> bool {
        if contiguous && kept + w <= target {
            result.push_str(pending);
            pending.clear();
            result.push_str(g);
            kept += w;
        } else {
            contiguous = false;
            pending.clear();
        }
        visible_so_far += w;
        visible_so_far > max
    };
    'outer: while i < text.len() {
        let len = ansi_code_len(text, i);
        if len > 0 {
            pending.push_str(&text[i..i + len]);
            i += len;
            continue;
        }
        if text.as_bytes()[i] == b'\t' {
            if visit("\t", 3, &mut pending, &mut result) {
                overflowed = true;
                break;
            }
            i += 1;
            continue;
        }
        let mut end = i;
        let b = text.as_bytes();
        while end < b.len() && b[end] != b'\t' && !(b[end] == 0x1b && ansi_code_len(text, end) > 0) {
            end += 1;
        }
        for (_, g) in super::graphemes(&text[i..end]) {
            if visit(g, grapheme_width(g), &mut pending, &mut result) {
                overflowed = true;
                break 'outer;
            }
        }
        i = end;
    }
    if !overflowed && i >= text.len() {
        return if pad { padded(text, max.saturating_sub(visible_so_far)) } else { text.to_string() };
    }
    finalize(&result, kept, ellipsis, ellipsis_width, max, pad)
}

/// Visible columns `start..start+len` of `line` (escape codes before the range carry over).
/// With `strict`, a wide character crossing the end is excluded.
pub fn slice_by_column(line: &str, start: usize, len: usize, strict: bool) -> String {
    slice_with_width(line, start, len, strict).0
}

/// Like [`slice_by_column`], also returning the visible width of the result.
pub fn slice_with_width(line: &str, start: usize, len: usize, strict: bool) -> (String, usize) {
    if len == 0 {
        return (String::new(), 0);
    }
    let end_col = start + len;
    let mut result = String::new();
    let mut rw = 0;
    let mut col = 0;
    let mut pending = String::new();
    let mut i = 0;
    while i < line.len() {
        let clen = ansi_code_len(line, i);
        if clen > 0 {
            let code = &line[i..i + clen];
            if col >= start && col < end_col {
                result.push_str(&pending);
                pending.clear();
                result.push_str(code);
            } else if col < start && !code.starts_with("\x1b_") {
                pending.push_str(code);
            }
            i += clen;
            continue;
        }
        let text_end = next_code_start(line, i + 1);
        let text = &line[i..text_end];
        if is_printable_ascii(text) {
            let from = start.saturating_sub(col);
            let to = text.len().min(end_col.saturating_sub(col));
            if to > from {
                result.push_str(&pending);
                pending.clear();
                result.push_str(&text[from..to]);
                rw += to - from;
            }
            col += text.len();
            i = text_end;
            if col >= end_col {
                break;
            }
            continue;
        }
        for (_, g) in super::graphemes(text) {
            let w = grapheme_width(g);
            let in_range = col >= start && col < end_col;
            let fits = !strict || col + w <= end_col;
            if in_range && fits {
                result.push_str(&pending);
                pending.clear();
                result.push_str(g);
                rw += w;
            }
            col += w;
            if col >= end_col {
                break;
            }
        }
        i = text_end;
        if col >= end_col {
            break;
        }
    }
    (result, rw)
}

/// The "before" and "after" parts of a line around an overlay region.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Segments {
    /// Content before the overlay column.
    pub before: String,
    /// Visible width of `before`.
    pub before_width: usize,
    /// Content after the overlay, prefixed with the styling active there.
    pub after: String,
    /// Visible width of `after`.
    pub after_width: usize,
}

/// Extract the parts of `line` before column `before_end` and in `after_start..after_start+after_len`.
pub fn extract_segments(
    line: &str,
    before_end: usize,
    after_start: usize,
    after_len: usize,
    strict_after: bool,
) -> Segments {
    let mut s = Segments::default();
    let mut col = 0;
    let mut i = 0;
    let mut pending_before = String::new();
    let mut after_started = false;
    let after_end = after_start + after_len;
    let mut tracker = AnsiCodeTracker::new();
    let done = |col: usize| {
        if after_len == 0 { col >= before_end } else { col >= after_end }
    };
    while i < line.len() {
        let clen = ansi_code_len(line, i);
        if clen > 0 {
            let code = &line[i..i + clen];
            tracker.process(code);
            if col < before_end {
                pending_before.push_str(code);
            } else if col >= after_start && col < after_end && (after_started || code.starts_with("\x1b_")) {
                s.after.push_str(code);
            }
            i += clen;
            continue;
        }
        let text_end = next_code_start(line, i + 1);
        let mut stop = false;
        for (_, g) in super::graphemes(&line[i..text_end]) {
            let w = grapheme_width(g);
            if col < before_end && col + w <= before_end {
                s.before.push_str(&pending_before);
                pending_before.clear();
                s.before.push_str(g);
                s.before_width += w;
            } else if col >= after_start && col < after_end {
                let fits = !strict_after || col + w <= after_end;
                if fits {
                    if !after_started {
                        s.after.push_str(&tracker.active_codes());
                        after_started = true;
                    }
                    s.after.push_str(g);
                    s.after_width += w;
                }
            }
            col += w;
            if done(col) {
                stop = true;
                break;
            }
        }
        i = text_end;
        if stop || done(col) {
            break;
        }
    }
    s
}

/// Splice `overlay` into `base` at `start_col` (pi's `compositeTuiLine`): base before the column,
/// padding, a segment reset, the overlay strictly sliced to `overlay_width`, padding, a reset,
/// then the rest of the base with its styling re-opened; the result is cut to `total_width`.
pub fn composite_line(base: &str, overlay: &str, start_col: usize, overlay_width: usize, total_width: usize) -> String {
    if crate::render::is_image_line(base) {
        return base.to_string();
    }
    let after_start = start_col + overlay_width;
    let seg = extract_segments(base, start_col, after_start, total_width.saturating_sub(after_start), true);
    let (ov, ov_w) = slice_with_width(overlay, 0, overlay_width, true);
    let before_pad = start_col.saturating_sub(seg.before_width);
    let overlay_pad = overlay_width.saturating_sub(ov_w);
    let actual_before = start_col.max(seg.before_width);
    let actual_overlay = overlay_width.max(ov_w);
    let after_target = total_width.saturating_sub(actual_before + actual_overlay);
    let after_pad = after_target.saturating_sub(seg.after_width);
    let mut out = seg.before;
    out.extend(std::iter::repeat_n(' ', before_pad));
    out.push_str(SEGMENT_RESET);
    out.push_str(&ov);
    out.extend(std::iter::repeat_n(' ', overlay_pad));
    out.push_str(SEGMENT_RESET);
    out.push_str(&seg.after);
    out.extend(std::iter::repeat_n(' ', after_pad));
    if visible_width(&out) <= total_width { out } else { slice_by_column(&out, 0, total_width, true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_truncation() {
        assert_eq!(truncate_to_width("Hello World", 8), "Hello\x1b[0m...\x1b[0m");
        assert_eq!(truncate_to_width_with("Hello World", 8, "", false), "Hello Wo\x1b[0m");
        assert_eq!(truncate_to_width_with("Hello", 8, "...", true), "Hello   ");
        assert_eq!(truncate_to_width("日本語テキスト", 5), "日\x1b[0m...\x1b[0m");
        assert_eq!(truncate_to_width("日本語テキスト", 6), "日\x1b[0m...\x1b[0m");
        assert_eq!(truncate_to_width("\x1b[31mHello\x1b[0m \x1b[34mWorld\x1b[0m", 8), "\x1b[31mHello\x1b[0m...\x1b[0m");
        assert_eq!(truncate_to_width("Hello", 2), "\x1b[0m..\x1b[0m");
        assert_eq!(slice_by_column("a日b", 0, 2, true), "a");
        assert_eq!(slice_by_column("a日b", 0, 2, false), "a日");
    }

    #[test]
    fn composites_overlay() {
        let line = composite_line("bbbbbbbbbbbb", "OV", 4, 4, 12);
        assert_eq!(line, "bbbb\x1b[0m\x1b]8;;\x07OV  \x1b[0m\x1b]8;;\x07bbbb");
    }
}
