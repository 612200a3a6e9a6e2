//! Editor tests (expectations marked as pi's come from pi-tui 1.6.0).
use super::*;
use crate::components::select_list::SelectItem;
use crate::component::{FAKE_CURSOR_END as E, FAKE_CURSOR_START as S};
use std::cell::RefCell;

fn theme() -> EditorTheme {
    let id: StyleFn = Rc::new(|s: &str| s.to_string());
    EditorTheme {
        border_color: id.clone(),
        select_list: SelectListTheme {
            selected_text: id.clone(),
            description: id.clone(),
            scroll_info: id.clone(),
            no_match: id,
        },
    }
}

#[test]
fn spec_editor() {
    let mut e = Editor::new(theme());
    e.set_text("hi");
    let border = "─".repeat(20);
    let unfocused = format!("hi{S} {E}{}", " ".repeat(17));
    assert_eq!(e.render(20).to_vec(), [border.clone(), unfocused, border.clone()]);
    e.set_focused(true);
    assert_eq!(e.render(20)[1], format!("hi{CURSOR_MARKER}{S} {E}{}", " ".repeat(17)));

    let submitted = Rc::new(RefCell::new(Vec::new()));
    let sink = submitted.clone();
    let mut e = Editor::new(theme());
    e.on_submit = Some(Box::new(move |t: &str| sink.borrow_mut().push(t.to_string())));
    for k in ["a", "b", "\x1b[13;2u", "c"] {
        e.handle_input(k);
    }
    assert_eq!(e.text(), "ab\nc");
    e.handle_input("\r");
    assert_eq!(submitted.borrow().as_slice(), ["ab\nc"]);
    assert_eq!(e.text(), "");

    let paste: Vec<String> = (1..=12).map(|i| format!("line {i}")).collect();
    e.handle_input(&format!("\x1b[200~{}\x1b[201~", paste.join("\n")));
    assert_eq!(e.text(), "[paste #1 +12 lines]");
    assert_eq!(e.expanded_text(), paste.join("\n"));
}

#[test]
fn wraps_scrolls_and_undoes() {
    let mut e = Editor::new(theme());
    e.set_text("one two three four five six");
    // Both expectations were produced by pi-tui 1.6.0's Editor.
    assert_eq!(
        e.render(12).to_vec(),
        ["────────────", "one two     ", "three four  ", &format!("five six{S} {E}   "), "────────────"]
    );
    e.set_text(&(1..=8).map(|i| i.to_string()).collect::<Vec<_>>().join("\n"));
    let lines = e.render(20).to_vec();
    assert_eq!(lines[0], "───── ↑ 1 more ─────");
    assert_eq!(lines[1], format!("2{}", " ".repeat(19)));
    assert_eq!(lines[7], format!("8{S} {E}{}", " ".repeat(18)));
    assert_eq!(lines.len(), 9);
    e.handle_input("x");
    e.handle_input("\x1f");
    assert!(e.text().ends_with("\n8"));
    e.handle_input("\x1b[A");
    e.handle_input("\x01");
    e.handle_input("\x0b");
    assert!(e.text().ends_with("6\n\n8"));
}

#[test]
fn history_browsing_restores_the_draft() {
    let mut e = Editor::new(theme());
    e.add_to_history("first");
    e.add_to_history("second");
    e.set_text("draft");
    e.handle_input("\x01"); // ctrl+a: column 0 on the first line
    e.handle_input("\x1b[A");
    assert_eq!(e.text(), "second");
    e.handle_input("\x1b[A");
    assert_eq!(e.text(), "first");
    e.handle_input("\x1b[B");
    e.handle_input("\x1b[B");
    assert_eq!(e.text(), "draft");
}

#[test]
fn jumps_to_characters() {
    let mut e = Editor::new(theme());
    e.set_text("abc abc\nxbz");
    e.handle_input("\x01");
    e.handle_input("\x1b[A"); // first line
    e.handle_input("\x01");
    e.handle_input("\x1d");
    e.handle_input("b");
    assert_eq!((e.state.line, e.state.col), (0, 1));
    e.handle_input("\x1d");
    e.handle_input("b");
    assert_eq!((e.state.line, e.state.col), (0, 5));
    e.handle_input("\x1d");
    e.handle_input("b");
    assert_eq!((e.state.line, e.state.col), (1, 1));
}

struct Slash;
impl AutocompleteProvider for Slash {
    fn suggestions(&self, prefix: &str) -> Option<(Vec<SelectItem>, usize)> {
        let items: Vec<SelectItem> = ["/help", "/history"]
            .iter()
            .filter(|c| c.starts_with(prefix))
            .map(|c| SelectItem::new(*c, *c, None))
            .collect();
        Some((items, prefix.len()))
    }
}

#[test]
fn autocomplete_hook() {
    let mut e = Editor::new(theme());
    e.set_autocomplete_provider(Rc::new(Slash));
    e.handle_input("/");
    e.handle_input("h");
    assert!(e.is_autocomplete_open());
    let lines = e.render(30).to_vec();
    assert_eq!(lines[3].trim_end(), "→ /help");
    e.handle_input("\x1b[B");
    e.handle_input("\t");
    assert_eq!(e.text(), "/history");
    assert!(!e.is_autocomplete_open());
}

/// A provider that sees the whole text and decides how an item is applied (pi's
/// `getSuggestions(lines, cursorLine, cursorCol)` and `applyCompletion`).
struct Dollar(RefCell<Vec<(usize, usize, usize)>>);
impl AutocompleteProvider for Dollar {
    fn suggestions(&self, _prefix: &str) -> Option<(Vec<SelectItem>, usize)> {
        None
    }

    fn suggestions_at(&self, lines: &[String], line: usize, col: usize) -> Option<(Vec<SelectItem>, usize)> {
        self.0.borrow_mut().push((lines.len(), line, col));
        lines[line][..col].ends_with('$').then(|| (vec![SelectItem::new("$alpha", "$alpha", None)], 1))
    }

    fn apply_completion(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        item: &SelectItem,
        prefix: &str,
    ) -> Option<(Vec<String>, usize, usize)> {
        let mut out = lines.to_vec();
        let start = col - prefix.len();
        let text = format!("<{}>", item.value[1..].to_uppercase());
        out[line].replace_range(start..col, &text);
        Some((out, line, start + text.len()))
    }
}

#[test]
fn autocomplete_sees_every_line_and_applies_as_the_provider_says() {
    let provider = Rc::new(Dollar(RefCell::new(Vec::new())));
    let mut e = Editor::new(theme());
    e.set_autocomplete_provider(provider.clone());
    for key in ["a", "\n", "b", " ", "$", "\t"] {
        e.handle_input(key);
    }
    assert!(e.is_autocomplete_open());
    assert_eq!(provider.0.borrow().last(), Some(&(2, 1, 3)));
    e.handle_input("\t");
    assert_eq!(e.text(), "a\nb <ALPHA>");
    assert_eq!((e.state.line, e.state.col), (1, 9));
}
