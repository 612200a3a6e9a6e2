//! Project trust in the interactive mode, driven in a real pty of 100×30: the startup question
//! of an untrusted project with protected resources, and `/trust`, compared with the reference
//! pi 1.6.0's screens (`fixtures/trust/`, recorded in tmux at the same size), and the decisions
//! they save in `trust.json`.

mod cli_support;
mod interactive_support;

use cli_support::{Env, ScriptedServer};
use interactive_support::Pty;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/trust/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn normalize(screen: &str, env: &Env) -> String {
    let proj = env.proj().display().to_string();
    let root = env.dir.path().display().to_string();
    let text = screen.replace(&proj, "<PROJ>").replace(&root, "<ROOT>");
    let mut lines: Vec<&str> = text.lines().collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n") + "\n"
}

/// The rows of the `/trust` selector, from its top border to its bottom border.
fn selector_rows(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let title = lines.iter().position(|l| *l == " Project trust").expect("the selector's title");
    let end = (title..lines.len()).find(|&i| lines[i].starts_with('─')).expect("the selector's bottom border");
    lines[title - 2..=end].join("\n") + "\n"
}

fn trust_file(env: &Env) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(env.agent().join("trust.json")).unwrap()).unwrap()
}

#[test]
fn the_startup_question_and_trust_command_as_the_reference() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"theme":"dark"}"#).unwrap();
    let skill = env.proj().join(".pi/skills/ps");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: ps\ndescription: P\n---\nb\n").unwrap();
    let mut pty = Pty::spawn_offline(&env, &[]);
    let question = pty.wait_for("the trust question", |s| s.contains("Trust project folder?") && s.contains("cancel"));
    assert_eq!(normalize(&question, &env), fixture("startup_question.ref.txt"));
    assert!(!env.agent().join("trust.json").exists());
    // "Trust": saved for the folder, and the session starts trusted.
    pty.send("\r");
    pty.wait_for("the main screen", |s| s.contains("smollm2-135m"));
    let proj = std::fs::canonicalize(env.proj()).unwrap().display().to_string();
    assert_eq!(trust_file(&env), serde_json::json!({ proj.clone(): true }));
    pty.send("/trust");
    pty.wait_for("the typed command", |s| s.contains("/trust"));
    pty.send("\r");
    let selector = pty.wait_for("the trust selector", |s| s.contains(" Project trust") && s.contains("enter save"));
    assert_eq!(normalize(&selector_rows(&selector), &env), fixture("trust_selector.ref.txt"));
    // "Do not trust": saved, reported as pi reports it.
    pty.send("\x1b[B");
    pty.send("\x1b[B");
    pty.wait_for("the selection on Do not trust", |s| s.contains(" →   Do not trust"));
    pty.send("\r");
    pty.wait_for("the status line", |s| {
        s.contains("Saved trust decision: untrusted. Restart pi for this to take effect.")
    });
    assert_eq!(trust_file(&env), serde_json::json!({ proj: false }));
    pty.send("\x03\x03");
    pty.wait_exit();
}
