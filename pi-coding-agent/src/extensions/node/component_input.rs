//! Input the UI hands to the JavaScript host synchronously: raw terminal input for the
//! extensions' `onTerminalInput` listeners (`terminal.input`) and the text before the cursor for
//! their completion providers (`autocomplete.suggest`, with pi-rs's own suggestions as the
//! innermost provider's). A host that is gone or fails passes the input on and adds nothing.

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

impl AutocompleteProvider for JsCompletions {
    fn suggestions(&self, prefix: &str) -> Option<(Vec<SelectItem>, usize)> {
        let own = self.inner.suggestions(prefix);
        let Some(c) = self.conn.upgrade().filter(|c| !c.is_dead()) else { return own };
        let base = own.as_ref().map(|(items, n)| {
            let start = prefix.len().saturating_sub(*n);
            json!({"items": items.iter().map(item_json).collect::<Vec<_>>(), "prefix": prefix.get(start..).unwrap_or("")})
        });
        let Ok(answer) =
            c.call_blocking("autocomplete.suggest", json!({"text": prefix, "base": base}), c.render_timeout)
        else {
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
        (!items.is_empty()).then_some((items, replaced.min(prefix.len())))
    }
}
