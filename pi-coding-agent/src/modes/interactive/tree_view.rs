//! `/tree`: pi's session tree navigator (`TreeSelectorComponent`). Every entry of the session
//! file as a tree (branches indented with connectors, the current path marked `•`), pi's filters
//! (default, no-tools, user-only, labeled-only, all), type-to-search, folding of branches, page
//! keys, labels edited in place (`shift+l`, written as `label` entries), label times shown on
//! `shift+t`, and the selected entry's text copied on `ctrl+x`.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use pi_agent_core::AgentMessage;
use pi_tui::ansi::{truncate_to_width_with, visible_width, wrap_text_with_ansi};
use pi_tui::keys::Keybindings;
use pi_tui::theme::bold;
use pi_tui::{Component, Input, Lines, Theme};

use super::dialogs::DoneCell;
use crate::session::{SessionEntry, SessionTreeNode};

/// pi's filter modes, in its cycle order.
const FILTERS: [&str; 5] = ["default", "no-tools", "user-only", "labeled-only", "all"];

/// What kind of entry a row is, for the filters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Assistant { has_text: bool, error_or_aborted: bool },
    ToolResult,
    Settings,
    Hidden,
    Other,
}

#[derive(Clone)]
struct Row {
    id: String,
    parent: Option<String>,
    indent: usize,
    connector: bool,
    is_last: bool,
    gutters: Vec<(usize, bool)>,
    kind: Kind,
    text: String,
    search: String,
    label: Option<String>,
    /// ISO time of the latest label change.
    label_time: Option<String>,
    /// pi's `getEntryCopyText`.
    copy: Option<String>,
}

fn normalize(s: &str) -> String {
    s.replace(['\n', '\t'], " ").trim().to_owned()
}

fn describe(
    entry: &SessionEntry,
    theme: &Theme,
    tool_calls: &HashMap<String, (String, String)>,
) -> (Kind, String, String) {
    match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(u) => {
                let t = normalize(&crate::render::content_text_of(&u.content));
                (Kind::User, format!("{}{t}", theme.fg("accent", "user: ")), t)
            }
            AgentMessage::Assistant(a) => {
                let text: String = a
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        pi_ai::AssistantBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("");
                let text = normalize(&text);
                let stop = serde_json::to_value(a.stop_reason).ok().and_then(|v| v.as_str().map(str::to_owned));
                let bad = stop.as_deref().is_some_and(|s| s != "stop" && s != "toolUse");
                let label = theme.fg("success", "assistant: ");
                let shown = if !text.is_empty() {
                    format!("{label}{text}")
                } else if stop.as_deref() == Some("aborted") {
                    format!("{label}{}", theme.fg("muted", "(aborted)"))
                } else if let Some(e) = &a.error_message {
                    format!("{label}{}", theme.fg("error", &normalize(e).chars().take(80).collect::<String>()))
                } else {
                    format!("{label}{}", theme.fg("muted", "(no content)"))
                };
                (Kind::Assistant { has_text: !text.is_empty(), error_or_aborted: bad }, shown, text)
            }
            AgentMessage::ToolResult(r) => {
                let shown = match tool_calls.get(&r.tool_call_id) {
                    Some((name, args)) => format!("[{name}: {args}]"),
                    None => format!("[{}]", r.tool_name),
                };
                (Kind::ToolResult, theme.fg("muted", &shown), shown)
            }
            other => {
                let role = other.role();
                (Kind::Other, theme.fg("dim", &format!("[{role}]")), role.to_owned())
            }
        },
        SessionEntry::Label(l) => {
            let t = format!("[label: {}]", l.label.as_deref().unwrap_or("(cleared)"));
            (Kind::Settings, theme.fg("dim", &t), t)
        }
        SessionEntry::SessionInfo(i) => {
            let t = format!("[title: {}]", i.name.as_deref().unwrap_or("empty"));
            (Kind::Settings, theme.fg("dim", &t), t)
        }
        SessionEntry::ModelChange(m) => {
            let t = format!("[model: {}]", m.model_id);
            (Kind::Settings, theme.fg("dim", &t), t)
        }
        SessionEntry::ThinkingLevelChange(t) => {
            let s = format!("[thinking: {}]", t.thinking_level);
            (Kind::Settings, theme.fg("dim", &s), s)
        }
        SessionEntry::Custom(c) => {
            let t = format!("[custom: {}]", c.custom_type);
            (Kind::Settings, theme.fg("dim", &t), t)
        }
        SessionEntry::BranchSummary(b) => {
            let t = normalize(&b.summary);
            (Kind::Other, format!("{}{t}", theme.fg("warning", "[branch summary]: ")), t)
        }
        SessionEntry::Compaction(c) => {
            let t = format!("[compaction: {}k tokens]", (c.tokens_before / 1000.0).round());
            (Kind::Other, theme.fg("borderAccent", &t), t)
        }
        SessionEntry::CustomMessage(c) => {
            let t = normalize(&crate::render::content_text_of(&c.content));
            (Kind::Other, format!("{}{t}", theme.fg("customMessageLabel", &format!("[{}]: ", c.custom_type))), t)
        }
        SessionEntry::ContextEdit(c) => {
            let t = format!("[context edit: {}]", c.target_id);
            (Kind::Settings, theme.fg("dim", &t), t)
        }
        SessionEntry::Usage(_) => (Kind::Hidden, String::new(), String::new()),
        SessionEntry::Raw(r) => {
            let t = format!("[{}]", r.entry_type());
            (Kind::Other, theme.fg("dim", &t), t)
        }
    }
}

/// pi's `flattenTree`: the branch holding the current leaf first, indentation growing at forks.
fn flatten(roots: &[SessionTreeNode<'_>], leaf: Option<&str>, theme: &Theme) -> Vec<Row> {
    fn contains(n: &SessionTreeNode<'_>, leaf: Option<&str>, depth: usize) -> bool {
        leaf == Some(n.entry.id()) || (depth < 10_000 && n.children.iter().any(|c| contains(c, leaf, depth + 1)))
    }
    let mut tool_calls = HashMap::new();
    let mut out = Vec::new();
    let multiple = roots.len() > 1;
    type Item<'n, 'a> = (&'n SessionTreeNode<'a>, usize, bool, bool, bool, Vec<(usize, bool)>, bool);
    let mut stack: Vec<Item<'_, '_>> = Vec::new();
    let mut ordered: Vec<&SessionTreeNode<'_>> = roots.iter().collect();
    ordered.sort_by_key(|n| !contains(n, leaf, 0));
    for (i, r) in ordered.iter().enumerate().rev() {
        stack.push((r, usize::from(multiple), multiple, multiple, i + 1 == ordered.len(), Vec::new(), multiple));
    }
    while let Some((node, indent, just_branched, show_connector, is_last, gutters, virtual_child)) = stack.pop() {
        if let SessionEntry::Message(m) = node.entry
            && let AgentMessage::Assistant(a) = &m.message
        {
            for b in &a.content {
                if let pi_ai::AssistantBlock::ToolCall(tc) = b {
                    tool_calls.insert(tc.id.clone(), (tc.name.clone(), first_arg(&tc.arguments)));
                }
            }
        }
        let (kind, text, search) = describe(node.entry, theme, &tool_calls);
        out.push(Row {
            id: node.entry.id().to_owned(),
            parent: node.entry.parent_id().map(str::to_owned),
            indent,
            connector: show_connector && !virtual_child,
            is_last,
            gutters: gutters.clone(),
            kind,
            text,
            search,
            label: node.label.map(|l| l.label.clone()),
            label_time: node.label.map(|l| l.timestamp.clone()),
            copy: copy_text(node.entry),
        });
        let many = node.children.len() > 1;
        let mut children: Vec<&SessionTreeNode<'_>> = node.children.iter().collect();
        children.sort_by_key(|c| !contains(c, leaf, 0));
        let child_indent = if many || (just_branched && indent > 0) { indent + 1 } else { indent };
        let display = if multiple { indent.saturating_sub(1) } else { indent };
        let child_gutters = if show_connector && !virtual_child {
            let mut g = gutters.clone();
            g.push((display.saturating_sub(1), !is_last));
            g
        } else {
            gutters
        };
        for (i, c) in children.iter().enumerate().rev() {
            stack.push((c, child_indent, many, many, i + 1 == children.len(), child_gutters.clone(), false));
        }
    }
    out
}

/// Text blocks joined without a separator (pi's `extractFullContent`).
fn full_text(content: &pi_ai::Content<pi_ai::UserBlock>) -> String {
    match content {
        pi_ai::Content::Text(s) => s.clone(),
        pi_ai::Content::Blocks(blocks) => blocks.iter().filter_map(|b| b.as_text()).collect(),
    }
}

/// pi's `getEntryCopyText`: what `ctrl+x` copies; `None` without text.
fn copy_text(entry: &SessionEntry) -> Option<String> {
    use crate::messages::CodingMessage;
    let text = match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(u) => full_text(&u.content),
            AgentMessage::Assistant(a) => {
                let text: String = a
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        pi_ai::AssistantBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                if text.is_empty() { a.error_message.clone().unwrap_or_default() } else { text }
            }
            AgentMessage::ToolResult(r) => r.content.iter().filter_map(|b| b.as_text()).collect(),
            AgentMessage::System(sys) => match &sys.content {
                pi_ai::Content::Text(t) => t.clone(),
                pi_ai::Content::Blocks(blocks) => blocks.iter().map(|b| b.text.as_str()).collect(),
            },
            AgentMessage::Custom(CodingMessage::BashExecution(b)) => b.command.clone(),
            AgentMessage::Custom(CodingMessage::Custom(c)) => full_text(&c.content),
            _ => String::new(),
        },
        SessionEntry::CustomMessage(c) => full_text(&c.content),
        SessionEntry::Compaction(c) => c.summary.clone(),
        SessionEntry::BranchSummary(b) => b.summary.clone(),
        _ => String::new(),
    };
    (!text.trim().is_empty()).then_some(text)
}

/// pi's `formatLabelTimestamp` (`HH:MM` today, `M/D HH:MM` this year, else `YY/M/D HH:MM`), in
/// UTC: this port reads no time zone database.
fn format_label_time(iso: &str, now_ms: i64) -> String {
    let Some(ms) = crate::session::parse_iso(iso) else { return String::new() };
    let at = crate::session::format_iso(ms);
    let now = crate::session::format_iso(now_ms);
    let num = |s: &str, r: std::ops::Range<usize>| s.get(r).and_then(|v| v.parse::<u32>().ok()).unwrap_or(0);
    let time = at.get(11..16).unwrap_or("00:00").to_owned();
    if at.get(..10) == now.get(..10) {
        return time;
    }
    let (month, day) = (num(&at, 5..7), num(&at, 8..10));
    if at.get(..4) == now.get(..4) {
        return format!("{month}/{day} {time}");
    }
    format!("{}/{month}/{day} {time}", at.get(2..4).unwrap_or("00"))
}

fn first_arg(args: &serde_json::Map<String, serde_json::Value>) -> String {
    for key in ["command", "path", "file_path", "pattern"] {
        if let Some(v) = args.get(key).and_then(|v| v.as_str()) {
            return normalize(v);
        }
    }
    String::new()
}

/// The navigator.
pub(crate) struct TreeView {
    theme: Rc<Theme>,
    keys: Rc<Keybindings>,
    rows: Vec<Row>,
    visible: Vec<usize>,
    selected: usize,
    leaf: Option<String>,
    active: HashSet<String>,
    filter: usize,
    query: String,
    folded: HashSet<String>,
    max_lines: usize,
    label_input: Option<(String, Input)>,
    /// `shift+t`: label times shown.
    show_label_times: bool,
    /// `(entry id, label)` changes for the app to write.
    pub(crate) label_changes: Vec<(String, Option<String>)>,
    /// `ctrl+x` requests for the app: the selected entry's text (`None`: it has none).
    pub(crate) copy_requests: Vec<Option<String>>,
    done: DoneCell,
}

impl TreeView {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        theme: Rc<Theme>,
        keys: Rc<Keybindings>,
        roots: &[SessionTreeNode<'_>],
        leaf: Option<String>,
        initial: Option<String>,
        filter: &str,
        rows_on_screen: usize,
        done: DoneCell,
    ) -> Self {
        let rows = flatten(roots, leaf.as_deref(), &theme);
        let parents: HashMap<&str, Option<&str>> = rows.iter().map(|r| (r.id.as_str(), r.parent.as_deref())).collect();
        let mut active = HashSet::new();
        let mut cur = leaf.clone();
        while let Some(id) = cur {
            cur = parents.get(id.as_str()).copied().flatten().map(str::to_owned);
            active.insert(id);
        }
        let mut view = TreeView {
            theme,
            keys,
            rows,
            visible: Vec::new(),
            selected: 0,
            leaf: leaf.clone(),
            active,
            filter: FILTERS.iter().position(|f| *f == filter).unwrap_or(0),
            query: String::new(),
            folded: HashSet::new(),
            max_lines: (rows_on_screen / 2).max(5),
            label_input: None,
            show_label_times: false,
            label_changes: Vec::new(),
            copy_requests: Vec::new(),
            done,
        };
        view.apply_filter(initial.or(leaf));
        view
    }

    fn passes(&self, r: &Row) -> bool {
        if r.kind == Kind::Hidden {
            return false;
        }
        if let Kind::Assistant { has_text, error_or_aborted } = r.kind
            && Some(&r.id) != self.leaf.as_ref()
            && !has_text
            && !error_or_aborted
        {
            return false;
        }
        let ok = match FILTERS[self.filter] {
            "user-only" => r.kind == Kind::User,
            "no-tools" => r.kind != Kind::Settings && r.kind != Kind::ToolResult,
            "labeled-only" => r.label.is_some(),
            "all" => true,
            _ => r.kind != Kind::Settings,
        };
        let tokens: Vec<String> = self.query.to_lowercase().split_whitespace().map(str::to_owned).collect();
        ok && tokens.iter().all(|t| {
            r.search.to_lowercase().contains(t) || r.label.as_deref().is_some_and(|l| l.to_lowercase().contains(t))
        })
    }

    /// Filters, hides folded branches, and selects `target` or its nearest visible ancestor.
    fn apply_filter(&mut self, target: Option<String>) {
        let target = target.or_else(|| self.visible.get(self.selected).map(|i| self.rows[*i].id.clone()));
        let mut hidden: HashSet<&str> = HashSet::new();
        for r in &self.rows {
            if let Some(p) = r.parent.as_deref()
                && (self.folded.contains(p) || hidden.contains(p))
            {
                hidden.insert(r.id.as_str());
            }
        }
        self.visible = (0..self.rows.len())
            .filter(|i| self.passes(&self.rows[*i]) && !hidden.contains(self.rows[*i].id.as_str()))
            .collect();
        let index: HashMap<&str, usize> =
            self.visible.iter().enumerate().map(|(v, i)| (self.rows[*i].id.as_str(), v)).collect();
        let parents: HashMap<&str, Option<&str>> =
            self.rows.iter().map(|r| (r.id.as_str(), r.parent.as_deref())).collect();
        let mut cur = target;
        let mut found = None;
        while let Some(id) = cur {
            if let Some(v) = index.get(id.as_str()) {
                found = Some(*v);
                break;
            }
            cur = parents.get(id.as_str()).copied().flatten().map(str::to_owned);
        }
        self.selected = found.unwrap_or(self.visible.len().saturating_sub(1));
    }

    fn help(&self, width: usize) -> Vec<String> {
        let first = |a: &str| self.keys.keys(a).first().cloned();
        let fmt = |actions: &[&str]| -> String {
            let keys: Vec<String> = actions.iter().filter_map(|a| first(a)).collect();
            let text = if keys.len() > 1 {
                let split: Vec<(String, String)> = keys
                    .iter()
                    .map(|k| match k.rfind('+') {
                        Some(i) => (k[..=i].to_owned(), k[i + 1..].to_owned()),
                        None => (String::new(), k.clone()),
                    })
                    .collect();
                let prefix = split[0].0.clone();
                if !prefix.is_empty() && split.iter().all(|(p, _)| *p == prefix) {
                    format!("{prefix}{}", split.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>().join("/"))
                } else {
                    keys.join("/")
                }
            } else {
                keys.join("/")
            };
            let re = |t: String, from: &str, to: &str| {
                regex::Regex::new(&format!(r"\b{from}\b")).map_or(t.clone(), |r| r.replace_all(&t, to).into_owned())
            };
            let t = re(re(text, "pageUp", "pgup"), "pageDown", "pgdn");
            re(re(re(re(t, "up", "↑"), "down", "↓"), "left", "←"), "right", "→")
        };
        let items = [
            format!("{} move", fmt(&["tui.select.up", "tui.select.down"])),
            format!("{} page", fmt(&["tui.editor.cursorLeft", "tui.editor.cursorRight"])),
            format!("{} branch", fmt(&["app.tree.foldOrUp", "app.tree.unfoldOrDown"])),
            format!("{} copy", fmt(&["app.message.copy"])),
            format!("{} label", fmt(&["app.tree.editLabel"])),
            format!("{} label time", fmt(&["app.tree.toggleLabelTimestamp"])),
            format!(
                "filters {}",
                fmt(&[
                    "app.tree.filter.default",
                    "app.tree.filter.noTools",
                    "app.tree.filter.userOnly",
                    "app.tree.filter.labeledOnly",
                    "app.tree.filter.all"
                ])
            ),
            format!("cycle {}", fmt(&["app.tree.filter.cycleForward", "app.tree.filter.cycleBackward"])),
        ];
        let mut lines = Vec::new();
        let mut current = String::new();
        for item in items {
            let candidate = if current.is_empty() { format!("  {item}") } else { format!("{current} · {item}") };
            if current.is_empty() || visible_width(&candidate) <= width {
                current = candidate;
                continue;
            }
            lines.extend(wrap_text_with_ansi(current.trim_end(), width.max(1)));
            current = format!("  {item}");
        }
        if !current.is_empty() {
            lines.extend(wrap_text_with_ansi(current.trim_end(), width.max(1)));
        }
        lines.into_iter().map(|l| self.theme.fg("muted", &l)).collect()
    }

    fn row_line(&self, v: usize, width: usize) -> String {
        let t = &self.theme;
        let r = &self.rows[self.visible[v]];
        let selected = v == self.selected;
        let cursor = if selected { t.fg("accent", "› ") } else { "  ".to_owned() };
        let multiple = self.rows.iter().filter(|x| x.parent.is_none()).count() > 1;
        let display = if multiple { r.indent.saturating_sub(1) } else { r.indent };
        let connector_pos = if r.connector { display.checked_sub(1) } else { None };
        let folded = self.folded.contains(&r.id);
        let mut prefix = String::new();
        for i in 0..display * 3 {
            let (level, pos) = (i / 3, i % 3);
            if let Some((_, show)) = r.gutters.iter().find(|(p, _)| *p == level) {
                prefix.push(if pos == 0 && *show { '│' } else { ' ' });
            } else if Some(level) == connector_pos {
                prefix.push(match pos {
                    0 if r.is_last => '└',
                    0 => '├',
                    1 if folded => '⊞',
                    1 if self.foldable(&r.id) => '⊟',
                    1 => '─',
                    _ => ' ',
                });
            } else {
                prefix.push(' ');
            }
        }
        let fold = if folded && !r.connector { t.fg("accent", "⊞ ") } else { String::new() };
        let path = if self.active.contains(&r.id) { t.fg("accent", "• ") } else { String::new() };
        let label = r.label.as_ref().map_or(String::new(), |l| t.fg("warning", &format!("[{l}] ")));
        let label_time = match (&r.label, &r.label_time) {
            (Some(_), Some(at)) if self.show_label_times => {
                let now = i64::try_from(crate::session::now_ms()).unwrap_or(i64::MAX);
                t.fg("muted", &format!("{} ", format_label_time(at, now)))
            }
            _ => String::new(),
        };
        let content = if selected { bold(&r.text) } else { r.text.clone() };
        let mut gutter = cursor;
        let mut body = format!("{}{fold}{path}{label}{label_time}{content}", t.fg("dim", &prefix));
        if selected {
            gutter = t.bg("selectedBg", &gutter);
            body = t.bg("selectedBg", &body);
        }
        truncate_to_width_with(&format!("{gutter}{body}"), width, "…", false)
    }

    fn foldable(&self, id: &str) -> bool {
        self.rows.iter().filter(|r| r.parent.as_deref() == Some(id)).count() > 1
    }

    fn tree_lines(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let n = self.visible.len();
        if n == 0 {
            return vec![
                t.fg("muted", "  No entries found"),
                t.fg("muted", &format!("  (0/0){}", self.status_labels())),
            ];
        }
        let start = self.selected.saturating_sub(self.max_lines / 2).min(n.saturating_sub(self.max_lines));
        let end = (start + self.max_lines).min(n);
        let mut lines: Vec<String> = (start..end).map(|v| self.row_line(v, width)).collect();
        let status = format!("  ({}/{n}){}", self.selected + 1, self.status_labels());
        lines.push(truncate_to_width_with(&t.fg("muted", &status), width, "…", false));
        lines
    }

    fn status_labels(&self) -> String {
        let mut labels = match FILTERS[self.filter] {
            "default" => String::new(),
            "user-only" => " [user]".to_owned(),
            "labeled-only" => " [labeled]".to_owned(),
            f => format!(" [{f}]"),
        };
        if self.show_label_times {
            labels.push_str(" [+label time]");
        }
        labels
    }

    fn set_filter(&mut self, i: usize) {
        self.filter = if self.filter == i && i != 0 { 0 } else { i };
        self.apply_filter(None);
    }
}

impl Component for TreeView {
    fn render(&mut self, width: usize) -> Lines {
        let t = self.theme.clone();
        let border = t.fg("border", &"─".repeat(width.max(1)));
        let mut lines = vec![String::new(), border.clone(), format!(" {}", bold("  Session Tree"))];
        lines.extend(self.help(width));
        let search = if self.query.is_empty() {
            format!("  {} ", t.fg("muted", "Type to search:"))
        } else {
            format!("  {} {}", t.fg("muted", "Type to search:"), t.fg("accent", &self.query))
        };
        lines.push(search);
        lines.push(border.clone());
        lines.push(String::new());
        if let Some((_, input)) = self.label_input.as_mut() {
            lines.push(format!("  {}", t.fg("muted", "Label (empty to remove):")));
            lines.extend(input.render(width.saturating_sub(2)).iter().map(|l| format!("  {l}")));
            let k = |a: &str| super::keys::key_text(&self.keys, a);
            lines.push(format!(
                "  {}{}  {}{}",
                t.fg("dim", &k("tui.select.confirm")),
                t.fg("muted", " save"),
                t.fg("dim", &k("tui.select.cancel")),
                t.fg("muted", " cancel")
            ));
        } else {
            lines.extend(self.tree_lines(width));
        }
        lines.push(String::new());
        lines.push(border);
        lines.into()
    }

    fn handle_input(&mut self, data: &str) {
        let kb = self.keys.clone();
        if let Some((id, input)) = self.label_input.as_mut() {
            if kb.matches(data, "tui.select.confirm") {
                let value = input.value().trim().to_owned();
                let label = (!value.is_empty()).then_some(value);
                let id = id.clone();
                if let Some(r) = self.rows.iter_mut().find(|r| r.id == id) {
                    r.label.clone_from(&label);
                    r.label_time = label.as_ref().map(|_| crate::session::iso_now());
                }
                self.label_changes.push((id, label));
                self.label_input = None;
            } else if kb.matches(data, "tui.select.cancel") {
                self.label_input = None;
            } else {
                input.handle_input(data);
            }
            return;
        }
        let n = self.visible.len();
        let current = self.visible.get(self.selected).map(|i| self.rows[*i].id.clone());
        if kb.matches(data, "tui.select.up") {
            self.selected = if self.selected == 0 { n.saturating_sub(1) } else { self.selected - 1 };
        } else if kb.matches(data, "tui.select.down") {
            self.selected = if self.selected + 1 >= n { 0 } else { self.selected + 1 };
        } else if kb.matches(data, "app.tree.foldOrUp") {
            if let Some(id) = current.filter(|id| self.foldable(id) && !self.folded.contains(id)) {
                self.folded.insert(id.clone());
                self.apply_filter(Some(id));
            }
        } else if kb.matches(data, "app.tree.unfoldOrDown") {
            if let Some(id) = current.filter(|id| self.folded.contains(id)) {
                self.folded.remove(&id);
                self.apply_filter(Some(id));
            }
        } else if kb.matches(data, "tui.editor.cursorLeft") || kb.matches(data, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(self.max_lines);
        } else if kb.matches(data, "tui.editor.cursorRight") || kb.matches(data, "tui.select.pageDown") {
            self.selected = (self.selected + self.max_lines).min(n.saturating_sub(1));
        } else if kb.matches(data, "tui.select.confirm") {
            if let Some(id) = current {
                *self.done.borrow_mut() = Some(Some(id));
            }
        } else if kb.matches(data, "tui.select.cancel") {
            if self.query.is_empty() {
                *self.done.borrow_mut() = Some(None);
            } else {
                self.query.clear();
                self.apply_filter(current);
            }
        } else if kb.matches(data, "app.message.copy") {
            let text = self.visible.get(self.selected).and_then(|i| self.rows[*i].copy.clone());
            self.copy_requests.push(text);
        } else if kb.matches(data, "app.tree.toggleLabelTimestamp") {
            self.show_label_times = !self.show_label_times;
        } else if kb.matches(data, "app.tree.editLabel") {
            if let Some(id) = current {
                let mut input = Input::default();
                input
                    .set_value(self.rows.iter().find(|r| r.id == id).and_then(|r| r.label.clone()).unwrap_or_default());
                input.set_focused(true);
                self.label_input = Some((id, input));
            }
        } else if let Some(i) = [
            "app.tree.filter.default",
            "app.tree.filter.noTools",
            "app.tree.filter.userOnly",
            "app.tree.filter.labeledOnly",
            "app.tree.filter.all",
        ]
        .iter()
        .position(|a| kb.matches(data, a))
        {
            self.set_filter(i);
        } else if kb.matches(data, "app.tree.filter.cycleForward") {
            self.filter = (self.filter + 1) % FILTERS.len();
            self.apply_filter(current);
        } else if kb.matches(data, "app.tree.filter.cycleBackward") {
            self.filter = (self.filter + FILTERS.len() - 1) % FILTERS.len();
            self.apply_filter(current);
        } else if kb.matches(data, "tui.editor.deleteCharBackward") {
            self.query.pop();
            self.apply_filter(current);
        } else if let Some(ch) = pi_tui::keys::decode_printable_key(data)
            .or_else(|| (data.chars().count() == 1 && !data.chars().any(char::is_control)).then(|| data.to_owned()))
        {
            self.query.push_str(&ch);
            self.apply_filter(current);
        }
    }
}

impl super::app::App {
    /// pi's tree `onCopy`: the selected entry's text to the clipboard (OSC 52, as `/copy`), or
    /// an error when it has none.
    pub(crate) fn apply_tree_copies(&mut self) {
        let Some(view) = self.tree_view.clone() else { return };
        let requests: Vec<_> = view.borrow_mut().copy_requests.drain(..).collect();
        for request in requests {
            match request {
                None => self.show_error("Selected entry has no text to copy"),
                Some(text) => {
                    use base64::Engine;
                    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                    let mut out = std::io::stdout();
                    let written = std::io::Write::write_all(&mut out, format!("\x1b]52;c;{b64}\x07").as_bytes())
                        .and_then(|()| std::io::Write::flush(&mut out));
                    match written {
                        Ok(()) => self.show_status("Copied selected message to clipboard"),
                        Err(e) => self.show_error(&e.to_string()),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::format_label_time;

    #[test]
    fn label_times_shorten_as_pi_does() {
        let now = crate::session::parse_iso("2026-12-02T10:00:00.000Z").unwrap_or(0);
        assert_eq!(format_label_time("2026-12-02T08:05:00.000Z", now), "08:05");
        assert_eq!(format_label_time("2026-03-04T23:59:00.000Z", now), "3/4 23:59");
        assert_eq!(format_label_time("2025-11-30T07:00:00.000Z", now), "25/11/30 07:00");
    }
}
