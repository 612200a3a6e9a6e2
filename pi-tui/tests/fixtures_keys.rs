//! Key parsing and matching against fixtures generated from pi-tui 1.6.0.

mod common;

use common::fixture;
use pi_tui::keys::{matches_key, parse_key};

#[test]
fn keys_match_reference() {
    let f = fixture("keys.json");
    let ids: Vec<String> = serde_json::from_value(f["ids"].clone()).unwrap_or_default();
    let mut failures = Vec::new();
    for case in f["cases"].as_array().into_iter().flatten() {
        let data = case["data"].as_str().unwrap_or_default();
        let parsed = parse_key(data);
        if parsed.as_deref() != case["parsed"].as_str() {
            failures.push(format!("parse_key({data:?}) = {parsed:?}, pi {}", case["parsed"]));
        }
        let expected: Vec<String> = serde_json::from_value(case["matches"].clone()).unwrap_or_default();
        let got: Vec<String> = ids.iter().filter(|id| matches_key(data, id)).cloned().collect();
        if got != expected {
            failures.push(format!("matches for {data:?}: got {got:?}, pi {expected:?}"));
        }
    }
    assert!(failures.is_empty(), "key mismatches:\n{}", failures.join("\n"));
}
