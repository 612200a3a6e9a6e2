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

#[test]
fn viewport_keys_scroll_unless_the_focus_captures_them() -> Result<(), pi_tui::TuiError> {
    let mut tui = Tui::new(CaptureTerminal::new(16, 6), ScreenMode::Alt);
    tui.add_child(static_lines(
        &(1..=20).map(|i| format!("line {i}")).collect::<Vec<_>>().iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    tui.render_now()?;
    tui.handle_input("\x1b[5~")?; // pageUp: rows - 4 = 2 lines
    assert_eq!(tui.alt_screen().scroll_offset(), 2);
    tui.handle_input("\x1b[1;5H")?; // ctrl+home: top
    assert_eq!(tui.alt_screen().scroll_offset(), 14);
    tui.handle_input("\x1b[1;5F")?; // ctrl+end: back to following the end
    assert_eq!(tui.alt_screen().scroll_offset(), 0);
    let list = std::rc::Rc::new(std::cell::RefCell::new(pi_tui::SelectList::new(
        vec![pi_tui::SelectItem::new("a", "a", None), pi_tui::SelectItem::new("b", "b", None)],
        5,
        pi_tui::components::SelectListTheme {
            selected_text: std::rc::Rc::new(|s: &str| s.to_string()),
            description: std::rc::Rc::new(|s: &str| s.to_string()),
            scroll_info: std::rc::Rc::new(|s: &str| s.to_string()),
            no_match: std::rc::Rc::new(|s: &str| s.to_string()),
        },
    )));
    tui.set_focus(Some(list));
    tui.handle_input("\x1b[5~")?;
    assert_eq!(tui.alt_screen().scroll_offset(), 0, "a select list captures page keys");
    Ok(())
}
