//! JavaScript extensions' components in the interactive mode (issue 15): the reference's own
//! examples (`examples/extensions/`, loaded unmodified with `-e`) drawing headers, footers,
//! widgets, custom components and overlays, in the real `pi` binary in a pseudo-terminal of
//! 100×30, compared with the reference pi 1.6.0's screens recorded in tmux at the same size by
//! `tests/fixtures/interactive/record_jsui.sh`. Needs Node.js 22 (`js_support`) and the reference's
//! examples (`anchor.sh path`, or `PI_ANCHOR_DIR`).

mod cli_support;
mod interactive_support;
mod js_support;

use std::path::PathBuf;

use cli_support::{Env, ScriptedServer};
use interactive_support::{Pty, dark_theme, normalize, type_keys};

/// The reference's examples folder, or `None` (skip; a failure under CI).
fn examples_dir() -> Option<PathBuf> {
    let root = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pi-anchor")))?;
    let dir = root.join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "the reference pi 1.6.0 is missing: CI must install it");
    eprintln!("SKIP: the reference's examples are not installed (anchor.sh path or PI_ANCHOR_DIR)");
    None
}

/// tmux's capture drops the last emoji of a zero-width-joiner sequence (the family emoji of
/// overlay-test.ts) that vt100 keeps: both screens without what follows a joiner.
fn zwj(screen: &str) -> String {
    let re = regex::Regex::new(r"\x{200d}\p{Emoji}").expect("regex");
    re.replace_all(screen, "\u{200d}").into_owned()
}

/// `pi -e <example>` in a pty, with the test's Node.js.
fn spawn(env: &Env, example: &std::path::Path) -> Option<Pty> {
    let node = js_support::node_path()?;
    let node = node.to_string_lossy().into_owned();
    let example = example.to_string_lossy().into_owned();
    Some(Pty::spawn_with(env, &["-e", &example], &[("PI_NODE", &node)]))
}

/// Runs `example`, types `keys`, waits until `done` holds and compares with `NAME.ref.txt`.
fn compare(name: &str, example: &str, keys: &[&str], done: impl Fn(&str) -> bool) {
    if !js_support::node_available() {
        return;
    }
    let Some(dir) = examples_dir() else { return };
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let Some(mut pty) = spawn(&env, &dir.join(example)) else { return };
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, keys);
    let screen = pty.wait_for(name, done);
    let proj = env.proj().display().to_string();
    let want = interactive_support::fixture(&format!("{name}.ref.txt"));
    let (ours, reference) = (zwj(&normalize(&screen, &proj)), zwj(&normalize(&want, &proj)));
    assert_eq!(ours, reference, "{name}: our screen (left) and the reference's");
    pty.quit();
}

#[test]
fn custom_header_draws_the_extensions_component() {
    compare("jsui_header", "custom-header.ts", &[], |s| s.contains("shitty coding agent"));
}

#[test]
fn custom_footer_replaces_the_footer() {
    compare("jsui_footer", "custom-footer.ts", &["/footer", "WAIT", "Enter"], |s| s.contains("Custom footer enabled"));
}

#[test]
fn widgets_sit_above_and_below_the_editor() {
    compare("jsui_widgets", "widget-placement.ts", &[], |s| s.contains("Below editor widget"));
}

#[test]
fn overlay_is_drawn_over_the_screen_where_the_reference_puts_it() {
    compare("jsui_overlay", "overlay-test.ts", &["/overlay-test", "WAIT", "Enter"], |s| s.contains("Overlay Test"));
}

#[test]
fn overlay_gets_the_keys() {
    compare(
        "jsui_overlay_keys",
        "overlay-test.ts",
        &["/overlay-test", "WAIT", "Enter", "WAIT", "Down", "Down", "Space"],
        |s| s.contains("Overlay Test"),
    );
}

#[test]
fn anchored_overlay_sits_in_its_corner() {
    compare("jsui_anchors", "overlay-qa-tests.ts", &["/overlay-anchors", "WAIT", "Enter"], |s| {
        s.contains("Anchor Test")
    });
}

#[test]
fn a_game_in_place_of_the_editor_draws_as_the_reference() {
    compare("jsui_tictactoe", "tic-tac-toe.ts", &["/tic-tac-toe", "WAIT", "Enter"], |s| s.contains("ENTER play"));
}

#[test]
fn done_closes_the_overlay_and_resolves_the_extensions_promise() {
    compare(
        "jsui_overlay_done",
        "overlay-test.ts",
        &["/overlay-test", "WAIT", "Enter", "WAIT", "Down", "Enter"],
        |s| s.contains(" Run") && !s.contains("Overlay Test"),
    );
}
