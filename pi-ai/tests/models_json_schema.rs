//! models.json read and checked as pi 1.6.0 reads it: every text of the recorded table
//! (`tests/fixtures/models_json/schema_errors.json`, recorded from the reference's
//! `ModelConfig.load` by `scripts/fixtures/models_json_errors.mjs`) gives pi's error text, or the
//! same provider ids. A JSON syntax error keeps our parser's message between pi's prefix and the
//! `File:` line (a deliberate difference: the message is V8's in pi).

use pi_ai::models::ModelsConfig;
use serde_json::Value;

#[test]
fn every_recorded_text_gives_pis_error_or_providers() {
    let table: Vec<Value> =
        serde_json::from_str(include_str!("fixtures/models_json/schema_errors.json")).expect("fixture table");
    assert!(table.len() > 30);
    let mut parse_errors = 0;
    for case in &table {
        let text = case["text"].as_str().expect("text");
        let result = ModelsConfig::parse("<FILE>", text);
        match (&case["error"], result) {
            (Value::String(expected), Err(e)) if expected.starts_with("Failed to parse models.json: ") => {
                let got = e.to_string();
                assert!(got.starts_with("Failed to parse models.json: "), "{text:?}: {got}");
                assert!(got.ends_with("\n\nFile: <FILE>"), "{text:?}: {got}");
                parse_errors += 1;
            }
            (Value::String(expected), Err(e)) => assert_eq!(&e.to_string(), expected, "{text:?}"),
            (Value::String(expected), Ok(_)) => panic!("{text:?} was accepted; pi: {expected}"),
            (_, Ok(config)) => {
                let ids: Vec<&str> = config.providers.keys().map(String::as_str).collect();
                let expected: Vec<&str> =
                    case["providers"].as_array().expect("providers").iter().filter_map(Value::as_str).collect();
                assert_eq!(ids, expected, "{text:?}");
            }
            (_, Err(e)) => panic!("{text:?} was rejected: {e}"),
        }
    }
    assert_eq!(parse_errors, 3);
}

#[test]
fn a_missing_file_is_empty_and_an_unreadable_one_is_a_load_error() {
    let dir = std::env::temp_dir().join(format!("pi-ai-models-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let missing = ModelsConfig::load(dir.join("models.json")).expect("missing is fine");
    assert!(missing.providers.is_empty());
    let err = ModelsConfig::load(&dir).expect_err("a directory");
    let text = err.to_string();
    std::fs::remove_dir(&dir).expect("remove temp dir");
    assert!(text.starts_with("Failed to load models.json: "), "{text}");
    assert!(text.ends_with(&format!("\n\nFile: {}", dir.display())), "{text}");
}

#[test]
fn comments_and_trailing_commas_are_stripped_as_pis_regular_expressions_do() {
    let table: Vec<(String, String)> =
        serde_json::from_str(include_str!("fixtures/models_json/strip.json")).expect("fixture table");
    assert!(table.len() > 400);
    for (text, expected) in &table {
        assert_eq!(&pi_ai::models::strip_json_comments(text), expected, "{text:?}");
    }
}
