//! Extension failures reach the user (issue 18, items 5 and 6): handler errors on stderr in print
//! and json modes and as `extension_error` records in RPC mode (pi's `onError` of each mode); an
//! extension process that dies at start shows its exit status and the end of its stderr; `abort`
//! does not wait for a hanging `tool_result` handler.
//!
//! The extensions are small Python scripts speaking the JSON-RPC protocol
//! (`docs/extension-protocol.md`); `python3` must be on PATH.

mod cli_support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;

use cli_support::{Env, ScriptedServer, text_reply};

/// A Python extension: answers `initialize` with `events`; `on_event` is the body of
/// `def on_event(msg, event):` (may answer with `reply(msg, result)` / `fail(msg, text)`).
fn python_extension(env: &Env, name: &str, events: &[&str], on_event: &str) -> PathBuf {
    let path = env.dir.path().join(name);
    let script = format!(
        r#"import json, sys
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
def reply(msg, result):
    send({{"jsonrpc": "2.0", "id": msg["id"], "result": result}})
def fail(msg, text):
    send({{"jsonrpc": "2.0", "id": msg["id"], "error": {{"code": -32000, "message": text}}}})
def on_event(msg, event):
{body}
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        reply(msg, {{"protocolVersion": 1, "events": {events}}})
    elif msg.get("method") == "event" and "id" in msg:
        on_event(msg, msg["params"]["event"])
"#,
        body = on_event.lines().map(|l| format!("    {l}\n")).collect::<String>(),
        events = serde_json::to_string(events).unwrap(),
    );
    std::fs::write(&path, script).unwrap();
    path
}

fn failing_context_extension(env: &Env) -> PathBuf {
    python_extension(env, "boom.py", &["context"], "fail(msg, 'boom')")
}

#[test]
fn print_mode_reports_a_failing_handler_on_stderr_and_answers() {
    let server = ScriptedServer::start(vec![text_reply(&["fine"])]);
    let env = Env::new(&server.base_url);
    let ext = failing_context_extension(&env);
    let out = env
        .pi()
        .args(["-p", "--model", "local/smollm2-135m", "--no-tools", "--no-session", "-e"])
        .arg(&ext)
        .arg("hi")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fine\n");
    assert_eq!(stderr, format!("Extension error ({}): boom\n", ext.display()));
}

#[test]
fn rpc_mode_reports_a_failing_handler_as_an_extension_error_record() {
    let server = ScriptedServer::start(vec![text_reply(&["fine"])]);
    let env = Env::new(&server.base_url);
    let ext = failing_context_extension(&env);
    let mut child = env
        .pi()
        .args(["--mode", "rpc", "--model", "local/smollm2-135m", "--no-tools", "--no-session", "-e"])
        .arg(&ext)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"id":"1","type":"prompt","message":"hi"}}"#).unwrap();
    let mut records = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok) {
        let record: serde_json::Value = serde_json::from_str(&line).unwrap();
        let settled = record["type"] == "agent_settled";
        records.push(record);
        if settled {
            break;
        }
    }
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let errors: Vec<_> = records.iter().filter(|r| r["type"] == "extension_error").collect();
    assert_eq!(
        errors,
        [&serde_json::json!({"type":"extension_error","extensionPath":ext.display().to_string(),
            "event":"context","error":"boom"})]
    );
}

#[test]
fn an_extension_that_dies_at_start_shows_its_exit_status_and_stderr() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let ext = env.dir.path().join("dies.py");
    std::fs::write(&ext, "import sys\nsys.stderr.write('first line\\nTraceback: broken config\\n')\nsys.exit(3)\n")
        .unwrap();
    let out = env
        .pi()
        .args(["-p", "--model", "local/smollm2-135m", "--no-tools", "--no-session", "-e"])
        .arg(&ext)
        .arg("hi")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with(&format!("Error: Failed to load extension \"{}\": ", ext.display())), "{stderr}");
    assert!(stderr.contains("exit status: 3"), "{stderr}");
    assert!(stderr.contains("first line\nTraceback: broken config\n"), "{stderr}");
}

#[test]
fn abort_does_not_wait_for_a_hanging_tool_result_handler() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let mark = env.dir.path().join("tool_result_seen");
    // Never answers `tool_result`: without the fix, abort waits for the 30 s handler timeout,
    // which reports an extension error first.
    let on_event = format!(
        "if event == 'tool_result':\n    open({:?}, 'w').write('x')\nelse:\n    reply(msg, None)",
        mark.display().to_string()
    );
    let ext = python_extension(&env, "hang.py", &["tool_result"], &on_event);
    let args = serde_json::json!({"command": "echo hi"}).to_string();
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let c = serde_json::json!({"id":"c","object":"chat.completion.chunk","created":1,"model":"m",
            "choices":[{"index":0,"delta":delta,"finish_reason":finish}]});
        format!("data: {c}\n\n")
    };
    let call = chunk(
        serde_json::json!({"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function",
            "function":{"name":"bash","arguments":args}}]}),
        None,
    ) + &chunk(serde_json::json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n";
    let server = ScriptedServer::start(vec![call, text_reply(&["after"])]);
    let models = serde_json::json!({"providers":{"local":{"baseUrl":server.base_url,"api":"openai-completions",
        "apiKey":"none","models":[{"id":"smollm2-135m","contextWindow":8192,"maxTokens":256}]}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
    let mut child = env
        .pi()
        .args(["--mode", "rpc", "--model", "local/smollm2-135m", "--tools", "bash", "--no-session", "-e"])
        .arg(&ext)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"id":"1","type":"prompt","message":"run it"}}"#).unwrap();
    for _ in 0..6000 {
        if mark.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(mark.exists(), "the tool_result handler was never called");
    writeln!(stdin, r#"{{"id":"2","type":"abort"}}"#).unwrap();
    let mut records = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok) {
        let record: serde_json::Value = serde_json::from_str(&line).unwrap();
        let done = record["type"] == "response" && record["id"] == "2";
        records.push(record);
        if done {
            break;
        }
    }
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let errors: Vec<_> = records.iter().filter(|r| r["type"] == "extension_error").collect();
    assert!(errors.is_empty(), "abort waited for the handler's timeout: {errors:?}");
    assert_eq!(records.last().unwrap()["success"], true);
    let settled = records.iter().find(|r| r["type"] == "agent_settled").expect("the run settled before abort answered");
    assert_eq!(settled["aborted"], true);
}
