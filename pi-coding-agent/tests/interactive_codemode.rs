//! The `codemode` row in the interactive mode (issue 17): the real `pi` binary with
//! `--tools codemode,read,bash` in a pty of 100×30 against a scripted chat-completions server on
//! 127.0.0.1, compared with the reference pi 1.6.0's screens recorded by
//! `fixtures/interactive/record.sh` (`codemode_*`): the script, the nested calls with their status
//! icons, the output without the `Script completed` header, `Took`, expanded with Ctrl+O, and a
//! script that fails. Nested call durations and the project path are normalised.

mod cli_support;

mod interactive_support;

use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::*;

const OK_SCRIPT: &str = "const a = await tools.bash({ command: \"echo one; echo two\" });\nconst b = await tools.read({ path: \"notes.txt\" });\nconsole.log(\"two calls done\");\nreturn b;";
const THROW_SCRIPT: &str =
    "await tools.bash({ command: \"echo before\" });\nawait tools.read({ path: \"missing.txt\" });\nreturn 1;";

/// Nested call durations (`57ms`, `1.2s` at the end of a call line) and temporary project paths.
fn normalize_codemode(screen: &str) -> String {
    let duration = regex::Regex::new(r"^( [✓✗…⊘] .*) \d+(ms|\.\ds)$").expect("regex");
    let tmp = regex::Regex::new(r"/tmp/[^ ']*/proj").expect("regex");
    screen
        .lines()
        .map(|l| tmp.replace_all(&duration.replace(l, "$1 <D>"), "<PROJ>").into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs one recorded scenario: types `run it`, waits for the reply `done` (then presses Ctrl+O when
/// `expand`), and reads the screen once it shows `done` and then `last`.
fn codemode_scenario(script: &str, expand: bool, done: &str, last: &str, name: &str) -> (String, String) {
    let replies = vec![tool_reply("call_1", "codemode", serde_json::json!({ "code": script })), text_reply(&[done])];
    let server = ScriptedServer::start(replies);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    std::fs::write(env.proj().join("notes.txt"), "line one\nline two\n").expect("notes");
    let mut pty = Pty::spawn(&env, &["--tools", "codemode,read,bash"]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["run it", "Enter"]);
    if expand {
        pty.wait_for(done, |s| s.contains(done) && s.contains("↑20"));
        type_keys(&mut pty, &["C-o"]);
    }
    let settled = |s: &str| s.rfind(done).is_some_and(|at| s[at..].contains(last)) && s.contains("↑20");
    let screen = pty.wait_for(name, settled);
    pty.quit();
    let proj = env.proj().display().to_string();
    let ours = normalize_codemode(&normalize(&screen, &proj));
    let reference = normalize_codemode(&normalize(&fixture(&format!("{name}.ref.txt")), &proj));
    (ours, reference)
}

#[test]
fn a_script_with_nested_calls_draws_as_the_reference() {
    let (ours, reference) = codemode_scenario(OK_SCRIPT, false, "Done.", "↑20", "codemode_ok");
    assert!(ours.contains(" ✓ read {\"path\":\"notes.txt\"} <D>"), "{ours}");
    assert_eq!(ours, reference);
}

#[test]
fn ctrl_o_expands_the_codemode_row_as_the_reference() {
    let (ours, reference) = codemode_scenario(OK_SCRIPT, true, "Done.", "Tool output: expanded", "codemode_expanded");
    assert!(ours.contains("Tool output: expanded"), "{ours}");
    assert_eq!(ours, reference);
}

#[test]
fn a_script_that_throws_draws_as_the_reference() {
    let (ours, reference) = codemode_scenario(THROW_SCRIPT, false, "Failed.", "↑20", "codemode_throw");
    assert!(ours.contains(" ✗ read {\"path\":\"missing.txt\"} <D>"), "{ours}");
    assert_eq!(ours, reference);
}

const LONG_SCRIPT: &str = "// @options: {\"timeout_ms\": 5000}\nconst lines = [];\nfor (let i = 1; i <= 8; i++) {\n  lines.push(\"output line \" + i);\n}\nconst a = await tools.bash({ command: \"echo a\" });\nconst b = await tools.bash({ command: \"echo b\" });\nconst c = await tools.bash({ command: \"echo c\" });\nconst d = [a, b, c];\nconsole.log(d.length);\nconsole.log(\"end\");\nreturn lines.join(\"\\n\");";

#[test]
fn a_long_script_and_output_are_cut_to_previews_as_the_reference() {
    let (ours, reference) = codemode_scenario(LONG_SCRIPT, false, "Long.", "↑20", "codemode_long");
    assert!(ours.contains(" ... (7 more lines, ctrl+o to expand)"), "{ours}");
    assert_eq!(ours, reference);
}

#[test]
fn ctrl_o_shows_the_whole_script_and_output_as_the_reference() {
    let (ours, reference) =
        codemode_scenario(LONG_SCRIPT, true, "Long.", "Tool output: expanded", "codemode_long_expanded");
    assert!(ours.contains(" output line 8"), "{ours}");
    assert_eq!(ours, reference);
}

#[test]
fn an_expanded_failed_call_shows_its_error_as_the_reference() {
    let (ours, reference) =
        codemode_scenario(THROW_SCRIPT, true, "Failed.", "Tool output: expanded", "codemode_throw_expanded");
    assert!(ours.contains("     ENOENT: no such file or directory"), "{ours}");
    assert_eq!(ours, reference);
}
