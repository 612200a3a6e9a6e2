//! Kitty image cleanup of the renderers, byte for byte against pi-tui 1.6.0
//! (`fixtures/kitty.json`, from `fixtures/generate_kitty.mjs`): an image whose line changes is
//! deleted (`a=d,d=I,i=…`) before it is drawn again, its reserved rows are cleared below it, a
//! changed range grows to whole images, removed and scrolled-away images are deleted, a clearing
//! redraw deletes every image drawn before, and an image taller than the screen is drawn plainly.

mod common;

use common::{fixture, static_lines};
use pi_tui::{CaptureTerminal, ScreenMode, Tui};

fn strings(v: &serde_json::Value) -> Vec<String> {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

/// The main screen's output and error of each step of a scenario.
fn run_main(s: &serde_json::Value) -> Vec<(String, Option<String>)> {
    let cols = s["columns"].as_u64().unwrap_or(80) as usize;
    let rows = s["rows"].as_u64().unwrap_or(24) as usize;
    let mut tui = Tui::new(CaptureTerminal::new(cols, rows), ScreenMode::Main);
    let doc = static_lines(&[]);
    tui.add_child(doc.clone());
    let mut out = Vec::new();
    for step in s["steps"].as_array().into_iter().flatten() {
        if let Some(size) = step["resize"].as_array() {
            let c = size[0].as_u64().unwrap_or(80) as usize;
            let r = size[1].as_u64().unwrap_or(24) as usize;
            tui.terminal_mut().resize(c, r);
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
