//! The main-screen differential renderer: byte streams against pi-tui 1.6.0 fixtures, and the
//! resulting screens replayed into `vt100` and snapshotted.

mod common;

use common::{fixture, parser, screen_dump, static_lines};
use pi_tui::render::{Anchor, OverlayOptions, SizeValue};
use pi_tui::{CaptureTerminal, ScreenMode, Tui};

fn strings(v: &serde_json::Value) -> Vec<String> {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

fn overlay_options(v: &serde_json::Value) -> OverlayOptions {
    let mut o = OverlayOptions::default();
    if let Some(w) = v["width"].as_u64() {
        o.width = Some(SizeValue::Abs(w as usize));
    }
    o.anchor = match v["anchor"].as_str() {
        Some("top-right") => Anchor::TopRight,
        Some("top-left") => Anchor::TopLeft,
        Some("bottom-right") => Anchor::BottomRight,
        _ => Anchor::Center,
    };
    o
}

/// Run one fixture scenario; returns (step outputs, step errors).
fn run_scenario(s: &serde_json::Value) -> Vec<(String, Option<String>)> {
    let cols = s["columns"].as_u64().unwrap_or(80) as usize;
    let rows = s["rows"].as_u64().unwrap_or(24) as usize;
    let mut tui = Tui::new(CaptureTerminal::new(cols, rows), ScreenMode::Main);
    tui.set_show_hardware_cursor(s["hardwareCursor"].as_bool().unwrap_or(false));
    tui.set_clear_on_shrink(s["clearOnShrink"].as_bool().unwrap_or(false));
    let doc = static_lines(&[]);
    tui.add_child(doc.clone());
    let mut out = Vec::new();
    for step in s["steps"].as_array().into_iter().flatten() {
        if let Some(size) = step["resize"].as_array() {
            let c = size[0].as_u64().unwrap_or(80) as usize;
            let r = size[1].as_u64().unwrap_or(24) as usize;
            tui.terminal_mut().resize(c, r);
        }
        if step["overlay"].is_object() {
            let lines = strings(&step["overlay"]["lines"]);
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            tui.show_overlay(static_lines(&refs), overlay_options(&step["overlay"]["options"]));
        }
        if step["lines"].is_array() {
            doc.borrow_mut().set(strings(&step["lines"]));
        }
        let err = tui.render_now().err().map(|e| e.to_string().lines().next().unwrap_or("").to_string());
        if step["stop"].as_bool().unwrap_or(false) {
            tui.stop().ok();
        }
        out.push((tui.terminal_mut().take_output(), err));
    }
    out
}

#[test]
fn byte_streams_match_reference() {
    let mut failures = Vec::new();
    for s in fixture("main_screen.json").as_array().into_iter().flatten() {
        let got = run_scenario(s);
        for (i, (step, (output, err))) in s["steps"].as_array().into_iter().flatten().zip(got).enumerate() {
            if output != step["output"].as_str().unwrap_or_default() {
                failures.push(format!("{} step {i}:\n  got {output:?}\n  pi  {:?}", s["name"], step["output"]));
            }
            if err.as_deref() != step["error"].as_str() {
                failures.push(format!("{} step {i}: error {err:?}, pi {}", s["name"], step["error"]));
            }
        }
    }
    assert!(failures.is_empty(), "renderer mismatches:\n{}", failures.join("\n"));
}

/// Render a sequence of documents and snapshot the vt100 screen after each named step.
/// A named step: an optional resize (columns, rows) and the document lines.
type Step<'a> = (&'a str, Option<(u16, u16)>, &'a [&'a str]);

fn replay(cols: u16, rows: u16, steps: &[Step<'_>]) -> String {
    let mut tui = Tui::new(CaptureTerminal::new(cols as usize, rows as usize), ScreenMode::Main);
    let doc = static_lines(&[]);
    tui.add_child(doc.clone());
    let mut vt = parser(rows, cols);
    let mut report = String::new();
    for (name, resize, lines) in steps {
        if let Some((c, r)) = resize {
            tui.terminal_mut().resize(*c as usize, *r as usize);
            let nz = |v: u16| std::num::NonZeroU16::new(v).unwrap_or(std::num::NonZeroU16::MIN);
            vt.screen_mut().set_size(nz(*r), nz(*c));
        }
        doc.borrow_mut().set(lines.iter().map(|l| l.to_string()).collect());
        tui.render_now().unwrap_or_else(|e| panic!("{name}: {e}"));
        vt.process(tui.terminal_mut().take_output().as_bytes());
        report.push_str(&format!("== {name}\n{}", screen_dump(&mut vt)));
    }
    report
}

#[test]
fn screen_first_frame_and_one_line_change() {
    insta::assert_snapshot!(replay(
        20,
        5,
        &[
            ("first frame", None, &["alpha", "beta", "gamma"]),
            ("one line changed", None, &["alpha", "BETA", "gamma"]),
            ("appended", None, &["alpha", "BETA", "gamma", "delta"]),
        ]
    ));
}

#[test]
fn screen_shrink_clears_stale_rows() {
    insta::assert_snapshot!(replay(
        20,
        5,
        &[("four lines", None, &["one", "two", "three", "four"]), ("shrunk to two", None, &["one", "two"])]
    ));
}

#[test]
fn screen_scrollback_keeps_history() {
    let many: Vec<String> = (1..=8).map(|i| format!("line {i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let mut changed = many.clone();
    changed[7] = "line 8 (edited)";
    insta::assert_snapshot!(replay(
        20,
        4,
        &[("short", None, &many[..2]), ("grown past the screen", None, &many), ("last line edited", None, &changed)]
    ));
}

#[test]
fn screen_resize_redraws_everything() {
    insta::assert_snapshot!(replay(
        20,
        4,
        &[
            ("before", None, &["a wide line of text", "second"]),
            ("narrower terminal", Some((12, 4)), &["a wide line", "of text", "second"]),
        ]
    ));
}

#[test]
fn screen_overlay_composited() {
    let mut tui = Tui::new(CaptureTerminal::new(12, 4), ScreenMode::Main);
    tui.add_child(static_lines(&["aaaaaaaaaaaa", "\x1b[44mbbbbbbbbbbbb\x1b[49m"]));
    let mut vt = parser(4, 12);
    tui.render_now().unwrap_or_else(|e| panic!("{e}"));
    let opts = OverlayOptions { width: Some(SizeValue::Abs(6)), ..Default::default() };
    let id = tui.show_overlay(static_lines(&["+----+", "| OV |", "+----+"]), opts);
    tui.render_now().unwrap_or_else(|e| panic!("{e}"));
    vt.process(tui.terminal_mut().take_output().as_bytes());
    let shown = screen_dump(&mut vt);
    tui.hide_overlay(id);
    tui.render_now().unwrap_or_else(|e| panic!("{e}"));
    vt.process(tui.terminal_mut().take_output().as_bytes());
    insta::assert_snapshot!(format!("== overlay shown\n{shown}== overlay hidden\n{}", screen_dump(&mut vt)));
}

#[test]
fn degenerate_terminal_sizes_do_not_panic() -> Result<(), pi_tui::TuiError> {
    for mode in [ScreenMode::Main, ScreenMode::Alt] {
        let mut tui = Tui::new(CaptureTerminal::new(0, 0), mode);
        tui.add_child(static_lines(&["", ""]));
        tui.render_now()?;
        tui.terminal_mut().resize(1, 1);
        tui.render_now()?;
    }
    Ok(())
}
