//! The spec's §1 vectors for the coding agent's `convert_to_llm`, one snapshot each.

use insta::assert_json_snapshot;
use pi_agent_core::ConvertToLlm;
use pi_ai::Message;
use pi_coding_agent::messages::{CodingAgentMessage, CodingConvertToLlm, convert_to_llm};
use serde_json::{Value, json};

fn convert(input: Value) -> Value {
    let m: CodingAgentMessage = serde_json::from_value(input).unwrap();
    let borrowed = convert_to_llm(std::slice::from_ref(&m));
    // The agent hook's owned and borrowed paths send the same messages.
    assert_eq!(CodingConvertToLlm.convert_to_llm(vec![m.clone()]).unwrap(), borrowed);
    assert_eq!(CodingConvertToLlm.convert_to_llm_borrowed(&[m]).unwrap(), borrowed);
    serde_json::to_value(borrowed).unwrap()
}

fn bash(fields: Value) -> Value {
    let mut m = json!({"role": "bashExecution", "command": "", "output": "", "cancelled": false, "truncated": false, "timestamp": 7});
    for (k, v) in fields.as_object().unwrap() {
        m[k] = v.clone();
    }
    m
}

#[test]
fn bash_ls() {
    assert_json_snapshot!(convert(bash(json!({"command": "ls -la", "output": "total 0\nfoo", "exitCode": 0}))));
}

#[test]
fn bash_no_output() {
    assert_json_snapshot!(convert(bash(json!({"command": "true", "output": "", "exitCode": 0}))));
}

#[test]
fn bash_exit_code() {
    assert_json_snapshot!(convert(bash(json!({"command": "false", "output": "", "exitCode": 1}))));
}

#[test]
fn bash_cancelled() {
    assert_json_snapshot!(convert(bash(
        json!({"command": "sleep 9", "output": "x", "exitCode": 137, "cancelled": true})
    )));
}

#[test]
fn bash_undefined_exit_code() {
    assert_json_snapshot!(convert(bash(json!({"command": "k", "output": "o"}))));
}

#[test]
fn bash_truncated_with_path() {
    assert_json_snapshot!(convert(bash(json!({
        "command": "cat big", "output": "tail", "exitCode": 2, "truncated": true, "fullOutputPath": "/tmp/pi-bash-1.log"
    }))));
}

#[test]
fn bash_truncated_without_path() {
    assert_json_snapshot!(convert(bash(
        json!({"command": "cat big", "output": "tail", "exitCode": 0, "truncated": true})
    )));
}

#[test]
fn bash_excluded_from_context() {
    assert_json_snapshot!(convert(bash(
        json!({"command": "ls", "output": "x", "exitCode": 0, "excludeFromContext": true})
    )));
}

#[test]
fn bash_output_not_trimmed() {
    assert_json_snapshot!(convert(bash(json!({"command": "echo hi", "output": "hi\n", "exitCode": 0}))));
}

#[test]
fn custom_string_content() {
    assert_json_snapshot!(convert(json!({
        "role": "custom", "customType": "note", "content": "hello", "display": false, "details": {"a": 1}, "timestamp": 10
    })));
}

#[test]
fn custom_array_content() {
    assert_json_snapshot!(convert(json!({
        "role": "custom", "customType": "note", "display": true, "timestamp": 11,
        "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AAA", "mimeType": "image/png"}]
    })));
}

#[test]
fn custom_empty_content() {
    assert_json_snapshot!(convert(
        json!({"role": "custom", "customType": "x", "content": "", "display": true, "timestamp": 12})
    ));
}

#[test]
fn branch_summary() {
    assert_json_snapshot!(convert(json!({"role": "branchSummary", "summary": "S", "fromId": "abc", "timestamp": 13})));
}

#[test]
fn compaction_summary() {
    assert_json_snapshot!(convert(
        json!({"role": "compactionSummary", "summary": "S", "tokensBefore": 100, "timestamp": 14})
    ));
}

#[test]
fn unknown_role_dropped() {
    assert_json_snapshot!(convert(json!({"role": "hookMessage", "content": "x", "timestamp": 15})));
}

#[test]
fn user_passes_through_with_string_content() {
    assert_json_snapshot!(convert(json!({"role": "user", "content": "hi", "timestamp": 16})));
}

#[test]
fn system_passes_through() {
    assert_json_snapshot!(convert(json!({"role": "system", "content": "", "sections": {"a": "b"}, "timestamp": 17})));
}

#[test]
fn order_kept_and_users_not_merged() {
    let input = json!([
        {"role": "user", "content": "1", "timestamp": 1},
        {"role": "custom", "customType": "c", "content": "2", "display": false, "timestamp": 2},
        {"role": "bashExecution", "command": "x", "output": "", "cancelled": false, "truncated": false, "timestamp": 3},
        {"role": "branchSummary", "summary": "4", "fromId": "root", "timestamp": 4},
        {"role": "notification", "text": "dropped", "timestamp": 5},
    ]);
    let msgs: Vec<CodingAgentMessage> = serde_json::from_value(input).unwrap();
    let out = convert_to_llm(&msgs);
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|m| matches!(m, Message::User(_))));
    assert_eq!(out.iter().map(Message::timestamp).collect::<Vec<_>>(), [1, 2, 3, 4]);
}

#[test]
fn ui_only_fields_never_reach_the_model() {
    let out = convert(json!({
        "role": "custom", "customType": "secret-type", "content": "visible", "display": true,
        "details": {"secret": "do-not-send"}, "timestamp": 1
    }));
    let text = out.to_string();
    assert!(!text.contains("secret"), "{text}");
    assert!(!text.contains("display"), "{text}");
    // Excluded bash output never reaches the model either, but the message is still readable.
    let m: CodingAgentMessage =
        serde_json::from_value(bash(json!({"command": "env", "output": "TOKEN=1", "excludeFromContext": true})))
            .unwrap();
    assert!(convert_to_llm(std::slice::from_ref(&m)).is_empty());
    assert_eq!(m.role(), "bashExecution");
}

#[test]
fn roles_round_trip_byte_for_byte() {
    let lines = [
        r#"{"role":"bashExecution","command":"ls","output":"a","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1,"excludeFromContext":true}"#,
        r#"{"role":"custom","customType":"n","content":"x","display":true,"details":{"z":1,"a":2},"timestamp":2}"#,
        r#"{"role":"branchSummary","summary":"s","fromId":"root","timestamp":3}"#,
        r#"{"role":"compactionSummary","summary":"s","tokensBefore":12,"timestamp":4}"#,
        r#"{"timestamp":5,"role":"compactionSummary","summary":"s","tokensBefore":12,"extra":true}"#,
        r#"{"role":"hookMessage","customType":"old","content":"c","display":true,"timestamp":6}"#,
        r#"{"role":"custom","customType":"bad","timestamp":7}"#,
    ];
    for line in lines {
        let m: CodingAgentMessage = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json::to_string(&m).unwrap(), line);
    }
}
