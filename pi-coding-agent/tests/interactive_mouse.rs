//! The fullscreen mode's mouse (pi's `TuiAltScreen`): the real `pi` in a pty of 100×30 gets SGR
//! mouse reports after a long reply, and its screens are compared with the reference pi 1.6.0's,
//! recorded in tmux by `fixtures/interactive/record_mouse.sh` (the same settings, reply and
//! reports): wheel scrolling with `fullscreenWheelScrollLines` and Alt ×5, the scrollbar drawn,
//! clicked and dragged, and the "Jump to latest message" indicator drawn and clicked. Mouse
//! reporting is turned on as the reference does in fullscreen, off on exit, and never in
//! regular mode.

mod cli_support;
mod interactive_support;
mod js_support;

use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::{Pty, comparable, fixture, type_keys};

const ALWAYS: &str = r#"{"theme":"dark","fullscreenScrollbar":"always","fullscreenWheelScrollLines":3}"#;
const HIDDEN: &str = r#"{"theme":"dark","fullscreenScrollbar":"hidden","fullscreenWheelScrollLines":3}"#;

fn long_reply() -> String {
    let items: String = (1..=40).map(|i| format!("- item {i}\n")).collect();
    text_reply(&[&format!("Items:\n\n{items}")])
}

/// Starts pi with `settings`, asks for the long reply, waits for it, then sends `reports`
/// (`WAIT` waits for quiet) and returns pi with the last screen.
fn play(settings: &str, reports: &[&str], done: impl Fn(&str) -> bool, vars: &[(&str, &str)]) -> (Pty, Env, String) {
    let server = ScriptedServer::start(vec![long_reply()]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), settings).expect("settings");
    let mut pty = Pty::spawn_with(&env, &[], vars);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["list", "Enter"]);
    pty.wait_for("the reply", |s| s.contains("item 40") && s.contains("↑10"));
    type_keys(&mut pty, reports);
    let screen = pty.wait_for("the screen after the mouse", done);
    std::mem::forget(server);
    (pty, env, screen)
}

fn compare(settings: &str, reports: &[&str], done: impl Fn(&str) -> bool, name: &str) {
    let (mut pty, env, screen) = play(settings, reports, done, &[]);
    let proj = env.proj().display().to_string();
    let want = fixture(&format!("{name}.ref.txt"));
    assert_eq!(comparable(&screen, &proj), comparable(&want, &proj), "{name}: our screen (left) and the reference's");
    pty.quit();
}

const UP: &str = "\x1b[<64;10;5M";

#[test]
fn an_always_scrollbar_at_the_end_matches_the_reference() {
    compare(ALWAYS, &[], |s| s.contains("┃"), "mouse_end");
}

#[test]
fn wheel_up_scrolls_three_lines_and_shows_the_indicator() {
    let done = |s: &str| s.contains("item 34  ") && s.contains("Jump to latest");
    compare(ALWAYS, &[UP, "WAIT", UP], done, "mouse_wheel");
    // The colours of `mouse_wheel.ref.ansi.txt`: the track and thumb in the dark theme's
    // scrollbarTrack/scrollbarThumb, the indicator in text on selectedBg.
    let (mut pty, _env, _) = play(ALWAYS, &[UP, "WAIT", UP], done, &[]);
    {
        let parser = pty.parser.lock().expect("parser");
        let screen = parser.screen();
        let cell = |row: u16, col: u16| screen.cell(row, col).expect("cell").clone();
        let (track, thumb) = (cell(0, 99), cell(11, 99));
        assert_eq!((track.contents(), track.fgcolor()), ("│", vt100::Color::Rgb(72, 78, 82)));
        assert_eq!((thumb.contents(), thumb.fgcolor()), ("┃", vt100::Color::Rgb(151, 160, 165)));
        let label = cell(23, 32);
        assert_eq!(label.contents(), "↓");
        assert_eq!(
            (label.fgcolor(), label.bgcolor()),
            (vt100::Color::Rgb(222, 224, 225), vt100::Color::Rgb(33, 59, 73))
        );
    }
    pty.quit();
}

#[test]
fn clicking_the_indicator_returns_to_the_end() {
    let reports = [UP, "WAIT", UP, "WAIT", "\x1b[<0;50;24M", "WAIT", "\x1b[<0;50;24m"];
    compare(ALWAYS, &reports, |s| !s.contains("Jump to latest") && s.contains("item 40"), "mouse_indicator");
}

#[test]
fn alt_wheel_scrolls_five_times_as_far() {
    compare(HIDDEN, &["\x1b[<72;10;5M"], |s| s.contains("Jump to latest"), "mouse_wheel_alt");
}

#[test]
fn wheel_down_scrolls_forward() {
    let reports = ["\x1b[<72;10;5M", "WAIT", "\x1b[<65;10;5M"];
    compare(HIDDEN, &reports, |s| s.contains("item 28  "), "mouse_wheel_down");
}

#[test]
fn a_press_on_the_track_jumps_there() {
    let reports = ["\x1b[<0;100;2M", "WAIT", "\x1b[<0;100;2m"];
    compare(ALWAYS, &reports, |s| s.contains("█"), "mouse_track");
}

#[test]
fn dragging_the_thumb_scrolls_with_it() {
    let reports = ["\x1b[<0;100;2M", "WAIT", "\x1b[<32;100;10M", "WAIT", "\x1b[<0;100;10m"];
    compare(ALWAYS, &reports, |s| s.contains("item 16  "), "mouse_drag");
}

#[test]
fn mouse_reporting_is_on_in_fullscreen_and_off_after_exit() {
    let (mut pty, _env, _) = play(HIDDEN, &[], |_| true, &[]);
    pty.quit();
    let raw = pty.output_after_exit();
    let on = "\x1b[?1049h\x1b[?7l\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1004h\x1b[?1006h";
    let entered = raw.find(on).expect("the alternate screen with all-motion mouse reporting");
    let off = raw.rfind("\x1b[?1006l\x1b[?1004l\x1b[?1003l\x1b[?1002l\x1b[?1000l").expect("mouse reporting off");
    assert!(off > entered && raw[off..].contains("\x1b[?1049l"), "turned off before leaving the alternate screen");
}

#[test]
fn regular_mode_reports_no_mouse() {
    let settings = r#"{"theme":"dark","tuiMode":"regular"}"#;
    let (mut pty, _env, _) = play(settings, &[], |_| true, &[]);
    pty.quit();
    let raw = pty.output_after_exit();
    assert!(!raw.contains("\x1b[?1000h") && !raw.contains("\x1b[?1006h"), "no mouse reporting in regular mode");
}

/// An unmodified extension's component with `handleMouse` (`fixtures/interactive/mouse-extension.ts`,
/// in the real Node of `PI_NODE`) gets pi's events: a click (press, release, click with its
/// count), a Shift+Ctrl drag and its release relative to the component, and a wheel notch it
/// takes, listed on its screen as in the reference's.
#[test]
fn an_extensions_component_gets_mouse_events_as_in_the_reference() {
    let Some(node) = js_support::node_path() else { return };
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"theme":"dark"}"#).expect("settings");
    let source = format!("{}/tests/fixtures/interactive/mouse-extension.ts", env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(&source, env.proj().join("mouse-extension.ts")).expect("copy the extension");
    let node = node.to_string_lossy().into_owned();
    let mut pty = Pty::spawn_with(&env, &["-e", "mouse-extension.ts"], &[("PI_NODE", &node)]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/clicker", "Enter"]);
    pty.wait_for("the component", |s| s.contains("Clicker (Escape closes)"));
    let reports = [
        "\x1b[<0;5;26M",
        "WAIT",
        "\x1b[<0;5;26m",
        "WAIT",
        "\x1b[<20;7;26M",
        "WAIT",
        "\x1b[<52;9;27M",
        "WAIT",
        "\x1b[<20;9;27m",
        "WAIT",
        "\x1b[<65;3;26M",
    ];
    type_keys(&mut pty, &reports);
    let screen = pty.wait_for("the wheel event", |s| s.contains("wheel none"));
    let proj = env.proj().display().to_string();
    let want = fixture("mouse_component.ref.txt");
    assert_eq!(comparable(&screen, &proj), comparable(&want, &proj), "our screen (left) and the reference's");
    pty.quit();
}

/// The same component as an overlay (`fixtures/interactive/mouse-overlay-extension.ts`, centred
/// over the long reply, growing as it lists events) gets pi's events relative to itself where
/// it is drawn: a press above it goes to the transcript, a Shift+Ctrl drag and its release over
/// it go to it, a wheel notch it lists but does not take scrolls the transcript under it, and a
/// click outside it is not its own; the screen is the reference's.
#[test]
fn an_overlays_component_gets_mouse_events_as_in_the_reference() {
    let Some(node) = js_support::node_path() else { return };
    let server = ScriptedServer::start(vec![long_reply()]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), ALWAYS).expect("settings");
    let source = format!("{}/tests/fixtures/interactive/mouse-overlay-extension.ts", env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(&source, env.proj().join("mouse-overlay-extension.ts")).expect("copy the extension");
    let node = node.to_string_lossy().into_owned();
    let mut pty = Pty::spawn_with(&env, &["-e", "mouse-overlay-extension.ts"], &[("PI_NODE", &node)]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["list", "Enter"]);
    pty.wait_for("the reply", |s| s.contains("item 40") && s.contains("↑10"));
    type_keys(&mut pty, &["/clicker-overlay", "Enter"]);
    pty.wait_for("the overlay", |s| s.contains("Overlay clicker (Escape closes)"));
    let reports = [
        "\x1b[<0;31;13M",
        "WAIT",
        "\x1b[<0;31;13m",
        "WAIT",
        "\x1b[<20;33;14M",
        "WAIT",
        "\x1b[<52;35;15M",
        "WAIT",
        "\x1b[<20;35;15m",
        "WAIT",
        "\x1b[<64;40;14M",
        "WAIT",
        "\x1b[<0;5;3M",
        "WAIT",
        "\x1b[<0;5;3m",
    ];
    type_keys(&mut pty, &reports);
    let screen = pty.wait_for("the wheel event", |s| s.contains("wheel none") && s.contains("item 14"));
    let proj = env.proj().display().to_string();
    let want = fixture("mouse_overlay.ref.txt");
    assert_eq!(comparable(&screen, &proj), comparable(&want, &proj), "our screen (left) and the reference's");
    pty.quit();
    drop(server);
}

/// The cells drawn in reverse video (the selection), as (row, column).
fn inverse_cells(screen: &vt100::Screen) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    for row in 0..interactive_support::ROWS {
        for col in 0..interactive_support::COLS {
            if screen.cell(row, col).is_some_and(|c| c.inverse()) {
                out.push((row, col));
            }
        }
    }
    out
}

/// The reference's reverse-video cells, from its `tmux capture-pane -e` screen. tmux trims a
/// row's trailing spaces even when reverse video runs on to the row's end (it then carries into
/// the next row's first cells), so a row ending in reverse video is reverse to its last column.
fn reference_inverse_cells(name: &str) -> Vec<(u16, u16)> {
    let ansi = fixture(&format!("{name}.ref.ansi.txt"));
    let rows = std::num::NonZero::new(interactive_support::ROWS).expect("rows");
    let cols = std::num::NonZero::new(interactive_support::COLS).expect("cols");
    let mut parser = vt100::Parser::new(rows, cols, 0);
    let mut trailing = Vec::new();
    for (row, line) in ansi.trim_end_matches('\n').split('\n').enumerate() {
        if row > 0 {
            parser.process(b"\r\n");
        }
        parser.process(line.as_bytes());
        if parser.screen().inverse() {
            let (_, col) = parser.screen().cursor_position();
            trailing.extend((col..interactive_support::COLS).map(|c| (row as u16, c)));
        }
    }
    let mut cells = inverse_cells(parser.screen());
    cells.extend(trailing);
    cells.sort_unstable();
    cells.dedup();
    cells
}

fn compare_selection(reports: &[&str], name: &str) {
    let settings = r#"{"theme":"dark","fullscreenScrollbar":"hidden","fullscreenCopyOnSelect":false}"#;
    let want = reference_inverse_cells(name);
    assert!(!want.is_empty(), "the reference shows a selection");
    let (mut pty, env, screen) = play(settings, reports, |_| true, &[]);
    let proj = env.proj().display().to_string();
    assert_eq!(comparable(&screen, &proj), comparable(&fixture(&format!("{name}.ref.txt")), &proj));
    let ours = inverse_cells(pty.parser.lock().expect("parser").screen());
    assert_eq!(ours, want, "{name}: our selected cells (left) and the reference's");
    pty.quit();
}

#[test]
fn a_drag_selects_transcript_text_as_the_reference() {
    let reports = ["\x1b[<0;4;5M", "WAIT", "\x1b[<32;8;6M", "WAIT", "\x1b[<32;12;7M", "WAIT", "\x1b[<0;12;7m"];
    compare_selection(&reports, "mouse_select");
}

#[test]
fn a_double_click_selects_a_word_as_the_reference() {
    let reports = ["\x1b[<0;6;10M", "\x1b[<0;6;10m", "\x1b[<0;6;10M", "\x1b[<0;6;10m"];
    compare_selection(&reports, "mouse_select_word");
}

/// With `fullscreenCopyOnSelect` (the default) the selection is copied when the button is
/// released: without a display pi writes it as OSC 52 (pi's `copyToClipboard`) and flashes
/// "Copied!" at the top right.
#[test]
fn releasing_a_selection_copies_it_with_osc52() {
    let reports = ["\x1b[<0;4;5M", "WAIT", "\x1b[<32;12;7M", "WAIT", "\x1b[<0;12;7m"];
    let (mut pty, _env, _) =
        play(HIDDEN, &reports, |s| s.contains("Copied!"), &[("DISPLAY", ""), ("WAYLAND_DISPLAY", "")]);
    pty.quit();
    let raw = pty.output_after_exit();
    use base64::Engine;
    let want = base64::engine::general_purpose::STANDARD.encode("item 21\n - item 22\n - item 23");
    assert!(raw.contains(&format!("\x1b]52;c;{want}\x07")), "the selection as OSC 52");
}
