//! `pi` in a terminal with no credentials at all, as pi 1.6.0 starts (screens recorded in
//! `fixtures/first_run/`): the interactive screen opens on pi's placeholder model with the "No
//! models available" warning and `unknown` in the footer, a prompt fails with pi's "No API key
//! found for the selected model" before it is sent, and `/login` with an API key selects the
//! provider's default model.

mod cli_support;
mod interactive_support;

use cli_support::Env;
use interactive_support::*;

fn reference(name: &str) -> String {
    let path = format!("{}/tests/fixtures/first_run/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("fixture")
}

/// The lines of `screen` from the one starting with `first` (trimmed), up to `count` lines, with
/// the docs location made neutral.
fn block(screen: &str, first: &str, count: usize) -> Vec<String> {
    let docs = regex::Regex::new(r"\S*/docs/(providers|models)\.md").expect("regex");
    let lines: Vec<String> =
        screen.lines().map(|l| docs.replace_all(l.trim_end(), "<DOCS>/$1.md").into_owned()).collect();
    let start =
        lines.iter().position(|l| l.trim_start().starts_with(first)).unwrap_or_else(|| panic!("{first}: {screen}"));
    lines[start..(start + count).min(lines.len())].to_vec()
}

fn first_run_env() -> Env {
    let env = Env::new("http://127.0.0.1:9/v1");
    std::fs::remove_file(env.agent().join("models.json")).expect("models.json");
    dark_theme(&env);
    env
}

#[test]
fn a_terminal_without_credentials_opens_on_the_placeholder_model_and_logs_in() {
    let env = first_run_env();
    let mut pty = Pty::spawn_with(&env, &[], &[]);
    let start = pty.wait_for("the warning", |s| s.contains("Warning: No models available") && s.contains("unknown"));
    let theirs = reference("start.txt");
    assert_eq!(block(&start, "Warning: No models available", 3), block(&theirs, "Warning: No models available", 3));
    assert_eq!(block(&start, "0.0%/0 (auto)", 1), block(&theirs, "0.0%/0 (auto)", 1), "the footer");

    type_keys(&mut pty, &["hi", "Enter"]);
    let failed = pty.wait_for("the error", |s| s.contains("Error: No API key found"));
    let theirs = reference("prompt_without_model.txt");
    assert_eq!(block(&failed, "Error: No API key found", 4), block(&theirs, "Error: No API key found", 4));
    assert!(!failed.lines().any(|l| l.trim() == "hi"), "the prompt is not drawn: {failed}");

    let keys = ["/login", "WAIT", "Enter", "WAIT", "Down", "Enter", "WAIT", "cereb", "WAIT", "Enter", "WAIT", "sk-1"];
    type_keys(&mut pty, &keys);
    type_keys(&mut pty, &["Enter"]);
    let saved = pty.wait_for("the selected model", |s| s.contains("gpt-oss-120b •"));
    assert!(saved.contains("Saved API key for Cerebras. Selected gpt-oss-120b. Credentials saved to"), "{saved}");
    pty.quit();
    let auth = std::fs::read_to_string(env.agent().join("auth.json")).expect("auth.json");
    assert!(auth.contains("\"cerebras\""), "{auth}");
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent().join("settings.json")).expect("settings"))
            .expect("JSON");
    assert_eq!(
        (settings["defaultProvider"].as_str(), settings["defaultModel"].as_str()),
        (Some("cerebras"), Some("gpt-oss-120b"))
    );
}

#[test]
fn a_model_without_a_key_opens_and_its_prompt_is_refused_as_in_the_reference() {
    let env = first_run_env();
    let mut pty = Pty::spawn_with(&env, &["--model", "openai/gpt-4o"], &[]);
    pty.wait_for("the footer", |s| s.contains("gpt-4o"));
    type_keys(&mut pty, &["hello", "Enter"]);
    let failed = pty.wait_for("the error", |s| s.contains("Error: No API key found"));
    let theirs = reference("keyless_model_prompt.txt");
    assert_eq!(block(&failed, "Error: No API key found", 5), block(&theirs, "Error: No API key found", 5));
    assert!(!failed.lines().any(|l| l.trim() == "hello"), "the prompt is not drawn: {failed}");
    pty.quit();
}

#[test]
fn print_mode_without_credentials_still_fails_at_once() {
    let env = first_run_env();
    let out = env.pi().args(["-p", "hi"]).output().expect("run pi");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("Warning: No models available."), "{stderr}");
    assert!(stderr.contains("No API key found for the selected model."), "{stderr}");
}
