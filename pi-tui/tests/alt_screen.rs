//! The alt-screen renderer: output replayed into vt100 and snapshotted.

mod common;

use common::{parser, screen_dump, static_lines};
use pi_tui::render::{OverlayOptions, SizeValue};
use pi_tui::{CaptureTerminal, ScreenMode, Tui};

#[test]
fn alt_screen_viewport_follows_end_scrolls_and_prints_on_exit() -> Result<(), pi_tui::TuiError> {
    let mut tui = Tui::new(CaptureTerminal::new(16, 4), ScreenMode::Alt);
    let doc = static_lines(&["one", "two"]);
    tui.add_child(doc.clone());
    let mut vt = parser(4, 16);
    let mut report = String::new();
    let mut step = |name: &str, tui: &mut Tui<CaptureTerminal>, vt: &mut vt100::Parser| {
        vt.process(tui.terminal_mut().take_output().as_bytes());
        report.push_str(&format!("== {name} (alternate: {})\n{}", vt.screen().alternate_screen(), screen_dump(vt)));
    };
    tui.start()?;
    tui.render_now()?;
    step("first frame", &mut tui, &mut vt);

    doc.borrow_mut().set((1..=7).map(|i| format!("line {i}")).collect());
    tui.render_now()?;
    step("document longer than the screen", &mut tui, &mut vt);

    tui.alt_screen().scroll_by(2, 4);
    tui.render_now()?;
    step("scrolled back two lines", &mut tui, &mut vt);

    let id = tui
        .show_overlay(static_lines(&["[ok]"]), OverlayOptions { width: Some(SizeValue::Abs(4)), ..Default::default() });
    tui.render_now()?;
    step("overlay", &mut tui, &mut vt);
    tui.hide_overlay(id);

    tui.stop()?;
    step("after stop (document printed to the main screen)", &mut tui, &mut vt);
    insta::assert_snapshot!(report);
    Ok(())
}

#[test]
fn alt_screen_rewrites_only_changed_rows() -> Result<(), pi_tui::TuiError> {
    let mut tui = Tui::new(CaptureTerminal::new(10, 3), ScreenMode::Alt);
    let doc = static_lines(&["a", "b", "c"]);
    tui.add_child(doc.clone());
    tui.render_now()?;
    tui.terminal_mut().take_output();
    doc.borrow_mut().set(vec!["a".into(), "B".into(), "c".into()]);
    tui.render_now()?;
    assert_eq!(tui.terminal_mut().take_output(), "\x1b[?2026h\x1b[2;1H\x1b[2KB\x1b[0m\x1b]8;;\x07\x1b[?25l\x1b[?2026l");
    Ok(())
}
