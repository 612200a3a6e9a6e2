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

/// A session with two turns, continued with `-c` (record.sh's `two_turns`).
fn two_turns(env: &Env) {
    for q in ["first question", "second question"] {
        let out = env.run(&["-c", "-p", q]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

/// `pi -c` on a two-turn session, `keys` typed, the screen once `done` holds, ours and the
/// reference's; the environment for further checks.
fn tree_scenario(keys: &[&str], done: impl Fn(&str) -> bool, name: &str) -> (String, String, Env, ScriptedServer) {
    let server = ScriptedServer::start(replies());
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    std::fs::write(env.proj().join("notes.txt"), "line one\nline two\n").expect("notes");
    two_turns(&env);
    let mut pty = Pty::spawn(&env, &["-c"]);
    pty.wait_for("the resumed session", |s| s.contains("Two."));
    type_keys(&mut pty, keys);
    let screen = pty.wait_for(name, done);
    let code = pty.quit();
    let out = pty.output_after_exit();
    assert_eq!(code, 0, "{}", &out[out.len().saturating_sub(1500)..]);
    let proj = env.proj().display().to_string();
    (normalize(&screen, &proj), normalize(&fixture(&format!("{name}.ref.txt")), &proj), env, server)
}

#[test]
fn tree_navigator_matches_the_reference() {
    let (ours, reference, ..) = tree_scenario(&["/tree", "Enter"], |s| s.contains("(5/5)"), "tree");
    assert_eq!(ours, reference);
    let (ours, reference, ..) =
        tree_scenario(&["/tree", "Enter", "WAIT", "Up", "Up"], |s| s.contains("(3/5)"), "tree_up");
    assert_eq!(ours, reference);
}

#[test]
fn tree_switch_asks_for_a_summary_as_the_reference() {
    let keys = ["/tree", "Enter", "WAIT", "Up", "Up", "Up", "Enter"];
    let (ours, reference, ..) = tree_scenario(&keys, |s| s.contains("Summarize branch?"), "tree_switch");
    assert_eq!(ours, reference);
}

#[test]
fn tree_switch_without_summary_moves_the_leaf_and_fills_the_editor() {
    let server = ScriptedServer::start(replies());
    let env = Env::new(&server.base_url);
    two_turns(&env);
    let mut pty = Pty::spawn(&env, &["-c"]);
    pty.wait_for("the resumed session", |s| s.contains("Two."));
    // The second user message: the leaf moves to its parent and its text goes to the editor.
    type_keys(&mut pty, &["/tree", "Enter", "WAIT", "Up", "WAIT", "Enter"]);
    pty.wait_for("the summary prompt", |s| s.contains("→ No summary"));
    type_keys(&mut pty, &["Enter"]);
    let screen = pty.wait_for("the switch", |s| s.contains("Navigated to selected point"));
    assert!(!screen.contains("Two."), "the second answer is off the branch:\n{screen}");
    let editor = screen.lines().rev().find(|l| l.contains("second question")).unwrap_or_default();
    assert!(!editor.is_empty(), "the selected message is in the editor:\n{screen}");
    assert_eq!(pty.quit(), 0);
}

#[test]
fn tree_labels_are_edited_in_place_and_written() {
    let keys = ["/tree", "Enter", "WAIT", "Up", "L"];
    let (ours, reference, ..) = tree_scenario(&keys, |s| s.contains("Label (empty to remove):"), "tree_label");
    assert_eq!(ours, reference);

    let server = ScriptedServer::start(replies());
    let env = Env::new(&server.base_url);
    two_turns(&env);
    let mut pty = Pty::spawn(&env, &["-c"]);
    pty.wait_for("the resumed session", |s| s.contains("Two."));
    type_keys(&mut pty, &["/tree", "Enter", "WAIT", "Up", "L", "WAIT", "checkpoint", "Enter"]);
    pty.wait_for("the label", |s| s.contains("[checkpoint] user: second question"));
    // The labeled-only filter keeps just that entry.
    type_keys(&mut pty, &["\x0c"]);
    let screen = pty.wait_for("the filter", |s| s.contains("(1/1)"));
    assert!(screen.contains("[checkpoint]"), "{screen}");
    pty.send("\x1b");
    pty.wait_for("the editor", |s| !s.contains("Session Tree"));
    // Ctrl+C twice quits, as it does in the reference after the same keys (record.sh tree_quit).
    pty.send("\x03\x03");
    assert_eq!(pty.wait_exit(), 0);
    let files = env.session_files();
    let text = std::fs::read_to_string(&files[0]).expect("session");
    assert!(text.contains("\"type\":\"label\"") && text.contains("\"label\":\"checkpoint\""), "{text}");
}

#[test]
fn pi_resume_opens_the_picker_first() {
    let server = ScriptedServer::start(replies());
    let env = Env::new(&server.base_url);
    two_sessions(&env);
    let mut pty = Pty::spawn(&env, &["--resume"]);
    pty.wait_for("the picker", |s| s.contains("Resume Session (Current Folder)") && s.contains("› second question"));
    type_keys(&mut pty, &["Down", "Enter"]);
    let screen = pty.wait_for("the resumed session", |s| s.contains("Resumed session") && s.contains("One."));
    assert!(screen.contains("first question") && !screen.contains("Two."), "{screen}");
    assert_eq!(pty.quit(), 0);

    // Dismissed: pi quits and says why.
    let mut pty = Pty::spawn(&env, &["--resume"]);
    pty.wait_for("the picker", |s| s.contains("Resume Session (Current Folder)"));
    pty.send("\x1b");
    assert_eq!(pty.wait_exit(), 0);
    assert!(pty.output_after_exit().contains("No session selected"));
}

/// `pi -c` on a two-turn session with `settings`, then Escape twice, 0.2 s apart, as a person
/// presses it: the screen once `done` holds (or after 3 s), ours and the reference's `name`.
fn double_escape(settings: &str, done: impl Fn(&str) -> bool, name: &str) -> (String, String) {
    let server = ScriptedServer::start(replies());
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), settings).expect("settings");
    two_turns(&env);
    let mut pty = Pty::spawn(&env, &["-c"]);
    pty.wait_for("the resumed session", |s| s.contains("Two."));
    // Two Escapes a loaded machine let pile up reach pi in one read, which is Alt+Escape (as in
    // the reference): each try starts after the half second a lone Escape counts for.
    for _ in 0..3 {
        pty.send("\x1b");
        std::thread::sleep(std::time::Duration::from_millis(200));
        pty.send("\x1b");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while !done(&pty.screen()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if done(&pty.screen()) {
            break;
        }
    }
    let screen = pty.wait_for(name, &done);
    assert_eq!(pty.quit(), 0);
    let proj = env.proj().display().to_string();
    (normalize(&screen, &proj), normalize(&fixture(&format!("{name}.ref.txt")), &proj))
}

#[test]
fn a_double_escape_opens_the_tree_or_the_fork_selector_as_the_reference() {
    let (ours, reference) = double_escape(r#"{"theme":"dark"}"#, |s| s.contains("(5/5)"), "double_escape");
    assert_eq!(ours, reference);
    let (ours, reference) = double_escape(
        r#"{"theme":"dark","doubleEscapeAction":"fork"}"#,
        |s| s.contains("Message 2 of 2"),
        "double_escape_fork",
    );
    assert_eq!(ours, reference);
}

#[test]
fn a_double_escape_does_nothing_with_double_escape_action_none() {
    let server = ScriptedServer::start(replies());
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"theme":"dark","doubleEscapeAction":"none"}"#)
        .expect("settings");
    two_turns(&env);
    let mut pty = Pty::spawn(&env, &["-c"]);
    pty.wait_for("the resumed session", |s| s.contains("Two."));
    pty.send("\x1b");
    std::thread::sleep(std::time::Duration::from_millis(200));
    pty.send("\x1b");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let screen = pty.wait_for("quiet", |_| true);
    let proj = env.proj().display().to_string();
    assert_eq!(normalize(&screen, &proj), normalize(&fixture("double_escape_none.ref.txt"), &proj));
    assert_eq!(pty.quit(), 0);
}

#[test]
fn fork_lists_the_user_messages_as_the_reference() {
    let (ours, reference, ..) =
        tree_scenario(&["/fork", "Enter", "WAIT", "Up"], |s| s.contains("› first question"), "fork_up");
    assert_eq!(ours, reference);
}

#[test]
fn fork_and_clone_move_to_a_new_session_as_the_reference() {
    let keys = ["/fork", "Enter", "WAIT", "Up", "Enter"];
    let (ours, reference, env, _server) = tree_scenario(&keys, |s| s.contains("Forked to new session"), "fork_done");
    // With no answer in the new session, the footer estimates the context from the system prompt,
    // which names pi's documentation by path: the reference's lies elsewhere.
    let usage = regex::Regex::new(r"\d+\.\d%/8\.2k").expect("regex");
    assert_eq!(usage.replace_all(&ours, "<USAGE>"), usage.replace_all(&reference, "<USAGE>"));
    // A fork before the first message has nothing to write yet: pi writes a session file once it
    // holds an answer.
    assert_eq!(env.session_files().len(), 1);
    drop(env);
    let (ours, reference, env, _server) =
        tree_scenario(&["/clone", "Enter"], |s| s.contains("Cloned to new session"), "clone_done");
    assert_eq!(ours, reference);
    assert_eq!(env.session_files().len(), 2, "the clone is a session file of its own");
}

#[test]
fn keybindings_json_binds_the_session_actions() {
    let server = ScriptedServer::start(replies());
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    std::fs::write(
        env.agent().join("keybindings.json"),
        r#"{"app.session.tree":"alt+t","app.session.fork":"alt+k","app.session.new":"alt+n"}"#,
    )
    .expect("keybindings");
    two_turns(&env);
    let mut pty = Pty::spawn(&env, &["-c"]);
    pty.wait_for("the resumed session", |s| s.contains("Two."));
    pty.send("\x1bt");
    pty.wait_for("the tree", |s| s.contains("(5/5)"));
    pty.send("\x1b");
    pty.wait_for("the editor", |s| !s.contains("Session Tree"));
    pty.send("\x1bk");
    pty.wait_for("the fork selector", |s| s.contains("Fork from Message"));
    pty.send("\x1b");
    pty.wait_for("the editor", |s| !s.contains("Fork from Message"));
    pty.send("\x1bn");
    pty.wait_for("a new session", |s| s.contains("New session started") && !s.contains("Two."));
    assert_eq!(pty.quit(), 0);
}
