//! pi-tui's `SettingsList` and pi's settings submenus (`SelectSubmenu`, `SteppedSubmenu`), as
//! the `/settings` editor draws them: a searchable list of `label  value` rows where Enter or
//! Space cycles the value or opens a submenu, the selected row's description under it.

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::ansi::{truncate_to_width_with, visible_width, wrap_text_with_ansi};
use pi_tui::components::{SelectItem, SelectListLayout};
use pi_tui::keys::Keybindings;
use pi_tui::theme::bold;
use pi_tui::{Component, Input, Lines, SelectList, Theme};

/// Changes the list reports: `(item id, new value)`, drained by the app after each key.
pub(crate) type Changes = Rc<RefCell<Vec<(String, String)>>>;

/// A submenu shown in place of the list until it finishes.
pub(crate) trait Submenu: Component {
    /// `Some(Some(value))` chosen, `Some(None)` left without a value, `None` still open.
    fn finished(&mut self) -> Option<Option<String>>;
}

/// Builds an item's submenu from its current value.
pub(crate) type SubmenuFactory = Rc<dyn Fn(&str) -> Box<dyn Submenu>>;

/// One row of a [`SettingsList`].
pub(crate) struct SettingItem {
    pub(crate) id: &'static str,
    pub(crate) label: String,
    pub(crate) description: String,
    pub(crate) current: String,
    /// The values Enter cycles through (empty for a submenu item).
    pub(crate) values: Vec<String>,
    pub(crate) submenu: Option<SubmenuFactory>,
}

impl SettingItem {
    /// A row cycling through `values`.
    pub(crate) fn cycle(id: &'static str, label: &str, description: &str, current: String, values: &[&str]) -> Self {
        SettingItem {
            id,
            label: label.to_owned(),
            description: description.to_owned(),
            current,
            values: values.iter().map(|v| (*v).to_owned()).collect(),
            submenu: None,
        }
    }

    /// A `true` / `false` row.
    pub(crate) fn flag(id: &'static str, label: &str, description: &str, current: bool) -> Self {
        Self::cycle(id, label, description, current.to_string(), &["true", "false"])
    }
}

/// pi-tui's `SettingsList`.
pub(crate) struct SettingsList {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    items: Vec<SettingItem>,
    /// Indexes into `items` shown for the search.
    filtered: Vec<usize>,
    selected: usize,
    max_visible: usize,
    search: Option<Input>,
    submenu: Option<(usize, Box<dyn Submenu>)>,
    changes: Changes,
    cancelled: bool,
}

impl SettingsList {
    pub(crate) fn new(
        theme: Rc<Theme>,
        keys: Rc<Keybindings>,
        items: Vec<SettingItem>,
        max_visible: usize,
        searchable: bool,
        changes: Changes,
    ) -> Self {
        let filtered = (0..items.len()).collect();
        let search = searchable.then(|| {
            let mut input = Input::default();
            input.set_focused(true);
            input
        });
        SettingsList {
            theme,
            keys,
            items,
            filtered,
            selected: 0,
            max_visible,
            search,
            submenu: None,
            changes,
            cancelled: false,
        }
    }

    /// Escape was pressed on the main list.
    pub(crate) fn cancelled(&self) -> bool {
        self.cancelled
    }

    fn hint(&self, lines: &mut Vec<String>, width: usize) {
        let text = if self.search.is_some() {
            "  Type to search · Enter/Space to change · Esc to cancel"
        } else {
            "  Enter/Space to change · Esc to cancel"
        };
        lines.push(String::new());
        lines.push(truncate_to_width_with(&self.theme.fg("dim", text), width, "…", false));
    }

    fn render_main(&mut self, width: usize) -> Vec<String> {
        let t = self.theme.clone();
        let mut lines = Vec::new();
        if let Some(input) = self.search.as_mut() {
            lines.extend(input.render(width).iter().cloned());
            lines.push(String::new());
        }
        if self.items.is_empty() {
            lines.push(t.fg("dim", "  No settings available"));
            if self.search.is_some() {
                self.hint(&mut lines, width);
            }
            return lines;
        }
        if self.filtered.is_empty() {
            lines.push(truncate_to_width_with(&t.fg("dim", "  No matching settings"), width, "…", false));
            self.hint(&mut lines, width);
            return lines;
        }
        let n = self.filtered.len();
        let start = self.selected.saturating_sub(self.max_visible / 2).min(n.saturating_sub(self.max_visible));
        let end = (start + self.max_visible).min(n);
        let label_width = self.items.iter().map(|i| visible_width(&i.label)).max().unwrap_or(0).min(36);
        for i in start..end {
            let item = &self.items[self.filtered[i]];
            let selected = i == self.selected;
            let prefix = if selected { t.fg("accent", "→ ") } else { "  ".to_owned() };
            let padded =
                format!("{}{}", item.label, " ".repeat(label_width.saturating_sub(visible_width(&item.label))));
            let label = if selected { t.fg("accent", &padded) } else { padded };
            let value_width = width.saturating_sub(2 + label_width + 2 + 2);
            let value = truncate_to_width_with(&item.current, value_width, "", false);
            let value = if selected { t.fg("accent", &value) } else { t.fg("muted", &value) };
            lines.push(truncate_to_width_with(&format!("{prefix}{label}  {value}"), width, "…", false));
        }
        if start > 0 || end < n {
            let text = format!("  ({}/{n})", self.selected + 1);
            lines.push(t.fg("dim", &truncate_to_width_with(&text, width.saturating_sub(2), "", false)));
        }
        if let Some(&idx) = self.filtered.get(self.selected)
            && !self.items[idx].description.is_empty()
        {
            lines.push(String::new());
            for line in wrap_text_with_ansi(&self.items[idx].description, width.saturating_sub(4).max(1)) {
                lines.push(t.fg("dim", &format!("  {line}")));
            }
        }
        self.hint(&mut lines, width);
        lines
    }

    fn activate(&mut self) {
        let Some(&idx) = self.filtered.get(self.selected) else { return };
        let item = &mut self.items[idx];
        if let Some(factory) = item.submenu.clone() {
            self.submenu = Some((idx, factory(&item.current)));
        } else if !item.values.is_empty() {
            let next = item.values.iter().position(|v| *v == item.current).map_or(0, |i| (i + 1) % item.values.len());
            item.current = item.values[next].clone();
            self.changes.borrow_mut().push((item.id.to_owned(), item.current.clone()));
        }
    }

    fn apply_filter(&mut self, query: &str) {
        let all: Vec<usize> = (0..self.items.len()).collect();
        self.filtered = pi_tui::fuzzy::fuzzy_filter(&all, query, |i| self.items[*i].label.clone());
        self.selected = 0;
    }
}

impl Component for SettingsList {
    fn render(&mut self, width: usize) -> Lines {
        if let Some((_, sub)) = self.submenu.as_mut() {
            return sub.render(width);
        }
        self.render_main(width).into()
    }

    fn handle_input(&mut self, data: &str) {
        if let Some((idx, sub)) = self.submenu.as_mut() {
            sub.handle_input(data);
            if let Some(result) = sub.finished() {
                let idx = *idx;
                self.submenu = None;
                if let Some(value) = result {
                    self.items[idx].current = value.clone();
                    self.changes.borrow_mut().push((self.items[idx].id.to_owned(), value));
                }
                if let Some(pos) = self.filtered.iter().position(|i| *i == idx) {
                    self.selected = pos;
                }
            }
            return;
        }
        let kb = self.keys.clone();
        let n = self.filtered.len();
        let query_empty = self.search.as_ref().is_none_or(|s| s.value().is_empty());
        if kb.matches(data, "tui.select.up") {
            if n > 0 {
                self.selected = if self.selected == 0 { n - 1 } else { self.selected - 1 };
            }
        } else if kb.matches(data, "tui.select.down") {
            if n > 0 {
                self.selected = if self.selected + 1 >= n { 0 } else { self.selected + 1 };
            }
        } else if kb.matches(data, "tui.select.pageUp") || kb.matches(data, "tui.select.pageDown") {
            if n > 0 {
                let dir: i64 = if kb.matches(data, "tui.select.pageUp") { -1 } else { 1 };
                self.selected =
                    (self.selected as i64 + dir * self.max_visible as i64).clamp(0, n as i64 - 1).max(0) as usize;
            }
        } else if kb.matches(data, "tui.select.confirm") || (data == " " && query_empty) {
            self.activate();
        } else if kb.matches(data, "tui.select.cancel") {
            self.cancelled = true;
        } else if let Some(input) = self.search.as_mut() {
            let before = input.value().to_owned();
            input.handle_input(data);
            let query = input.value().to_owned();
            if query != before {
                self.apply_filter(&query);
            }
        }
    }
}

/// The choices made in the earlier steps: `(step key, value)`.
pub(crate) type Choices = [(String, String)];
/// A value computed from the earlier choices.
pub(crate) type FromChoices<T> = Box<dyn Fn(&Choices) -> T>;
/// What runs when the last step is chosen.
pub(crate) type OnComplete = Box<dyn FnMut(&Choices)>;

/// A step of a [`SteppedSubmenu`]: title, description and options from the choices so far.
pub(crate) struct Step {
    pub(crate) key: &'static str,
    pub(crate) title: FromChoices<String>,
    pub(crate) description: String,
    pub(crate) options: FromChoices<Vec<SelectItem>>,
    pub(crate) preselect: FromChoices<Option<String>>,
    pub(crate) searchable: bool,
}

/// pi's `SelectSubmenu`: a titled select list, optionally filtered by typing.
pub(crate) struct SelectSubmenu {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    title: String,
    description: String,
    options: Vec<SelectItem>,
    list: SelectList,
    search: Option<Input>,
    layout: SelectListLayout,
    result: Rc<RefCell<Option<Option<String>>>>,
}

impl SelectSubmenu {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        theme: Rc<Theme>,
        keys: Rc<Keybindings>,
        title: &str,
        description: &str,
        options: Vec<SelectItem>,
        current: &str,
        searchable: bool,
        layout: SelectListLayout,
    ) -> Self {
        let result = Rc::new(RefCell::new(None));
        let list = Self::build(&theme, &keys, &options, current, &layout, &result);
        let search = searchable.then(|| {
            let mut input = Input::default();
            input.set_focused(true);
            input
        });
        SelectSubmenu {
            theme,
            keys,
            title: title.to_owned(),
            description: description.to_owned(),
            options,
            list,
            search,
            layout,
            result,
        }
    }

    fn build(
        theme: &Rc<Theme>,
        keys: &Rc<Keybindings>,
        options: &[SelectItem],
        current: &str,
        layout: &SelectListLayout,
        result: &Rc<RefCell<Option<Option<String>>>>,
    ) -> SelectList {
        let mut list = SelectList::new(options.to_vec(), options.len().clamp(1, 10), super::app::select_theme(theme));
        list.set_layout(*layout);
        list.set_keybindings(keys.clone());
        if let Some(i) = options.iter().position(|o| o.value == current) {
            list.set_selected_index(i);
        }
        let (r1, r2) = (result.clone(), result.clone());
        list.on_select = Some(Box::new(move |item: &SelectItem| *r1.borrow_mut() = Some(Some(item.value.clone()))));
        list.on_cancel = Some(Box::new(move || *r2.borrow_mut() = Some(None)));
        list
    }

    fn take(&mut self) -> Option<Option<String>> {
        self.result.borrow_mut().take()
    }
}

impl Component for SelectSubmenu {
    fn render(&mut self, width: usize) -> Lines {
        let t = &self.theme;
        let mut lines = vec![truncate_to_width_with(&t.fg("accent", &bold(&self.title)), width, "…", false)];
        if !self.description.is_empty() {
            lines.push(String::new());
            lines.extend(wrap_text_with_ansi(&t.fg("muted", &self.description), width.max(1)));
        }
        if let Some(input) = self.search.as_mut() {
            lines.push(String::new());
            lines.extend(input.render(width).iter().cloned());
        }
        lines.push(String::new());
        lines.extend(self.list.render(width).iter().cloned());
        lines.push(String::new());
        let hint = if self.search.is_some() {
            "  Type to filter · Enter to select · Esc to go back"
        } else {
            "  Enter to select · Esc to go back"
        };
        lines.push(truncate_to_width_with(&t.fg("dim", hint), width, "…", false));
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let kb = self.keys.clone();
        let nav = ["tui.select.up", "tui.select.down", "tui.select.pageUp", "tui.select.pageDown"]
            .iter()
            .chain(["tui.select.confirm", "tui.select.cancel"].iter())
            .any(|a| kb.matches(data, a));
        match self.search.as_mut() {
            Some(input) if !nav => {
                let before = input.value().to_owned();
                input.handle_input(data);
                let query = input.value().to_owned();
                if query != before {
                    let filtered = if query.is_empty() {
                        self.options.clone()
                    } else {
                        pi_tui::fuzzy::fuzzy_filter(&self.options, &query, |o| {
                            format!("{} {}", o.label, o.description.clone().unwrap_or_default())
                        })
                    };
                    self.list = Self::build(&self.theme, &self.keys, &filtered, "", &self.layout, &self.result);
                }
            }
            _ => self.list.handle_input(data),
        }
    }
}

impl Submenu for SelectSubmenu {
    fn finished(&mut self) -> Option<Option<String>> {
        self.take()
    }
}

/// pi's `SteppedSubmenu`: one [`SelectSubmenu`] per step; Escape goes back a step, the last
/// step's choice is reported through `on_complete`, and with `looping` the first step opens
/// again.
pub(crate) struct SteppedSubmenu {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    steps: Vec<Step>,
    context: Vec<(String, String)>,
    index: usize,
    active: SelectSubmenu,
    on_complete: OnComplete,
    summary: Box<dyn Fn() -> String>,
    done: bool,
}

impl SteppedSubmenu {
    pub(crate) fn new(
        theme: Rc<Theme>,
        keys: Rc<Keybindings>,
        steps: Vec<Step>,
        on_complete: OnComplete,
        summary: Box<dyn Fn() -> String>,
    ) -> Self {
        let active = Self::build(&theme, &keys, &steps, 0, &[]);
        SteppedSubmenu { theme, keys, steps, context: Vec::new(), index: 0, active, on_complete, summary, done: false }
    }

    fn build(
        theme: &Rc<Theme>,
        keys: &Rc<Keybindings>,
        steps: &[Step],
        index: usize,
        ctx: &[(String, String)],
    ) -> SelectSubmenu {
        let step = &steps[index];
        let label = if steps.len() > 1 { format!("Step {}/{} · ", index + 1, steps.len()) } else { String::new() };
        let layout = if step.searchable {
            SelectListLayout { min_primary_column_width: Some(12), max_primary_column_width: Some(46) }
        } else {
            SelectListLayout { min_primary_column_width: Some(12), max_primary_column_width: Some(32) }
        };
        SelectSubmenu::new(
            theme.clone(),
            keys.clone(),
            &(step.title)(ctx),
            &format!("{label}{}", step.description),
            (step.options)(ctx),
            &(step.preselect)(ctx).unwrap_or_default(),
            step.searchable,
            layout,
        )
    }
}

impl Component for SteppedSubmenu {
    fn render(&mut self, width: usize) -> Lines {
        self.active.render(width)
    }

    fn handle_input(&mut self, data: &str) {
        self.active.handle_input(data);
        match self.active.take() {
            Some(Some(value)) => {
                let key = self.steps[self.index].key.to_owned();
                self.context.retain(|(k, _)| *k != key);
                self.context.push((key, value));
                if self.index + 1 < self.steps.len() {
                    self.index += 1;
                } else {
                    (self.on_complete)(&self.context);
                    self.context.clear();
                    self.index = 0;
                }
                self.active = Self::build(&self.theme, &self.keys, &self.steps, self.index, &self.context);
            }
            Some(None) if self.index > 0 => {
                self.index -= 1;
                let key = self.steps[self.index].key;
                self.context.retain(|(k, _)| *k != key);
                self.active = Self::build(&self.theme, &self.keys, &self.steps, self.index, &self.context);
            }
            Some(None) => self.done = true,
            None => {}
        }
    }
}

impl Submenu for SteppedSubmenu {
    fn finished(&mut self) -> Option<Option<String>> {
        self.done.then(|| Some((self.summary)()))
    }
}

/// A [`SettingsList`] used as a submenu (pi's warnings submenu): finished on Escape.
impl Submenu for SettingsList {
    fn finished(&mut self) -> Option<Option<String>> {
        self.cancelled.then_some(None)
    }
}
