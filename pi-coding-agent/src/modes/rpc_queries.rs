//! The RPC commands that read or set session state without running the agent (pi's
//! `rpc-mode.ts`: thinking levels, queue modes, session name, entries and tree, commands, HTML
//! export), with pi's response shapes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pi_agent_core::QueueMode;
use pi_ai::Model;
use serde_json::{Map, Value, json};

use super::rpc_command::{failure, success};
use crate::sdk::AgentSession;
use crate::session::entries::SessionEntry;
use crate::session::tree::Labels;

/// Where the resources a command comes from were found, for `get_commands`' `sourceInfo`.
#[derive(Clone, Debug, Default)]
pub struct SourceRoots {
    /// The project directory (`<cwd>/.pi` holds project resources).
    pub cwd: PathBuf,
    /// The agent directory (user resources).
    pub agent_dir: PathBuf,
}

/// pi's name of a queue mode.
pub fn queue_mode_name(mode: QueueMode) -> &'static str {
    match mode {
        QueueMode::OneAtATime => "one-at-a-time",
        QueueMode::All => "all",
    }
}

/// A queue mode by pi's name.
pub fn parse_queue_mode(name: &str) -> Option<QueueMode> {
    match name {
        "one-at-a-time" => Some(QueueMode::OneAtATime),
        "all" => Some(QueueMode::All),
        _ => None,
    }
}

/// `set_steering_mode` / `set_follow_up_mode`. pi stores any value it is sent; a mode that is not
/// `all` or `one-at-a-time` is refused here (see README, deliberate differences).
pub fn set_queue_mode(session: &AgentSession, id: Option<&str>, kind: &str, mode: &str, steering: bool) -> Value {
    let Some(mode) = parse_queue_mode(mode) else {
        return failure(id, kind, &format!("Invalid mode: {mode}. Valid values: all, one-at-a-time"));
    };
    if steering {
        session.agent().set_steering_mode(mode);
    } else {
        session.agent().set_follow_up_mode(mode);
    }
    success(id, kind, None)
}

/// `cycle_thinking_level`: the next supported level (`{level}`), `null` when the model does not
/// reason.
pub fn cycle_thinking_level(session: &AgentSession, id: Option<&str>, kind: &str) -> Value {
    let model = session.model();
    if !model.reasoning {
        return success(id, kind, Some(Value::Null));
    }
    let levels = pi_ai::models::supported_thinking_levels(&model);
    let current = session.thinking_level();
    let next = levels.iter().position(|l| *l == current).map_or(0, |i| (i + 1) % levels.len());
    let Some(&level) = levels.get(next) else {
        return success(id, kind, Some(Value::Null));
    };
    match session.set_thinking_level(level) {
        Ok(()) => success(id, kind, Some(json!({"level": level.as_str()}))),
        Err(e) => failure(id, kind, &e.to_string()),
    }
}

/// `get_available_thinking_levels`: `{levels}` of the current model.
pub fn available_thinking_levels(session: &AgentSession, id: Option<&str>, kind: &str) -> Value {
    let levels: Vec<&str> =
        pi_ai::models::supported_thinking_levels(&session.model()).iter().map(|l| l.as_str()).collect();
    success(id, kind, Some(json!({"levels": levels})))
}

/// `get_available_models`: `{models}` with credentials.
pub fn available_models(models: &[Model], id: Option<&str>, kind: &str) -> Value {
    success(id, kind, Some(json!({"models": serde_json::to_value(models).unwrap_or_default()})))
}

/// `set_session_name`: trimmed; an empty name is refused with pi's error.
pub fn set_session_name(session: &AgentSession, id: Option<&str>, kind: &str, name: &str) -> Value {
    let name = name.trim();
    if name.is_empty() {
        return failure(id, kind, "Session name cannot be empty");
    }
    match session.set_session_name(name) {
        Ok(()) => success(id, kind, None),
        Err(e) => failure(id, kind, &e.to_string()),
    }
}

/// `get_entries`: every entry (those after `since` when given) and the leaf id.
pub fn entries(session: &AgentSession, id: Option<&str>, kind: &str, since: Option<&str>) -> Value {
    session.with_session_manager(|sm| {
        let all = sm.entries();
        let start = match since {
            None => 0,
            Some(since) => match all.iter().position(|e| e.id() == since) {
                Some(i) => i + 1,
                None => return failure(id, kind, &format!("Entry not found: {since}")),
            },
        };
        let entries = serde_json::to_value(&all[start..]).unwrap_or_default();
        success(id, kind, Some(json!({"entries": entries, "leafId": sm.leaf_id()})))
    })
}

/// The `get_tree` response line: `{tree: [{entry, children, label?, labelTimestamp?}], leafId}`.
/// Written as text without recursion, so a session of many thousand entries in one chain (a
/// tree that deep) neither overflows the stack nor builds a nested value.
pub fn tree_response_line(session: &AgentSession, id: Option<&str>, kind: &str) -> String {
    let (tree, leaf) = session.with_session_manager(|sm| {
        (tree_json(sm.entries(), sm.labels()), serde_json::to_string(&sm.leaf_id()).unwrap_or_else(|_| "null".into()))
    });
    let mut head = success(id, kind, None);
    if let Value::Object(o) = &mut head {
        o.insert("data".into(), Value::Null);
    }
    let head = serde_json::to_string(&head).unwrap_or_default();
    // `…,"data":null}` → `…,"data":{"tree":…,"leafId":…}}`.
    let prefix = head.strip_suffix("null}").unwrap_or(&head);
    format!("{prefix}{{\"tree\":{tree},\"leafId\":{leaf}}}}}")
}

/// pi's `getTree()` as JSON text: roots are entries without a (known, other) parent; children
/// sorted by timestamp, oldest first.
pub fn tree_json(entries: &[SessionEntry], labels: &Labels) -> String {
    let pos: std::collections::HashMap<&str, usize> = entries.iter().enumerate().map(|(i, e)| (e.id(), i)).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    let mut roots = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match e.parent_id().filter(|p| *p != e.id()).and_then(|p| pos.get(p)) {
            Some(&parent) if parent != i => children[parent].push(i),
            _ => roots.push(i),
        }
    }
    let time = |i: usize| crate::session::parse_iso(entries[i].timestamp()).unwrap_or(i64::MIN);
    for c in &mut children {
        c.sort_by_key(|&i| time(i));
    }
    enum Step {
        Open(usize),
        Close(usize),
        Comma,
    }
    let mut out = String::from("[");
    let mut stack: Vec<Step> = Vec::new();
    let push_list = |stack: &mut Vec<Step>, list: &[usize]| {
        for (n, &i) in list.iter().enumerate().rev() {
            stack.push(Step::Open(i));
            if n > 0 {
                stack.push(Step::Comma);
            }
        }
    };
    push_list(&mut stack, &roots);
    // A parent cycle leaves its members out of `roots` and out of every reachable list: they are
    // not part of the tree, as in pi.
    while let Some(step) = stack.pop() {
        match step {
            Step::Comma => out.push(','),
            Step::Open(i) => {
                out.push_str("{\"entry\":");
                out.push_str(&serde_json::to_string(&entries[i]).unwrap_or_else(|_| "null".into()));
                out.push_str(",\"children\":[");
                stack.push(Step::Close(i));
                push_list(&mut stack, &children[i]);
            }
            Step::Close(i) => {
                out.push(']');
                if let Some(label) = labels.get(entries[i].id()) {
                    let _ = write!(
                        out,
                        ",\"label\":{},\"labelTimestamp\":{}",
                        serde_json::to_string(&label.label).unwrap_or_default(),
                        serde_json::to_string(&label.timestamp).unwrap_or_default()
                    );
                }
                out.push('}');
            }
        }
    }
    out.push(']');
    out
}

/// `export_html`: the session written as an HTML page (`{path}` as written, relative paths
/// against the process directory; default `pi-session-<file stem>.html`).
pub fn export_html(session: &AgentSession, id: Option<&str>, kind: &str, output: Option<&str>) -> Value {
    let Some(file) = session.session_file() else {
        return failure(id, kind, "Cannot export in-memory session to HTML");
    };
    if !file.exists() {
        return failure(id, kind, "Nothing to export yet - start a conversation first");
    }
    let page = session.with_session_manager(|sm| crate::cli::export_html::render_page(sm.header(), sm.entries()));
    let path = match output.filter(|o| !o.is_empty()) {
        Some(o) => o.to_owned(),
        None => crate::cli::export_html::default_output_name(&file),
    };
    match std::fs::write(crate::session::expand_tilde(&path), page) {
        Ok(()) => success(id, kind, Some(json!({"path": path}))),
        Err(e) => failure(id, kind, &format!("{e}, open '{path}'")),
    }
}

/// pi's `sourceInfo` of a resource file: `auto` with the project's `.pi` or the agent dir as
/// `baseDir` when it was discovered there, otherwise `local` (given on the command line) with
/// `base_dir`.
fn source_info(path: &Path, base_dir: &Path, roots: &SourceRoots, cli_source: &str, with_base: bool) -> Value {
    let project = roots.cwd.join(".pi");
    let (source, scope, base) = if path.starts_with(&project) {
        ("auto", "project", Some(project))
    } else if !roots.agent_dir.as_os_str().is_empty() && path.starts_with(&roots.agent_dir) {
        ("auto", "user", Some(roots.agent_dir.clone()))
    } else {
        (cli_source, "temporary", with_base.then(|| base_dir.to_path_buf()))
    };
    let mut o = Map::new();
    o.insert("path".into(), json!(path.display().to_string()));
    o.insert("source".into(), json!(source));
    o.insert("scope".into(), json!(scope));
    o.insert("origin".into(), json!("top-level"));
    if let Some(b) = base {
        o.insert("baseDir".into(), json!(b.display().to_string()));
    }
    Value::Object(o)
}

/// `get_commands`: extension commands, then prompt templates, then skills (`skill:name`).
pub fn commands(session: &AgentSession, roots: &SourceRoots, id: Option<&str>, kind: &str) -> Value {
    let mut list = Vec::new();
    let entry = |name: String, description: Option<String>, source: &str, info: Value| {
        let mut o = Map::new();
        o.insert("name".into(), json!(name));
        if let Some(d) = description {
            o.insert("description".into(), json!(d));
        }
        o.insert("source".into(), json!(source));
        o.insert("sourceInfo".into(), info);
        Value::Object(o)
    };
    if let Some(runner) = session.extension_runner() {
        for (name, command) in runner.commands() {
            let path = Path::new(&command.extension_path);
            let base = path.parent().unwrap_or(path);
            let info = source_info(path, base, roots, "cli", false);
            list.push(entry(name, command.description.clone(), "extension", info));
        }
    }
    for template in session.prompt_templates() {
        let base = template.file_path.parent().unwrap_or(&template.file_path);
        let info = source_info(&template.file_path, base, roots, "local", true);
        list.push(entry(template.name.clone(), Some(template.description.clone()), "prompt", info));
    }
    for skill in session.skills() {
        let info = source_info(&skill.file_path, &skill.base_dir, roots, "local", true);
        list.push(entry(format!("skill:{}", skill.name), Some(skill.description.clone()), "skill", info));
    }
    success(id, kind, Some(json!({"commands": list})))
}
