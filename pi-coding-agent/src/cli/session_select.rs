//! Which session a run uses: `--no-session`, `--fork`, `--session`, `--resume`, `--continue` and
//! `--session-id`, with pi 1.6.0's precedence, conflicts and messages (`createSessionManager` of
//! its `main.ts`).
//!
//! The functions return the text pi prints; the binary writes it to stderr and picks the exit
//! status, so this module prints nothing.

use std::path::{Path, PathBuf};

use super::args::Args;
use crate::session::{
    NewSessionOptions, SessionManager, list_all_sessions, list_sessions, resolve_path, validate_session_id,
};

/// How the session choice ended when no session is used.
#[derive(Debug, PartialEq, Eq)]
pub enum SessionStop {
    /// Print the lines (already prefixed, e.g. `Error: …`) to stderr and exit 1.
    Fail(String),
    /// Print the text (may be empty) to stderr and exit 0 without running anything.
    Quit(String),
}

/// The chosen session and the warnings to print (`Warning: …` lines, without the prefix).
pub struct SessionChoice {
    /// The session manager.
    pub manager: SessionManager,
    /// Warnings, without the `Warning: ` prefix.
    pub warnings: Vec<String>,
}

/// pi's `validateForkFlags` and `validateSessionIdFlags`: the full `Error: …` line of the first
/// conflict, if any.
pub fn validate_session_flags(args: &Args) -> Option<String> {
    let conflicts = |with_no_session: bool| -> Vec<&str> {
        let mut v = Vec::new();
        if args.session.is_some() {
            v.push("--session");
        }
        if args.continue_session {
            v.push("--continue");
        }
        if args.resume {
            v.push("--resume");
        }
        if with_no_session && args.no_session {
            v.push("--no-session");
        }
        v
    };
    if args.fork.is_some() {
        let c = conflicts(true);
        if !c.is_empty() {
            return Some(format!("Error: --fork cannot be combined with {}", c.join(", ")));
        }
    }
    if let Some(id) = &args.session_id {
        let c = conflicts(false);
        if !c.is_empty() {
            return Some(format!("Error: --session-id cannot be combined with {}", c.join(", ")));
        }
        if let Err(e) = validate_session_id(id) {
            return Some(format!("Error: {e}"));
        }
    }
    None
}

/// Where a `--session`/`--fork` argument points.
enum Resolved {
    /// A path, or a session of the current project.
    Local(PathBuf),
    /// A session of another project (its cwd).
    Global(PathBuf, String),
    NotFound,
}

fn resolve_session_arg(arg: &str, cwd: &Path, session_dir: Option<&Path>) -> Resolved {
    if arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") {
        return Resolved::Local(resolve_path(cwd.join(crate::session::expand_tilde(arg))));
    }
    if let Some(p) = SessionManager::find_by_id(cwd, arg, session_dir) {
        return Resolved::Local(p);
    }
    if let Some(s) = list_sessions(cwd, session_dir).into_iter().find(|s| s.id.starts_with(arg)) {
        return Resolved::Local(s.path);
    }
    let all = list_all_sessions(session_dir);
    let global = all.iter().find(|s| s.id == arg).or_else(|| all.iter().find(|s| s.id.starts_with(arg)));
    match global {
        Some(s) => Resolved::Global(s.path.clone(), s.cwd.clone()),
        None => Resolved::NotFound,
    }
}

fn fail(message: impl std::fmt::Display) -> SessionStop {
    SessionStop::Fail(format!("Error: {message}"))
}

fn fork(
    source: &Path,
    cwd: &Path,
    session_dir: Option<&Path>,
    id: Option<String>,
) -> Result<SessionManager, SessionStop> {
    SessionManager::fork_from(source, cwd, session_dir, NewSessionOptions { id, ..Default::default() }).map_err(fail)
}

/// Picks the session of a run. `confirm` answers pi's "Fork this session into current
/// directory?" question for a `--session` found in another project (`None`: no answer, stdin
/// closed).
pub fn choose_session(
    args: &Args,
    cwd: &Path,
    session_dir: Option<&Path>,
    confirm: &mut dyn FnMut(&str) -> Option<bool>,
) -> Result<SessionChoice, SessionStop> {
    let done = |manager| Ok(SessionChoice { manager, warnings: Vec::new() });
    if args.no_session {
        let options = NewSessionOptions { id: args.session_id.clone(), ..Default::default() };
        return done(SessionManager::in_memory_with(cwd, options, Vec::new()).map_err(fail)?);
    }
    if let Some(source) = &args.fork {
        if let Some(id) = &args.session_id
            && SessionManager::find_by_id(cwd, id, session_dir).is_some()
        {
            return Err(SessionStop::Fail(format!("Session already exists with id '{id}'")));
        }
        return match resolve_session_arg(source, cwd, session_dir) {
            Resolved::Local(p) | Resolved::Global(p, _) => done(fork(&p, cwd, session_dir, args.session_id.clone())?),
            Resolved::NotFound => Err(SessionStop::Fail(format!("No session found matching '{source}'"))),
        };
    }
    if let Some(s) = &args.session {
        return match resolve_session_arg(s, cwd, session_dir) {
            Resolved::Local(p) => done(SessionManager::open(&p, session_dir, None).map_err(fail)?),
            Resolved::Global(p, other_cwd) => {
                let question = format!(
                    "Session found in different project: {other_cwd}\nFork this session into current directory? [y/N] "
                );
                match confirm(&question) {
                    Some(true) => done(fork(&p, cwd, session_dir, None)?),
                    Some(false) => Err(SessionStop::Quit("Aborted.\n".into())),
                    None => Err(SessionStop::Quit(String::new())),
                }
            }
            Resolved::NotFound => Err(SessionStop::Fail(format!("No session found matching '{s}'"))),
        };
    }
    if args.resume {
        // pi draws its session picker here; without a terminal nothing gets picked.
        return Err(SessionStop::Quit("No session selected\n".into()));
    }
    if args.continue_session {
        return done(SessionManager::continue_recent(cwd, session_dir).map_err(fail)?);
    }
    let mut warnings = Vec::new();
    if let Some(id) = &args.session_id {
        if let Some(p) = SessionManager::find_by_id(cwd, id, session_dir) {
            return done(SessionManager::open(&p, session_dir, None).map_err(fail)?);
        }
        warnings.push(format!("No project session found with id '{id}'; creating a new session with that id."));
    }
    let options = NewSessionOptions { id: args.session_id.clone(), ..Default::default() };
    let manager = SessionManager::create(cwd, session_dir, options).map_err(fail)?;
    Ok(SessionChoice { manager, warnings })
}
