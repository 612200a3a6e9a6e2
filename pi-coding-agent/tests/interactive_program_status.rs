//! The Program Status Protocol (OSC 7501) in the real `pi` binary in a pseudo-terminal: the test
//! plays a terminal that supports it (it answers pi's query), then reads the reports pi writes as
//! pi 1.6.0's `ProgramStatusReporter` makes them: `idle` at start, `working` during a run and
//! `done` after it, `blocked` (kind `permission`, the title) while an extension's confirm dialog
//! waits and `blocked` (kind `question`) for a `custom()` component with pi's `blocked` option,
//! and `clear` on exit. A terminal that never answers gets no report.

mod cli_support;
mod interactive_support;
mod js_support;

use std::time::{Duration, Instant};

use base64::Engine as _;
use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::Pty;

const QUERY: &str = "\x1b]7501;?\x1b\\";

fn report(state: &str, kind: Option<&str>, message: Option<&str>) -> String {
    let mut out = format!("\x1b]7501;state={state}:app=pi");
    if let Some(kind) = kind {
        out.push_str(&format!(":kind={kind}"));
    }
    if let Some(message) = message {
        out.push_str(&format!(":msg={}", base64::engine::general_purpose::STANDARD.encode(message)));
    }
    out + "\x1b\\"
}

fn raw(pty: &Pty) -> String {
    String::from_utf8_lossy(&pty.raw.lock().expect("raw")).into_owned()
}

/// Waits until the raw output holds `what` after byte `from`; returns where it ends.
fn wait_raw(pty: &Pty, from: usize, what: &str) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = raw(pty);
        if let Some(at) = out.get(from..).and_then(|rest| rest.find(what)) {
            return from + at + what.len();
        }
        assert!(Instant::now() < deadline, "no {what:?} after byte {from}; output: {:?}", out.get(from..));
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every report in the output, in order.
fn reports(out: &str) -> Vec<String> {
    out.match_indices("\x1b]7501;state=")
        .map(|(at, _)| {
            let end = out[at..].find("\x1b\\").map_or(out.len(), |e| at + e + 2);
            out[at..end].to_owned()
        })
        .collect()
}

const EXTENSION: &str = r#"
export default function (pi) {
    pi.registerCommand("ask", {
        description: "asks",
        handler: async (_args, ctx) => {
            const yes = await ctx.ui.confirm("Delete the file?", "It cannot be undone.");
            ctx.ui.notify(yes ? "deleted" : "kept", "info");
        },
    });
    pi.registerCommand("pick", {
        description: "picks",
        handler: async (_args, ctx) => {
            await ctx.ui.custom(
                (_tui, _theme, _kb, done) => ({
                    render: () => ["pick one (enter)"],
                    handleInput: (data) => { if (data === "\r") done("ok"); },
                    invalidate: () => {},
                }),
                { blocked: { kind: "question", message: "Pick a colour" } },
            );
            ctx.ui.notify("picked", "info");
        },
    });
}
"#;

#[test]
fn a_supporting_terminal_gets_pis_reports() {
    let server = ScriptedServer::start(vec![text_reply(&["Hello", " there"])]);
    let env = Env::new(&server.base_url);
    let mut pty = Pty::spawn_with(&env, &[], &[("PI_PROGRAM_STATUS", "")]);
    let after_query = wait_raw(&pty, 0, QUERY);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    // Nothing is reported before the terminal said it understands.
    assert!(reports(&raw(&pty)).is_empty(), "{:?}", reports(&raw(&pty)));
    pty.send(QUERY);
    let mut at = wait_raw(&pty, after_query, &report("idle", None, None));
    pty.send("hi");
    pty.send("\r");
    pty.wait_for("the answer", |s| s.contains("Hello there"));
    at = wait_raw(&pty, at, &report("done", None, None));
    let run = reports(&raw(&pty));
    assert_eq!(run, vec![report("idle", None, None), report("working", None, None), report("done", None, None)]);
    pty.quit();
    wait_raw(&pty, at, &report("clear", None, None).replace(":app=pi", ""));
}

#[test]
fn dialogs_report_blocked_until_answered() {
    if !js_support::node_available() {
        return;
    }
    let Some(node) = js_support::node_path() else { return };
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let file = env.dir.path().join("ask.ts");
    std::fs::write(&file, EXTENSION).expect("extension");
    let node = node.to_string_lossy().into_owned();
    let file = file.to_string_lossy().into_owned();
    let mut pty = Pty::spawn_with(&env, &["-e", &file], &[("PI_NODE", &node), ("PI_PROGRAM_STATUS", "1")]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m") && s.contains("ask.ts"));
    let mut at = wait_raw(&pty, 0, &report("idle", None, None));
    pty.send("/ask");
    pty.wait_for("the command menu", |s| s.contains("asks"));
    pty.send("\r");
    pty.wait_for("the dialog", |s| s.contains("It cannot be undone."));
    at = wait_raw(&pty, at, &report("blocked", Some("permission"), Some("Delete the file?")));
    pty.send("\r");
    pty.wait_for("the answer", |s| s.contains("deleted"));
    at = wait_raw(&pty, at, &report("idle", None, None));
    pty.send("/pick");
    pty.wait_for("the command menu", |s| s.contains("picks"));
    pty.send("\r");
    pty.wait_for("the component", |s| s.contains("pick one"));
    at = wait_raw(&pty, at, &report("blocked", Some("question"), Some("Pick a colour")));
    pty.send("\r");
    pty.wait_for("the answer", |s| s.contains("picked"));
    wait_raw(&pty, at, &report("idle", None, None));
    pty.quit();
}

#[test]
fn a_terminal_that_does_not_answer_gets_no_report() {
    let server = ScriptedServer::start(vec![text_reply(&["Hi"])]);
    let env = Env::new(&server.base_url);
    let mut pty = Pty::spawn_with(&env, &[], &[("PI_PROGRAM_STATUS", "")]);
    wait_raw(&pty, 0, QUERY);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty.send("hi");
    pty.send("\r");
    pty.wait_for("the answer", |s| s.contains("Hi"));
    pty.quit();
    assert!(reports(&raw(&pty)).is_empty(), "{:?}", reports(&raw(&pty)));
}
