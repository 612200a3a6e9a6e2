//! The fullscreen mode's transcript search (pi's `tui.altScreen.search*`): the real `pi` in a pty
//! of 100×30 gets a long reply (a styled line, then forty list items), then the search keys, and
//! its screens are compared with the reference pi 1.6.0's, recorded in tmux by
//! `fixtures/interactive/record_search.sh` (the same settings, reply and key bytes): the box at
//! the top right, a query with twelve matches, next and previous (with wrapping), a query with
//! no match, closing, a query over styled text and over a line end, a click on the box's
//! "previous" button and the pointer over "next", the search over a focused `/settings` list,
//! a transcript that grows while searching, and `keybindings.json` overrides. The highlight colours (the dark theme's
//! `searchMatchText` on `searchMatchBg`, underlined; the selected match bold in reverse video)
//! are compared cell by cell with the reference's `tmux capture-pane -e` screens.

mod cli_support;
mod interactive_support;
mod js_support;

use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::{COLS, Pty, comparable, fixture, type_keys};

const SETTINGS: &str = r#"{"theme":"dark","fullscreenScrollbar":"hidden"}"#;
/// Ctrl+Shift+F, Shift+Enter and Ctrl+Shift+G as the recording sends them (CSI u).
const SEARCH: &str = "\x1b[102;6u";
const SHIFT_ENTER: &str = "\x1b[13;2u";
const CTRL_SHIFT_G: &str = "\x1b[103;6u";
/// The transcript's rows on the screen (the dock takes the last six).
const VIEW_ROWS: u16 = 24;

fn long_reply() -> String {
    let items: String = (1..=40).map(|i| format!("- item {i}\n")).collect();
    text_reply(&[&format!("Find **item 3** in a *styled item* line.\n\n{items}")])
}

/// Starts pi (with `keybindings`, if any), asks for the long reply, waits for it, then sends
/// `keys` (tmux names, `WAIT` waits for quiet) and returns pi with the screen once `done`.
fn play(keys: &[&str], done: impl Fn(&str) -> bool, keybindings: Option<&str>) -> (Pty, Env, String) {
    let server = ScriptedServer::start(vec![long_reply()]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), SETTINGS).expect("settings");
    if let Some(k) = keybindings {
        std::fs::write(env.agent().join("keybindings.json"), k).expect("keybindings");
    }
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["list", "Enter"]);
    pty.wait_for("the reply", |s| s.contains("item 40") && s.contains("↑10"));
    type_keys(&mut pty, keys);
    let screen = pty.wait_for("the screen after the keys", done);
    std::mem::forget(server);
    (pty, env, screen)
}

/// What a cell shows and how: text, colours, bold, dim, underline, reverse video.
type Look = (String, vt100::Color, vt100::Color, bool, bool, bool, bool);

fn look(cell: &vt100::Cell) -> Look {
    (
        cell.contents().to_owned(),
        cell.fgcolor(),
        cell.bgcolor(),
        cell.bold(),
        cell.dim(),
        cell.underline(),
        cell.inverse(),
    )
}

/// The transcript rows' cells that show text, with their looks.
fn text_cells(screen: &vt100::Screen) -> Vec<((u16, u16), Look)> {
    let mut out = Vec::new();
    for row in 0..VIEW_ROWS {
        for col in 0..COLS {
            let Some(cell) = screen.cell(row, col) else { continue };
            if !cell.contents().trim().is_empty() {
                out.push(((row, col), look(cell)));
            }
        }
    }
    out
}

/// The reference's screen from its `capture-pane -e` capture.
fn reference_cells(name: &str) -> Vec<((u16, u16), Look)> {
    let ansi = fixture(&format!("{name}.ref.ansi.txt"));
    let rows = std::num::NonZero::new(interactive_support::ROWS).expect("rows");
    let cols = std::num::NonZero::new(COLS).expect("cols");
    let mut parser = vt100::Parser::new(rows, cols, 0);
    for (row, line) in ansi.trim_end_matches('\n').split('\n').enumerate() {
        if row > 0 {
            parser.process(b"\r\n");
        }
        parser.process(line.as_bytes());
    }
    text_cells(parser.screen())
}

/// Plays `keys`, then asserts the screen is the reference's `NAME.ref.txt`, and the transcript
/// rows' text cells look as in `NAME.ref.ansi.txt` (colours and attributes).
fn compare(keys: &[&str], done: impl Fn(&str) -> bool, name: &str, keybindings: Option<&str>) {
    let (mut pty, env, screen) = play(keys, done, keybindings);
    let proj = env.proj().display().to_string();
    let want = fixture(&format!("{name}.ref.txt"));
    assert_eq!(comparable(&screen, &proj), comparable(&want, &proj), "{name}: our screen (left) and the reference's");
    let theirs = reference_cells(name);
    // Attributes change no text: give the last key's frame its time (up to the usual 30 s).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut ours = text_cells(pty.parser.lock().expect("parser").screen());
    while ours != theirs && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        ours = text_cells(pty.parser.lock().expect("parser").screen());
    }
    let differing: Vec<_> = ours.iter().zip(&theirs).filter(|(a, b)| a != b).take(5).collect();
    assert!(differing.is_empty(), "{name}: cells that look different (ours, the reference's): {differing:#?}");
    assert_eq!(ours.len(), theirs.len(), "{name}: as many text cells");
    pty.quit();
}

#[test]
fn the_search_box_opens_at_the_top_right() {
    compare(&[SEARCH], |s| s.contains("Find in transcript"), "search_open", None);
}

#[test]
fn a_query_highlights_its_matches_and_selects_the_first_in_view() {
    compare(&[SEARCH, "WAIT", "item 3"], |s| s.contains("3/12"), "search_query", None);
    // What the comparison covers: "item 30" (row 13) is the selected match, bold in reverse
    // video, "item 31" below it underlined, both `searchMatchText` on `searchMatchBg`; the space
    // between "item" and "3" is not part of the match (pi cuts matches at spaces).
    let cells = reference_cells("search_query");
    let at = |row: u16, col: u16| cells.iter().find(|(p, _)| *p == (row, col)).map(|(_, l)| l.clone()).expect("cell");
    let (fg, bg) = (vt100::Color::Rgb(157, 165, 169), vt100::Color::Rgb(78, 47, 27));
    assert_eq!(at(13, 3), ("i".to_owned(), fg, bg, true, false, false, true));
    assert_eq!(at(13, 8), ("3".to_owned(), fg, bg, true, false, false, true));
    assert_eq!(at(13, 9).2, vt100::Color::Default, "the 0 of 30 is not highlighted");
    assert_eq!(at(14, 3), ("i".to_owned(), fg, bg, false, false, true, false));
}

#[test]
fn enter_and_ctrl_g_select_the_next_matches() {
    compare(&[SEARCH, "WAIT", "item 3", "WAIT", "Enter", "WAIT", "C-g"], |s| s.contains("5/12"), "search_next", None);
}

#[test]
fn shift_enter_and_ctrl_shift_g_select_the_previous_ones_and_wrap() {
    let keys = [SEARCH, "WAIT", "item 3", "WAIT", SHIFT_ENTER, "WAIT", SHIFT_ENTER, "WAIT", CTRL_SHIFT_G];
    compare(&keys, |s| s.contains("12/12"), "search_previous", None);
}

#[test]
fn next_wraps_after_the_last_match() {
    let keys = [SEARCH, "WAIT", "item 3", "WAIT", "Enter", "WAIT", "Enter", "WAIT", "Enter", "WAIT", "Enter"];
    compare(&keys, |s| s.contains("7/12"), "search_wrap", None);
}

#[test]
fn a_query_without_matches_says_so() {
    compare(&[SEARCH, "WAIT", "item 3", "WAIT", "zz"], |s| s.contains("No matches"), "search_none", None);
}

#[test]
fn escape_closes_the_search_and_leaves_the_transcript_where_it_was() {
    let keys = [SEARCH, "WAIT", "item 3", "WAIT", SHIFT_ENTER, "WAIT", "Escape"];
    compare(&keys, |s| !s.contains("Shift+Enter") && s.contains("Jump to latest"), "search_close", None);
}

#[test]
fn a_match_over_styled_text_is_one_match() {
    compare(&[SEARCH, "WAIT", "styled ITEM line"], |s| s.contains("1/1"), "search_styled", None);
}

#[test]
fn a_match_runs_over_a_line_end() {
    compare(&[SEARCH, "WAIT", "38 - item"], |s| s.contains("1/1"), "search_span", None);
}

#[test]
fn a_press_on_the_previous_button_selects_the_previous_match() {
    let keys = [SEARCH, "WAIT", "item 3", "WAIT", "\x1b[<0;74;4M", "WAIT", "\x1b[<0;74;4m"];
    compare(&keys, |s| s.contains("2/12"), "search_click", None);
}

#[test]
fn the_pointer_on_a_button_underlines_it() {
    // The underline changes no text: wait for the box, then send the motion and wait for it.
    let keys = [SEARCH, "WAIT", "item 3", "WAIT", "\x1b[<35;90;4M"];
    compare(&keys, |s| s.contains("3/12"), "search_hover", None);
    let cells = reference_cells("search_hover");
    assert!(cells.iter().any(|((row, col), l)| (*row, *col) == (3, 89) && l.5), "the reference underlines \"↓ Enter\"");
}

#[test]
fn the_search_opens_over_a_focused_selector_and_gives_the_focus_back() {
    let keys = ["/settings", "Enter", "WAIT", SEARCH, "WAIT", "item 3"];
    compare(&keys, |s| s.contains("6/12") && s.contains("Auto-compact"), "search_settings", None);
    // Escape closes the search only; the list has the keys again.
    let keys = ["/settings", "Enter", "WAIT", SEARCH, "WAIT", "item 3", "WAIT", "Escape", "WAIT", "Down"];
    compare(&keys, |s| s.contains("(2/") && !s.contains("Shift+Enter"), "search_settings_close", None);
}

#[test]
fn the_count_follows_a_growing_transcript_and_the_selection_stays() {
    // A user command shows; the query finds its command line; then it prints five lines while
    // the search is open (as the recording: the query is typed within the command's first 2 s).
    let server = ScriptedServer::start(vec![long_reply()]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), SETTINGS).expect("settings");
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["list", "Enter"]);
    pty.wait_for("the reply", |s| s.contains("item 40") && s.contains("↑10"));
    type_keys(&mut pty, &["!sleep 2; for i in 1 2 3 4 5; do echo found $i; sleep 0.3; done", "Enter"]);
    // The running command animates: wait for its line only, not for quiet.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !pty.screen().contains("$ sleep 2") {
        assert!(std::time::Instant::now() < deadline, "the command never showed:\n{}", pty.screen());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    type_keys(&mut pty, &[SEARCH, "found"]);
    // The fifth line shows 0.3 s before the command ends and its output counts in the footer's
    // context usage (the recording's 0.5%): wait for both.
    let screen = pty.wait_for("the command's five lines and its end", |s| s.contains("1/6") && s.contains("0.5%/8.2k"));
    std::mem::forget(server);
    let proj = env.proj().display().to_string();
    let want = fixture("search_grow.ref.txt");
    assert_eq!(
        comparable(&screen, &proj),
        comparable(&want, &proj),
        "search_grow: our screen (left) and the reference's"
    );
    pty.quit();
}

#[test]
fn keybindings_json_moves_the_search_keys_and_the_box_names_them() {
    let keybindings = r#"{"tui.altScreen.search":"ctrl+f","tui.altScreen.searchNext":"ctrl+n"}"#;
    // Ctrl+F, the query, Ctrl+N.
    let keys = ["\x06", "WAIT", "item 3", "WAIT", "\x0e"];
    compare(&keys, |s| s.contains("4/12"), "search_rebound", Some(keybindings));
}

#[test]
fn regular_mode_has_no_transcript_search() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"theme":"dark","tuiMode":"regular"}"#).expect("settings");
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &[SEARCH, "WAIT", "abc"]);
    let screen = pty.wait_for("the typed text", |s| s.contains("abc"));
    assert!(!screen.contains("Find in transcript") && !screen.contains("┌"), "no search box:\n{screen}");
    pty.quit();
}
