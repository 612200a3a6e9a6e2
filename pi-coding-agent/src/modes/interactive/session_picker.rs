//! The session picker of `/resume` and `pi --resume` (pi's `SessionSelectorComponent`): the
//! current folder's sessions or all of them (Tab), threaded by parent session, searched with
//! pi's rules (words, `"phrases"`, `re:` regexes), sorted threaded / recent / fuzzy, named-only
//! filter, file paths, delete with confirmation (the `trash` command first, as pi) and rename.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use pi_tui::ansi::{truncate_to_width_with, visible_width};
use pi_tui::keys::Keybindings;
use pi_tui::theme::bold;
use pi_tui::{Component, Input, Lines, Theme};

use super::dialogs::DoneCell;
use super::keys::key_text;
use super::session_search::{Sort, filter_and_sort};
use crate::session::SessionInfo;

/// pi's `formatSessionDate`: `now`, `5m`, `3h`, `2d`, `1w`, `4mo`, `1y`.
pub(crate) fn format_age(modified_ms: i64, now_ms: i64) -> String {
    let diff = (now_ms - modified_ms).max(0);
    let (mins, hours, days) = (diff / 60_000, diff / 3_600_000, diff / 86_400_000);
    match () {
        _ if mins < 1 => "now".to_owned(),
        _ if mins < 60 => format!("{mins}m"),
        _ if hours < 24 => format!("{hours}h"),
        _ if days < 7 => format!("{days}d"),
        _ if days < 30 => format!("{}w", days / 7),
        _ if days < 365 => format!("{}mo", days / 30),
        _ => format!("{}y", days / 365),
    }
}

fn shorten_home(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && path.starts_with(&home) => format!("~{}", &path[home.len()..]),
        _ => path.to_owned(),
    }
}

fn path_key(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// A row: the session and its place in the thread tree.
#[derive(Clone)]
struct Row {
    session: SessionInfo,
    depth: usize,
    is_last: bool,
    ancestors_continue: Vec<bool>,
}

/// pi's `buildSessionTree` + `flattenSessionTree`: children under their parent session, each
/// level ordered by the latest activity of its subtree.
fn threaded(sessions: &[SessionInfo]) -> Vec<Row> {
    let keys: Vec<PathBuf> = sessions.iter().map(|s| path_key(&s.path)).collect();
    let parent_of = |s: &SessionInfo| -> Option<usize> {
        let p = path_key(Path::new(s.parent_session_path.as_deref()?));
        keys.iter().position(|k| *k == p)
    };
    let n = sessions.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        match parent_of(s).filter(|p| *p != i) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    fn latest(i: usize, sessions: &[SessionInfo], children: &[Vec<usize>], depth: usize) -> i64 {
        let own = sessions[i].modified;
        if depth > 64 {
            return own;
        }
        children[i].iter().map(|c| latest(*c, sessions, children, depth + 1)).fold(own, i64::max)
    }
    let activity: Vec<i64> = (0..n).map(|i| latest(i, sessions, &children, 0)).collect();
    let sort = |v: &mut Vec<usize>| v.sort_by_key(|i| std::cmp::Reverse(activity[*i]));
    sort(&mut roots);
    for c in children.iter_mut() {
        sort(c);
    }
    let mut out = Vec::new();
    #[allow(clippy::too_many_arguments)]
    fn walk(
        i: usize,
        depth: usize,
        ancestors: Vec<bool>,
        is_last: bool,
        sessions: &[SessionInfo],
        children: &[Vec<usize>],
        out: &mut Vec<Row>,
        guard: usize,
    ) {
        out.push(Row { session: sessions[i].clone(), depth, is_last, ancestors_continue: ancestors.clone() });
        if guard > 64 {
            return;
        }
        let kids = &children[i];
        for (k, c) in kids.iter().enumerate() {
            let mut next = ancestors.clone();
            next.push(if depth > 0 { !is_last } else { false });
            walk(*c, depth + 1, next, k + 1 == kids.len(), sessions, children, out, guard + 1);
        }
    }
    for (k, r) in roots.iter().enumerate() {
        walk(*r, 0, Vec::new(), k + 1 == roots.len(), sessions, &children, &mut out, 0);
    }
    out
}

/// What the picker asks of the app after a key.
pub(crate) enum PickerRequest {
    /// Delete this session file.
    Delete(PathBuf),
    /// Name this session.
    Rename(PathBuf, String),
}

/// The picker component.
pub(crate) struct SessionPicker {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    cwd: String,
    session_dir: Option<PathBuf>,
    current: Option<PathBuf>,
    all_scope: bool,
    sort: Sort,
    named_only: bool,
    show_path: bool,
    sessions: Vec<SessionInfo>,
    rows: Vec<Row>,
    selected: usize,
    search: Input,
    confirming_delete: Option<PathBuf>,
    status: Option<(bool, String)>,
    rename: Option<(PathBuf, Input)>,
    /// Requests for the app, drained after each key.
    pub(crate) requests: Vec<PickerRequest>,
    done: DoneCell,
    now_ms: i64,
}

impl SessionPicker {
    pub(crate) fn new(
        theme: Rc<Theme>,
        keys: Rc<Keybindings>,
        cwd: String,
        session_dir: Option<PathBuf>,
        current: Option<PathBuf>,
        done: DoneCell,
    ) -> Self {
        let mut search = Input::default();
        search.set_focused(true);
        let mut picker = SessionPicker {
            theme,
            keys,
            cwd,
            session_dir,
            current: current.map(|c| path_key(&c)),
            all_scope: false,
            sort: Sort::Threaded,
            named_only: false,
            show_path: false,
            sessions: Vec::new(),
            rows: Vec::new(),
            selected: 0,
            search,
            confirming_delete: None,
            status: None,
            rename: None,
            requests: Vec::new(),
            done,
            now_ms: pi_ai::now_ms() as i64,
        };
        picker.reload();
        picker
    }

    /// Reads the sessions of the scope again (after a delete or rename).
    pub(crate) fn reload(&mut self) {
        self.now_ms = pi_ai::now_ms() as i64;
        self.sessions = if self.all_scope {
            crate::session::list_all_sessions(self.session_dir.as_deref())
        } else {
            crate::session::SessionManager::list(&self.cwd, self.session_dir.as_deref())
        };
        self.filter();
    }

    /// Shows a status line in the header (an error in the error colour).
    pub(crate) fn set_status(&mut self, error: bool, message: String) {
        self.status = Some((error, message));
    }

    fn filter(&mut self) {
        let query = self.search.value().trim().to_owned();
        let named: Vec<SessionInfo> = self
            .sessions
            .iter()
            .filter(|s| !self.named_only || s.name.as_deref().is_some_and(|n| !n.trim().is_empty()))
            .cloned()
            .collect();
        self.rows = if self.sort == Sort::Threaded && query.is_empty() {
            threaded(&named)
        } else {
            filter_and_sort(&named, &query, self.sort)
                .into_iter()
                .map(|session| Row { session, depth: 0, is_last: true, ancestors_continue: Vec::new() })
                .collect()
        };
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    fn is_current(&self, p: &Path) -> bool {
        self.current.as_ref().is_some_and(|c| *c == path_key(p))
    }

    fn header(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let title = if self.all_scope { "Resume Session (All)" } else { "Resume Session (Current Folder)" };
        let sort = match self.sort {
            Sort::Threaded => "Threaded",
            Sort::Recent => "Recent",
            Sort::Relevance => "Fuzzy",
        };
        let scope = if self.all_scope {
            format!("{}{}", t.fg("muted", "○ Current Folder | "), t.fg("accent", "◉ All"))
        } else {
            format!("{}{}", t.fg("accent", "◉ Current Folder"), t.fg("muted", " | ○ All"))
        };
        let name =
            format!("{}{}", t.fg("muted", "Name: "), t.fg("accent", if self.named_only { "Named" } else { "All" }));
        let sort = format!("{}{}", t.fg("muted", "Sort: "), t.fg("accent", sort));
        let right = truncate_to_width_with(&format!("{scope}  {name}  {sort}"), width, "", false);
        let left = truncate_to_width_with(&bold(title), width.saturating_sub(visible_width(&right) + 1), "", false);
        let spacing = width.saturating_sub(visible_width(&left) + visible_width(&right));
        let hint = |action: &str, desc: &str| {
            format!("{}{}", t.fg("dim", &key_text(&self.keys, action)), t.fg("muted", &format!(" {desc}")))
        };
        let (h1, h2) = if self.confirming_delete.is_some() {
            let text = format!(
                "Delete session? {} · {}",
                hint("tui.select.confirm", "confirm"),
                hint("tui.select.cancel", "cancel")
            );
            (t.fg("error", &truncate_to_width_with(&text, width, "…", false)), String::new())
        } else if let Some((error, msg)) = &self.status {
            (
                t.fg(if *error { "error" } else { "accent" }, &truncate_to_width_with(msg, width, "…", false)),
                String::new(),
            )
        } else {
            let sep = t.fg("muted", " · ");
            let h1 = format!(
                "{}{sep}{}",
                hint("tui.input.tab", "scope"),
                t.fg("muted", "re:<pattern> regex · \"phrase\" exact")
            );
            let path_state = if self.show_path { "(on)" } else { "(off)" };
            let parts = [
                hint("app.session.toggleSort", "sort"),
                hint("app.session.toggleNamedFilter", "named"),
                hint("app.session.delete", "delete"),
                hint("app.session.togglePath", &format!("path {path_state}")),
                hint("app.session.rename", "rename"),
            ];
            (
                truncate_to_width_with(&h1, width, "…", false),
                truncate_to_width_with(&parts.join(&sep), width, "…", false),
            )
        };
        vec![format!("{left}{}{right}", " ".repeat(spacing)), h1, h2]
    }

    fn list(&mut self, width: usize) -> Vec<String> {
        let t = self.theme.clone();
        let mut lines: Vec<String> = self.search.render(width).to_vec();
        lines.push(String::new());
        if self.rows.is_empty() {
            let toggle = key_text(&self.keys, "app.session.toggleNamedFilter");
            let msg = match (self.named_only, self.all_scope) {
                (true, true) => format!("  No named sessions found. Press {toggle} to show all."),
                (true, false) => {
                    format!("  No named sessions in current folder. Press {toggle} to show all, or Tab to view all.")
                }
                (false, true) => "  No sessions found".to_owned(),
                (false, false) => "  No sessions in current folder. Press Tab to view all.".to_owned(),
            };
            lines.push(t.fg("muted", &truncate_to_width_with(&msg, width, "…", false)));
            return lines;
        }
        let (max, n) = (10usize, self.rows.len());
        let start = self.selected.saturating_sub(max / 2).min(n.saturating_sub(max));
        let end = (start + max).min(n);
        for i in start..end {
            let row = &self.rows[i];
            let s = &row.session;
            let selected = i == self.selected;
            let deleting = self.confirming_delete.as_deref() == Some(s.path.as_path());
            let prefix = if row.depth == 0 {
                String::new()
            } else {
                let parts: String = row.ancestors_continue.iter().map(|c| if *c { "│  " } else { "   " }).collect();
                format!("{parts}{}", if row.is_last { "└─ " } else { "├─ " })
            };
            let text = s.name.clone().unwrap_or_else(|| s.first_message.clone());
            let text: String =
                text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().to_owned();
            let mut right = format!("{} {}", s.message_count, format_age(s.modified, self.now_ms));
            if self.all_scope && !s.cwd.is_empty() {
                right = format!("{} {right}", shorten_home(&s.cwd));
            }
            if self.show_path {
                right = format!("{} {right}", shorten_home(&s.path.display().to_string()));
            }
            let cursor = if selected { t.fg("accent", "› ") } else { "  ".to_owned() };
            let avail = width.saturating_sub(2 + visible_width(&prefix) + visible_width(&right) + 2).max(10);
            let msg = truncate_to_width_with(&text, avail, "…", false);
            let color = if deleting {
                Some("error")
            } else if self.is_current(&s.path) {
                Some("accent")
            } else if s.name.is_some() {
                Some("warning")
            } else {
                None
            };
            let mut styled = color.map_or(msg.clone(), |c| t.fg(c, &msg));
            if selected {
                styled = bold(&styled);
            }
            let left = format!("{cursor}{}{styled}", t.fg("dim", &prefix));
            let spacing = width.saturating_sub(visible_width(&left) + visible_width(&right)).max(1);
            let mut line =
                format!("{left}{}{}", " ".repeat(spacing), t.fg(if deleting { "error" } else { "dim" }, &right));
            if selected {
                line = t.bg("selectedBg", &line);
            }
            lines.push(truncate_to_width_with(&line, width, "…", false));
        }
        if start > 0 || end < n {
            lines.push(
                t.fg("muted", &truncate_to_width_with(&format!("  ({}/{n})", self.selected + 1), width, "", false)),
            );
        }
        lines
    }

    fn start_delete(&mut self) {
        let Some(row) = self.rows.get(self.selected) else { return };
        if self.is_current(&row.session.path) {
            self.status = Some((true, "Cannot delete the currently active session".to_owned()));
            return;
        }
        self.confirming_delete = Some(row.session.path.clone());
    }

    fn list_input(&mut self, data: &str) {
        let kb = self.keys.clone();
        if let Some(path) = self.confirming_delete.clone() {
            if kb.matches(data, "tui.select.confirm") {
                self.confirming_delete = None;
                self.requests.push(PickerRequest::Delete(path));
            } else if kb.matches(data, "tui.select.cancel") {
                self.confirming_delete = None;
            }
            return;
        }
        self.status = None;
        let n = self.rows.len();
        if kb.matches(data, "tui.input.tab") {
            self.all_scope = !self.all_scope;
            self.reload();
        } else if kb.matches(data, "app.session.toggleSort") {
            self.sort = match self.sort {
                Sort::Threaded => Sort::Recent,
                Sort::Recent => Sort::Relevance,
                Sort::Relevance => Sort::Threaded,
            };
            self.filter();
        } else if kb.matches(data, "app.session.toggleNamedFilter") {
            self.named_only = !self.named_only;
            self.filter();
        } else if kb.matches(data, "app.session.togglePath") {
            self.show_path = !self.show_path;
        } else if kb.matches(data, "app.session.delete") {
            self.start_delete();
        } else if kb.matches(data, "app.session.rename") {
            if let Some(row) = self.rows.get(self.selected) {
                let mut input = Input::default();
                input.set_value(row.session.name.clone().unwrap_or_default());
                input.set_focused(true);
                self.rename = Some((row.session.path.clone(), input));
            }
        } else if kb.matches(data, "app.session.deleteNoninvasive") && self.search.value().is_empty() {
            self.start_delete();
        } else if kb.matches(data, "tui.select.up") {
            self.selected = self.selected.saturating_sub(1);
        } else if kb.matches(data, "tui.select.down") {
            self.selected = (self.selected + 1).min(n.saturating_sub(1));
        } else if kb.matches(data, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(10);
        } else if kb.matches(data, "tui.select.pageDown") {
            self.selected = (self.selected + 10).min(n.saturating_sub(1));
        } else if kb.matches(data, "tui.select.confirm") {
            if let Some(row) = self.rows.get(self.selected) {
                *self.done.borrow_mut() = Some(Some(row.session.path.display().to_string()));
            }
        } else if kb.matches(data, "tui.select.cancel") {
            *self.done.borrow_mut() = Some(None);
        } else {
            let before = self.search.value().to_owned();
            self.search.handle_input(data);
            let query = self.search.value().to_owned();
            if query != before {
                self.filter();
                if !query.trim().is_empty() {
                    self.selected = 0;
                }
            }
        }
    }
}

impl Component for SessionPicker {
    fn render(&mut self, width: usize) -> Lines {
        let t = self.theme.clone();
        let border = t.fg("accent", &"─".repeat(width.max(1)));
        let mut lines = vec![String::new(), border.clone(), String::new()];
        if let Some((_, input)) = self.rename.as_mut() {
            lines.push(format!(" {}", bold("Rename Session")));
            lines.push(String::new());
            lines.extend(input.render(width).iter().cloned());
            lines.push(String::new());
            let hint = format!(
                "{} to save · {} to cancel",
                key_text(&self.keys, "tui.select.confirm"),
                key_text(&self.keys, "tui.select.cancel")
            );
            lines.push(format!(" {}", t.fg("muted", &hint)));
        } else {
            lines.extend(self.header(width));
            lines.push(String::new());
            lines.extend(self.list(width));
        }
        lines.push(String::new());
        lines.push(border);
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        if let Some((path, input)) = self.rename.as_mut() {
            if self.keys.matches(data, "tui.select.cancel") {
                self.rename = None;
            } else if self.keys.matches(data, "tui.select.confirm") {
                let name = input.value().trim().to_owned();
                if !name.is_empty() {
                    self.requests.push(PickerRequest::Rename(path.clone(), name));
                    self.rename = None;
                }
            } else {
                input.handle_input(data);
            }
            return;
        }
        self.list_input(data);
    }
}

/// pi's `deleteSessionFile`: the `trash` command first, else unlink; the status message.
pub(crate) fn delete_session_file(path: &Path) -> Result<&'static str, String> {
    let arg = path.display().to_string();
    let args: Vec<&str> = if arg.starts_with('-') { vec!["--", &arg] } else { vec![&arg] };
    let trash = std::process::Command::new("trash").args(&args).output();
    if trash.as_ref().is_ok_and(|o| o.status.success()) || !path.exists() {
        return Ok("Session moved to trash");
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok("Session deleted"),
        Err(e) => {
            let hint = match &trash {
                Err(te) => format!(" (trash: {te})"),
                Ok(o) => {
                    let stderr = String::from_utf8_lossy(&o.stderr);
                    let first = stderr.trim().lines().next().unwrap_or("").to_owned();
                    if first.is_empty() { String::new() } else { format!(" (trash: {first})") }
                }
            };
            Err(format!("{e}{hint}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_pi_writes_them() {
        let now = 1_000_000_000_000;
        assert_eq!(format_age(now - 30_000, now), "now");
        assert_eq!(format_age(now - 5 * 60_000, now), "5m");
        assert_eq!(format_age(now - 3 * 3_600_000, now), "3h");
        assert_eq!(format_age(now - 9 * 86_400_000, now), "1w");
        assert_eq!(format_age(now - 400 * 86_400_000, now), "1y");
    }
}
