//! Editor layout helpers: pi's `wordWrapLine` and the scroll border.

use unicode_segmentation::UnicodeSegmentation;

use crate::ansi::{is_cjk_break, visible_width};

pub(super) struct Chunk {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// pi's `wordWrapLine`: wrap at whitespace (or between CJK characters), else by grapheme.
pub(super) fn word_wrap_line(line: &str, max: usize) -> Vec<Chunk> {
    if line.is_empty() || max == 0 {
        return vec![Chunk { text: String::new(), start: 0, end: 0 }];
    }
    if visible_width(line) <= max {
        return vec![Chunk { text: line.to_string(), start: 0, end: line.len() }];
    }
    let segs: Vec<(usize, &str)> = line.grapheme_indices(true).collect();
    let ws = |s: &str| s.chars().all(char::is_whitespace);
    let mut chunks = Vec::new();
    let (mut width, mut start) = (0usize, 0usize);
    let (mut opp, mut opp_width): (Option<usize>, usize) = (None, 0);
    for (i, &(idx, g)) in segs.iter().enumerate() {
        let gw = visible_width(g);
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
        width += gw;
        if let Some(&(nidx, next)) = segs.get(i + 1) {
            // A break may follow whitespace, or sit between CJK characters.
            let cjk = is_cjk_break(g) || is_cjk_break(next);
            if !ws(next) && (ws(g) || cjk) {
                opp = Some(nidx);
                opp_width = width;
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
