//! A scroll view's scrollbar (pi-tui's `getScrollbarGeometry` and `paintScrollbar`): where the
//! track and thumb are, which scroll position a pointer row means, and how the bar is painted
//! into the last column of the view's rows.

use crate::ansi::{active_background_ansi, extract_ansi_code, slice_by_column, slice_with_width, visible_width};

/// When the scrollbar shows (pi's `fullscreenScrollbar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollbarMode {
    /// While scrolling (one second after the last move) or while the pointer is on it.
    Auto,
    /// Always, in a column of its own.
    Always,
    /// Never.
    Hidden,
}

/// Where a scrollbar is on the screen (0-based cells).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScrollbarGeometry {
    /// The bar's column.
    pub column: usize,
    /// The first row of the track.
    pub track_top: usize,
    /// Rows of the track (the view's height).
    pub track_height: usize,
    /// The first row of the thumb.
    pub thumb_top: usize,
    /// Rows of the thumb (at least 2 where the track allows).
    pub thumb_height: usize,
    /// The largest scroll position.
    pub max_scroll_top: usize,
}

impl ScrollbarGeometry {
    /// The geometry of a view at (`x`, `y`) of `width`×`height` showing `content_height` lines
    /// from `scroll_top`; `None` for an empty view.
    pub fn compute(
        x: usize,
        y: usize,
        width: usize,
        height: usize,
        content_height: usize,
        scroll_top: usize,
    ) -> Option<Self> {
        if width == 0 || height == 0 {
            return None;
        }
        let track = height;
        let min_thumb = track.min(2);
        let ratio =
            if content_height == 0 { track as f64 } else { ((track * track) as f64 / content_height as f64).round() };
        let thumb_height = (ratio.min(track as f64) as usize).max(min_thumb);
        let max_scroll_top = content_height.saturating_sub(track);
        let max_thumb_top = track - thumb_height;
        let offset = if max_scroll_top == 0 {
            0
        } else {
            ((scroll_top as f64 / max_scroll_top as f64) * max_thumb_top as f64).round() as usize
        };
        Some(ScrollbarGeometry {
            column: x + width - 1,
            track_top: y,
            track_height: track,
            thumb_top: y + offset,
            thumb_height,
            max_scroll_top,
        })
    }

    /// Whether screen cell (`x`, `y`) is on the track.
    pub fn contains(&self, x: i64, y: i64) -> bool {
        x == self.column as i64 && y >= self.track_top as i64 && y < (self.track_top + self.track_height) as i64
    }

    /// Whether screen row `y` is on the thumb.
    pub fn on_thumb(&self, y: i64) -> bool {
        y >= self.thumb_top as i64 && y < (self.thumb_top + self.thumb_height) as i64
    }

    /// The scroll position that puts the thumb's grabbed row (`grab_offset` rows into it) at
    /// `pointer_y` (pi's `scrollScrollbarToPointer`).
    pub fn scroll_top_for_pointer(&self, pointer_y: i64, grab_offset: i64) -> usize {
        let max_thumb = (self.track_height - self.thumb_height) as i64;
        let thumb = (pointer_y - self.track_top as i64 - grab_offset).clamp(0, max_thumb.max(0));
        if max_thumb == 0 {
            return 0;
        }
        ((thumb as f64 / max_thumb as f64) * self.max_scroll_top as f64).round() as usize
    }
}

/// Replace the cell at `column` of `line` with `replacement` (pi's `replaceScrollbarCell`): a
/// wide character under the column is replaced whole (padded with spaces), styles and links are
/// closed before the cell, and `preserve_background` keeps the cell's background (a bar drawn
/// over content).
pub fn replace_scrollbar_cell(
    line: &str,
    column: usize,
    total_width: usize,
    replacement: &str,
    preserve_background: bool,
) -> String {
    if crate::render::is_image_line(line) {
        return line.to_owned();
    }
    let start = visible_width(&slice_by_column(line, 0, column, true)).min(column);
    let (_, covered) = slice_with_width(line, start, column + 1 - start, false);
    let end = (start + covered).max(column + 1);
    let before = slice_by_column(line, 0, start, true);
    let target = slice_by_column(line, start, end - start, true);
    let after = slice_by_column(line, end, total_width.saturating_sub(end), true);
    let mut prefix = String::new();
    let mut i = 0;
    while let Some(code) = extract_ansi_code(&target, i) {
        prefix.push_str(code);
        i += code.len();
    }
    let before_pad = " ".repeat(start.saturating_sub(visible_width(&before)));
    let cell_before = " ".repeat(column - start);
    let cell_after = " ".repeat(end - column - 1);
    let background = if preserve_background { active_background_ansi(&prefix) } else { String::new() };
    format!("{before}{before_pad}\x1b[0m\x1b]8;;\x07{background}{cell_before}{replacement}{cell_after}{after}")
}

/// Paint the bar into `rows` (the view's lines, `rows[0]` at the track's top): the thumb as
/// `thumb`, the rest of the track as `track`.
pub fn paint_scrollbar(
    rows: &mut [String],
    geometry: &ScrollbarGeometry,
    total_width: usize,
    track: &str,
    thumb: &str,
    preserve_background: bool,
) {
    for (offset, line) in rows.iter_mut().enumerate().take(geometry.track_height) {
        let row = geometry.track_top + offset;
        let cell = if geometry.on_thumb(row as i64) { thumb } else { track };
        *line = replace_scrollbar_cell(line, geometry.column, total_width, cell, preserve_background);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thumb_size_and_position_follow_the_content() {
        let g = ScrollbarGeometry::compute(0, 0, 20, 10, 100, 0).expect("geometry");
        assert_eq!((g.column, g.thumb_top, g.thumb_height, g.max_scroll_top), (19, 0, 2, 90));
        let g = ScrollbarGeometry::compute(0, 0, 20, 10, 100, 90).expect("geometry");
        assert_eq!(g.thumb_top, 8);
        let g = ScrollbarGeometry::compute(0, 0, 20, 10, 20, 5).expect("geometry");
        assert_eq!((g.thumb_top, g.thumb_height), (3, 5));
        // Content shorter than the view: one thumb over the whole track.
        let g = ScrollbarGeometry::compute(0, 0, 20, 10, 4, 0).expect("geometry");
        assert_eq!((g.thumb_top, g.thumb_height, g.max_scroll_top), (0, 10, 0));
        assert!(ScrollbarGeometry::compute(0, 0, 0, 10, 4, 0).is_none());
    }

    #[test]
    fn pointer_rows_map_to_scroll_positions() {
        let g = ScrollbarGeometry::compute(0, 0, 20, 10, 100, 0).expect("geometry");
        assert!(g.contains(19, 0) && g.contains(19, 9) && !g.contains(18, 0) && !g.contains(19, 10));
        assert_eq!(g.scroll_top_for_pointer(0, 0), 0);
        assert_eq!(g.scroll_top_for_pointer(8, 0), 90);
        assert_eq!(g.scroll_top_for_pointer(4, 1), 34);
        assert_eq!(g.scroll_top_for_pointer(40, 0), 90);
    }

    #[test]
    fn the_bar_replaces_the_last_cell() {
        let line = replace_scrollbar_cell("abcdef", 5, 6, "|", false);
        assert_eq!(line, "abcde\x1b[0m\x1b]8;;\x07|");
        let short = replace_scrollbar_cell("ab", 5, 6, "|", false);
        assert_eq!(crate::ansi::strip_terminal_sequences(&short), "ab   |");
        // A wide character under the column is replaced whole.
        let wide = replace_scrollbar_cell("abcd日", 5, 6, "|", false);
        assert_eq!(crate::ansi::strip_terminal_sequences(&wide), "abcd |");
    }
}
