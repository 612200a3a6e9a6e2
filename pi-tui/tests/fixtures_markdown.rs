//! Markdown against fixtures generated from pi-tui 1.6.0 with an SGR test theme.

mod common;

use common::{fixture, sgr_markdown_theme as theme};
use pi_tui::{Component, Markdown};

#[test]
fn markdown_matches_reference() {
    let mut failures = Vec::new();
    let cases = fixture("markdown.json");
    assert!(cases.as_array().map_or(0, Vec::len) > 50, "fixture not loaded");
    for case in cases.as_array().into_iter().flatten() {
        let text = case["text"].as_str().unwrap_or_default();
        let px = case["px"].as_u64().unwrap_or(0) as usize;
        let py = case["py"].as_u64().unwrap_or(0) as usize;
        let width = case["width"].as_u64().unwrap_or(0) as usize;
        let got = Markdown::new(text, px, py, theme()).render(width).to_vec();
        let expected: Vec<String> = serde_json::from_value(case["expected"].clone()).unwrap_or_default();
        if got != expected {
            failures.push(format!("{text:?} px={px} py={py} w={width}\n  got {got:?}\n  pi  {expected:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} markdown mismatches:\n{}",
        failures.len(),
        cases.as_array().map_or(0, Vec::len),
        failures.join("\n")
    );
}

#[test]
fn links_become_osc8_when_supported() {
    let mut md = Markdown::new("see [docs](https://x.io)", 0, 0, theme());
    md.set_hyperlinks(true);
    assert_eq!(
        md.render(40)[0],
        format!("see \x1b]8;;https://x.io\x1b\\\x1b[34m\x1b[4mdocs\x1b[24m\x1b[39m\x1b]8;;\x1b\\{}", " ".repeat(32))
    );
}
