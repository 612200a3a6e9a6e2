//! `pi config` driven as a user drives it: the real `pi` binary in a pseudo-terminal of 100×30,
//! keys typed into the pty, the output replayed into vt100, the screen read once it stops
//! changing. Screens and the settings written are compared with the reference pi 1.6.0's,
//! recorded in tmux at the same size with the same files (`fixtures/packages/record_config.sh`).

mod cli_support;
mod interactive_support;

use std::path::Path;

use cli_support::Env;
use interactive_support::Pty;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/packages/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The files of `record_config.sh`.
fn setup(env: &Env) {
    let root = env.dir.path();
    write(&root.join("agent/extensions/hello.ts"), "export default function () {}\n");
    write(&root.join("agent/skills/alpha/SKILL.md"), "---\nname: alpha\ndescription: A\n---\nx\n");
    write(&root.join("agent/prompts/review.md"), "Review\n");
    write(&root.join("pkg/extensions/tool.ts"), "export default function () {}\n");
    write(&root.join("pkg/skills/beta/SKILL.md"), "---\nname: beta\ndescription: B\n---\nx\n");
    write(&root.join("pkg/themes/t1.json"), "{\"name\":\"t1\",\"vars\":{},\"colors\":{}}\n");
    write(&root.join("pkg/package.json"), "{\"name\":\"pkg\",\"version\":\"1.0.0\"}\n");
    write(&root.join("agent/settings.json"), "{\"theme\":\"dark\",\"packages\":[\"../pkg\"]}\n");
}

/// The reference lists its four built-in extensions; this port lists the built-ins it has. The
/// screens must agree everywhere else, and our built-in lines must be the reference's, in order.
fn compare(ours: &str, reference: &str) {
    let builtin = |s: &str| -> (Vec<String>, Vec<String>) {
        let lines: Vec<String> = s.lines().map(str::to_owned).collect();
        let Some(start) = lines.iter().position(|l| l.starts_with("  Built-in")) else { return (lines, Vec::new()) };
        let end =
            lines[start + 2..].iter().position(|l| !l.starts_with("      ")).map_or(lines.len(), |i| start + 2 + i);
        let mut rest = lines[..start + 2].to_vec();
        rest.extend_from_slice(&lines[end..]);
        (rest, lines[start + 2..end].to_vec())
    };
    let (ours_rest, ours_builtins) = builtin(ours);
    let (ref_rest, ref_builtins) = builtin(reference);
    let strip_blank_tail = |v: Vec<String>| -> Vec<String> {
        let mut v = v;
        while v.last().is_some_and(|l| l.is_empty()) {
            v.pop();
        }
        v
    };
    assert_eq!(strip_blank_tail(ours_rest).join("\n"), strip_blank_tail(ref_rest).join("\n"), "ours:\n{ours}");
    let mut it = ref_builtins.iter();
    for line in &ours_builtins {
        assert!(it.any(|r| r == line), "built-in line {line:?} is not the reference's: {ref_builtins:?}");
    }
    assert!(!ours_builtins.is_empty(), "no built-in extensions listed:\n{ours}");
}

#[test]
fn config_screens_and_writes_match_the_reference() {
    let env = Env::new("http://127.0.0.1:9/v1");
    setup(&env);
    let mut pty = Pty::spawn_offline(&env, &["config"]);
    let global = pty.wait_for("the global screen", |s| s.contains("Global Resources") && s.contains("review.md"));
    compare(&global, &fixture("config_global.ref.txt"));
    // Global mode: Space on the package's skill writes the package filter pi writes.
    pty.send("\x1b[B");
    pty.wait_for("the selection on beta", |s| s.contains(">     [x] beta"));
    pty.send(" ");
    pty.wait_for("beta disabled", |s| s.contains(">     [ ] beta"));
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent().join("settings.json")).unwrap()).unwrap();
    assert_eq!(
        settings,
        serde_json::json!({"theme": "dark", "packages": [{"source": "../pkg", "skills": ["-skills/beta/SKILL.md"]}]})
    );
    pty.send(" ");
    pty.wait_for("beta enabled again", |s| s.contains(">     [x] beta"));
    // Project mode, then the same key cycles the project override.
    pty.send("\t");
    let project = pty.wait_for("the project screen", |s| s.contains("Project Local Resources"));
    // The first toggle left `+skills/beta/SKILL.md` in the user settings; the reference's start
    // screen is the same (enabled either way).
    compare(&project, &fixture("config_project.ref.txt"));
    pty.send("\x1b[B");
    pty.wait_for("the selection on beta", |s| s.contains(">     [x] beta  inherited global"));
    pty.send(" ");
    let toggled = pty.wait_for("beta unloaded", |s| s.contains("[-] beta  project unload"));
    compare(&toggled, &fixture("config_project_toggled.ref.txt"));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.proj().join(".pi/settings.json")).unwrap()).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&fixture("config_project_settings.ref.json")).unwrap();
    assert_eq!(written, reference);
    pty.send("\x1b");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn config_local_needs_trust() {
    let env = Env::new("http://127.0.0.1:9/v1");
    write(&env.proj().join(".pi/settings.json"), "{}");
    let out = env.pi().args(["config", "-l"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Project is not trusted. Use --approve to modify local resource config.\n"
    );
}
