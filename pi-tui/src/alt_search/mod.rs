//! Transcript search of the fullscreen mode (pi-tui's `alt-screen-search.js` and the search of
//! `TuiAltScreen`): `tui.altScreen.search` opens a box at the top right, typing searches the
//! rendered transcript, `tui.altScreen.searchNext` / `searchPrevious` (or the box's buttons) move
//! between matches and scroll the transcript to them, and `tui.altScreen.searchClose` closes it.
//!
//! - [`index`]: the searchable text of the rendered lines and the matching ([`SearchIndex`],
//!   incremental as the transcript grows).
//! - [`SearchBox`]: the overlay's component (input, "3/12", buttons).
//! - [`highlight`]: the matches drawn over the view's rows.
//! - [`AltScreenSearch`]: one open search (pi's `activeSearch`): the query, the selected match
//!   (kept by its position when the transcript changes), and what to scroll to.
//!
//! The application owns the scroll view: it calls [`AltScreenSearch::refresh`] with the
//! document's lines each frame while the search is open, scrolls to the row it returns, and
//! draws [`AltScreenSearch::highlight`] over the rows it shows. Nothing runs while no search is
//! open.

pub mod highlight;
pub mod index;
mod search_box;

use std::cell::RefCell;
use std::rc::Rc;

pub use highlight::{MatchStyles, ViewWindow, apply_highlights};
pub use index::{MatchKey, MatchSegment, SearchIndex, SearchMatch, find_matches, match_key};
pub use search_box::{ButtonStyle, Direction, SearchBox};

use crate::component::Lines;
use crate::render::{Anchor, OverlayOptions, SizeValue, resolve_overlay_layout};

/// How the next refresh picks the selected match (pi's `selectionMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SelectionMode {
    /// The query changed: the first match at or below the anchor row.
    Query,
    /// The match after the selected one (wrapping).
    Next,
    /// The match before the selected one (wrapping).
    Previous,
    /// Keep the selected match (found again by its key when the transcript changed).
    Retain,
}

/// The rows of the search box.
const BOX_HEIGHT: usize = 3;

/// One open search (pi's `activeSearch`).
pub struct AltScreenSearch {
    component: Rc<RefCell<SearchBox>>,
    index: SearchIndex,
    query: String,
    matches_shown: bool,
    selected: Option<usize>,
    selected_key: Option<MatchKey>,
    anchor_row: usize,
    mode: SelectionMode,
    styles: MatchStyles,
}

impl AltScreenSearch {
    /// A search showing `component`, opened while the view's top was `scroll_top`.
    pub fn new(component: Rc<RefCell<SearchBox>>, scroll_top: usize) -> Self {
        AltScreenSearch {
            component,
            index: SearchIndex::new(),
            query: String::new(),
            matches_shown: false,
            selected: None,
            selected_key: None,
            anchor_row: scroll_top,
            mode: SelectionMode::Query,
            styles: MatchStyles::default(),
        }
    }

    /// Where pi shows the box: top right, 40% wide (at least 32 columns), one cell from the edges.
    pub fn overlay_options() -> OverlayOptions {
        OverlayOptions {
            anchor: Anchor::TopRight,
            width: Some(SizeValue::Percent(40.0)),
            min_width: Some(32),
            margin: [1, 1, 1, 1],
            ..OverlayOptions::default()
        }
    }

    /// The box's component (for showing it as an overlay).
    pub fn component(&self) -> Rc<RefCell<SearchBox>> {
        self.component.clone()
    }

    /// Replace the match styles (the theme's).
    pub fn set_styles(&mut self, styles: MatchStyles) {
        self.styles = styles;
    }

    /// The matches of the last refresh.
    pub fn matches(&self) -> &[SearchMatch] {
        if self.matches_shown { self.index.matches() } else { &[] }
    }

    /// The selected match's index.
    pub fn selected(&self) -> Option<usize> {
        self.selected
    }

    /// pi's `updateSearchQuery`: a new query selects from the selected match's row on (or from
    /// the view's top); whether it changed.
    pub fn update_query(&mut self, query: &str, scroll_top: usize) -> bool {
        if query == self.query {
            return false;
        }
        let selected_row = self.selected.and_then(|i| self.matches().get(i)).map(SearchMatch::first_row);
        self.anchor_row = selected_row.unwrap_or(scroll_top);
        self.query = query.to_owned();
        self.mode = SelectionMode::Query;
        self.component.borrow_mut().set_result(None, 0);
        true
    }

    /// pi's `navigateSearch`: select the next or previous match at the next refresh; false
    /// without a query.
    pub fn navigate(&mut self, direction: Direction) -> bool {
        if self.query.is_empty() {
            return false;
        }
        self.mode = match direction {
            Direction::Previous => SelectionMode::Previous,
            Direction::Next => SelectionMode::Next,
        };
        true
    }

    /// pi's `refreshSearch` for a view whose first row is `scroll_top`, `height` rows high, over
    /// `lines` (the whole document). Returns the row to scroll to (without following the end
    /// any more) when the selection moved, else `None`.
    pub fn refresh(&mut self, lines: &[Lines], scroll_top: usize, height: usize) -> Option<usize> {
        if self.query.trim_matches(index::is_js_space).is_empty() {
            self.matches_shown = false;
            self.selected = None;
            self.selected_key = None;
            self.mode = SelectionMode::Retain;
            self.component.borrow_mut().set_result(None, 0);
            return None;
        }
        let reveal = self.mode != SelectionMode::Retain;
        let changed = self.index.search(lines, &self.query);
        self.matches_shown = true;
        if !changed && self.mode == SelectionMode::Retain {
            return None;
        }
        let matches = self.index.matches();
        let exact = if changed {
            self.selected_key.and_then(|key| matches.iter().position(|m| match_key(m) == Some(key)))
        } else {
            self.selected
        };
        let count = matches.len();
        let selected = (count > 0).then(|| {
            let base = exact.or_else(|| self.selected.map(|s| s.min(count - 1)));
            match self.mode {
                SelectionMode::Query => {
                    let first = matches.partition_point(|m| m.first_row() < self.anchor_row);
                    if first < count { first } else { 0 }
                }
                SelectionMode::Next => base.map_or(0, |b| (b + 1) % count),
                SelectionMode::Previous => base.map_or(count - 1, |b| (b + count - 1) % count),
                SelectionMode::Retain => base.unwrap_or(0),
            }
        });
        self.selected = selected;
        self.selected_key = selected.and_then(|i| match_key(&matches[i]));
        self.mode = SelectionMode::Retain;
        self.component.borrow_mut().set_result(selected, count);
        let m = &matches[selected?];
        if !reveal || height == 0 || m.segments.is_empty() {
            return None;
        }
        let bottom = scroll_top + height - 1;
        if m.first_row() < scroll_top || m.last_row() > bottom {
            Some(m.first_row().saturating_sub(height / 3))
        } else {
            Some(scroll_top)
        }
    }

    /// Draws the matches over `rows` (the view's rows; see [`ViewWindow`]).
    pub fn highlight(&self, rows: &mut [String], view: ViewWindow) {
        if let Some(selected) = self.selected {
            apply_highlights(rows, self.matches(), selected, view, &self.styles);
        }
    }

    /// Whether [`AltScreenSearch::highlight`] draws anything.
    pub fn has_highlights(&self) -> bool {
        self.selected.is_some() && !self.matches().is_empty()
    }

    /// pi's `getSearchNavigationDirectionAt`: the button at screen cell (`x`, `y`) of a
    /// `columns`×`rows` terminal.
    pub fn navigation_direction_at(&self, x: i64, y: i64, columns: usize, rows: usize) -> Option<Direction> {
        let (width, row, col, _) = resolve_overlay_layout(&Self::overlay_options(), BOX_HEIGHT, columns, rows);
        let (x, y) = (usize::try_from(x).ok()?, usize::try_from(y).ok()?);
        if x < col || x >= col + width || y < row || y >= row + BOX_HEIGHT {
            return None;
        }
        self.component.borrow().navigation_direction_at(y - row, x - col)
    }
}

#[cfg(test)]
mod tests;
