//! The search box (pi's `AltScreenSearchComponent`): a bordered input with the result count
//! ("3/12", "No matches") and the previous/next buttons in its bottom border, which name the
//! first key of `tui.altScreen.searchPrevious` and `tui.altScreen.searchNext`.

use std::rc::Rc;

use crate::ansi::{truncate_to_width_with, visible_width};
use crate::component::{Component, Lines};
use crate::components::Input;
use crate::keys::Keybindings;

/// How a navigation button is drawn: its text and whether the pointer is on it.
pub type ButtonStyle = Rc<dyn Fn(&str, bool) -> String>;

/// A direction of search navigation: the previous or the next match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The previous match (pi's `-1`).
    Previous,
    /// The next match (pi's `1`).
    Next,
}

/// The search overlay's component.
pub struct SearchBox {
    input: Input,
    keys: Rc<Keybindings>,
    button_style: ButtonStyle,
    result_count: usize,
    result_index: Option<usize>,
    previous_button: Option<(usize, usize)>,
    next_button: Option<(usize, usize)>,
    hovered: Option<Direction>,
    query_change: Option<String>,
}

/// pi's `formatKey`: each `+`-separated part capitalised (`shift+enter` → `Shift+Enter`), or
/// `Unbound`.
fn format_key(key: Option<&String>) -> String {
    let Some(key) = key else { return "Unbound".to_owned() };
    key.split('+')
        .map(|part| {
            if cfg!(target_os = "macos") && part.eq_ignore_ascii_case("alt") {
                return "Option".to_owned();
            }
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
        })
        .collect::<Vec<_>>()
        .join("+")
}

impl SearchBox {
    /// An empty box ("Find in transcript") whose buttons name `keys`' navigation keys.
    pub fn new(keys: Rc<Keybindings>, button_style: ButtonStyle) -> Self {
        let mut input = Input::new(" ", "Find in transcript");
        input.set_placeholder_style(Rc::new(|s: &str| format!("\x1b[2m{s}\x1b[22m")));
        input.set_keybindings(keys.clone());
        SearchBox {
            input,
            keys,
            button_style,
            result_count: 0,
            result_index: None,
            previous_button: None,
            next_button: None,
            hovered: None,
            query_change: None,
        }
    }

    /// The query typed so far.
    pub fn query(&self) -> &str {
        self.input.value()
    }

    /// The query after the last key that changed it, once (pi's `onQueryChange`).
    pub fn take_query_change(&mut self) -> Option<String> {
        self.query_change.take()
    }

    /// Replace how the buttons are drawn (the theme changed).
    pub fn set_button_style(&mut self, style: ButtonStyle) {
        self.button_style = style;
    }

    /// pi's `setResult`: the selected match (`None`: none) and how many there are.
    pub fn set_result(&mut self, index: Option<usize>, count: usize) {
        self.result_index = index;
        self.result_count = count;
    }

    /// The button at a cell of the box (row 2 is the bottom border), from the last render.
    pub fn navigation_direction_at(&self, row: usize, column: usize) -> Option<Direction> {
        if row != 2 {
            return None;
        }
        let on = |b: Option<(usize, usize)>| b.is_some_and(|(start, end)| column >= start && column < end);
        if on(self.previous_button) {
            Some(Direction::Previous)
        } else if on(self.next_button) {
            Some(Direction::Next)
        } else {
            None
        }
    }

    /// Mark the button under the pointer; whether that changed (a frame is due).
    pub fn set_hovered(&mut self, direction: Option<Direction>) -> bool {
        if direction == self.hovered {
            return false;
        }
        self.hovered = direction;
        true
    }

    fn result_text(&self) -> String {
        if self.input.value().is_empty() {
            String::new()
        } else if self.result_count == 0 {
            "No matches".to_owned()
        } else {
            format!("{}/{}", self.result_index.map_or(0, |i| i + 1), self.result_count)
        }
    }
}

impl Component for SearchBox {
    fn render(&mut self, width: usize) -> Lines {
        let safe_width = width.max(1);
        let inner = safe_width.saturating_sub(2);
        let previous_key = format_key(self.keys.keys("tui.altScreen.searchPrevious").first());
        let next_key = format_key(self.keys.keys("tui.altScreen.searchNext").first());
        let visible_result = truncate_to_width_with(&self.result_text(), inner.saturating_sub(3), "", false);
        let result =
            if visible_result.is_empty() { String::new() } else { format!("\x1b[2m {visible_result} \x1b[22m") };
        let input_width = inner.saturating_sub(visible_width(&result));
        let rendered = self.input.render(input_width.max(1));
        let input_line = truncate_to_width_with(rendered.first().map_or("", |l| l.as_str()), input_width, "", false);
        let padding = " ".repeat(input_width.saturating_sub(visible_width(&input_line)));
        let content = format!("{input_line}{padding}{result}");
        let (mut previous, mut next, mut separator) = (format!("↑ {previous_key}"), format!("↓ {next_key}"), " · ");
        const OUTER_GAP: usize = 1;
        let available = inner.saturating_sub(OUTER_GAP * 2 + 1);
        let mut controls = visible_width(&previous) + visible_width(separator) + visible_width(&next);
        if controls > available {
            (previous, next, separator) = ("↑".to_owned(), "↓".to_owned(), " ");
            controls = 3;
        }
        let show = controls <= available;
        let buttons = if show {
            let style = &self.button_style;
            format!(
                "{}{separator}{}",
                style(&previous, self.hovered == Some(Direction::Previous)),
                style(&next, self.hovered == Some(Direction::Next))
            )
        } else {
            String::new()
        };
        let gaps = if show { OUTER_GAP * 2 } else { 0 };
        let right_rule = usize::from(!buttons.is_empty() && inner > controls + gaps);
        let left_rule = inner.saturating_sub(if show { controls } else { 0 } + gaps + right_rule);
        if show {
            let previous_start = 1 + left_rule + OUTER_GAP;
            let previous_end = previous_start + visible_width(&previous);
            let next_start = previous_end + visible_width(separator);
            self.previous_button = Some((previous_start, previous_end));
            self.next_button = Some((next_start, next_start + visible_width(&next)));
        } else {
            (self.previous_button, self.next_button) = (None, None);
        }
        if safe_width == 1 {
            return vec!["┌".to_owned(), "│".to_owned(), "└".to_owned()].into();
        }
        let gap = if buttons.is_empty() { "" } else { " " };
        vec![
            format!("┌{}┐", "─".repeat(inner)),
            format!("│{content}│"),
            format!("└{}{gap}{buttons}{gap}{}┘", "─".repeat(left_rule), "─".repeat(right_rule)),
        ]
        .into()
    }

    fn handle_input(&mut self, data: &str) {
        let previous = self.input.value().to_owned();
        self.input.handle_input(data);
        if self.input.value() != previous {
            self.query_change = Some(self.input.value().to_owned());
        }
    }

    fn invalidate(&mut self) {
        self.input.invalidate();
    }

    fn set_focused(&mut self, focused: bool) {
        self.input.set_focused(focused);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ansi::strip_terminal_sequences;

    fn plain(lines: &Lines) -> Vec<String> {
        lines.iter().map(|l| strip_terminal_sequences(l).replace(crate::CURSOR_MARKER, "")).collect()
    }

    #[test]
    fn an_empty_box_shows_the_placeholder_and_the_default_keys() {
        let mut b = SearchBox::new(Rc::new(Keybindings::default()), Rc::new(|s: &str, _| s.to_owned()));
        b.set_focused(true);
        let lines = b.render(40);
        assert_eq!(
            plain(&lines),
            [
                "┌──────────────────────────────────────┐",
                "│ Find in transcript                   │",
                "└──────────── ↑ Shift+Enter · ↓ Enter ─┘",
            ]
        );
        assert_eq!(b.navigation_direction_at(2, 14), Some(Direction::Previous));
        assert_eq!(b.navigation_direction_at(2, 27), None, "the separator");
        assert_eq!(b.navigation_direction_at(2, 30), Some(Direction::Next));
        assert_eq!(b.navigation_direction_at(1, 30), None);
    }

    #[test]
    fn typing_reports_the_query_and_the_result_shows_at_the_right() {
        let mut b = SearchBox::new(Rc::new(Keybindings::default()), Rc::new(|s: &str, _| s.to_owned()));
        b.set_focused(true);
        b.handle_input("a");
        assert_eq!(b.take_query_change().as_deref(), Some("a"));
        assert_eq!(b.take_query_change(), None);
        b.handle_input("\x1b[D");
        assert_eq!(b.take_query_change(), None, "moving the cursor changes no query");
        b.set_result(Some(2), 12);
        assert_eq!(plain(&b.render(32))[1], "│ a                       3/12 │");
        b.set_result(None, 0);
        assert_eq!(plain(&b.render(32))[1], "│ a                 No matches │");
        // Too narrow for the key names: bare arrows.
        assert_eq!(plain(&b.render(12))[2], "└──── ↑ ↓ ─┘");
    }
}
