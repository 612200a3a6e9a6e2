//! Kitty image cleanup of the renderers, byte for byte against pi-tui 1.6.0
//! (`fixtures/kitty.json`, from `fixtures/generate_kitty.mjs`): an image whose line changes is
//! deleted (`a=d,d=I,i=…`) before it is drawn again, its reserved rows are cleared below it, a
//! changed range grows to whole images, removed and scrolled-away images are deleted, a clearing
//! redraw deletes every image drawn before, and an image taller than the screen is drawn plainly.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{StaticLines, fixture, static_lines};
use pi_tui::render::kitty_alt::ImageProtocol;
use pi_tui::render::{Anchor, OverlayOptions, SizeValue};
use pi_tui::{CaptureTerminal, ScreenMode, Tui};
use pi_tui::{OverlayId, Terminal};

fn strings(v: &serde_json::Value) -> Vec<String> {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

/// Shows or hides a step's overlay (`overlay`: lines, width, anchor; `hideOverlay`).
fn overlay_step<T: Terminal>(tui: &mut Tui<T>, step: &serde_json::Value, shown: &mut Option<OverlayId>) {
    if step["overlay"].is_object() {
        let options = &step["overlay"]["options"];
        let anchor = match options["anchor"].as_str() {
            Some("top-right") => Anchor::TopRight,
            _ => Anchor::Center,
        };
        let width = options["width"].as_u64().map(|w| SizeValue::Abs(w as usize));
        let lines = strings(&step["overlay"]["lines"]);
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        *shown = Some(tui.show_overlay(static_lines(&refs), OverlayOptions { width, anchor, ..Default::default() }));
    }
    if step["hideOverlay"].as_bool().unwrap_or(false)
        && let Some(id) = shown.take()
    {
        tui.hide_overlay(id);
    }
}

/// A step's changes before its frame: the overlay shown or hidden, the terminal resized, the
/// document's new lines.
fn apply_step(
    tui: &mut Tui<CaptureTerminal>,
    doc: &Rc<RefCell<StaticLines>>,
    step: &serde_json::Value,
    shown: &mut Option<OverlayId>,
) {
    overlay_step(tui, step, shown);
    if let Some(size) = step["resize"].as_array() {
        let c = size[0].as_u64().unwrap_or(80) as usize;
        let r = size[1].as_u64().unwrap_or(24) as usize;
        tui.terminal_mut().resize(c, r);
    }
    if step["lines"].is_array() {
        doc.borrow_mut().set(strings(&step["lines"]));
    }
}

/// The main screen's output and error of each step of a scenario.
fn run_main(s: &serde_json::Value) -> Vec<(String, Option<String>)> {
    let cols = s["columns"].as_u64().unwrap_or(80) as usize;
    let rows = s["rows"].as_u64().unwrap_or(24) as usize;
    let mut tui = Tui::new(CaptureTerminal::new(cols, rows), ScreenMode::Main);
    let doc = static_lines(&[]);
    tui.add_child(doc.clone());
    let mut out = Vec::new();
    let mut shown = None;
    for step in s["steps"].as_array().into_iter().flatten() {
        apply_step(&mut tui, &doc, step, &mut shown);
        let err = tui.render_now().err().map(|e| e.to_string().lines().next().unwrap_or("").to_string());
        if step["stop"].as_bool().unwrap_or(false) {
            tui.stop().ok();
        }
        out.push((tui.terminal_mut().take_output(), err));
    }
    out
}

#[test]
fn the_main_screen_deletes_and_redraws_kitty_images_as_pi_tui() {
    let mut failures = Vec::new();
    let scenarios = fixture("kitty.json");
    let main = scenarios["main"].as_array().expect("main scenarios");
    assert!(main.len() >= 4, "the fixture lists the scenarios");
    for s in main {
        for (i, (step, (output, err))) in s["steps"].as_array().into_iter().flatten().zip(run_main(s)).enumerate() {
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

/// The alternate screen's output of each step of a scenario (Kitty, mouse off).
fn run_alt(s: &serde_json::Value) -> Vec<String> {
    let cols = s["columns"].as_u64().unwrap_or(80) as usize;
    let rows = s["rows"].as_u64().unwrap_or(24) as usize;
    let mut tui = Tui::new(CaptureTerminal::new(cols, rows), ScreenMode::Alt);
    tui.alt_screen().set_mouse(None);
    tui.alt_screen().set_image_protocol(Some(ImageProtocol::Kitty));
    let doc = static_lines(&[]);
    tui.add_child(doc.clone());
    tui.start().expect("start");
    tui.terminal_mut().take_output();
    let mut out = Vec::new();
    let mut shown = None;
    for step in s["steps"].as_array().into_iter().flatten() {
        apply_step(&mut tui, &doc, step, &mut shown);
        tui.render_now().expect("a frame");
        if step["stop"].as_bool().unwrap_or(false) {
            tui.stop().expect("stop");
        }
        out.push(tui.terminal_mut().take_output());
    }
    out
}

/// What leaving the alternate screen with Kitty images writes first.
const LEAVE_PREFIX: &str = "\x1b[?2026h\x1b_Ga=d,d=A,q=2\x1b\\";

/// A step's output split into its frame and what leaving wrote after it.
fn split_leave(output: &str) -> (&str, &str) {
    let frame_end = output.find("\x1b[?2026l").map_or(output.len(), |at| at + "\x1b[?2026l".len());
    output.split_at(frame_end)
}

/// The alternate screen (pi's `TuiAltScreen`): the first frame deletes every image before its
/// clear, a frame whose image rows change deletes the placements and draws images after the
/// text, an image drawn before is placed again without its data (`a=p`), a resize keeps the
/// uploads, the oldest off-screen upload is deleted past 16, and leaving deletes every image.
#[test]
fn the_alt_screen_places_evicts_and_deletes_kitty_images_as_pi_tui() {
    let mut failures = Vec::new();
    let scenarios = fixture("kitty.json");
    let alt = scenarios["alt"].as_array().expect("alt scenarios");
    assert!(alt.len() >= 2, "the fixture lists the scenarios");
    for s in alt {
        for (i, (step, output)) in s["steps"].as_array().into_iter().flatten().zip(run_alt(s)).enumerate() {
            let want = step["output"].as_str().unwrap_or_default();
            // Leaving: the images are deleted first; what follows (mouse, cursor, the document
            // printed to the main screen) is compared elsewhere.
            let (frame, leave) = split_leave(&output);
            let (want_frame, want_leave) = split_leave(want);
            if frame != want_frame || leave.get(..LEAVE_PREFIX.len()) != want_leave.get(..LEAVE_PREFIX.len()) {
                failures.push(format!("{} step {i}:\n  got {output:?}\n  pi  {want:?}", s["name"]));
            }
        }
    }
    assert!(failures.is_empty(), "renderer mismatches:\n{}", failures.join("\n"));
}
