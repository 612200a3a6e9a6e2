//! Where sessions live: the agent dir, the per-cwd session dir and file names.

use std::path::{Component, Path, PathBuf};

/// The environment variable that moves the agent dir.
pub const ENV_AGENT_DIR: &str = "PI_CODING_AGENT_DIR";
/// The environment variable that moves the session dir (read by the CLI).
pub const ENV_SESSION_DIR: &str = "PI_CODING_AGENT_SESSION_DIR";

fn home() -> PathBuf {
    dirs::home_dir().unwrap_or_else(|| PathBuf::from("/"))
}

/// Expands a leading `~` or `~/` to the home directory.
pub fn expand_tilde(path: &str) -> PathBuf {
    if path == "~" {
        return home();
    }
    match path.strip_prefix("~/") {
        Some(rest) => home().join(rest),
        None => PathBuf::from(path),
    }
}

/// The agent dir: `$PI_CODING_AGENT_DIR` (tilde-expanded) or `~/.pi/agent`.
pub fn get_agent_dir() -> PathBuf {
    match std::env::var(ENV_AGENT_DIR) {
        Ok(dir) if !dir.is_empty() => expand_tilde(&dir),
        _ => home().join(".pi").join("agent"),
    }
}

/// `agentDir/sessions`.
pub fn get_sessions_dir() -> PathBuf {
    get_agent_dir().join("sessions")
}

/// Makes `path` absolute against the process cwd and removes `.` and `..` lexically (Node's
/// `path.resolve`), after tilde expansion.
pub fn resolve_path(path: impl AsRef<Path>) -> PathBuf {
    let path = path.as_ref();
    let path = match path.to_str() {
        Some(s) => expand_tilde(s),
        None => path.to_path_buf(),
    };
    let joined = if path.is_absolute() {
        path
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")).join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The directory name pi uses for a cwd: `--<cwd>--` with one leading `/` or `\` removed and every
/// `/`, `\` and `:` replaced by `-`.
///
/// ```
/// assert_eq!(pi_coding_agent::session::encode_cwd("/tmp/p/proj"), "--tmp-p-proj--");
/// ```
pub fn encode_cwd(resolved_cwd: &str) -> String {
    let trimmed = resolved_cwd.strip_prefix(['/', '\\']).unwrap_or(resolved_cwd);
    let safe: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{safe}--")
}

/// `agentDir/sessions/--<cwd>--` for `cwd`, without creating it.
pub fn default_session_dir_path(cwd: impl AsRef<Path>, agent_dir: impl AsRef<Path>) -> PathBuf {
    let cwd = resolve_path(cwd);
    resolve_path(agent_dir).join("sessions").join(encode_cwd(&cwd.to_string_lossy()))
}

/// `<ISO timestamp with ':' and '.' replaced by '-'>_<sessionId>.jsonl`.
///
/// ```
/// assert_eq!(
///     pi_coding_agent::session::session_file_name("2026-11-30T09:27:33.046Z", "abc"),
///     "2026-11-30T09-27-33-046Z_abc.jsonl"
/// );
/// ```
pub fn session_file_name(iso_timestamp: &str, session_id: &str) -> String {
    let ts: String = iso_timestamp.chars().map(|c| if matches!(c, ':' | '.') { '-' } else { c }).collect();
    format!("{ts}_{session_id}.jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_and_encodes() {
        assert_eq!(resolve_path("/a/./b/../c"), PathBuf::from("/a/c"));
        assert_eq!(encode_cwd("C:\\Users\\me"), "--C--Users-me--");
        assert_eq!(default_session_dir_path("/tmp/p/proj", "/agent"), PathBuf::from("/agent/sessions/--tmp-p-proj--"));
    }
}
