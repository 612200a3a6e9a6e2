//! The interactive mode's selectors (issue 14, item 5) in a pseudo-terminal: the session picker
//! of `/resume` (current folder and all, search, delete, rename), each screen compared with the
//! reference pi 1.6.0's screen of the same keys (`fixtures/interactive/record.sh`).

mod cli_support;
mod interactive_support;

use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::*;

/// Two sessions of the project, written by `pi -p` as record.sh's `two_sessions`.
fn two_sessions(env: &Env) {
    for q in ["first question", "second question"] {
        let out = env.run(&["-p", q]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

fn replies() -> Vec<String> {
    vec![text_reply(&["One."]), text_reply(&["Two."])]
}

/// The picker screen after `keys`, ours and the reference's, normalised.
fn picker(keys: &[&str], done: impl Fn(&str) -> bool, name: &str) -> (String, String) {
    scenario(replies(), two_sessions, keys, done, name)
}

#[test]
fn resume_picker_matches_the_reference() {
    let (ours, reference) = picker(&["/resume", "Enter"], |s| s.contains("› second question"), "resume_picker");
    assert_eq!(ours, reference);
}

#[test]
fn resume_picker_tab_shows_all_projects_as_the_reference() {
    let keys = ["/resume", "Enter", "WAIT", "\t"];
    let (ours, reference) = picker(&keys, |s| s.contains("Resume Session (All)"), "resume_all");
    assert_eq!(ours, reference);
}

#[test]
fn resume_picker_search_matches_the_reference() {
    let keys = ["/resume", "Enter", "WAIT", "first"];
    let (ours, reference) =
        picker(&keys, |s| s.contains("› first question") && !s.contains("second question"), "resume_search");
    assert_eq!(ours, reference);
}

#[test]
fn resume_picker_delete_asks_then_removes_the_file() {
    let keys = ["/resume", "Enter", "WAIT", "Down", "\x04"];
    let (ours, reference) = picker(&keys, |s| s.contains("Delete session?"), "resume_delete");
    assert_eq!(ours, reference);

    let server = ScriptedServer::start(replies());
    let env = Env::new(&server.base_url);
    two_sessions(&env);
    assert_eq!(env.session_files().len(), 2);
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/resume", "Enter", "WAIT", "Down", "\x04", "WAIT", "Enter"]);
    let screen = pty.wait_for("the deletion", |s| !s.contains("first question") && s.contains("second question"));
    assert!(screen.contains("Session moved to trash") || screen.contains("Session deleted"), "{screen}");
    assert_eq!(env.session_files().len(), 1, "the first session's file is gone");
    assert_eq!(pty.quit(), 0);
}

#[test]
fn resume_picker_renames_and_resumes_the_chosen_session() {
    let server = ScriptedServer::start(replies());
    let env = Env::new(&server.base_url);
    two_sessions(&env);
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/resume", "Enter", "WAIT", "Down", "\x12"]);
    pty.wait_for("the rename panel", |s| s.contains("Rename Session"));
    type_keys(&mut pty, &["kept", "Enter"]);
    pty.wait_for("the new name", |s| s.contains("› kept"));
    type_keys(&mut pty, &["Enter"]);
    let screen = pty.wait_for("the resumed session", |s| s.contains("Resumed session") && s.contains("One."));
    assert!(screen.contains("first question"), "{screen}");
    assert!(screen.contains("• kept"), "the footer shows the session's name:\n{screen}");
    assert_eq!(pty.quit(), 0);
}
