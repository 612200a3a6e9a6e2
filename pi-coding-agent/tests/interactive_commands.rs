//! The interactive mode's built-in commands (issue 14, item 4) driven in a pseudo-terminal as a
//! user drives them: `/settings` (the editor writing `settings.json`), `/scoped-models`,
//! `/changelog` and `/import`, each screen compared with the reference pi 1.6.0's screen of the
//! same keys (`fixtures/interactive/record.sh`), and the files they write read back.

mod cli_support;
mod interactive_support;

use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::*;

fn settings_json(env: &Env) -> serde_json::Value {
    let text = std::fs::read_to_string(env.agent().join("settings.json")).expect("settings.json");
    serde_json::from_str(&text).expect("settings.json is JSON")
}

#[test]
fn settings_menu_matches_the_reference() {
    let (ours, reference) =
        scenario(vec![], |_| {}, &["/settings", "Enter"], |s| s.contains("→ Auto-compact"), "settings");
    assert_eq!(ours, reference);
}

#[test]
fn settings_changes_are_written_to_settings_json_as_the_reference() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/settings", "Enter", "WAIT", "Enter", "WAIT", "Down", "Down", "Enter"]);
    let screen = pty.wait_for("the toggled rows", |s| s.contains("→ Block images                      true"));
    let proj = env.proj().display().to_string();
    assert_eq!(normalize(&screen, &proj), normalize(&fixture("settings_toggled.ref.txt"), &proj));
    let written = settings_json(&env);
    assert_eq!(written["compaction"]["enabled"], false, "{written}");
    assert_eq!(written["images"]["blockImages"], true, "{written}");
    assert_eq!(written["theme"], "dark", "the other keys are kept: {written}");
    // Search narrows the list; Escape closes the editor and gives the editor back.
    type_keys(&mut pty, &["steer"]);
    let screen = pty.wait_for("the search", |s| s.contains("→ Steering mode"));
    assert!(!screen.contains("Auto-compact"), "{screen}");
    type_keys(&mut pty, &["Enter"]);
    pty.wait_for("the new mode", |s| s.contains("→ Steering mode                     all"));
    pty.send("\x1b");
    pty.wait_for("the editor", |s| !s.contains("Steering mode"));
    assert_eq!(settings_json(&env)["steeringMode"], "all");
    assert_eq!(pty.quit(), 0);
}

#[test]
fn settings_theme_submenu_switches_the_theme_live() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/settings", "Enter", "WAIT", "theme", "WAIT", "Enter"]);
    let screen = pty.wait_for("the theme list", |s| s.contains("Select a theme"));
    assert!(screen.contains("→ ✓ dark"), "{screen}");
    assert!(screen.contains("system"), "{screen}");
    type_keys(&mut pty, &["Down", "WAIT", "Enter"]);
    pty.wait_for("the theme row", |s| s.contains("→ Theme") && s.contains("light"));
    assert_eq!(settings_json(&env)["theme"], "light");
    assert_eq!(pty.quit(), 0);
}

#[test]
fn scoped_models_editor_matches_the_reference_and_saves() {
    let (ours, reference) = scenario(
        vec![],
        |_| {},
        &["/scoped-models", "Enter"],
        |s| s.contains("Model Configuration") && s.contains("all enabled"),
        "scoped_models",
    );
    assert_eq!(ours, reference);

    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let models = serde_json::json!({"providers":{"local":{"baseUrl":server.base_url,"api":"openai-completions",
        "apiKey":"none","models":[{"id":"model-a","contextWindow":8192,"maxTokens":256},
        {"id":"model-b","contextWindow":8192,"maxTokens":256},{"id":"model-c","contextWindow":8192,"maxTokens":256}]}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).expect("models.json");
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("model-a"));
    type_keys(&mut pty, &["/scoped-models", "Enter", "WAIT", "Down", "Enter"]);
    let screen = pty.wait_for("the toggle", |s| s.contains("2/3 enabled") && s.contains("(unsaved)"));
    assert!(screen.contains("  ✓ model-a"), "{screen}");
    type_keys(&mut pty, &["C-s"]);
    pty.wait_for("saved", |s| s.contains("2/3 enabled") && !s.contains("(unsaved)"));
    pty.send("\x1b");
    pty.wait_for("the status", |s| s.contains("Model selection saved to settings"));
    let written = settings_json(&env);
    assert_eq!(written["enabledModels"], serde_json::json!(["local/model-a", "local/model-c"]), "{written}");
    // Ctrl+P now cycles the two enabled models only.
    pty.send("\x10");
    pty.wait_for("model c", |s| s.lines().last().is_some_and(|l| l.ends_with("model-c")));
    pty.send("\x10");
    pty.wait_for("model a", |s| s.lines().last().is_some_and(|l| l.ends_with("model-a")));
    assert_eq!(pty.quit(), 0);
}

/// The reference's package folder, where its `CHANGELOG.md` is (`PI_ANCHOR_DIR` or the default
/// install of `scripts/install-reference.sh`).
fn reference_package() -> std::path::PathBuf {
    let root = std::env::var_os("PI_ANCHOR_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/pi-anchor")))
        .expect("PI_ANCHOR_DIR or HOME");
    let dir = root.join("node_modules/@earendil-works/pi-coding-agent");
    assert!(
        dir.join("CHANGELOG.md").is_file(),
        "the reference is not installed in {} (scripts/install-reference.sh)",
        dir.display()
    );
    dir
}

#[test]
fn changelog_reads_the_package_changelog_as_the_reference() {
    let package = reference_package();
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let mut pty = Pty::spawn_with(&env, &[], &[("PI_PACKAGE_DIR", &package.display().to_string())]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/changelog", "WAIT", "Escape", "WAIT", "Enter"]);
    let screen = pty.wait_for("the changelog", |s| !s.contains("/changelog") && s.contains("deepseek"));
    let proj = env.proj().display().to_string();
    assert_eq!(normalize(&screen, &proj), normalize(&fixture("changelog.ref.txt"), &proj));
    assert_eq!(pty.quit(), 0);
}

#[test]
fn changelog_without_a_package_dir_shows_the_bundled_one() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/changelog", "WAIT", "Escape", "WAIT", "Enter"]);
    let screen = pty.wait_for("the changelog", |s| s.contains("and project trust."));
    assert!(screen.contains("Packages (pi install|remove|update|list)"), "{screen}");
    assert_eq!(pty.quit(), 0);
}

#[test]
fn import_without_a_path_shows_the_usage_as_the_reference() {
    let (ours, reference) =
        scenario(vec![], |_| {}, &["/import", "Enter"], |s| s.contains("Usage: /import"), "import_prompt");
    assert_eq!(ours, reference);
}

/// A session written by `pi -p`, moved to `proj/old.jsonl`, as record.sh's `old_session`.
fn old_session(env: &Env) {
    std::fs::write(env.proj().join("notes.txt"), "line one\nline two\n").expect("notes");
    let out = env.run(&["-p", "do it"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let files = env.session_files();
    assert_eq!(files.len(), 1);
    std::fs::rename(&files[0], env.proj().join("old.jsonl")).expect("move the session");
}

fn import_replies() -> Vec<String> {
    vec![
        tool_reply("call_1", "bash", serde_json::json!({"command":"echo hello; echo world"})),
        tool_reply("call_2", "read", serde_json::json!({"path":"notes.txt"})),
        text_reply(&["All ", "done."]),
    ]
}

#[test]
fn import_asks_then_switches_to_the_imported_session_as_the_reference() {
    let server = ScriptedServer::start(import_replies());
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    old_session(&env);
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/import old.jsonl", "Enter"]);
    let confirm = pty.wait_for("the confirmation", |s| s.contains("Replace current session with old.jsonl?"));
    let proj = env.proj().display().to_string();
    assert_eq!(normalize(&confirm, &proj), normalize(&fixture("import_confirm.ref.txt"), &proj));
    type_keys(&mut pty, &["Enter"]);
    let done = pty.wait_for("the imported transcript", |s| s.contains("Session imported from: old.jsonl"));
    assert_eq!(normalize(&done, &proj), normalize(&fixture("import_done.ref.txt"), &proj));
    let imported: Vec<_> = env.session_files().into_iter().filter(|f| f.ends_with("old.jsonl")).collect();
    assert_eq!(imported.len(), 1, "the file is copied into the session folder under its name");
    assert_eq!(pty.quit(), 0);
}

#[test]
fn import_of_a_missing_file_says_so() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/import nowhere.jsonl", "Enter", "WAIT", "Enter"]);
    let screen = pty.wait_for("the error", |s| s.contains("Failed to import session: File not found:"));
    assert!(screen.contains("nowhere.jsonl"), "{screen}");
    assert_eq!(pty.quit(), 0);
}

#[test]
fn context_shows_the_last_request_as_it_was_sent() {
    let server = ScriptedServer::start(vec![text_reply(&["Hi there."])]);
    let env = Env::new(&server.base_url);
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/context", "Enter"]);
    pty.wait_for("nothing yet", |s| s.contains("No request yet"));
    type_keys(&mut pty, &["hello model", "Enter"]);
    pty.wait_for("the answer", |s| s.contains("Hi there.") && s.contains("↑10"));
    // Alt+C: the captured request holds the user message, not the answer that came after it.
    pty.send("\x1bc");
    let screen = pty.wait_for("the model view", |s| s.contains("What the model saw"));
    assert!(screen.contains("user: hello model"), "{screen}");
    assert!(!screen.contains("assistant: Hi there."), "the answer was not part of the request:\n{screen}");
    assert!(screen.contains("Tools (") && screen.contains("read"), "{screen}");
    assert_eq!(pty.quit(), 0);
}

#[test]
fn hotkeys_match_the_reference() {
    let (ours, reference) =
        scenario(vec![], |_| {}, &["/hotkeys", "Enter"], |s| s.contains("Run bash command (excluded"), "hotkeys");
    assert_eq!(ours, reference);
}

/// A fake `xclip` answering `script` (a shell `case` body on "$*"), first in PATH.
fn fake_xclip(env: &Env, script: &str) -> String {
    let bin = env.dir.path().join("clipbin");
    std::fs::create_dir_all(&bin).expect("bin");
    let path = bin.join("xclip");
    std::fs::write(&path, format!("#!/bin/sh\ncase \"$*\" in\n{script}\n*) exit 1 ;;\nesac\n")).expect("xclip");
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

#[test]
fn ctrl_v_pastes_a_clipboard_image_as_a_file_path() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let path = fake_xclip(&env, "*TARGETS*) printf 'TARGETS\\nimage/png\\n' ;;\n*image/png*) printf 'PNGDATA' ;;");
    let tmp = env.dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let tmp_s = tmp.display().to_string();
    let mut pty = Pty::spawn_with(&env, &[], &[("PATH", &path), ("TMPDIR", &tmp_s)]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty.send("\x16");
    pty.wait_for("the path", |s| s.contains("pi-clipboard-"));
    let files: Vec<_> = std::fs::read_dir(&tmp).expect("tmp").flatten().map(|e| e.path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].extension().is_some_and(|e| e == "png"));
    assert_eq!(std::fs::read(&files[0]).expect("image"), b"PNGDATA");
    assert_eq!(pty.quit(), 0);

    // No image: the clipboard's text (X11).
    let path = fake_xclip(&env, "*TARGETS*) printf 'UTF8_STRING\\n' ;;\n*-out*) printf 'pasted words' ;;");
    let mut pty = Pty::spawn_with(&env, &[], &[("PATH", &path), ("DISPLAY", ":0")]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty.send("\x16");
    pty.wait_for("the text", |s| s.contains("pasted words"));
    assert_eq!(pty.quit(), 0);
}

#[test]
fn user_bash_output_shows_while_the_command_runs() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let fifo = env.dir.path().join("gate");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    // The command prints, then waits on the fifo: its first line must show while it runs.
    // (`$((…))` so that the output differs from the command line shown above it.)
    pty.send(&format!("!echo FIRST$((1+1)); cat {}; echo SECOND$((2+1))\r", fifo.display()));
    let running = pty.wait_for("the live output", |s| s.contains("FIRST2"));
    assert!(!running.contains("SECOND3"), "{running}");
    std::fs::write(&fifo, "from-the-gate\n").expect("open the gate");
    let done = pty.wait_for("the finished command", |s| s.contains("SECOND3") && s.contains("from-the-gate"));
    assert!(done.contains("FIRST2"), "{done}");
    assert_eq!(pty.quit(), 0);
}
