//! Tool-call argument validation against pi-ai 1.6.0 (fixture from scripts/fixtures/pi_ai_validation.mjs): every
//! case's exact error text, or its exact coerced arguments.

use pi_ai::validate::{ValidationError, validate_tool_arguments, validate_tool_call};
use pi_ai::{Tool, ToolCall};
use proptest::prelude::*;
use serde_json::{Value, json};

fn fixture() -> &'static Value {
    static FIXTURE: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    FIXTURE.get_or_init(|| serde_json::from_str(include_str!("fixtures/validation.json")).expect("fixture"))
}

/// JSON equality with numbers compared by value (`1` and `1.0` are one JS number) and keys in order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        _ => a == b,
    }
}

/// Cases where ours knowingly differs: pi returns whatever the root schema coerced the arguments to, here an
/// array (`[{"a":1}]`); our API returns an object, so the arguments come back as they were.
const KNOWN_DIFFERENCES: [&str; 1] = ["root array type wraps the arguments"];

#[test]
fn every_case_matches_pi() {
    let fixture = fixture();
    let cases = fixture["cases"].as_array().expect("cases");
    assert!(cases.len() >= 80, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let tool = Tool::new("t", "d", case["schema"].clone());
        let mut call = ToolCall::new("c1", "t", case["arguments"].as_object().cloned().expect("arguments"));
        call.arguments_error = case["argumentsError"].as_str().map(str::to_owned);
        let ours = validate_tool_call(std::slice::from_ref(&tool), &call);
        if KNOWN_DIFFERENCES.contains(&name) {
            assert_eq!(ours.as_ref().ok(), Some(&call.arguments), "{name}");
            continue;
        }
        match (&ours, case.get("ok"), case.get("error")) {
            (Ok(got), Some(expected), _) if same(&Value::Object(got.clone()), expected) => {}
            (Err(e), _, Some(Value::String(expected))) if e.to_string() == *expected => {}
            _ => failures.push(format!(
                "{name}\n  pi:   {}\n  ours: {}",
                case.get("ok").map_or_else(|| case["error"].to_string(), Value::to_string),
                match &ours {
                    Ok(v) => Value::Object(v.clone()).to_string(),
                    Err(e) => Value::String(e.to_string()).to_string(),
                }
            )),
        }
        // validate_tool_arguments agrees whenever no argumentsError is involved.
        if call.arguments_error.is_none() {
            assert_eq!(validate_tool_arguments(&tool, &call.arguments), ours, "{name}");
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn unknown_tool() {
    let fixture = fixture();
    let err = validate_tool_call(&[Tool::new("t", "d", json!({}))], &ToolCall::new("c", "nope", Default::default()))
        .expect_err("unknown tool");
    assert_eq!(err, ValidationError::NotFound { name: "nope".into() });
    assert_eq!(Value::String(err.to_string()), fixture["notFound"]);
}

#[test]
fn failed_error_keeps_structure() {
    let tool =
        Tool::new("t", "", json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a", "b"]}));
    let args = json!({"a": "x"}).as_object().cloned().expect("object");
    match validate_tool_arguments(&tool, &args) {
        Err(ValidationError::Failed { tool, errors, received }) => {
            assert_eq!(tool, "t");
            assert_eq!(
                errors,
                vec![("b".into(), "missing".into()), ("a".into(), "expected number, got string".into())]
            );
            assert_eq!(received, "{\n  \"a\": \"x\"\n}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn arguments_are_not_modified() {
    let tool = Tool::new("t", "", json!({"type": "object", "properties": {"a": {"type": "number"}}}));
    let args = json!({"a": "1"}).as_object().cloned().expect("object");
    let out = validate_tool_arguments(&tool, &args).expect("valid");
    assert_eq!(args["a"], json!("1"));
    assert_eq!(out["a"], json!(1));
}

#[test]
fn runaway_recursion_is_an_error_not_a_crash() {
    let tool = Tool::new("t", "", json!({"$ref": "#"}));
    let err = validate_tool_arguments(&tool, &serde_json::Map::new()).expect_err("loops");
    assert_eq!(err.to_string(), "Maximum call stack size exceeded");
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        "[a-z0-9 .\\-]{0,6}".prop_map(Value::String),
        prop_oneof![Just("12"), Just("true"), Just("null"), Just(""), Just("2.5"), Just("x")].prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,3}|path|edits|oldText|newText|limit", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any arguments against a spread of the fixture's schemas: no panic, and a failure shows the arguments.
    #[test]
    fn arbitrary_arguments_never_panic(args in prop::collection::vec(("[a-z]{1,3}|path|edits|command|offset", arbitrary_json()), 0..5)) {
        let args: serde_json::Map<String, Value> = args.into_iter().collect();
        let fixture = fixture();
        for case in fixture["cases"].as_array().expect("cases").iter().step_by(7) {
            let tool = Tool::new("t", "d", case["schema"].clone());
            match validate_tool_arguments(&tool, &args) {
                Ok(_) | Err(ValidationError::Schema { .. }) => {}
                Err(ValidationError::Failed { received, .. }) => {
                    let shown = serde_json::from_str::<Value>(&received).ok();
                    prop_assert!(shown.is_some_and(|v| v == Value::Object(args.clone())), "{received}");
                }
                Err(other) => prop_assert!(false, "{other}"),
            }
        }
    }
}
