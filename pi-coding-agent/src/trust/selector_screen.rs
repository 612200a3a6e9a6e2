//! The `/trust` selector drawn with pi-tui (pi's `TrustSelectorComponent`): the project folder,
//! the saved decision and the session's, then Trust / Trust parent folder / Do not trust with
//! the saved one marked `✓`. Enter saves, Escape cancels.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::ansi::wrap_text_with_ansi;
use pi_tui::keys::Keybindings;
use pi_tui::theme::bold;
use pi_tui::{Component, Lines, Theme};

use super::resolve::TrustSelector;

/// What the selector ended with: `Some(Some(index))` (the option's index as text) chosen,
/// `Some(None)` cancelled.
pub type TrustChoice = Rc<RefCell<Option<Option<String>>>>;

/// pi's `TrustSelectorComponent`.
pub struct TrustSelectorComponent {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    selector: TrustSelector,
    selected: usize,
    done: TrustChoice,
}

impl TrustSelectorComponent {
    /// A selector over `selector` (see [`super::trust_selector`]); the result goes to `done`.
    pub fn new(theme: Rc<Theme>, keys: Rc<Keybindings>, selector: TrustSelector, done: TrustChoice) -> Self {
        let selected = selector.selected_index;
        TrustSelectorComponent { theme, keys, selector, selected, done }
    }

    /// A `Text` with one column of padding on each side, wrapped to the width.
    fn text(&self, out: &mut Vec<String>, text: &str, width: usize) {
        let inner = width.saturating_sub(2).max(1);
        for line in wrap_text_with_ansi(text, inner) {
            out.push(format!(" {line}"));
        }
    }
}

impl Component for TrustSelectorComponent {
    fn render(&mut self, width: usize) -> Lines {
        let t = &self.theme;
        let border = t.fg("border", &"─".repeat(width.max(1)));
        let mut out = vec![border.clone(), String::new()];
        self.text(&mut out, &t.fg("accent", &bold("Project trust")), width);
        self.text(&mut out, &t.fg("muted", &self.selector.cwd), width);
        out.push(String::new());
        self.text(&mut out, &t.fg("muted", &self.selector.saved_line), width);
        self.text(&mut out, &t.fg("muted", &self.selector.session_line), width);
        out.push(String::new());
        for (i, option) in self.selector.options.iter().enumerate() {
            let selected = i == self.selected;
            let marker = if self.selector.is_saved_option(option) { t.fg("accent", "✓ ") } else { "  ".to_string() };
            let prefix = if selected { t.fg("accent", "→ ") } else { "  ".to_string() };
            let label = t.fg(if selected { "accent" } else { "text" }, &option.label);
            let line = format!("{prefix}{marker}{label}");
            self.text(&mut out, &line, width);
        }
        out.push(String::new());
        let hint = |key: &str, what: &str| format!("{}{}", t.fg("dim", key), t.fg("muted", &format!(" {what}")));
        let keys = |action: &str| self.keys.keys(action).join("/");
        let hints = format!(
            "{}  {}  {}",
            hint("↑↓", "navigate"),
            hint(&keys("tui.select.confirm"), "save"),
            hint(&keys("tui.select.cancel"), "cancel")
        );
        self.text(&mut out, &hints, width);
        out.extend([String::new(), border]);
        out.into()
    }

    fn handle_input(&mut self, data: &str) {
        let last = self.selector.options.len().saturating_sub(1);
        if self.keys.matches(data, "tui.select.up") || data == "k" {
            self.selected = self.selected.saturating_sub(1);
        } else if self.keys.matches(data, "tui.select.down") || data == "j" {
            self.selected = (self.selected + 1).min(last);
        } else if self.keys.matches(data, "tui.select.confirm") || data == "\n" {
            *self.done.borrow_mut() = Some(Some(self.selected.to_string()));
        } else if self.keys.matches(data, "tui.select.cancel") {
            *self.done.borrow_mut() = Some(None);
        }
    }
}
