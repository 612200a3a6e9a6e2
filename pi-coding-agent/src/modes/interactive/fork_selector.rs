//! `/fork`'s list of the branch's user messages (pi's `UserMessageSelectorComponent`): a title
//! and a hint between spacers, then each message on one line with its place under it, the most
//! recent selected; the list wraps at both ends and pages ten at a time.

use std::rc::Rc;

use pi_tui::keys::Keybindings;
use pi_tui::theme::bold;
use pi_tui::{Component, Lines, Text, Theme};

use super::dialogs::{DoneCell, border};

/// Messages shown at once (pi's `maxVisible`).
const MAX_VISIBLE: usize = 10;

pub(crate) struct ForkSelector {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    title: Text,
    hint: Text,
    /// `(entry id, text)`, oldest first.
    messages: Vec<(String, String)>,
    selected: usize,
    done: DoneCell,
}

impl ForkSelector {
    pub(crate) fn new(
        theme: Rc<Theme>,
        keys: Rc<Keybindings>,
        messages: Vec<(String, String)>,
        done: DoneCell,
    ) -> Self {
        let title = Text::new(bold("Fork from Message"), 1, 0);
        let hint = Text::new(
            theme.fg("muted", "Select a user message to copy the active path up to that point into a new session"),
            1,
            0,
        );
        let selected = messages.len().saturating_sub(1);
        ForkSelector { theme, keys, title, hint, messages, selected, done }
    }

    fn list(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let n = self.messages.len();
        if n == 0 {
            return vec![t.fg("muted", "  No user messages found")];
        }
        let start =
            (self.selected as i64 - (MAX_VISIBLE / 2) as i64).min(n as i64 - MAX_VISIBLE as i64).max(0) as usize;
        let end = (start + MAX_VISIBLE).min(n);
        let mut lines = Vec::new();
        for (i, (_, text)) in self.messages.iter().enumerate().take(end).skip(start) {
            let chosen = i == self.selected;
            let one_line = text.replace('\n', " ");
            let shown = pi_tui::ansi::truncate_to_width(one_line.trim(), width.saturating_sub(2));
            let cursor = if chosen { t.fg("accent", "› ") } else { "  ".to_owned() };
            lines.push(format!("{cursor}{}", if chosen { bold(&shown) } else { shown }));
            lines.push(t.fg("muted", &format!("  Message {} of {n}", i + 1)));
            lines.push(String::new());
        }
        if start > 0 || end < n {
            lines.push(t.fg("muted", &format!("  ({}/{n})", self.selected + 1)));
        }
        lines
    }
}

impl Component for ForkSelector {
    fn render(&mut self, width: usize) -> Lines {
        let mut lines = vec![String::new()];
        lines.extend(self.title.render(width).iter().cloned());
        lines.extend(self.hint.render(width).iter().cloned());
        lines.push(String::new());
        lines.push(border(&self.theme, width));
        lines.push(String::new());
        lines.extend(self.list(width));
        lines.push(String::new());
        lines.push(border(&self.theme, width));
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let kb = self.keys.clone();
        let n = self.messages.len();
        if kb.matches(data, "tui.select.up") {
            self.selected = if self.selected == 0 { n.saturating_sub(1) } else { self.selected - 1 };
        } else if kb.matches(data, "tui.select.down") {
            self.selected = if self.selected + 1 >= n { 0 } else { self.selected + 1 };
        } else if kb.matches(data, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(MAX_VISIBLE);
        } else if kb.matches(data, "tui.select.pageDown") {
            self.selected = (self.selected + MAX_VISIBLE).min(n.saturating_sub(1));
        } else if kb.matches(data, "tui.select.confirm") {
            if let Some((id, _)) = self.messages.get(self.selected) {
                *self.done.borrow_mut() = Some(Some(id.clone()));
            }
        } else if kb.matches(data, "tui.select.cancel") {
            *self.done.borrow_mut() = Some(None);
        }
    }

    fn invalidate(&mut self) {
        self.title.invalidate();
        self.hint.invalidate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selector(n: usize) -> ForkSelector {
        let messages = (1..=n).map(|i| (format!("e{i}"), format!("question {i}\nmore"))).collect();
        let theme = Rc::new(Theme::dark(pi_tui::ColorMode::Truecolor).expect("theme"));
        ForkSelector::new(theme, Rc::new(Keybindings::default()), messages, Rc::default())
    }

    #[test]
    fn the_newest_is_chosen_and_the_list_wraps_and_scrolls() {
        let mut s = selector(12);
        let lines: Vec<String> =
            s.render(40).iter().map(|l| pi_tui::ansi::strip_terminal_sequences(l).trim_end().to_owned()).collect();
        assert_eq!(lines[1], " Fork from Message");
        assert!(lines.contains(&"› question 12 more".to_owned()), "{lines:?}");
        assert_eq!(lines.iter().rev().nth(2).map(String::as_str), Some("  (12/12)"));
        s.handle_input("\x1b[B");
        assert_eq!(s.selected, 0, "down at the newest wraps to the oldest");
        s.handle_input("\x1b[A");
        assert_eq!(s.selected, 11);
        s.handle_input("\r");
        assert_eq!(*s.done.borrow(), Some(Some("e12".to_owned())));
    }
}
