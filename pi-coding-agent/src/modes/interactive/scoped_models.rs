//! `/scoped-models`: pi's `ScopedModelsSelectorComponent`. Models are toggled for Ctrl+P
//! cycling for this session; Ctrl+S writes `enabledModels` to the global settings.

use std::cell::RefCell;
use std::rc::Rc;

use pi_ai::Model;
use pi_tui::keys::Keybindings;
use pi_tui::theme::{bold, strikethrough};
use pi_tui::{Component, CrosstermTerminal, Input, Lines, Theme, Tui, shared};

use super::app::App;
use super::dialogs::DoneCell;
use super::keys::key_display;
use super::settings_list::Changes;

fn full_id(m: &Model) -> String {
    format!("{}/{}", m.provider, m.id)
}

/// pi's `getDistinctModelName`: the name when it says more than the id.
fn distinct_name(m: &Model) -> Option<String> {
    let name = m.name.trim();
    if name.is_empty() {
        return None;
    }
    let split = |s: &str| -> Vec<String> {
        s.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_owned).collect()
    };
    let id_words = split(&m.id);
    let compact = id_words.concat();
    let covered = |w: &String| id_words.contains(w) || (w.chars().count() > 1 && compact.contains(w.as_str()));
    if split(name).iter().all(covered) { None } else { Some(name.to_owned()) }
}

/// How a change reports "all enabled".
const ALL: &str = "\u{1}all";

/// The enabled list: `None` is "all enabled".
type Enabled = Option<Vec<String>>;

fn normalize(result: Vec<String>, all: &[String]) -> Enabled {
    if result.len() == all.len() && result.iter().all(|id| all.contains(id)) { None } else { Some(result) }
}

struct ScopedModels {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    models: Vec<Model>,
    all: Vec<String>,
    enabled: Enabled,
    /// Indexes into `sorted()` of the rows shown.
    filtered: Vec<String>,
    selected: usize,
    search: Input,
    dirty: bool,
    changes: Changes,
    done: DoneCell,
}

impl ScopedModels {
    fn is_enabled(&self, id: &str) -> bool {
        self.enabled.as_ref().is_none_or(|e| e.iter().any(|x| x == id))
    }

    fn sorted(&self) -> Vec<String> {
        match &self.enabled {
            None => self.all.clone(),
            Some(e) => e.iter().cloned().chain(self.all.iter().filter(|id| !e.contains(id)).cloned()).collect(),
        }
    }

    fn refresh(&mut self) {
        let query = self.search.value().to_owned();
        let items = self.sorted();
        self.filtered = if query.is_empty() {
            items
        } else {
            pi_tui::fuzzy::fuzzy_filter(&items, &query, |id| match self.models.iter().find(|m| full_id(m) == *id) {
                Some(m) => format!("{} {p} {p}/{} {p} {}{}", m.id, m.id, m.id, format_name(m), p = m.provider),
                None => id.clone(),
            })
        };
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }

    fn changed(&mut self) {
        self.dirty = true;
        self.refresh();
        let value = self.enabled.as_ref().map_or_else(|| ALL.to_owned(), |e| e.join("\n"));
        self.changes.borrow_mut().push(("scoped".to_owned(), value));
    }

    fn toggle(&mut self, id: &str) {
        self.enabled = match self.enabled.take() {
            None => Some(self.all.iter().filter(|x| *x != id).cloned().collect()),
            Some(mut e) => match e.iter().position(|x| x == id) {
                Some(i) => {
                    e.remove(i);
                    Some(e)
                }
                None => {
                    e.push(id.to_owned());
                    normalize(e, &self.all)
                }
            },
        };
    }

    fn enable(&mut self, targets: Option<Vec<String>>) {
        let Some(mut e) = self.enabled.take() else { return };
        for id in targets.unwrap_or_else(|| self.all.clone()) {
            if !e.contains(&id) {
                e.push(id);
            }
        }
        self.enabled = normalize(e, &self.all);
    }

    fn clear(&mut self, targets: Option<Vec<String>>) {
        self.enabled = Some(match (self.enabled.take(), targets) {
            (None, Some(t)) => self.all.iter().filter(|id| !t.contains(id)).cloned().collect(),
            (None, None) => Vec::new(),
            (Some(e), Some(t)) => e.into_iter().filter(|id| !t.contains(id)).collect(),
            (Some(_), None) => Vec::new(),
        });
    }

    fn footer(&self) -> String {
        let k = |a: &str| key_display(&self.keys, a);
        let count = match &self.enabled {
            None => "all enabled".to_owned(),
            Some(e) => {
                let known = e.iter().filter(|id| self.all.contains(id)).count();
                let unknown = e.len() - known;
                let extra = if unknown > 0 { format!(" · {unknown} unavailable") } else { String::new() };
                format!("{known}/{} enabled{extra}", self.all.len())
            }
        };
        let parts = [
            format!("{} toggle", k("tui.select.confirm")),
            format!("{} all", k("app.models.enableAll")),
            format!("{} clear", k("app.models.clearAll")),
            format!("{} provider", k("app.models.toggleProvider")),
            format!("{}/{} reorder", k("app.models.reorderUp"), k("app.models.reorderDown")),
            format!("{} save", k("app.models.save")),
            count,
        ];
        let text = format!("  {}", parts.join(" · "));
        if self.dirty {
            format!("{}{}", self.theme.fg("dim", &format!("{text} ")), self.theme.fg("warning", "(unsaved)"))
        } else {
            self.theme.fg("dim", &text)
        }
    }
}

fn format_name(m: &Model) -> String {
    if m.name.is_empty() { String::new() } else { format!(" {}", m.name) }
}

impl Component for ScopedModels {
    fn render(&mut self, width: usize) -> Lines {
        let t = self.theme.clone();
        let border = t.fg("border", &"─".repeat(width.max(1)));
        let wrap = |s: &str| pi_tui::ansi::wrap_text_with_ansi(s, width.max(1));
        let mut lines = vec![border.clone(), String::new()];
        lines.extend(wrap(&t.fg("accent", &bold("Model Configuration"))));
        let save = key_display(&self.keys, "app.models.save");
        lines.extend(wrap(&t.fg("muted", &format!("Session-only. {save} to save to settings."))));
        lines.push(String::new());
        lines.extend(self.search.render(width).iter().cloned());
        lines.push(String::new());
        if self.filtered.is_empty() {
            lines.push(t.fg("muted", "  No matching models"));
        } else {
            let (max, n) = (8usize, self.filtered.len());
            let start = self.selected.saturating_sub(max / 2).min(n.saturating_sub(max));
            let end = (start + max).min(n);
            for i in start..end {
                let id = &self.filtered[i];
                let model = self.models.iter().find(|m| full_id(m) == *id);
                let selected = i == self.selected;
                let prefix = if selected { t.fg("accent", "→ ") } else { "  ".to_owned() };
                let shown = model.map_or(id.clone(), |m| m.id.clone());
                let styled = if model.is_some() { shown } else { strikethrough(&shown) };
                let text = if selected { t.fg("accent", &styled) } else { styled };
                let name = model.and_then(distinct_name).map_or(String::new(), |n| t.fg("muted", &format!(" ({n})")));
                let badge = t.fg("muted", &model.map_or(" [unavailable]".to_owned(), |m| format!(" [{}]", m.provider)));
                let status =
                    if model.is_some() && self.is_enabled(id) { t.fg("accent", "✓ ") } else { "  ".to_owned() };
                lines.extend(wrap(&format!("{prefix}{status}{text}{name}{badge}")));
            }
            if start > 0 || end < n {
                lines.push(t.fg("muted", &format!("  ({}/{n})", self.selected + 1)));
            }
            let sel = self.models.iter().find(|m| Some(&full_id(m)) == self.filtered.get(self.selected));
            lines.push(String::new());
            let label = sel.map_or("Model unavailable".to_owned(), |m| format!("Model Name: {}", m.name));
            lines.extend(wrap(&t.fg("muted", &format!("  {label}"))));
        }
        lines.push(String::new());
        lines.extend(wrap(&t.fg("success", "  Model catalogs refreshed.")));
        lines.extend(wrap(&self.footer()));
        lines.push(border);
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let kb = self.keys.clone();
        let n = self.filtered.len();
        let current = self.filtered.get(self.selected).cloned();
        let filter_targets = || (!self.search.value().is_empty()).then(|| self.filtered.clone());
        if kb.matches(data, "tui.select.up") {
            if n > 0 {
                self.selected = if self.selected == 0 { n - 1 } else { self.selected - 1 };
            }
        } else if kb.matches(data, "tui.select.down") {
            if n > 0 {
                self.selected = if self.selected + 1 >= n { 0 } else { self.selected + 1 };
            }
        } else if kb.matches(data, "app.models.reorderUp") || kb.matches(data, "app.models.reorderDown") {
            let delta: isize = if kb.matches(data, "app.models.reorderUp") { -1 } else { 1 };
            if let (Some(e), Some(id)) = (self.enabled.as_mut(), current)
                && let Some(i) = e.iter().position(|x| *x == id)
            {
                let j = i as isize + delta;
                if j >= 0 && (j as usize) < e.len() {
                    e.swap(i, j as usize);
                    self.selected = (self.selected as isize + delta).max(0) as usize;
                    self.changed();
                }
            }
        } else if kb.matches(data, "tui.select.confirm") {
            if let Some(id) = current {
                self.toggle(&id);
                self.changed();
            }
        } else if kb.matches(data, "app.models.enableAll") {
            let t = filter_targets();
            self.enable(t);
            self.changed();
        } else if kb.matches(data, "app.models.clearAll") {
            let t = filter_targets();
            self.clear(t);
            self.changed();
        } else if kb.matches(data, "app.models.toggleProvider") {
            if let Some(m) = current.and_then(|id| self.models.iter().find(|m| full_id(m) == id).cloned()) {
                let ids: Vec<String> = self.models.iter().filter(|x| x.provider == m.provider).map(full_id).collect();
                if ids.iter().all(|id| self.is_enabled(id)) {
                    self.clear(Some(ids))
                } else {
                    self.enable(Some(ids))
                }
                self.changed();
            }
        } else if kb.matches(data, "app.models.save") {
            let value = self.enabled.as_ref().map_or_else(|| ALL.to_owned(), |e| e.join("\n"));
            self.changes.borrow_mut().push(("save".to_owned(), value));
            self.dirty = false;
        } else if data == "\x03" {
            if self.search.value().is_empty() {
                *self.done.borrow_mut() = Some(None);
            } else {
                self.search.set_value("");
                self.refresh();
            }
        } else if data == "\x1b" {
            *self.done.borrow_mut() = Some(None);
        } else {
            let before = self.search.value().to_owned();
            self.search.handle_input(data);
            let query = self.search.value().to_owned();
            if query != before {
                if !query.is_empty() {
                    self.selected = 0;
                }
                self.refresh();
            }
        }
    }
}

/// The configured `enabledModels` as model ids (exact `provider/id`, an id, or a glob).
fn configured(patterns: &[String], models: &[Model]) -> Enabled {
    if patterns.is_empty() {
        return None;
    }
    let mut ids = Vec::new();
    for p in patterns {
        let glob = globset::Glob::new(p).ok().map(|g| g.compile_matcher());
        let mut matched = false;
        for m in models {
            let id = full_id(m);
            let hit = id == *p || m.id == *p || glob.as_ref().is_some_and(|g| g.is_match(&id) || g.is_match(&m.id));
            if hit && !ids.contains(&id) {
                ids.push(id);
                matched = true;
            }
        }
        if !matched && !ids.contains(p) {
            ids.push(p.clone());
        }
    }
    Some(ids)
}

impl App {
    /// `/scoped-models`.
    pub(crate) fn command_scoped_models(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let models = self.models.clone();
        let all: Vec<String> = models.iter().map(full_id).collect();
        let enabled = if self.scoped_models.is_empty() {
            let patterns = self.session.settings_manager().settings().enabled_models().unwrap_or_default();
            configured(&patterns, &models)
        } else {
            Some(self.scoped_models.iter().map(full_id).collect())
        };
        let changes: Changes = Rc::new(RefCell::new(Vec::new()));
        let done: DoneCell = Rc::new(RefCell::new(None));
        let mut search = Input::default();
        search.set_focused(true);
        let mut selector = ScopedModels {
            theme: self.theme.clone(),
            keys: self.keys.clone(),
            models,
            all,
            enabled,
            filtered: Vec::new(),
            selected: 0,
            search,
            dirty: false,
            changes: changes.clone(),
            done: done.clone(),
        };
        selector.refresh();
        self.open_dialog(tui, shared(selector), done, Box::new(|_, _| {}));
        self.dialog_changes = Some(changes);
    }

    /// A change of the scoped-models dialog: `scoped` (session) or `save` (settings).
    pub(crate) fn apply_scoped_change(&mut self, id: &str, value: &str) -> Result<(), String> {
        let ids: Enabled =
            (value != ALL).then(|| value.split('\n').filter(|s| !s.is_empty()).map(str::to_owned).collect());
        if id == "save" {
            let all_enabled = ids.as_ref().is_none_or(|e| {
                e.len() == self.models.len() && e.iter().all(|x| self.models.iter().any(|m| full_id(m) == *x))
            });
            let patterns = if all_enabled { None } else { ids };
            self.session.settings_manager().set_enabled_models(patterns).map_err(|e| e.to_string())?;
            self.show_status("Model selection saved to settings");
            return Ok(());
        }
        let chosen: Vec<Model> = ids
            .unwrap_or_default()
            .iter()
            .filter_map(|x| self.models.iter().find(|m| full_id(m) == *x).cloned())
            .collect();
        self.scoped_models = if chosen.is_empty() || chosen.len() == self.models.len() { Vec::new() } else { chosen };
        Ok(())
    }
}
