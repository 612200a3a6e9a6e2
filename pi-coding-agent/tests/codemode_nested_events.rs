//! The tool calls a codemode script makes, as the session reports them, compared with the
//! reference pi 1.6.0 (`tests/fixtures/codemode/nested_events.json`, recorded by
//! `scripts/fixtures/codemode_nested_events.sh` with the same script, extension and arguments):
//! the order in which an extension hears `tool_call`, `tool_result` and `tool_execution_*` (nested
//! ones with `parentToolCallId`), the nested `tool_execution_*` records of `--mode json`, the ids
//! `<callId>/<n>`, and the `nestedCalls` record on the codemode tool result.
//!
//! Progress updates (`tool_execution_update`) are compared by shape, not count: how often a tool
//! reports progress depends on timing. Needs Node.js 22 for the extension (`PI_NODE`).

mod cli_support;
mod js_support;

use std::path::PathBuf;

use cli_support::{Env, ScriptedServer, json_lines, text_reply};
use serde_json::{Value, json};

const SCRIPT: &str = r#"const a = await tools.read({ path: "note.txt" }); const b = await tools.bash({ command: "echo x" }); return a + b.output"#;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The SSE body of a `codemode` call running `code`.
fn codemode_reply(code: &str) -> String {
    let chunk = |delta: Value, finish: Option<&str>| {
        let c = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let call = json!({"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "codemode", "arguments": json!({"code": code}).to_string()}});
    format!(
        "{}{}data: [DONE]\n\n",
        chunk(json!({"role": "assistant", "tool_calls": [call]}), None),
        chunk(json!({}), Some("tool_calls"))
    )
}

fn without_updates(events: &[Value]) -> Vec<Value> {
    events.iter().filter(|e| e["type"] != "tool_execution_update").cloned().collect()
}

#[test]
fn nested_calls_are_reported_as_the_reference_reports_them() {
    if !js_support::node_available() {
        return;
    }
    let node = js_support::node_path().expect("node");
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("pi-coding-agent/tests/fixtures/codemode/nested_events.json"))
            .expect("fixture"),
    )
    .expect("fixture JSON");
    let server = ScriptedServer::start(vec![codemode_reply(SCRIPT), text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.proj().join("note.txt"), "hello\n").expect("note");
    let ext = repo_root().join("scripts/fixtures/codemode_events_ext.js");
    let events = env.dir.path().join("events.jsonl");
    let out = env
        .pi()
        .env("PI_NODE", node)
        .env("PI_TEST_EVENTS", &events)
        .args(["--mode", "json", "-e"])
        .arg(&ext)
        .args(["-p", "go", "--tools", "codemode,read,bash"])
        .output()
        .expect("run pi");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pi failed: {stderr}");

    // What the extension heard, in order.
    let heard = json_lines(&std::fs::read_to_string(&events).unwrap_or_default());
    let reference = fixture["extension"].as_array().cloned().unwrap_or_default();
    assert_eq!(without_updates(&heard), without_updates(&reference), "extension events: {heard:#?}");
    for update in heard.iter().filter(|e| e["type"] == "tool_execution_update") {
        let nested = update["toolCallId"].as_str().is_some_and(|id| id.starts_with("call_1/"));
        assert_eq!(update.get("parentToolCallId").is_some(), nested, "{update}");
    }

    // The nested records of the json stream.
    let lines = json_lines(&String::from_utf8_lossy(&out.stdout));
    let stream: Vec<Value> = lines
        .iter()
        .filter(|e| {
            e["type"].as_str().is_some_and(|t| t.starts_with("tool_execution")) && e.get("parentToolCallId").is_some()
        })
        .map(|e| {
            let keys: Vec<&String> = e.as_object().map(|o| o.keys().collect()).unwrap_or_default();
            json!({"type": e["type"], "toolCallId": e["toolCallId"], "toolName": e["toolName"],
                "parentToolCallId": e["parentToolCallId"], "keys": keys})
        })
        .collect();
    let reference_stream = fixture["stream"].as_array().cloned().unwrap_or_default();
    assert_eq!(without_updates(&stream), without_updates(&reference_stream), "json stream: {stream:#?}");
    let update_keys = reference_stream.iter().find(|e| e["type"] == "tool_execution_update").map(|e| e["keys"].clone());
    for update in stream.iter().filter(|e| e["type"] == "tool_execution_update") {
        assert_eq!(Some(update["keys"].clone()), update_keys, "{update}");
    }

    // The codemode tool result: its nested-call record and the ids in its details.
    let result = lines
        .iter()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "toolResult")
        .map(|e| e["message"].clone())
        .expect("tool result");
    let mut nested = result["nestedCalls"].clone();
    for call in nested["calls"].as_array_mut().expect("nestedCalls.calls") {
        assert!(call["durationMs"].is_u64(), "{call}");
        call.as_object_mut().map(|c| c.remove("durationMs"));
    }
    assert_eq!(nested, fixture["nestedCalls"]);
    let ids: Vec<Value> =
        result["details"]["calls"].as_array().expect("details.calls").iter().map(|c| c["id"].clone()).collect();
    assert_eq!(Value::Array(ids), fixture["detailIds"]);
    // The session file keeps the record.
    let files = env.session_files();
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    assert!(text.contains("\"nestedCalls\":{\"calls\":[{\"id\":\"call_1/1\""), "{text}");
}
