//! Text, Box and TruncatedText against fixtures generated from pi-tui 1.6.0.

mod common;

use std::rc::Rc;

use common::fixture;
use pi_tui::{Box, Component, StyleFn, Text, TruncatedText, shared};

#[test]
fn components_match_reference() {
    let bg: StyleFn = Rc::new(|s: &str| format!("\x1b[44m{s}\x1b[49m"));
    let mut failures = Vec::new();
    for case in fixture("components.json").as_array().into_iter().flatten() {
        let text = case["text"].as_str().unwrap_or_default();
        let px = case["px"].as_u64().unwrap_or_default() as usize;
        let py = case["py"].as_u64().unwrap_or_default() as usize;
        let width = case["width"].as_u64().unwrap_or_default() as usize;
        let with_bg = case["bg"].as_bool().unwrap_or(false);
        let got: Vec<String> = match case["kind"].as_str().unwrap_or_default() {
            "text" if with_bg => Text::with_bg(text, px, py, bg.clone()).render(width).to_vec(),
            "text" => Text::new(text, px, py).render(width).to_vec(),
            "box" => {
                let mut b = Box::new(px, py, Some(bg.clone()));
                b.add_child(shared(Text::new(text, 0, 0)));
                b.render(width).to_vec()
            }
            _ => TruncatedText::new(text, px, py).render(width).to_vec(),
        };
        let expected: Vec<String> = serde_json::from_value(case["expected"].clone()).unwrap_or_default();
        if got != expected {
            failures.push(format!("{case}\n  got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "component mismatches:\n{}", failures.join("\n"));
}
