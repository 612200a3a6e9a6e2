//! The tree navigator's `shift+t` (label times) and `ctrl+x` (copy the selected entry) in a
//! pseudo-terminal, against the reference's screens recorded in tmux at the same size
//! (`fixtures/interactive/record.sh`, `tree_label_time` and `tree_copy`).

mod cli_support;
mod interactive_support;

use base64::Engine;
use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::*;

/// A session with two turns, continued with `-c` (record.sh's `two_turns`).
fn started() -> (ScriptedServer, Env, Pty) {
    let server = ScriptedServer::start(vec![text_reply(&["One."]), text_reply(&["Two."])]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    std::fs::write(env.proj().join("notes.txt"), "line one\nline two\n").expect("notes");
    for q in ["first question", "second question"] {
        let out = env.run(&["-c", "-p", q]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let pty = Pty::spawn(&env, &["-c"]);
    pty.wait_for("the resumed session", |s| s.contains("Two."));
    (server, env, pty)
}

/// The label time (`HH:MM`, the moment the label was set) is the only part that differs by run.
fn without_times(screen: &str) -> String {
    let re = regex::Regex::new(r"\[checkpoint\] \d\d:\d\d ").expect("regex");
    re.replace_all(screen, "[checkpoint] <HH:MM> ").into_owned()
}

#[test]
fn shift_t_shows_label_times_as_the_reference() {
    let (_server, env, mut pty) = started();
    type_keys(&mut pty, &["/tree", "Enter", "WAIT", "Up", "L", "WAIT", "checkpoint", "Enter", "WAIT"]);
    let plain = pty.wait_for("the label", |s| s.contains("[checkpoint] user: second question"));
    assert!(!plain.contains("[+label time]"), "{plain}");
    pty.send("T");
    let screen = pty.wait_for("the label time", |s| s.contains("[+label time]"));
    let proj = env.proj().display().to_string();
    let ours = without_times(&normalize(&screen, &proj));
    let reference = without_times(&normalize(&fixture("tree_label_time.ref.txt"), &proj));
    assert_eq!(ours, reference);
    assert!(ours.contains("[checkpoint] <HH:MM> user: second question"), "{ours}");
    // Shift+T again hides them.
    pty.send("T");
    pty.wait_for("no label time", |s| !s.contains("[+label time]") && s.contains("[checkpoint] user: second"));
    assert_eq!(pty.quit(), 0);
}

#[test]
fn ctrl_x_copies_the_selected_entry_as_the_reference() {
    let (_server, env, mut pty) = started();
    type_keys(&mut pty, &["/tree", "Enter", "WAIT", "Up", "C-x"]);
    let screen = pty.wait_for("the copy", |s| s.contains("Copied selected message to clipboard"));
    let proj = env.proj().display().to_string();
    assert_eq!(normalize(&screen, &proj), normalize(&fixture("tree_copy.ref.txt"), &proj));
    // The text went to the terminal's clipboard (OSC 52), as pi does without a display.
    let b64 = base64::engine::general_purpose::STANDARD.encode("second question");
    let raw = String::from_utf8_lossy(&pty.raw.lock().expect("raw")).into_owned();
    assert!(raw.contains(&format!("\x1b]52;c;{b64}\x07")), "OSC 52 with the selected message");
    assert_eq!(pty.quit(), 0);
}
