//! `pi config`'s terminal screen (pi's `ConfigSelectorComponent` and `selectConfig`), drawn with
//! pi-tui: a border, the mode header, a search input and the grouped resources with their
//! checkboxes. Space / Enter toggles (global mode) or cycles the project override (project
//! mode), Tab switches modes when the project is trusted, typing filters, Escape closes.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use pi_tui::ansi::{truncate_to_width_with, visible_width};
use pi_tui::keys::Keybindings;
use pi_tui::theme::bold;
use pi_tui::{Component, CrosstermTerminal, Input, Lines, ScreenMode, Terminal, Theme, Tui, shared};

use super::PackageError;
use super::config::{ConfigGroup, ConfigItem, set_enabled};
use super::config_project::{OverrideState, ProjectView, item_key};
use super::settings_file::Scope;

/// One row of the list (pi's flat entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Row {
    Group(usize),
    Subgroup(usize, usize),
    Item(usize, usize),
}

/// The `pi config` component.
pub struct ConfigScreen {
    theme: Rc<Theme>,
    keys: Keybindings,
    cwd: PathBuf,
    agent_dir: PathBuf,
    groups: [Vec<ConfigGroup>; 2],
    inherited: HashMap<String, bool>,
    project_scope: bool,
    project_mode_available: bool,
    rows: Vec<Row>,
    filtered: Vec<Row>,
    selected: usize,
    search: Input,
    max_visible: usize,
    closed: Rc<Cell<bool>>,
    /// The last write that failed, shown under the list.
    error: Option<String>,
}

/// The subgroups of a group: `(kind label, item indices)` in pi's order.
fn subgroups(group: &ConfigGroup) -> Vec<(&'static str, Vec<usize>)> {
    let mut out: Vec<(&'static str, Vec<usize>)> = Vec::new();
    for (i, item) in group.items.iter().enumerate() {
        let label = item.kind.label();
        match out.iter_mut().find(|(l, _)| *l == label) {
            Some((_, v)) => v.push(i),
            None => out.push((label, vec![i])),
        }
    }
    out
}

impl ConfigScreen {
    /// A screen over the global and the project view; `project_scope` starts in project mode.
    /// `terminal_rows` sizes the list (pi: rows − 8, at least 5).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        theme: Rc<Theme>,
        cwd: &Path,
        agent_dir: &Path,
        global: Vec<ConfigGroup>,
        project: Vec<ConfigGroup>,
        project_scope: bool,
        project_mode_available: bool,
        terminal_rows: usize,
    ) -> Self {
        let inherited = global.iter().flat_map(|g| &g.items).map(|i| (item_key(i), i.resource.enabled)).collect();
        let mut search = Input::default();
        search.set_focused(true);
        let mut screen = ConfigScreen {
            theme,
            keys: Keybindings::default(),
            cwd: cwd.to_path_buf(),
            agent_dir: agent_dir.to_path_buf(),
            groups: [global, project],
            inherited,
            project_scope,
            project_mode_available,
            rows: Vec::new(),
            filtered: Vec::new(),
            selected: 0,
            search,
            max_visible: terminal_rows.saturating_sub(8).max(5),
            closed: Rc::new(Cell::new(false)),
            error: None,
        };
        screen.build_rows();
        screen.filter();
        screen
    }

    /// Set when Escape or Ctrl+C closes the screen.
    pub fn closed(&self) -> Rc<Cell<bool>> {
        self.closed.clone()
    }

    fn groups(&self) -> &[ConfigGroup] {
        &self.groups[usize::from(self.project_scope)]
    }

    fn item(&self, g: usize, i: usize) -> &ConfigItem {
        &self.groups()[g].items[i]
    }

    fn build_rows(&mut self) {
        let mut rows = Vec::new();
        for (g, group) in self.groups().iter().enumerate() {
            rows.push(Row::Group(g));
            for (s, (_, items)) in subgroups(group).into_iter().enumerate() {
                rows.push(Row::Subgroup(g, s));
                rows.extend(items.into_iter().map(|i| Row::Item(g, i)));
            }
        }
        self.rows = rows;
    }

    /// pi's `filterItems`: items whose name, kind or path contain the query, with their headers.
    fn filter(&mut self) {
        let query = self.search.value().trim().to_lowercase();
        if query.is_empty() {
            self.filtered = self.rows.clone();
        } else {
            let matches = |g: usize, i: usize| {
                let item = self.item(g, i);
                item.display_name.to_lowercase().contains(&query)
                    || item.kind.key().contains(&query)
                    || item.resource.path.display().to_string().to_lowercase().contains(&query)
            };
            let groups = self.groups();
            let keep = |row: &Row| match *row {
                Row::Item(g, i) => matches(g, i),
                Row::Subgroup(g, s) => {
                    subgroups(&groups[g]).get(s).is_some_and(|(_, v)| v.iter().any(|&i| matches(g, i)))
                }
                Row::Group(g) => (0..groups[g].items.len()).any(|i| matches(g, i)),
            };
            self.filtered = self.rows.iter().filter(|r| keep(r)).copied().collect();
        }
        self.selected = self.filtered.iter().position(|r| matches!(r, Row::Item(..))).unwrap_or(0);
    }

    fn next_item(&self, from: usize, down: bool) -> usize {
        let mut idx = from;
        loop {
            idx = match (down, idx) {
                (true, i) if i + 1 < self.filtered.len() => i + 1,
                (false, i) if i > 0 => i - 1,
                _ => return from,
            };
            if matches!(self.filtered[idx], Row::Item(..)) {
                return idx;
            }
        }
    }

    fn view(&self) -> ProjectView<'_> {
        ProjectView { cwd: &self.cwd, agent_dir: &self.agent_dir, inherited: &self.inherited }
    }

    /// pi's `toggleResource`.
    fn toggle(&mut self, g: usize, i: usize) -> Result<(), PackageError> {
        let item = self.item(g, i).clone();
        let enabled = if self.project_scope {
            let view = self.view();
            let state = view.next_state(&item)?;
            if !view.set(&item, state)? {
                return Ok(());
            }
            match state {
                OverrideState::Inherit => view.inherited_enabled(&item),
                s => s == OverrideState::Load,
            }
        } else {
            if item.resource.scope != Scope::User {
                return Ok(());
            }
            set_enabled(&self.cwd, &self.agent_dir, &item, !item.resource.enabled)?;
            !item.resource.enabled
        };
        let scope = usize::from(self.project_scope);
        self.groups[scope][g].items[i].resource.enabled = enabled;
        Ok(())
    }

    fn checkbox(&self, item: &ConfigItem) -> String {
        let t = &self.theme;
        if self.project_scope {
            return match self.view().state(item).unwrap_or(OverrideState::Inherit) {
                OverrideState::Load => t.fg("success", "[+]"),
                OverrideState::Unload => t.fg("warning", "[-]"),
                OverrideState::Inherit => t.fg("dim", if item.resource.enabled { "[x]" } else { "[ ]" }),
            };
        }
        if item.resource.enabled { t.fg("success", "[x]") } else { t.fg("dim", "[ ]") }
    }

    /// The suffix and whether the item is dimmed (pi's `getItemSuffix`, `isDimmedItem`).
    fn suffix(&self, item: &ConfigItem) -> (String, bool) {
        if !self.project_scope {
            return (String::new(), false);
        }
        let view = self.view();
        match view.state(item).unwrap_or(OverrideState::Inherit) {
            OverrideState::Load => (self.theme.fg("muted", "  project load"), false),
            OverrideState::Unload => (self.theme.fg("muted", "  project unload"), false),
            OverrideState::Inherit if view.is_inherited_global(item) => {
                (self.theme.fg("dim", "  inherited global"), true)
            }
            OverrideState::Inherit => (String::new(), false),
        }
    }

    fn header(&self, width: usize) -> [String; 2] {
        let t = &self.theme;
        let title = bold(if self.project_scope { "Project Local Resources" } else { "Global Resources" });
        let sep = t.fg("muted", " · ");
        let hint = |key: &str, what: &str| format!("{}{}", t.fg("dim", key), t.fg("muted", &format!(" {what}")));
        let switch =
            if self.project_mode_available { format!("{}{sep}", hint("tab", "switch mode")) } else { String::new() };
        let action = if self.project_scope { hint("space", "cycle inherit/+/-") } else { hint("space", "toggle") };
        let hints = format!("{switch}{action}{sep}{}", hint("esc", "close"));
        let spacing = width.saturating_sub(visible_width(&title) + visible_width(&hints)).max(1);
        let scope_hint = if self.project_scope {
            t.fg("muted", ".pi/settings.json · inherited global resources are dimmed")
        } else {
            t.fg("muted", "~/.pi/agent/settings.json")
        };
        [
            truncate_to_width_with(&format!("{title}{}{hints}", " ".repeat(spacing)), width, "", false),
            truncate_to_width_with(&scope_hint, width, "", false),
        ]
    }

    fn list(&mut self, width: usize) -> Vec<String> {
        let t = self.theme.clone();
        let mut lines: Vec<String> = self.search.render(width).iter().cloned().collect();
        lines.push(String::new());
        if self.filtered.is_empty() {
            lines.push(t.fg("muted", "  No resources found"));
            return lines;
        }
        let len = self.filtered.len();
        let start = self.selected.saturating_sub(self.max_visible / 2).min(len.saturating_sub(self.max_visible));
        let end = (start + self.max_visible).min(len);
        for (idx, row) in self.filtered[start..end].iter().enumerate() {
            let line = match *row {
                Row::Group(g) => {
                    let group = &self.groups()[g];
                    let inherited = self.project_scope && group.scope == Scope::User;
                    let label = bold(&format!("{}{}", group.label, if inherited { " · inherited global" } else { "" }));
                    truncate_to_width_with(
                        &format!("  {}", t.fg(if inherited { "dim" } else { "accent" }, &label)),
                        width,
                        "",
                        false,
                    )
                }
                Row::Subgroup(g, s) => {
                    let group = &self.groups()[g];
                    let color = if self.project_scope && group.scope == Scope::User { "dim" } else { "muted" };
                    let label = subgroups(group).get(s).map(|(l, _)| *l).unwrap_or_default();
                    truncate_to_width_with(&format!("    {}", t.fg(color, label)), width, "", false)
                }
                Row::Item(g, i) => {
                    let item = self.item(g, i);
                    let selected = start + idx == self.selected;
                    let (suffix, dimmed) = self.suffix(item);
                    let name_text =
                        if selected && !dimmed { bold(&item.display_name) } else { item.display_name.clone() };
                    let name = if dimmed { t.fg("dim", &name_text) } else { name_text };
                    let cursor = if selected { "> " } else { "  " };
                    let text = format!("{cursor}    {} {name}{suffix}", self.checkbox(item));
                    truncate_to_width_with(&text, width, "...", false)
                }
            };
            lines.push(line);
        }
        if start > 0 || end < len {
            let items = self.filtered.iter().filter(|r| matches!(r, Row::Item(..))).count();
            let current = self.filtered[..self.selected].iter().filter(|r| matches!(r, Row::Item(..))).count() + 1;
            lines.push(t.fg("dim", &format!("  ({current}/{items})")));
        }
        if let Some(e) = &self.error {
            lines.push(t.fg("error", &format!("  {e}")));
        }
        lines
    }
}

impl Component for ConfigScreen {
    fn render(&mut self, width: usize) -> Lines {
        let border = self.theme.fg("border", &"─".repeat(width.max(1)));
        let mut lines = vec![String::new(), border.clone(), String::new()];
        lines.extend(self.header(width));
        lines.push(String::new());
        lines.extend(self.list(width));
        lines.extend([String::new(), border]);
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let kb = &self.keys;
        if kb.matches(data, "tui.select.up") {
            self.selected = self.next_item(self.selected, false);
        } else if kb.matches(data, "tui.select.down") {
            self.selected = self.next_item(self.selected, true);
        } else if kb.matches(data, "tui.select.pageUp") {
            let mut target = self.selected.saturating_sub(self.max_visible);
            while target < self.filtered.len() && !matches!(self.filtered[target], Row::Item(..)) {
                target += 1;
            }
            if target < self.filtered.len() {
                self.selected = target;
            }
        } else if kb.matches(data, "tui.select.pageDown") {
            let mut target = (self.selected + self.max_visible).min(self.filtered.len().saturating_sub(1));
            while target > 0 && !matches!(self.filtered.get(target), Some(Row::Item(..))) {
                target -= 1;
            }
            if matches!(self.filtered.get(target), Some(Row::Item(..))) {
                self.selected = target;
            }
        } else if kb.matches(data, "tui.select.cancel") {
            self.closed.set(true);
        } else if kb.matches(data, "tui.input.tab") {
            if self.project_mode_available {
                self.project_scope = !self.project_scope;
                self.build_rows();
                self.filter();
            }
        } else if data == " " || kb.matches(data, "tui.select.confirm") {
            if let Some(Row::Item(g, i)) = self.filtered.get(self.selected).copied() {
                self.error = self.toggle(g, i).err().map(|e| e.to_string());
            }
        } else {
            let before = self.search.value().to_string();
            self.search.handle_input(data);
            if self.search.value() != before {
                self.filter();
            }
        }
    }
}

/// Runs the screen on the process terminal until Escape / Ctrl+C (pi's `selectConfig`).
pub fn run_config_screen(
    theme: Theme,
    cwd: &Path,
    agent_dir: &Path,
    global: Vec<ConfigGroup>,
    project: Vec<ConfigGroup>,
    project_scope: bool,
    project_mode_available: bool,
) -> Result<(), PackageError> {
    let tui_error = |e: pi_tui::TuiError| PackageError::Other(e.to_string());
    let mut tui = Tui::new(CrosstermTerminal::new(), ScreenMode::Main);
    let rows = tui.terminal().rows();
    let screen =
        ConfigScreen::new(Rc::new(theme), cwd, agent_dir, global, project, project_scope, project_mode_available, rows);
    let closed = screen.closed();
    let screen = shared(screen);
    tui.add_child(screen.clone());
    tui.set_focus(Some(screen));
    tui.start().map_err(tui_error)?;
    let result = (|| {
        tui.request_render(false);
        while !closed.get() {
            tui.run_once(Duration::from_millis(16)).map_err(tui_error)?;
        }
        Ok(())
    })();
    tui.stop().map_err(tui_error)?;
    result
}
