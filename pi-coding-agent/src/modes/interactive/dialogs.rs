//! Dialogs shown in place of the editor: pi's extension selector (also used by `/model`,
//! `/resume`, `/thinking` with a search line), the input dialog and the confirm dialog.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::keys::{Keybindings, decode_printable_key};
use pi_tui::theme::bold;
use pi_tui::{Component, Input, Lines, Theme};

/// The result cell a dialog fills: `Some(Some(value))` chosen, `Some(None)` cancelled.
pub(crate) type DoneCell = Rc<RefCell<Option<Option<String>>>>;

pub(crate) fn border(theme: &Theme, width: usize) -> String {
    theme.fg("border", &"─".repeat(width.max(1)))
}

fn pad(text: &str) -> String {
    format!(" {text}")
}

/// A list of options with a title (pi's `ExtensionSelectorComponent`), optionally searchable.
pub(crate) struct Selector {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    title: String,
    /// (label, value)
    options: Vec<(String, String)>,
    selected: usize,
    search: Option<String>,
    done: DoneCell,
}

impl Selector {
    pub(crate) fn new(
        theme: Rc<Theme>,
        keys: Rc<Keybindings>,
        title: &str,
        options: Vec<(String, String)>,
        searchable: bool,
        done: DoneCell,
    ) -> Self {
        Selector {
            theme,
            keys,
            title: title.to_owned(),
            options,
            selected: 0,
            search: searchable.then(String::new),
            done,
        }
    }

    /// Starts with this option selected (by value).
    pub(crate) fn select_value(&mut self, value: &str) {
        if let Some(i) = self.visible().iter().position(|(_, v)| v == value) {
            self.selected = i;
        }
    }

    fn visible(&self) -> Vec<(String, String)> {
        match &self.search {
            Some(q) if !q.is_empty() => {
                let q = q.to_lowercase();
                self.options
                    .iter()
                    .filter(|(l, v)| l.to_lowercase().contains(&q) || v.to_lowercase().contains(&q))
                    .cloned()
                    .collect()
            }
            _ => self.options.clone(),
        }
    }
}

impl Component for Selector {
    fn render(&mut self, width: usize) -> Lines {
        let t = &self.theme;
        let mut lines = vec![border(t, width), String::new()];
        // pi's title is one `Text`: each of its lines padded, all in the title style.
        lines.extend(self.title.split('\n').map(|l| pad(&t.fg("accent", &bold(l)))));
        lines.push(String::new());
        if let Some(q) = &self.search {
            lines.push(pad(&format!("{}{q}{}", t.fg("muted", "Search: "), pi_tui::render_fake_cursor(" "))));
            lines.push(String::new());
        }
        let visible = self.visible();
        let max = 10usize;
        let n = visible.len();
        let start = self.selected.saturating_sub(max / 2).min(n.saturating_sub(max));
        let end = (start + max).min(n);
        for (i, (label, _)) in visible.iter().enumerate().take(end).skip(start) {
            let row = if i == self.selected {
                format!("{}{}", t.fg("accent", "→ "), t.fg("accent", label))
            } else {
                format!("  {}", t.fg("text", label))
            };
            lines.push(pad(&row));
        }
        if n == 0 {
            lines.push(pad(&t.fg("muted", "  No matches")));
        }
        if start > 0 || end < n {
            lines.push(t.fg("muted", &format!("  ({}/{n})", self.selected + 1)));
        }
        lines.push(String::new());
        let k = |a: &str| self.keys.keys(a).join("/");
        let hint = format!(
            "{}{}  {}{}  {}{}",
            t.fg("dim", "↑↓"),
            t.fg("muted", " navigate"),
            t.fg("dim", &k("tui.select.confirm")),
            t.fg("muted", " select"),
            t.fg("dim", &k("tui.select.cancel")),
            t.fg("muted", " cancel")
        );
        lines.push(pad(&hint));
        lines.push(String::new());
        lines.push(border(t, width));
        let lines: Vec<String> =
            lines.into_iter().map(|l| pi_tui::ansi::truncate_to_width_with(&l, width, "", false)).collect();
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let kb = self.keys.clone();
        let n = self.visible().len();
        if kb.matches(data, "tui.select.up") {
            self.selected = self.selected.saturating_sub(1);
        } else if kb.matches(data, "tui.select.down") {
            self.selected = (self.selected + 1).min(n.saturating_sub(1));
        } else if kb.matches(data, "tui.select.confirm") || data == "\n" {
            if let Some((_, v)) = self.visible().get(self.selected) {
                *self.done.borrow_mut() = Some(Some(v.clone()));
            }
        } else if kb.matches(data, "tui.select.cancel") {
            *self.done.borrow_mut() = Some(None);
        } else if let Some(q) = self.search.as_mut() {
            if kb.matches(data, "tui.editor.deleteCharBackward") {
                q.pop();
                self.selected = 0;
            } else if let Some(ch) = decode_printable_key(data).or_else(|| {
                (data.chars().count() == 1 && data.chars().all(|c| !c.is_control())).then(|| data.to_owned())
            }) {
                q.push_str(&ch);
                self.selected = 0;
            }
        } else if data == "k" {
            self.selected = self.selected.saturating_sub(1);
        } else if data == "j" {
            self.selected = (self.selected + 1).min(n.saturating_sub(1));
        }
    }
}

/// A one-line input with a title (pi's `ExtensionInputComponent`).
pub(crate) struct InputDialog {
    theme: Rc<Theme>,
    title: String,
    input: Rc<RefCell<Input>>,
}

impl InputDialog {
    pub(crate) fn new(theme: Rc<Theme>, title: &str, placeholder: Option<&str>, prefill: &str, done: DoneCell) -> Self {
        let mut input = Input::new("", placeholder.unwrap_or(""));
        input.set_value(prefill);
        let (d1, d2) = (done.clone(), done);
        input.on_submit = Some(Box::new(move |v: &str| *d1.borrow_mut() = Some(Some(v.to_owned()))));
        input.on_escape = Some(Box::new(move || *d2.borrow_mut() = Some(None)));
        input.set_focused(true);
        InputDialog { theme, title: title.to_owned(), input: Rc::new(RefCell::new(input)) }
    }
}

impl Component for InputDialog {
    fn render(&mut self, width: usize) -> Lines {
        let t = &self.theme;
        let mut lines = vec![border(t, width), String::new(), pad(&t.fg("accent", &bold(&self.title))), String::new()];
        let inner = self.input.borrow_mut().render(width.saturating_sub(2).max(1));
        lines.extend(inner.iter().map(|l| pad(l)));
        lines.push(String::new());
        lines.push(pad(&format!(
            "{}{}  {}{}",
            t.fg("dim", "enter"),
            t.fg("muted", " submit"),
            t.fg("dim", "escape"),
            t.fg("muted", " cancel")
        )));
        lines.push(String::new());
        lines.push(border(t, width));
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        self.input.borrow_mut().handle_input(data);
    }

    fn set_focused(&mut self, focused: bool) {
        self.input.borrow_mut().set_focused(focused);
    }
}

/// pi's `DynamicBorder`: a full-width line in the theme's `border` colour.
pub(crate) struct Border(pub(crate) Rc<Theme>);

impl Component for Border {
    fn render(&mut self, width: usize) -> Lines {
        vec![border(&self.0, width)].into()
    }
}
