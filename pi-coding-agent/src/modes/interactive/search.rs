//! The fullscreen mode's transcript search (pi's `TuiAltScreen.toggleSearch`, `closeSearch`,
//! `navigateSearch` and their keys in `handleViewportInput`, on [`pi_tui::alt_search`]).
//!
//! `tui.altScreen.search` opens the box as an overlay at the top right (or closes it) whatever
//! has the focus; while the box has the focus, `tui.altScreen.searchNext` / `searchPrevious`
//! select the next or previous match, `tui.altScreen.searchClose` closes it, the transcript's
//! scrolling keys still scroll the transcript, and other keys edit the query. A press on the
//! box's "↑"/"↓" buttons navigates too (the pointer underlines them). The matches are styled
//! with the theme's `searchMatchText` on `searchMatchBg`, underlined, and the selected one bold
//! in reverse video.

use std::rc::Rc;

use pi_tui::alt_search::{AltScreenSearch, Direction, MatchStyles, SearchBox};
use pi_tui::keys::is_key_release;
use pi_tui::mouse::RawMouse;
use pi_tui::theme::{bold, inverse, underline};
use pi_tui::{Component, CrosstermTerminal, Tui};

use super::app::App;

impl App {
    /// pi's search keys of the viewport listener; true when the key was the search's.
    pub(crate) fn on_search_key(&mut self, tui: &mut Tui<CrosstermTerminal>, data: &str) -> bool {
        if self.regular {
            return false;
        }
        let release = is_key_release(data);
        if self.keys.matches(data, "tui.altScreen.search") {
            if !release {
                self.toggle_search(tui);
            }
            return true;
        }
        if !self.search_focused(tui) {
            return false;
        }
        let direction = if self.keys.matches(data, "tui.altScreen.searchNext") {
            Some(Direction::Next)
        } else if self.keys.matches(data, "tui.altScreen.searchPrevious") {
            Some(Direction::Previous)
        } else if self.keys.matches(data, "tui.altScreen.searchClose") {
            if !release {
                self.close_search(tui);
            }
            return true;
        } else {
            None
        };
        if let Some(direction) = direction {
            if !release && let Some(search) = self.layout.borrow_mut().search.as_mut() {
                search.navigate(direction);
            }
            return true;
        }
        // The search box does not capture the viewport: the transcript still scrolls.
        self.on_viewport_scroll_key(data)
    }

    /// Whether the open search box has the keyboard focus.
    pub(crate) fn search_focused(&self, tui: &Tui<CrosstermTerminal>) -> bool {
        self.search_overlay.is_some_and(|id| tui.is_overlay_focused(id))
    }

    /// A key for the focused search box: it edits the query, and a new query searches again.
    pub(crate) fn search_input(&mut self, data: &str) {
        let mut layout = self.layout.borrow_mut();
        let top = layout.view.top;
        let Some(search) = layout.search.as_mut() else { return };
        let component = search.component();
        let change = {
            let mut component = component.borrow_mut();
            if !is_key_release(data) {
                component.handle_input(data);
            }
            component.take_query_change()
        };
        if let Some(query) = change {
            search.update_query(&query, top);
        }
    }

    fn toggle_search(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        if self.search_overlay.is_some() {
            self.close_search(tui);
            return;
        }
        let component = Rc::new(std::cell::RefCell::new(SearchBox::new(self.keys.clone(), self.button_style())));
        let mut layout = self.layout.borrow_mut();
        let mut search = AltScreenSearch::new(component.clone(), layout.view.top);
        search.set_styles(self.match_styles());
        layout.search = Some(search);
        drop(layout);
        self.search_overlay = Some(tui.show_overlay(component, AltScreenSearch::overlay_options()));
    }

    /// pi's `closeSearch`: the box goes, the highlights with it; the transcript stays where the
    /// search left it.
    pub(crate) fn close_search(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        self.layout.borrow_mut().search = None;
        if let Some(id) = self.search_overlay.take() {
            tui.hide_overlay(id);
        }
    }

    /// pi's `handleSearchMouseEvent`: the pointer over a button underlines it, a left press on
    /// it navigates (and is consumed).
    pub(crate) fn on_search_mouse(&mut self, raw: &RawMouse, width: usize, height: usize) -> bool {
        let mut layout = self.layout.borrow_mut();
        let Some(search) = layout.search.as_mut() else { return false };
        let direction = search.navigation_direction_at(raw.x, raw.y, width, height);
        search.component().borrow_mut().set_hovered(direction);
        let Some(direction) = direction else { return false };
        if raw.release || raw.is_motion() || raw.code & 3 != 0 {
            return false;
        }
        search.navigate(direction);
        true
    }

    /// The pointer left the terminal: no button is hovered.
    pub(crate) fn clear_search_hover(&mut self) {
        if let Some(search) = self.layout.borrow_mut().search.as_mut() {
            search.component().borrow_mut().set_hovered(None);
        }
    }

    /// The theme's styles for an open search (each frame: theme changes apply at once).
    pub(crate) fn sync_search_styles(&mut self) {
        let styles = self.match_styles();
        let button = self.button_style();
        if let Some(search) = self.layout.borrow_mut().search.as_mut() {
            search.set_styles(styles);
            search.component().borrow_mut().set_button_style(button);
        }
    }

    /// pi's `searchMatchStyle` and `searchCurrentMatchStyle` of the interactive mode.
    fn match_styles(&self) -> MatchStyles {
        let (a, b) = (self.theme.clone(), self.theme.clone());
        MatchStyles {
            matched: Rc::new(move |s: &str| underline(&a.bg("searchMatchBg", &a.fg("searchMatchText", s)))),
            current: Rc::new(move |s: &str| bold(&inverse(&b.bg("searchMatchBg", &b.fg("searchMatchText", s))))),
        }
    }

    /// pi's `searchNavigationButtonStyle`: a hovered button is underlined.
    fn button_style(&self) -> pi_tui::alt_search::ButtonStyle {
        Rc::new(|s: &str, hovered: bool| if hovered { underline(s) } else { s.to_owned() })
    }
}
