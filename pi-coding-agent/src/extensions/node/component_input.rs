//! Input the UI hands to the JavaScript host synchronously: raw terminal input for the
//! extensions' `onTerminalInput` listeners (`terminal.input`), the editor's lines and cursor for
//! their completion providers (`autocomplete.suggest`, with pi-rs's own suggestions as the
//! innermost provider's), and an accepted item for their `applyCompletion` (`autocomplete.apply`).
//! A host that is gone or fails passes the input on and adds nothing.

use std::rc::Rc;
use std::sync::Weak;

use pi_tui::components::AutocompleteProvider;
use pi_tui::{InputAction, SelectItem};
use serde_json::{Value, json};

use super::process::Connection;
use crate::ui::{AutocompleteWrapper, TerminalInputListener};

/// The host's listeners as one UI listener.
pub(crate) fn input_listener(conn: Weak<Connection>) -> TerminalInputListener {
    std::sync::Arc::new(move |data: &str| {
        let Some(c) = conn.upgrade().filter(|c| !c.is_dead()) else { return InputAction::Pass };
        let Ok(answer) = c.call_blocking("terminal.input", json!({"data": data}), c.render_timeout) else {
            return InputAction::Pass;
        };
        if answer.get("consume").and_then(Value::as_bool).unwrap_or(false) {
            return InputAction::Consume;
        }
        match answer.get("data").and_then(Value::as_str) {
            Some(next) if next != data => InputAction::Replace(next.to_owned()),
            _ => InputAction::Pass,
        }
    })
}

/// Wraps the UI's provider with the host's.
pub(crate) fn completions_wrapper(conn: Weak<Connection>) -> AutocompleteWrapper {
    std::sync::Arc::new(move |inner: Rc<dyn AutocompleteProvider>| {
        Rc::new(JsCompletions { inner, conn: conn.clone() }) as Rc<dyn AutocompleteProvider>
    })
}

/// The host's completion providers around the UI's own.
struct JsCompletions {
    inner: Rc<dyn AutocompleteProvider>,
    conn: Weak<Connection>,
}

fn item_json(item: &SelectItem) -> Value {
    json!({"value": item.value, "label": item.label, "description": item.description})
}

/// A byte column of `line` as JavaScript counts it (UTF-16 units).
fn js_col(line: &str, col: usize) -> usize {
    line.get(..col).unwrap_or(line).encode_utf16().count()
}

/// A JavaScript column (UTF-16 units) of `line` as a byte column.
fn byte_col(line: &str, units: usize) -> usize {
    let mut seen = 0;
    for (at, ch) in line.char_indices() {
        if seen >= units {
            return at;
        }
        seen += ch.len_utf16();
    }
    line.len()
}

impl JsCompletions {
    /// The host's providers' items for the text and cursor, pi-rs's own (`own`) innermost.
    fn ask(&self, lines: &[String], line: usize, col: usize) -> Option<(Vec<SelectItem>, usize)> {
        let current = lines.get(line).map(String::as_str).unwrap_or_default();
        let before = current.get(..col).unwrap_or(current);
        let own = self.inner.suggestions_at(lines, line, col);
        let Some(c) = self.conn.upgrade().filter(|c| !c.is_dead()) else { return own };
        let base = own.as_ref().map(|(items, n)| {
            let start = before.len().saturating_sub(*n);
            json!({"items": items.iter().map(item_json).collect::<Vec<_>>(), "prefix": before.get(start..).unwrap_or("")})
        });
        let params = json!({"lines": lines, "cursorLine": line, "cursorCol": js_col(current, col), "base": base});
        let Ok(answer) = c.call_blocking("autocomplete.suggest", params, c.render_timeout) else {
            return own;
        };
        let items: Vec<SelectItem> = answer
            .get("items")
            .and_then(Value::as_array)?
            .iter()
            .map(|i| {
                let value = i.get("value").and_then(Value::as_str).unwrap_or_default();
                let label = i.get("label").and_then(Value::as_str).unwrap_or(value);
                SelectItem::new(value, label, i.get("description").and_then(Value::as_str))
            })
            .collect();
        let replaced = answer.get("prefix").and_then(Value::as_str).unwrap_or_default().len();
        (!items.is_empty()).then_some((items, replaced.min(before.len())))
    }
}

impl AutocompleteProvider for JsCompletions {
    fn suggestions(&self, prefix: &str) -> Option<(Vec<SelectItem>, usize)> {
        self.ask(&[prefix.to_owned()], 0, prefix.len())
    }

    fn suggestions_at(&self, lines: &[String], line: usize, col: usize) -> Option<(Vec<SelectItem>, usize)> {
        self.ask(lines, line, col)
    }

    /// The host's providers' `applyCompletion`; `None` when the innermost one (pi-rs's own
    /// replacement) decided, or the host is gone.
    fn apply_completion(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        item: &SelectItem,
        prefix: &str,
    ) -> Option<(Vec<String>, usize, usize)> {
        let c = self.conn.upgrade().filter(|c| !c.is_dead())?;
        let current = lines.get(line).map(String::as_str).unwrap_or_default();
        let params = json!({"lines": lines, "cursorLine": line, "cursorCol": js_col(current, col),
            "item": item_json(item), "prefix": prefix});
        let answer = c.call_blocking("autocomplete.apply", params, c.render_timeout).ok()?;
        let out: Vec<String> =
            answer.get("lines")?.as_array()?.iter().map(|l| l.as_str().unwrap_or_default().to_owned()).collect();
        let line = answer.get("cursorLine").and_then(Value::as_u64).unwrap_or(0) as usize;
        let units = answer.get("cursorCol").and_then(Value::as_u64).unwrap_or(0) as usize;
        let col = out.get(line).map_or(0, |l| byte_col(l, units));
        Some((out, line, col))
    }
}
