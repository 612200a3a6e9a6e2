//! The interactive mode's terminal hand-overs (issue 14) in a pseudo-terminal: Ctrl+G runs the
//! external editor on the terminal and takes its text back, Ctrl+Z suspends pi (SIGTSTP to its
//! process group, the terminal restored) and SIGCONT brings it back with a full redraw; in both
//! cases input typed afterwards reaches pi (the stopped reader stole nothing and is reading again).
//! And a JavaScript extension's shortcuts: one runs and notifies, the conflicts with built-in keys
//! are reported as the reference reports them (`fixtures/interactive/record.sh`, `shortcut_*`).

mod cli_support;
mod interactive_support;
mod js_support;

use cli_support::{Env, ScriptedServer};
use interactive_support::*;

fn started(vars: &[(&str, &str)]) -> (ScriptedServer, Env, Pty) {
    let server = ScriptedServer::start(Vec::new());
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let pty = Pty::spawn_with(&env, &[], vars);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    (server, env, pty)
}

/// The editor box's lines: between the two rules above the footer.
fn editor_lines(screen: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let rules: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| l.starts_with("────")).map(|(i, _)| i).collect();
    match rules.as_slice() {
        [.., a, b] => lines[a + 1..*b].iter().map(|l| l.trim().to_owned()).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn ctrl_g_edits_the_prompt_in_the_external_editor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("editor.log");
    let script = dir.path().join("ed.sh");
    // The editor records its file's path and text, then rewrites the file.
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" > '{log}'\ncat \"$1\" >> '{log}'\nprintf 'rewritten: %s\\nsecond line\\n' \"$(cat \"$1\")\" > \"$1\"\n",
            log = log.display()
        ),
    )
    .expect("script");
    let editor = format!("sh {}", script.display());
    let (_server, _env, mut pty) = started(&[("VISUAL", &editor), ("EDITOR", "false")]);
    pty.send("draft text");
    pty.wait_for("the draft", |s| editor_lines(s).iter().any(|l| l == "draft text"));
    pty.send("\x07");
    let screen = pty.wait_for("the rewritten prompt", |s| {
        editor_lines(s).iter().any(|l| l == "rewritten: draft text") && s.contains("smollm2-135m")
    });
    assert_eq!(editor_lines(&screen), ["rewritten: draft text", "second line"], "{screen}");
    let seen = std::fs::read_to_string(&log).expect("the editor ran");
    let (path, text) = seen.split_once('\n').expect("path line");
    assert!(path.ends_with("/prompt.md") && path.contains("/pi-editor-"), "{path}");
    assert_eq!(text, "draft text");
    assert!(!std::path::Path::new(path).exists(), "the temporary directory is removed");
    // The restarted reader gets the next keys.
    pty.send(" and more");
    pty.wait_for("typing after the editor", |s| editor_lines(s).iter().any(|l| l == "second line and more"));
    assert_eq!(pty.quit(), 0);
}

#[test]
fn a_failing_external_editor_leaves_the_prompt_and_says_why() {
    let (_server, _env, mut pty) = started(&[("VISUAL", "false"), ("EDITOR", "false")]);
    pty.send("keep me");
    pty.wait_for("the draft", |s| editor_lines(s).iter().any(|l| l == "keep me"));
    pty.send("\x07");
    let screen = pty.wait_for("the status", |s| s.contains("External editor exited with code 1; prompt unchanged"));
    assert_eq!(editor_lines(&screen), ["keep me"], "{screen}");
    assert_eq!(pty.quit(), 0);
}

/// A job-control parent of pi in the pty's session: pi runs in a process group of its own that
/// owns the terminal (so SIGTSTP stops it: its group is not orphaned), and the parent reports a
/// stop on the terminal without taking the terminal back, so `kill -CONT` alone resumes pi.
const WRAPPER: &str = r#"
import os, signal, sys
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    os.tcsetpgrp(0, os.getpid())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    os.execv(sys.argv[1], sys.argv[1:])
while True:
    _, status = os.waitpid(pid, os.WUNTRACED)
    if os.WIFSTOPPED(status):
        name = signal.Signals(os.WSTOPSIG(status)).name
        sys.stdout.write("[pi %d stopped by %s]\r\n" % (pid, name))
        sys.stdout.flush()
        continue
    sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)
"#;

fn process_state(pid: i32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after = stat.rsplit_once(") ").expect("comm").1;
    after.chars().next().expect("state")
}

#[test]
fn ctrl_z_suspends_and_sigcont_redraws() {
    let python = std::env::var("PI_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    if std::process::Command::new(&python).arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "python3 is missing: CI must install it");
        eprintln!("SKIP: python3 not found (set PI_TEST_PYTHON)");
        return;
    }
    let server = ScriptedServer::start(Vec::new());
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let mut pty = Pty::spawn_program(&env, &python, &["-c", WRAPPER, env!("CARGO_BIN_EXE_pi")], &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty.send("before");
    pty.wait_for("the draft", |s| editor_lines(s).iter().any(|l| l == "before"));
    pty.send("\x1a");
    // SIGSTOP: the event loop's SIGTSTP listener keeps SIGTSTP from stopping pi (suspend.rs).
    let screen = pty.wait_for("the stop", |s| s.contains("stopped by SIGSTOP]"));
    // pi left the alternate screen: what it drew was printed to the main screen, the report below.
    let pid: i32 = screen
        .lines()
        .find_map(|l| l.strip_prefix("[pi ").and_then(|r| r.split(' ').next()).and_then(|p| p.parse().ok()))
        .expect("pid");
    assert_eq!(process_state(pid), 'T', "{screen}");
    // Since pi entered the alternate screen: it left it, turned bracketed paste off, popped the
    // keyboard protocol and showed the cursor.
    let raw = String::from_utf8_lossy(&pty.raw.lock().expect("raw")).into_owned();
    let entered = raw.rfind("\x1b[?1049h").expect("the alternate screen");
    for seq in ["\x1b[?1049l", "\x1b[?2004l", "\x1b[<u", "\x1b[?25h"] {
        assert!(raw[entered..].contains(seq), "{seq:?} missing after the suspend");
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGCONT).expect("kill -CONT");
    let screen = pty.wait_for("the redraw", |s| s.contains("smollm2-135m") && !s.contains("stopped by"));
    assert_eq!(editor_lines(&screen), ["before"], "{screen}");
    pty.send(" after");
    pty.wait_for("typing after the resume", |s| editor_lines(s).iter().any(|l| l == "before after"));
    assert_eq!(pty.quit(), 0);
}

/// The screen with the machine's paths replaced and every run of whitespace made one space: the
/// reference's temporary folder has another length than ours, so its long lines wrap elsewhere.
fn flowed(screen: &str, proj: &str) -> String {
    let re = regex::Regex::new(r"/tmp/[^/\s]+/proj").expect("regex");
    let text = screen.replace(proj, "<PROJ>");
    re.replace_all(&text, "<PROJ>").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The screen's lines up to the `[Extension issues]` heading, exactly.
fn head(screen: &str) -> String {
    screen.lines().take_while(|l| !l.starts_with("[Extension issues]")).collect::<Vec<_>>().join("\n")
}

#[test]
fn extension_shortcuts_run_and_conflicts_are_reported_as_the_reference_does() {
    let Some(node) = js_support::node_path().filter(|_| js_support::node_available()) else { return };
    let server = ScriptedServer::start(Vec::new());
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let fixture = format!("{}/tests/fixtures/interactive/shortcut-extension.ts", env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(&fixture, env.proj().join("shortcut-extension.ts")).expect("copy the extension");
    let node = node.display().to_string();
    let mut pty = Pty::spawn_with(&env, &["-e", "shortcut-extension.ts"], &[("PI_NODE", &node)]);
    let proj = env.proj().display().to_string();
    let screen = pty.wait_for("the startup issues", |s| s.contains("[Extension issues]") && s.contains("smollm2-135m"));
    let reference = fixture_text("shortcut_startup.ref.txt");
    assert_eq!(head(&screen), head(&reference));
    assert_eq!(flowed(&screen, &proj), flowed(&reference, &proj));
    // alt+k is free: the extension's handler runs and notifies; ctrl+a is the extension's now.
    pty.send("\x1bk");
    pty.wait_for("the notification", |s| s.contains("shortcut ran"));
    pty.send("\x01");
    let screen = pty.wait_for("the second notification", |s| s.contains("ctrl+a taken"));
    assert_eq!(flowed(&screen, &proj), flowed(&fixture_text("shortcut_ran.ref.txt"), &proj));
    // The extension's ctrl+c was refused: Ctrl+C twice still quits.
    pty.send("\x03\x03");
    assert_eq!(pty.wait_exit(), 0);
}

fn fixture_text(name: &str) -> String {
    interactive_support::fixture(name)
}

/// The colour of the editor's top border: on our screen, and in a reference capture with SGR.
fn border_colour(pty: &Pty) -> vt100::Color {
    let parser = pty.parser.lock().unwrap();
    let screen = parser.screen();
    let text: Vec<String> = screen.rows(0, COLS).collect();
    let rules: Vec<usize> = text.iter().enumerate().filter(|(_, l)| l.starts_with("────")).map(|(i, _)| i).collect();
    let [.., top, _] = rules.as_slice() else { panic!("no editor box:\n{}", text.join("\n")) };
    screen.cell(*top as u16, 0).expect("cell").fgcolor()
}

fn reference_border_colour(name: &str) -> vt100::Color {
    let ansi = fixture(&format!("{name}.ref.ansi.txt"));
    let caps = regex::Regex::new(r"\x1b\[38;2;(\d+);(\d+);(\d+)m─").expect("regex").captures(&ansi).expect("a border");
    let n = |i: usize| caps[i].parse::<u8>().expect("component");
    vt100::Color::Rgb(n(1), n(2), n(3))
}

#[test]
fn the_editor_border_shows_the_thinking_level_and_bash_mode_as_the_reference() {
    let (_server, env, mut pty) = started(&[]);
    let proj = env.proj().display().to_string();
    assert_eq!(border_colour(&pty), reference_border_colour("border_off"));
    type_keys(&mut pty, &["!ls"]);
    let screen = pty.wait_for("bash mode", |s| s.contains("!ls"));
    assert_eq!(normalize(&screen, &proj), normalize(&fixture("border_bash.ref.txt"), &proj));
    assert_eq!(border_colour(&pty), reference_border_colour("border_bash"));
    // Escape leaves bash mode: the text is cleared and the border takes the thinking colour again.
    type_keys(&mut pty, &["Escape"]);
    let screen = pty.wait_for("bash mode left", |s| !s.contains("!ls"));
    assert_eq!(normalize(&screen, &proj), normalize(&fixture("bash_escape.ref.txt"), &proj));
    assert_eq!(border_colour(&pty), reference_border_colour("bash_escape"));
    assert_eq!(pty.quit(), 0);

    // A reasoning model at thinking level medium.
    let server = ScriptedServer::start(Vec::new());
    let env = Env::new(&server.base_url);
    let models = serde_json::json!({"providers":{"local":{"baseUrl":server.base_url,"api":"openai-completions",
        "apiKey":"none","models":[{"id":"smollm2-135m","reasoning":true,"contextWindow":8192,"maxTokens":256}]}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).expect("models.json");
    std::fs::write(env.agent().join("settings.json"), r#"{"theme":"dark","defaultThinkingLevel":"medium"}"#)
        .expect("settings");
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    assert_eq!(border_colour(&pty), reference_border_colour("border_thinking"));
    assert_eq!(pty.quit(), 0);
}
