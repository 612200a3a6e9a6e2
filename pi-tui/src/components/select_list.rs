//! `SelectList`: a scrolling list of items with optional descriptions.

use std::rc::Rc;

use crate::ansi::{truncate_to_width_with, visible_width};
use crate::component::{Component, Lines, StyleFn};
use crate::keys::Keybindings;

const DEFAULT_PRIMARY_COLUMN_WIDTH: usize = 32;
const PRIMARY_COLUMN_GAP: usize = 2;
const MIN_DESCRIPTION_WIDTH: usize = 10;

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectItem {
    /// The value (used for filtering and when no label is set).
    pub value: String,
    /// Display label (falls back to `value` when empty).
    pub label: String,
    /// Optional description shown in a second column.
    pub description: Option<String>,
}

impl SelectItem {
    /// An item with a label and optional description.
    pub fn new(value: impl Into<String>, label: impl Into<String>, description: Option<&str>) -> Self {
        Self { value: value.into(), label: label.into(), description: description.map(str::to_string) }
    }
}

/// Styles of a select list.
#[derive(Clone)]
pub struct SelectListTheme {
    /// The whole selected row.
    pub selected_text: StyleFn,
    /// Descriptions of unselected rows.
    pub description: StyleFn,
    /// The `(i/n)` scroll line.
    pub scroll_info: StyleFn,
    /// The "No matching commands" line.
    pub no_match: StyleFn,
}

/// Primary column bounds (pi's `SelectListLayoutOptions`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SelectListLayout {
    /// Minimum primary column width.
    pub min_primary_column_width: Option<usize>,
    /// Maximum primary column width.
    pub max_primary_column_width: Option<usize>,
}

type ItemCallback = Box<dyn FnMut(&SelectItem)>;

/// A list with a `→ ` marker on the selected row, a window centred on the selection, wrap-around
/// up/down, page keys, Enter to select and Escape/Ctrl+C to cancel.
pub struct SelectList {
    items: Vec<SelectItem>,
    filtered: Vec<SelectItem>,
    selected: usize,
    max_visible: usize,
    theme: SelectListTheme,
    layout: SelectListLayout,
    keys: Rc<Keybindings>,
    /// Called with the chosen item on Enter.
    pub on_select: Option<ItemCallback>,
    /// Called on Escape / Ctrl+C.
    pub on_cancel: Option<Box<dyn FnMut()>>,
    /// Called when the selection moves.
    pub on_selection_change: Option<ItemCallback>,
}

fn single_line(s: &str) -> String {
    let mut out = String::new();
    let mut in_break = false;
    for c in s.chars() {
        if c == '\r' || c == '\n' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
        } else {
            out.push(c);
            in_break = false;
        }
    }
    out.trim().to_string()
}

impl SelectList {
    /// A list showing at most `max_visible` items.
    pub fn new(items: Vec<SelectItem>, max_visible: usize, theme: SelectListTheme) -> Self {
        Self {
            filtered: items.clone(),
            items,
            selected: 0,
            max_visible,
            theme,
            layout: SelectListLayout::default(),
            keys: Rc::new(Keybindings::default()),
            on_select: None,
            on_cancel: None,
            on_selection_change: None,
        }
    }

    /// Set the primary column bounds.
    pub fn set_layout(&mut self, layout: SelectListLayout) {
        self.layout = layout;
    }

    /// Use custom keybindings.
    pub fn set_keybindings(&mut self, keys: Rc<Keybindings>) {
        self.keys = keys;
    }

    /// Keep items whose value starts with `filter` (case-insensitive); selects the first.
    pub fn set_filter(&mut self, filter: &str) {
        let f = filter.to_lowercase();
        self.filtered = self.items.iter().filter(|i| i.value.to_lowercase().starts_with(&f)).cloned().collect();
        self.selected = 0;
    }

    /// Select an index (clamped).
    pub fn set_selected_index(&mut self, index: usize) {
        self.selected = index.min(self.filtered.len().saturating_sub(1));
    }

    /// The selected item.
    pub fn selected_item(&self) -> Option<&SelectItem> {
        self.filtered.get(self.selected)
    }

    /// How many items pass the filter.
    pub fn visible_count(&self) -> usize {
        self.filtered.len()
    }

    fn visible_range(&self) -> (usize, usize) {
        let n = self.filtered.len() as i64;
        let start =
            (self.selected as i64 - (self.max_visible / 2) as i64).min(n - self.max_visible as i64).max(0) as usize;
        (start, (start + self.max_visible).min(self.filtered.len()))
    }

    fn display(item: &SelectItem) -> &str {
        if item.label.is_empty() { &item.value } else { &item.label }
    }

    fn primary_column_width(&self) -> usize {
        let raw_min = self
            .layout
            .min_primary_column_width
            .or(self.layout.max_primary_column_width)
            .unwrap_or(DEFAULT_PRIMARY_COLUMN_WIDTH);
        let raw_max = self
            .layout
            .max_primary_column_width
            .or(self.layout.min_primary_column_width)
            .unwrap_or(DEFAULT_PRIMARY_COLUMN_WIDTH);
        let (min, max) = (raw_min.min(raw_max).max(1), raw_min.max(raw_max).max(1));
        let widest =
            self.filtered.iter().map(|i| visible_width(Self::display(i)) + PRIMARY_COLUMN_GAP).max().unwrap_or(0);
        widest.clamp(min, max)
    }

    fn render_item(&self, item: &SelectItem, selected: bool, width: usize, primary: usize) -> String {
        let prefix = if selected { "→ " } else { "  " };
        let prefix_width = 2;
        let desc = item.description.as_deref().map(single_line).filter(|d| !d.is_empty());
        if let Some(desc) = desc
            && width > 40
        {
            let eff = primary.min(width.saturating_sub(prefix_width + 4)).max(1);
            let max_primary = eff.saturating_sub(PRIMARY_COLUMN_GAP).max(1);
            let value = truncate_to_width_with(Self::display(item), max_primary, "", false);
            let vw = visible_width(&value);
            let spacing = " ".repeat(eff.saturating_sub(vw).max(1));
            let start = prefix_width + vw + spacing.len();
            let remaining = width as i64 - start as i64 - 2;
            if remaining > MIN_DESCRIPTION_WIDTH as i64 {
                let d = truncate_to_width_with(&desc, remaining as usize, "", false);
                if selected {
                    return (self.theme.selected_text)(&format!("{prefix}{value}{spacing}{d}"));
                }
                return format!("{prefix}{value}{}", (self.theme.description)(&format!("{spacing}{d}")));
            }
        }
        let max = width.saturating_sub(prefix_width + 2);
        let value = truncate_to_width_with(Self::display(item), max, "", false);
        if selected { (self.theme.selected_text)(&format!("{prefix}{value}")) } else { format!("{prefix}{value}") }
    }

    fn notify(&mut self) {
        if let (Some(item), Some(cb)) = (self.filtered.get(self.selected), self.on_selection_change.as_mut()) {
            cb(item);
        }
    }
}

impl Component for SelectList {
    fn captures_viewport_input(&self) -> bool {
        true
    }

    fn render(&mut self, width: usize) -> Lines {
        if self.filtered.is_empty() {
            return vec![(self.theme.no_match)("  No matching commands")].into();
        }
        let primary = self.primary_column_width();
        let (start, end) = self.visible_range();
        let mut lines: Vec<String> =
            (start..end).map(|i| self.render_item(&self.filtered[i], i == self.selected, width, primary)).collect();
        if start > 0 || end < self.filtered.len() {
            let info = format!("  ({}/{})", self.selected + 1, self.filtered.len());
            lines.push((self.theme.scroll_info)(&truncate_to_width_with(&info, width.saturating_sub(2), "", false)));
        }
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let n = self.filtered.len();
        let kb = self.keys.clone();
        if kb.matches(data, "tui.select.up") {
            if n > 0 {
                self.selected = if self.selected == 0 { n - 1 } else { self.selected - 1 };
                self.notify();
            }
        } else if kb.matches(data, "tui.select.down") {
            if n > 0 {
                self.selected = if self.selected + 1 >= n { 0 } else { self.selected + 1 };
                self.notify();
            }
        } else if kb.matches(data, "tui.select.pageUp") || kb.matches(data, "tui.select.pageDown") {
            let dir: i64 = if kb.matches(data, "tui.select.pageUp") { -1 } else { 1 };
            let page = (self.selected as i64 + dir * self.max_visible as i64).clamp(0, n as i64 - 1).max(0) as usize;
            if n > 0 && page != self.selected {
                self.selected = page;
                self.notify();
            }
        } else if kb.matches(data, "tui.select.confirm") {
            if let (Some(item), Some(cb)) = (self.filtered.get(self.selected).cloned(), self.on_select.as_mut()) {
                cb(&item);
            }
        } else if kb.matches(data, "tui.select.cancel")
            && let Some(cb) = self.on_cancel.as_mut()
        {
            cb();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme() -> SelectListTheme {
        SelectListTheme {
            selected_text: Rc::new(|s: &str| format!("\x1b[36m{s}\x1b[39m")),
            description: Rc::new(|s: &str| format!("\x1b[90m{s}\x1b[39m")),
            scroll_info: Rc::new(|s: &str| format!("\x1b[90m{s}\x1b[39m")),
            no_match: Rc::new(|s: &str| format!("\x1b[90m{s}\x1b[39m")),
        }
    }

    fn items() -> Vec<SelectItem> {
        vec![
            SelectItem::new("alpha", "Alpha", Some("first")),
            SelectItem::new("beta", "Beta", Some("second")),
            SelectItem::new("gamma", "Gamma", None),
            SelectItem::new("delta", "Delta", None),
        ]
    }

    #[test]
    fn spec_select_list() {
        let mut l = SelectList::new(items(), 3, theme());
        assert_eq!(
            &l.render(50)[..],
            [
                "\x1b[36m→ Alpha                           first\x1b[39m",
                "  Beta\x1b[90m                            second\x1b[39m",
                "  Gamma",
                "\x1b[90m  (1/4)\x1b[39m"
            ]
        );
        assert_eq!(&l.render(20)[..], ["\x1b[36m→ Alpha\x1b[39m", "  Beta", "  Gamma", "\x1b[90m  (1/4)\x1b[39m"]);
        l.handle_input("\x1b[A");
        assert_eq!(l.selected_item().map(|i| i.value.as_str()), Some("delta"));
        l.set_filter("ZZ");
        assert_eq!(&l.render(20)[..], ["\x1b[90m  No matching commands\x1b[39m"]);
    }
}
