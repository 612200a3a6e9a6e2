//! Discovering sessions on disk: the most recent one, one by id, and listings.

use std::path::{Path, PathBuf};

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantBlock, Content, UserBlock};

use crate::session::entries::SessionEntry;
use crate::session::load::{ReadOutcome, read_session_file, read_session_header};
use crate::session::paths::{default_session_dir_path, get_agent_dir, resolve_path};
use crate::session::time::parse_iso;

/// A summary of one session file (pi's `SessionInfo`). Times are Unix milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionInfo {
    /// The file.
    pub path: PathBuf,
    /// Session id.
    pub id: String,
    /// Working directory from the header (`""` if none).
    pub cwd: String,
    /// Display name (latest `session_info`).
    pub name: Option<String>,
    /// The parent session file.
    pub parent_session_path: Option<String>,
    /// Header time.
    pub created: Option<i64>,
    /// Latest user/assistant message time, else header time, else the file's mtime.
    pub modified: i64,
    /// Number of `message` entries.
    pub message_count: usize,
    /// Text of the first user message, or `"(no messages)"`.
    pub first_message: String,
    /// Texts of all user and assistant messages, joined with spaces.
    pub all_messages_text: String,
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect()
}

fn mtime_ms(path: &Path) -> Option<i64> {
    let m = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(m.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as i64)
}

fn cwd_matches(header_cwd: Option<&str>, cwd: &Path) -> bool {
    header_cwd.is_some_and(|c| !c.is_empty() && resolve_path(c) == cwd)
}

/// The newest `*.jsonl` session in `dir` by mtime (only those whose header cwd is `cwd`, if given).
pub fn find_most_recent_session(dir: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    let mut files: Vec<(PathBuf, i64)> = jsonl_files(dir)
        .into_iter()
        .map(|p| {
            let m = mtime_ms(&p).unwrap_or(i64::MIN);
            (p, m)
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.1));
    files.into_iter().map(|(p, _)| p).find(|p| match read_session_header(p) {
        Some(h) => cwd.is_none_or(|c| cwd_matches(h.cwd.as_deref(), c)),
        None => false,
    })
}

fn session_dir_for(cwd: &Path, session_dir: Option<&Path>) -> (PathBuf, bool) {
    let default_dir = default_session_dir_path(cwd, get_agent_dir());
    match session_dir {
        Some(d) => {
            let d = resolve_path(d);
            let filter = d != default_dir;
            (d, filter)
        }
        None => (default_dir, false),
    }
}

/// The file of session `id` among `cwd`'s sessions.
pub fn find_by_id(cwd: &Path, id: &str, session_dir: Option<&Path>) -> Option<PathBuf> {
    let (dir, filter) = session_dir_for(cwd, session_dir);
    let cwd = resolve_path(cwd);
    jsonl_files(&dir).into_iter().find(|p| {
        read_session_header(p).is_some_and(|h| h.id == id && (!filter || cwd_matches(h.cwd.as_deref(), &cwd)))
    })
}

fn user_text(c: &Content<UserBlock>) -> String {
    match c {
        Content::Text(t) => t.clone(),
        Content::Blocks(b) => b.iter().filter_map(UserBlock::as_text).collect::<Vec<_>>().join(" "),
    }
}

/// Reads the summary of one session file; `None` when it is not a session.
pub fn session_info(path: &Path) -> Option<SessionInfo> {
    let ReadOutcome::Session(f) = read_session_file(path).ok()? else { return None };
    let mut name = None;
    let mut count = 0;
    let mut first = String::new();
    let mut all = Vec::new();
    let mut last_activity: Option<i64> = None;
    for e in &f.entries {
        if let SessionEntry::SessionInfo(i) = e {
            name = i.name.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned);
        }
        let SessionEntry::Message(m) = e else { continue };
        count += 1;
        let (text, is_user, ts) = match &m.message {
            AgentMessage::User(u) => (user_text(&u.content), true, u.timestamp),
            AgentMessage::Assistant(a) => {
                let t: Vec<&str> = a.content.iter().filter_map(AssistantBlock::as_text).collect();
                (t.join(" "), false, a.timestamp)
            }
            _ => continue,
        };
        last_activity = Some(last_activity.unwrap_or(0).max(ts as i64));
        if text.is_empty() {
            continue;
        }
        if first.is_empty() && is_user {
            first = text.clone();
        }
        all.push(text);
    }
    let created = f.header.timestamp.as_deref().and_then(parse_iso);
    let modified = last_activity.filter(|t| *t > 0).or(created).or_else(|| mtime_ms(path)).unwrap_or(0);
    Some(SessionInfo {
        path: path.to_path_buf(),
        id: f.header.id,
        cwd: f.header.cwd.unwrap_or_default(),
        name,
        parent_session_path: f.header.parent_session,
        created,
        modified,
        message_count: count,
        first_message: if first.is_empty() { "(no messages)".to_owned() } else { first },
        all_messages_text: all.join(" "),
    })
}

/// The sessions of `cwd` (its default directory, or `session_dir` filtered by header cwd),
/// most recently active first.
pub fn list_sessions(cwd: &Path, session_dir: Option<&Path>) -> Vec<SessionInfo> {
    let (dir, filter) = session_dir_for(cwd, session_dir);
    let cwd = resolve_path(cwd);
    let mut out: Vec<SessionInfo> = jsonl_files(&dir)
        .iter()
        .filter_map(|p| session_info(p))
        .filter(|s| !filter || cwd_matches(Some(&s.cwd), &cwd))
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.modified));
    out
}

/// The sessions of every project under `agentDir/sessions` (or of `session_dir`), most recently
/// active first.
pub fn list_all_sessions(session_dir: Option<&Path>) -> Vec<SessionInfo> {
    let dirs: Vec<PathBuf> = match session_dir {
        Some(d) => vec![resolve_path(d)],
        None => {
            let root = get_agent_dir().join("sessions");
            std::fs::read_dir(&root)
                .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect())
                .unwrap_or_default()
        }
    };
    let mut out: Vec<SessionInfo> = dirs.iter().flat_map(|d| jsonl_files(d)).filter_map(|p| session_info(&p)).collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.modified));
    out
}
