//! JavaScript components that misbehave (issue 15, bad input), in the real `pi` binary in a
//! pseudo-terminal: a `render` that throws, non-string and over-wide lines (drawn, cut to the
//! width and reported once as the extension's error, where pi's TUI would stop), a component
//! widget redrawn on `tui.requestRender()`, and a `custom` never resolved when the session ends.
//! Fixture: `tests/fixtures/js_extensions/ui-components.ts`. Needs Node.js 22 (`js_support`).

mod cli_support;
mod interactive_support;
mod js_support;

use cli_support::{Env, ScriptedServer};
use interactive_support::{COLS, Pty, dark_theme};

fn start() -> Option<(Env, Pty, ScriptedServer)> {
    if !js_support::node_available() {
        return None;
    }
    let node = js_support::node_path()?.to_string_lossy().into_owned();
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let ext = js_support::fixture("ui-components.ts").to_string_lossy().into_owned();
    let pty = Pty::spawn_with(&env, &["-e", &ext], &[("PI_NODE", &node)]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    Some((env, pty, server))
}

fn command(pty: &mut Pty, name: &str) {
    pty.send(name);
    pty.wait_for("the command typed", |s| s.contains(name));
    pty.send("\r");
}

#[test]
fn a_render_that_throws_is_reported_and_keys_still_reach_the_component() {
    let Some((_env, mut pty, _server)) = start() else { return };
    command(&mut pty, "/throwing");
    let screen = pty.wait_for("the error", |s| s.contains("render() threw: boom"));
    assert!(screen.contains("ui-components.ts\" error:"), "{screen}");
    assert_eq!(screen.matches("render() threw").count(), 1, "reported once:\n{screen}");
    pty.send("x");
    let screen = pty.wait_for("the component drawn", |s| s.contains("rendered at"));
    assert!(screen.contains(&format!("rendered at {COLS}")), "{screen}");
    pty.send("\r");
    let screen = pty.wait_for("done", |s| s.contains("custom resolved: after 2 keys"));
    assert!(!screen.contains("rendered at"), "the editor is back:\n{screen}");
    pty.quit();
}

#[test]
fn non_string_and_over_wide_lines_are_drawn_cut_and_reported() {
    let Some((_env, mut pty, _server)) = start() else { return };
    command(&mut pty, "/bad-lines");
    let screen = pty.wait_for("the component", |s| s.contains("ok line") && s.contains("render() returned"));
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines.iter().position(|l| l.trim_end() == "42").expect("the number drawn as text");
    assert_eq!(lines[at + 1].trim_end(), "", "null is an empty line");
    assert_eq!(lines[at + 2], "W".repeat(COLS as usize), "cut to the terminal's width");
    assert_eq!(lines[at + 3].trim_end(), "ok line");
    assert!(screen.contains("render() returned a non-string line (line 0: number)"), "{screen}");
    pty.send(" ");
    pty.wait_for("done", |s| s.contains("bad-lines resolved: 7"));
    pty.quit();
}

#[test]
fn a_component_widget_is_drawn_again_when_the_extension_asks() {
    let Some((_env, mut pty, _server)) = start() else { return };
    command(&mut pty, "/counter");
    pty.wait_for("the widget", |s| s.contains("count: 0"));
    command(&mut pty, "/bump");
    pty.wait_for("the widget redrawn", |s| s.contains("count: 1"));
    command(&mut pty, "/bump");
    let screen = pty.wait_for("the widget redrawn", |s| s.contains("count: 2"));
    assert!(!screen.contains("count: 1"), "{screen}");
    pty.quit();
}

#[test]
fn a_custom_component_never_finished_does_not_keep_the_session_alive() {
    let Some((_env, mut pty, _server)) = start() else { return };
    command(&mut pty, "/never");
    pty.wait_for("the component", |s| s.contains("never done"));
    // The session ends under it (the terminal closes, a signal): pi-rs exits as for any SIGTERM.
    let pid = pty.child.process_id().expect("pid") as i32;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM).expect("kill");
    assert_eq!(pty.wait_exit(), 143);
    let raw = pty.output_after_exit();
    assert!(!raw.contains("never reached"));
    assert!(raw.contains("\x1b[?1049l"), "the terminal is restored");
}
