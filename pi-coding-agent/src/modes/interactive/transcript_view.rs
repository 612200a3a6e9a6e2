//! The fullscreen transcript's scroll state and decorations (pi's primary `ScrollView` with its
//! scrollbar, and `TuiAltScreen`'s "Jump to latest message" indicator): where the view is,
//! whether it follows the end, and the scrollbar and indicator drawn over its rows.

use std::time::{Duration, Instant};

use pi_tui::alt_search::{AltScreenSearch, ViewWindow};
use pi_tui::ansi::{composite_line, truncate_to_width_with, visible_width};
use pi_tui::render::scrollbar::{ScrollbarGeometry, ScrollbarMode, paint_scrollbar};

use super::selection::{Point, columns, highlight_line};

/// How long an `auto` scrollbar stays after the last scroll (pi: 1000 ms).
const SCROLLBAR_HIDE_DELAY: Duration = Duration::from_millis(1000);

/// The styled cells and label the view draws (from the theme and the keybindings).
#[derive(Debug, Clone, Default)]
pub(crate) struct ViewChrome {
    /// The track cell (`│` in `scrollbarTrack`).
    pub(crate) track: String,
    /// The thumb cell (`┃` in `scrollbarThumb`).
    pub(crate) thumb: String,
    /// The thumb while hovered or dragged (`█`).
    pub(crate) thumb_active: String,
    /// The styled " ↓ Jump to latest message · KEY " label.
    pub(crate) indicator: String,
}

/// Scroll position, following, scrollbar visibility and the last frame's hit areas.
#[derive(Debug, Clone)]
pub(crate) struct TranscriptView {
    /// First document line shown.
    pub(crate) top: usize,
    /// Whether the view sticks to the end as the document grows.
    pub(crate) following: bool,
    /// The view was put at the end without following it (pi's `followSuppressedAtEnd`: a
    /// search match revealed there).
    follow_suppressed: bool,
    /// Document lines in the last frame.
    pub(crate) content_height: usize,
    /// Rows of the view in the last frame.
    pub(crate) height: usize,
    pub(crate) mode: ScrollbarMode,
    pub(crate) chrome: ViewChrome,
    /// The pointer is on the bar or drags it (pi's `setScrollbarActive`).
    active: bool,
    transient_until: Option<Instant>,
    /// The indicator's cells in the last frame: row, column, width.
    pub(crate) indicator_rect: Option<(usize, usize, usize)>,
    width: usize,
    /// The document's lines in the last frame (its segments), for selections.
    pub(crate) document: Vec<pi_tui::Lines>,
    /// The selection to draw, in document rows.
    pub(crate) selection: Option<(Point, Point)>,
    /// A message drawn at the top right until a moment (pi's `flash`: "Copied!").
    pub(crate) flash: Option<(String, Instant)>,
}

impl Default for TranscriptView {
    fn default() -> Self {
        TranscriptView {
            top: 0,
            following: true,
            follow_suppressed: false,
            content_height: 0,
            height: 0,
            mode: ScrollbarMode::Auto,
            chrome: ViewChrome::default(),
            active: false,
            transient_until: None,
            indicator_rect: None,
            width: 0,
            document: Vec::new(),
            selection: None,
            flash: None,
        }
    }
}

impl TranscriptView {
    fn max_top(&self) -> usize {
        self.content_height.saturating_sub(self.height)
    }

    /// The document's width: one column less for an `always` scrollbar.
    pub(crate) fn content_width(&self, width: usize) -> usize {
        if self.mode == ScrollbarMode::Always && width > 1 { width - 1 } else { width }
    }

    /// pi's `updateLayout`: a following view moves to the new end, another stays in range.
    pub(crate) fn update_layout(&mut self, content_height: usize, height: usize) {
        self.content_height = content_height;
        self.height = height;
        let max = self.max_top();
        self.top = if self.following { max } else { self.top.min(max) };
        if self.top < max {
            self.follow_suppressed = false;
        }
        if self.top == max && !self.follow_suppressed {
            self.following = true;
        }
        if content_height <= height {
            self.transient_until = None;
        }
    }

    fn mark_activity(&mut self) {
        if self.mode == ScrollbarMode::Auto && self.content_height > self.height {
            self.transient_until = Some(Instant::now() + SCROLLBAR_HIDE_DELAY);
        }
    }

    /// pi's `ScrollView.scrollBy` (positive scrolls down); returns the lines it could not move.
    pub(crate) fn scroll_lines(&mut self, lines: i64) -> i64 {
        if lines == 0 {
            return 0;
        }
        let max = self.max_top() as i64;
        let start = if self.following { max } else { self.top as i64 };
        let next = (start + lines).clamp(0, max);
        self.top = next as usize;
        self.following = next == max;
        self.follow_suppressed = false;
        if next != start {
            self.mark_activity();
        }
        lines - (next - start)
    }

    /// pi's `scrollTo`.
    pub(crate) fn scroll_to(&mut self, top: usize) {
        let next = top.min(self.max_top());
        if next != self.top {
            self.mark_activity();
        }
        self.top = next;
        self.following = next == self.max_top();
        self.follow_suppressed = false;
    }

    /// pi's `scrollTo(top, { disableFollow: true })`: the view stays where it is put, even at
    /// the end (a revealed search match).
    pub(crate) fn scroll_to_unfollowed(&mut self, top: usize) {
        let next = top.min(self.max_top());
        if next != self.top {
            self.mark_activity();
        }
        self.top = next;
        self.follow_suppressed = next == self.max_top();
        self.following = false;
    }

    /// pi's `scrollToEnd`.
    pub(crate) fn scroll_to_end(&mut self) {
        if self.top != self.max_top() {
            self.mark_activity();
        }
        self.top = self.max_top();
        self.following = true;
        self.follow_suppressed = false;
    }

    /// Hovering or dragging the bar shows it (and, for `auto`, keeps it until a second after).
    pub(crate) fn set_active(&mut self, active: bool) -> bool {
        if active == self.active {
            return false;
        }
        self.active = active;
        self.mark_activity();
        true
    }

    /// The `auto` bar's second after the last scroll ended (the next frame hides it).
    pub(crate) fn clear_transient(&mut self) {
        let now = Instant::now();
        if self.transient_until.is_some_and(|t| now >= t) {
            self.transient_until = None;
        }
        if self.flash.as_ref().is_some_and(|(_, t)| now >= *t) {
            self.flash = None;
        }
    }

    /// The document line at `row` of the last frame.
    pub(crate) fn line(&self, row: usize) -> &str {
        let mut index = row;
        for seg in &self.document {
            if index < seg.len() {
                return &seg[index];
            }
            index -= seg.len();
        }
        ""
    }

    /// pi's `isScrollbarVisible`.
    pub(crate) fn scrollbar_visible(&self, now: Instant) -> bool {
        match self.mode {
            ScrollbarMode::Always => self.height > 0,
            ScrollbarMode::Hidden => false,
            ScrollbarMode::Auto => {
                self.content_height > self.height
                    && (self.active || self.transient_until.is_some_and(|until| now < until))
            }
        }
    }

    /// When a shown `auto` bar hides (the app draws a frame then).
    pub(crate) fn hide_deadline(&self) -> Option<Instant> {
        let flash = self.flash.as_ref().map(|(_, until)| *until);
        if self.mode != ScrollbarMode::Auto || self.active {
            return flash;
        }
        match (self.transient_until, flash) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The bar's geometry in the last frame; `include_hidden_auto` also gives a hidden `auto`
    /// bar's (the pointer reveals it).
    pub(crate) fn geometry(&self, include_hidden_auto: bool) -> Option<ScrollbarGeometry> {
        let reveal = include_hidden_auto && self.mode == ScrollbarMode::Auto && self.content_height > self.height;
        if !self.scrollbar_visible(Instant::now()) && !reveal {
            return None;
        }
        ScrollbarGeometry::compute(0, 0, self.width, self.height, self.content_height, self.top)
    }

    /// The view's rows with the scrollbar and the indicator drawn over them, or `None` when
    /// neither shows (the rows are used as they are).
    pub(crate) fn decorate(
        &mut self,
        picked: &[pi_tui::Lines],
        width: usize,
        height: usize,
        search: Option<&AltScreenSearch>,
    ) -> Option<Vec<String>> {
        self.width = width;
        self.indicator_rect = None;
        let bar = self.geometry(false);
        let indicator = !self.following && !self.chrome.indicator.is_empty();
        let now = Instant::now();
        let flash = self.flash.as_ref().filter(|(_, until)| now < *until).map(|(m, _)| m.clone());
        let search = search.filter(|s| s.has_highlights());
        if bar.is_none() && !indicator && self.selection.is_none() && flash.is_none() && search.is_none() {
            return None;
        }
        let mut rows: Vec<String> = picked.iter().flat_map(|l| l.iter().cloned()).collect();
        rows.resize(height, String::new());
        if let Some(g) = &bar {
            let thumb = if self.active { &self.chrome.thumb_active } else { &self.chrome.thumb };
            let preserve = self.mode != ScrollbarMode::Always;
            paint_scrollbar(&mut rows, g, width, &self.chrome.track, thumb, preserve);
        }
        if let Some(search) = search {
            // pi highlights the matches after the scroll view is drawn, left of its scrollbar.
            let max_column = bar.map_or(width, |g| g.column.min(width));
            search.highlight(&mut rows, ViewWindow { top: self.top, height, max_column });
        }
        if indicator && let Some(last) = rows.last_mut() {
            let label = truncate_to_width_with(&self.chrome.indicator, width, "", false);
            let column = width.saturating_sub(visible_width(&label)) / 2;
            let right = bar.map_or(width, |g| g.column);
            let text = truncate_to_width_with(&label, right.saturating_sub(column), "", false);
            let text_width = visible_width(&text);
            if text_width > 0 {
                *last = composite_line(last, &text, column, text_width, width);
                self.indicator_rect = Some((height - 1, column, text_width));
            }
        }
        if let Some(bounds) = self.selection {
            for (offset, line) in rows.iter_mut().enumerate() {
                let row = self.top + offset;
                if row < bounds.0.row || row > bounds.1.row || pi_tui::render::is_image_line(line) {
                    continue;
                }
                let (from, to) = columns(line, row, bounds);
                *line = highlight_line(line, from, to.min(width));
            }
        }
        if let (Some(message), Some(first)) = (flash, rows.first_mut()) {
            // pi's `AltScreenFlashContainer`: " message " in reverse video at the top right.
            let text = format!("\x1b[7m{}\x1b[27m", truncate_to_width_with(&format!(" {message} "), width, "", false));
            let w = visible_width(&text);
            *first = composite_line(first, &text, width - w, w, width);
        }
        Some(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrolling_back_stops_following_and_the_end_resumes_it() {
        let mut v = TranscriptView::default();
        v.update_layout(100, 10);
        assert_eq!((v.top, v.following), (90, true));
        assert_eq!(v.scroll_lines(-3), 0);
        assert_eq!((v.top, v.following), (87, false));
        // Growing content keeps a scrolled-back view where it is.
        v.update_layout(120, 10);
        assert_eq!(v.top, 87);
        assert_eq!(v.scroll_lines(-100), -13, "the rest chains on");
        assert_eq!(v.top, 0);
        v.scroll_lines(500);
        assert_eq!((v.top, v.following), (110, true));
        v.scroll_to(5);
        assert!(!v.following);
        v.scroll_to_end();
        assert_eq!((v.top, v.following), (110, true));
    }

    #[test]
    fn a_search_reveal_at_the_end_stops_following() {
        let mut v = TranscriptView::default();
        v.update_layout(100, 10);
        v.scroll_to_unfollowed(95);
        assert_eq!((v.top, v.following), (90, false), "at the end, yet not following (pi's disableFollow)");
        v.update_layout(100, 10);
        assert!(!v.following, "the next frame keeps it so");
        v.update_layout(105, 10);
        assert_eq!((v.top, v.following), (90, false), "new lines do not move it");
        v.scroll_lines(50);
        assert_eq!((v.top, v.following), (95, true), "scrolling to the end follows again");
    }

    #[test]
    fn auto_bar_shows_while_scrolling_and_hovered() {
        let mut v = TranscriptView { width: 20, ..TranscriptView::default() };
        v.update_layout(100, 10);
        assert!(!v.scrollbar_visible(Instant::now()));
        assert!(v.geometry(true).is_some(), "the pointer can reveal it");
        v.scroll_lines(-1);
        assert!(v.scrollbar_visible(Instant::now()));
        assert!(!v.scrollbar_visible(Instant::now() + SCROLLBAR_HIDE_DELAY));
        v.set_active(true);
        assert!(v.scrollbar_visible(Instant::now() + SCROLLBAR_HIDE_DELAY * 2));
        v.mode = ScrollbarMode::Hidden;
        assert!(v.geometry(true).is_none());
    }
}
