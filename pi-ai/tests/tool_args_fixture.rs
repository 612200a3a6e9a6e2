//! Tool-argument parsing against pi-ai 1.6.0 (fixture from scripts/fixtures/pi_ai_tool_args.mjs).

use pi_ai::tool_args::{ToolCallArgumentsStream, parse_tool_call_arguments};
use serde_json::{Value, json};

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/tool_args.json")).expect("fixture")
}

#[test]
fn parse_tool_call_arguments_matches_pi() {
    let fixture = fixture();
    let mut failures = Vec::new();
    for case in fixture["parse"].as_array().expect("parse cases") {
        let text = case["text"].as_str().expect("text");
        let ours = parse_tool_call_arguments(text);
        let mut got = json!({ "arguments": Value::Object(ours.arguments) });
        if let Some(e) = ours.arguments_error {
            got["argumentsError"] = Value::String(e);
        }
        if got != case["result"] {
            failures.push(format!("{text:?}\n  pi:  {}\n  ours: {got}", case["result"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn streaming_snapshots_match_pi() {
    let fixture = fixture();
    let mut failures = Vec::new();
    for case in fixture["streaming"].as_array().expect("streaming cases") {
        let mut stream = ToolCallArgumentsStream::new();
        for (piece, expected) in
            case["pieces"].as_array().into_iter().flatten().zip(case["snapshots"].as_array().into_iter().flatten())
        {
            let got = Value::Object(stream.append(piece.as_str().expect("piece")).clone());
            if &got != expected {
                failures.push(format!("{} after {:?}: pi {expected}, ours {got}", case["doc"], stream.text()));
                break;
            }
        }
        let finish = stream.finish();
        let mut got = json!({ "arguments": Value::Object(finish.arguments) });
        if let Some(e) = finish.arguments_error {
            got["argumentsError"] = Value::String(e);
        }
        if got != case["finish"] {
            failures.push(format!("{} finish: pi {}, ours {got}", case["doc"], case["finish"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn replace_matches_pi() {
    let fixture = fixture();
    let mut stream = ToolCallArgumentsStream::new();
    stream.append("{\"a\":");
    for step in fixture["replace"].as_array().expect("replace steps") {
        let r = stream.replace(step["text"].as_str().expect("text"));
        let mut got = json!({ "arguments": Value::Object(r.arguments.clone()) });
        if let Some(d) = r.delta {
            got["delta"] = Value::String(d);
        }
        assert_eq!(got, step["result"]);
    }
}
