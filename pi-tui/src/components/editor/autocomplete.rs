//! The editor's autocomplete: the provider hook ([`AutocompleteProvider`], pi's
//! `AutocompleteProvider` with `getSuggestions` / `applyCompletion`) and the list shown under the
//! editor, opened, updated and accepted.

use std::rc::Rc;

use super::super::select_list::{SelectItem, SelectList};
use super::{Editor, State};

/// Supplies completions for the text before the cursor.
pub trait AutocompleteProvider {
    /// Items for `prefix` (the current line up to the cursor), and the length in bytes of the
    /// token they replace. `None` closes the list.
    fn suggestions(&self, prefix: &str) -> Option<(Vec<SelectItem>, usize)>;

    /// Items with the whole text in view (pi's `getSuggestions(lines, cursorLine, cursorCol)`;
    /// `col` in bytes): by default [`Self::suggestions`] of the line up to the cursor.
    fn suggestions_at(&self, lines: &[String], line: usize, col: usize) -> Option<(Vec<SelectItem>, usize)> {
        let current = lines.get(line).map(String::as_str).unwrap_or_default();
        self.suggestions(current.get(..col).unwrap_or(current))
    }

    /// pi's `applyCompletion`: the text and cursor (line, byte column) after accepting `item` in
    /// place of `prefix`, or `None` for the editor's own replacement.
    fn apply_completion(
        &self,
        _lines: &[String],
        _line: usize,
        _col: usize,
        _item: &SelectItem,
        _prefix: &str,
    ) -> Option<(Vec<String>, usize, usize)> {
        None
    }
}

impl Editor {
    /// Rows of autocomplete suggestions shown at once (pi's `autocompleteMaxVisible`).
    pub fn set_autocomplete_max_visible(&mut self, rows: usize) {
        self.autocomplete_max_visible = rows.max(1);
    }

    /// Install an autocomplete provider.
    pub fn set_autocomplete_provider(&mut self, provider: Rc<dyn AutocompleteProvider>) {
        self.autocomplete = Some(provider);
    }

    /// Whether the autocomplete list is open.
    pub fn is_autocomplete_open(&self) -> bool {
        self.autocomplete_list.is_some()
    }

    pub(super) fn update_autocomplete(&mut self) {
        let Some(provider) = self.autocomplete.clone() else {
            return;
        };
        let prefix = self.current()[..self.state.col].to_string();
        match provider.suggestions_at(&self.state.lines, self.state.line, self.state.col) {
            Some((items, replace)) if !items.is_empty() => {
                let mut list = SelectList::new(items, self.autocomplete_max_visible, self.theme.select_list.clone());
                if prefix.starts_with('/') {
                    // pi's SLASH_COMMAND_SELECT_LIST_LAYOUT.
                    list.set_layout(super::super::select_list::SelectListLayout {
                        min_primary_column_width: Some(12),
                        max_primary_column_width: Some(32),
                    });
                }
                list.set_keybindings(self.keys.clone());
                self.autocomplete_list = Some((list, replace));
            }
            _ => self.autocomplete_list = None,
        }
    }

    pub(super) fn accept_autocomplete(&mut self) {
        let Some((list, replace)) = self.autocomplete_list.take() else {
            return;
        };
        if let Some(item) = list.selected_item() {
            self.push_undo();
            let col = self.state.col;
            let from = col.saturating_sub(replace);
            if !self.current().is_char_boundary(from) {
                tracing::warn!(replace, "autocomplete replacement length is not on a character boundary");
                return;
            }
            let l = self.state.line;
            let applied = self.autocomplete.clone().and_then(|provider| {
                let prefix = self.current()[from..col].to_owned();
                provider.apply_completion(&self.state.lines, l, col, item, &prefix)
            });
            match applied {
                Some((lines, line, col)) if !lines.is_empty() => {
                    let line = line.min(lines.len() - 1);
                    let mut col = col.min(lines[line].len());
                    while !lines[line].is_char_boundary(col) {
                        col -= 1;
                    }
                    self.state = State { lines, line, col };
                }
                _ => {
                    self.state.lines[l].replace_range(from..col, &item.value);
                    self.state.col = from + item.value.len();
                }
            }
            self.changed();
        }
    }
}
