//! The ANSI utilities against fixtures generated from pi-tui 1.6.0 (`tests/fixtures/generate.mjs`).

mod common;

use common::fixture;
use pi_tui::ansi::{slice_by_column, truncate_to_width_with, visible_width, wrap_text_with_ansi};

fn s(v: &serde_json::Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn n(v: &serde_json::Value) -> usize {
    v.as_u64().unwrap_or_default() as usize
}

#[test]
fn unicode_width_corpus_matches_reference() {
    let cases = fixture("width.json");
    assert!(cases.as_array().map_or(0, Vec::len) > 80, "fixture not loaded");
    let mut failures = Vec::new();
    for case in cases.as_array().into_iter().flatten() {
        let input = s(&case["input"]);
        let got = visible_width(input);
        if got != n(&case["expected"]) {
            failures.push(format!("{input:?}: got {got}, pi {}", case["expected"]));
        }
    }
    assert!(failures.is_empty(), "width mismatches:\n{}", failures.join("\n"));
}

#[test]
fn wrap_matches_reference() {
    let mut failures = Vec::new();
    for case in fixture("wrap.json").as_array().into_iter().flatten() {
        let got = wrap_text_with_ansi(s(&case["input"]), n(&case["width"]));
        let expected: Vec<String> = serde_json::from_value(case["expected"].clone()).unwrap_or_default();
        if got != expected {
            failures.push(format!("{:?} @{}: got {got:?}, pi {expected:?}", case["input"], case["width"]));
        }
    }
    assert!(failures.is_empty(), "wrap mismatches:\n{}", failures.join("\n"));
}

#[test]
fn truncate_matches_reference() {
    let mut failures = Vec::new();
    for case in fixture("truncate.json").as_array().into_iter().flatten() {
        let got = truncate_to_width_with(
            s(&case["input"]),
            n(&case["width"]),
            s(&case["ellipsis"]),
            case["pad"].as_bool().unwrap_or(false),
        );
        if got != s(&case["expected"]) {
            failures.push(format!("{case}: got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "truncate mismatches:\n{}", failures.join("\n"));
}

#[test]
fn slice_matches_reference() {
    let mut failures = Vec::new();
    for case in fixture("slice.json").as_array().into_iter().flatten() {
        let got = slice_by_column(
            s(&case["input"]),
            n(&case["start"]),
            n(&case["len"]),
            case["strict"].as_bool().unwrap_or(false),
        );
        if got != s(&case["expected"]) {
            failures.push(format!("{case}: got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "slice mismatches:\n{}", failures.join("\n"));
}
