//! Runtime-loaded extensions: the seed's audit extension in Python, end to end, and the faults:
//! a process that crashes (at start, mid-call, after initializing), hangs (at initialize, on an
//! event), prints garbage, or speaks the wrong protocol (version, initialize shape, answer
//! shape). Each is reported, isolated by timeouts, and the run goes on; the last test loads them
//! all into one SDK session over HTTP beside the healthy audit extension.

mod http_support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_agent_core::ToolContext;
use pi_ai::{Content, TextContent, UserBlock};
use pi_coding_agent::extensions::subprocess::{SubprocessExtension, SubprocessOptions};
use pi_coding_agent::extensions::{
    BoxError, Extension, ExtensionActions, ExtensionError, ExtensionMessage, ExtensionRunner, SendMessageOptions,
    SendUserMessageOptions, ToolCallEvent, ToolInfo, ToolResultEvent,
};
use serde_json::{Map, Value, json};

#[derive(Default)]
struct Recorder {
    entries: Mutex<Vec<(String, Option<Value>)>>,
}

impl ExtensionActions for Recorder {
    fn send_message(&self, _: ExtensionMessage, _: SendMessageOptions) -> Result<(), BoxError> {
        Ok(())
    }
    fn send_user_message(&self, _: Content<UserBlock>, _: SendUserMessageOptions) -> Result<(), BoxError> {
        Ok(())
    }
    fn append_entry(&self, custom_type: &str, data: Option<Value>) -> Result<(), BoxError> {
        self.entries.lock().unwrap().push((custom_type.to_owned(), data));
        Ok(())
    }
    fn set_session_name(&self, _: &str) -> Result<(), BoxError> {
        Ok(())
    }
    fn get_session_name(&self) -> Option<String> {
        None
    }
    fn set_label(&self, _: &str, _: Option<&str>) -> Result<(), BoxError> {
        Ok(())
    }
    fn get_active_tools(&self) -> Vec<String> {
        vec!["read".into()]
    }
    fn get_all_tools(&self) -> Vec<ToolInfo> {
        Vec::new()
    }
    fn set_active_tools(&self, _: &[String]) -> Result<(), BoxError> {
        Ok(())
    }
}

fn audit_path() -> String {
    format!("{}/../examples/extensions/audit_extension.py", env!("CARGO_MANIFEST_DIR"))
}

fn tool_result_event() -> ToolResultEvent {
    ToolResultEvent {
        tool_name: "read".into(),
        tool_call_id: "call_1".into(),
        parent_tool_call_id: None,
        input: Map::new(),
        content: vec![UserBlock::Text(TextContent::new("file"))],
        details: json!({}),
        structured_content: None,
        is_error: false,
        usage: None,
    }
}

/// A Python extension: `PRELUDE` plus `body`, where `body` defines `handle(message)`.
const PRELUDE: &str = r#"
import json, sys, time
def send(m):
    m["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def init(events, version=1, tools=(), commands=(), flags=()):
    return {"protocolVersion": version, "events": list(events), "tools": list(tools), "commands": list(commands), "flags": list(flags)}
"#;

const MAIN: &str = r#"
for line in sys.stdin:
    m = json.loads(line)
    if "method" not in m: continue
    try:
        r = handle(m)
        if "id" in m: send({"id": m["id"], "result": r})
    except Exception as e:
        if "id" in m: send({"id": m["id"], "error": {"code": -32000, "message": str(e)}})
"#;

fn script(dir: &tempfile::TempDir, name: &str, body: &str) -> String {
    let path = dir.path().join(format!("{name}.py"));
    std::fs::write(&path, format!("{PRELUDE}\n{body}\n{MAIN}")).unwrap();
    path.to_string_lossy().into_owned()
}

fn fast() -> SubprocessOptions {
    SubprocessOptions {
        init_timeout: Duration::from_secs(10),
        call_timeout: Duration::from_millis(700),
        tool_timeout: Duration::from_secs(10),
    }
}

async fn load(path: &str) -> (ExtensionRunner, Arc<Mutex<Vec<ExtensionError>>>) {
    let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new(path).with_options(fast()));
    let runner = ExtensionRunner::load(vec![ext], std::env::temp_dir().to_string_lossy()).await;
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    runner.on_error(move |e| sink.lock().unwrap().push(e.clone()));
    (runner, errors)
}

#[tokio::test]
async fn the_python_audit_extension_appends_an_audit_note_per_tool_result() {
    let (runner, errors) = load(&audit_path()).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let recorder = Arc::new(Recorder::default());
    runner.bind(recorder.clone());
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    assert_eq!(runner.emit_tool_result(tool_result_event()).await, None, "the audit extension does not patch");
    let mut second = tool_result_event();
    second.tool_call_id = "call_2".into();
    second.tool_name = "bash".into();
    runner.emit_tool_result(second).await;
    let entries = recorder.entries.lock().unwrap().clone();
    assert_eq!(entries.len(), 2, "{entries:?}");
    let (custom_type, data) = &entries[0];
    assert_eq!(custom_type, "audit-note");
    let data = data.as_ref().unwrap();
    assert_eq!(data["toolName"], "read");
    assert_eq!(data["toolCallId"], "call_1");
    assert!(data["at"].as_u64().unwrap() >= before - 1000);
    assert_eq!(entries[1].1.as_ref().unwrap()["toolCallId"], "call_2");
    assert!(errors.lock().unwrap().is_empty(), "{:?}", errors.lock().unwrap());
}

#[tokio::test]
async fn before_binding_the_audit_extension_gets_pis_error_and_the_run_goes_on() {
    let (runner, errors) = load(&audit_path()).await;
    runner.emit_tool_result(tool_result_event()).await;
    let errors = errors.lock().unwrap().clone();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].event, "tool_result");
    assert_eq!(
        errors[0].error,
        "Extension runtime not initialized. Action methods cannot be called during extension loading."
    );
}

#[tokio::test]
async fn crash_at_start_is_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = script(&dir, "crash", "sys.exit(3)\ndef handle(m): pass");
    let (runner, _) = load(&path).await;
    assert_eq!(runner.load_errors().len(), 1);
    assert_eq!(runner.load_errors()[0].path, path);
    assert!(runner.load_errors()[0].error.starts_with("Failed to load extension: "), "{:?}", runner.load_errors());
    assert!(runner.extension_paths().is_empty());
}

#[tokio::test]
async fn a_missing_executable_is_a_load_error() {
    let (runner, _) = load("/nonexistent/extension-binary").await;
    assert_eq!(runner.load_errors().len(), 1);
    assert!(runner.load_errors()[0].error.starts_with("Failed to load extension: /nonexistent/extension-binary"));
}

#[tokio::test]
async fn wrong_protocol_version_is_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = script(&dir, "v99", "def handle(m):\n    return init(['tool_result'], version=99)");
    let (runner, _) = load(&path).await;
    assert_eq!(
        runner.load_errors()[0].error,
        "Failed to load extension: Unsupported extension protocol version 99 (this host speaks 4)"
    );
}

#[tokio::test]
async fn crash_mid_call_is_reported_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let body = "def handle(m):\n    if m['method'] == 'initialize': return init(['tool_result', 'turn_start', 'tool_call'])\n    sys.exit(1)";
    let path = script(&dir, "crash_mid", body);
    let (runner, errors) = load(&path).await;
    assert!(runner.load_errors().is_empty());
    assert_eq!(runner.emit_tool_result(tool_result_event()).await, None);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let errs = errors.lock().unwrap().clone();
    assert!(errs.iter().any(|e| e.event == "tool_result" && e.error == "Extension process is not running"), "{errs:?}");
    assert!(errs.iter().any(|e| e.event == "process" && e.error.starts_with("Extension process exited")), "{errs:?}");
    // Later events are quiet; tool_call fails closed.
    let n = errs.len();
    assert_eq!(runner.emit_tool_result(tool_result_event()).await, None);
    assert_eq!(errors.lock().unwrap().len(), n);
    let mut call = ToolCallEvent {
        tool_call_id: "c".into(),
        tool_name: "read".into(),
        input: Map::new(),
        parent_tool_call_id: None,
    };
    assert!(runner.emit_tool_call(&mut call).await.is_err());
}

#[tokio::test]
async fn a_hanging_extension_times_out_is_stopped_and_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let body = "def handle(m):\n    if m['method'] == 'initialize': return init(['tool_result'])\n    time.sleep(60)";
    let path = script(&dir, "hang", body);
    let (runner, errors) = load(&path).await;
    let start = Instant::now();
    assert_eq!(runner.emit_tool_result(tool_result_event()).await, None);
    assert!(start.elapsed() < Duration::from_secs(5));
    let errs = errors.lock().unwrap().clone();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].error, "Extension did not answer \"tool_result\" within 700 ms; the process was stopped");
    let start = Instant::now();
    runner.emit_tool_result(tool_result_event()).await;
    assert!(start.elapsed() < Duration::from_millis(300), "a stopped extension answers at once");
}

#[tokio::test]
async fn invalid_json_lines_are_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"def handle(m):
    if m['method'] == 'initialize':
        print('hello, I am not JSON'); sys.stdout.flush()
        return init(['tool_result'])
    print('[1, 2]'); sys.stdout.flush()
    return {"details": {"seen": True}}"#;
    let path = script(&dir, "garbage", body);
    let (runner, errors) = load(&path).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let patch = runner.emit_tool_result(tool_result_event()).await.expect("patched");
    assert_eq!(patch.details, Some(json!({"seen": true})));
    let errs = errors.lock().unwrap().clone();
    assert!(errs.iter().all(|e| e.event == "protocol"), "{errs:?}");
    assert!(errs.iter().any(|e| e.error.starts_with("Invalid JSON-RPC message from extension: [1, 2]")), "{errs:?}");
}

#[tokio::test]
async fn tool_call_answers_block_mutate_input_and_errors_fail_closed() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"def handle(m):
    if m['method'] == 'initialize': return init(['tool_call'])
    p = m['params']['payload']
    assert p['type'] == 'tool_call'
    if p['toolName'] == 'bash': return {"block": True, "reason": "no shell"}
    if p['toolName'] == 'boom': raise RuntimeError('handler exploded')
    return {"input": dict(p['input'], path='/safe')}"#;
    let path = script(&dir, "gate", body);
    let (runner, _) = load(&path).await;
    let mut call = ToolCallEvent {
        tool_call_id: "1".into(),
        tool_name: "bash".into(),
        input: Map::new(),
        parent_tool_call_id: None,
    };
    let r = runner.emit_tool_call(&mut call).await.unwrap().unwrap();
    assert!(r.block);
    assert_eq!(r.reason.as_deref(), Some("no shell"));
    call.tool_name = "read".into();
    let r = runner.emit_tool_call(&mut call).await.unwrap();
    assert!(!r.is_some_and(|r| r.block));
    assert_eq!(call.input.get("path"), Some(&json!("/safe")));
    call.tool_name = "boom".into();
    let err = runner.emit_tool_call(&mut call).await.unwrap_err();
    assert_eq!(err.error, "handler exploded");
    assert_eq!(err.event, "tool_call");
}

#[tokio::test]
async fn tools_commands_and_flags_from_a_subprocess() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"def handle(m):
    if m['method'] == 'initialize':
        return init([], tools=[{"name": "shout", "description": "Upper-case", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}, "promptSnippet": "shout text"}],
                    commands=[{"name": "hello", "description": "Say hello"}],
                    flags=[{"name": "loud", "type": "boolean", "default": True}])
    if m['method'] == 'tool.execute':
        return {"content": [{"type": "text", "text": m['params']['args']['text'].upper()}], "details": {"id": m['params']['toolCallId']}}
    if m['method'] == 'command.run':
        if m['params']['args'] == 'fail': raise RuntimeError('nope')
        return None"#;
    let path = script(&dir, "tools", body);
    let (runner, errors) = load(&path).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let tool = runner.tool("shout").expect("tool registered");
    assert_eq!(tool.definition.prompt_snippet.as_deref(), Some("shout text"));
    let mut args = Map::new();
    args.insert("text".into(), json!("hi"));
    let result = tool.definition.tool.execute("t1", args, ToolContext::detached()).await.unwrap();
    assert_eq!(result.content, vec![UserBlock::Text(TextContent::new("HI"))]);
    assert_eq!(result.details, json!({"id": "t1"}));
    assert!(runner.run_command("hello", "").await);
    assert!(errors.lock().unwrap().is_empty());
    assert!(runner.run_command("hello", "fail").await);
    assert_eq!(*errors.lock().unwrap(), vec![ExtensionError::new("command:hello", "command", "nope")]);
    assert!(!runner.run_command("missing", "").await);
    assert_eq!(runner.flags()[0].name, "loud");
}

#[tokio::test]
async fn dropping_the_runner_kills_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let body = format!(
        "import os\nopen({:?}, 'w').write(str(os.getpid()))\ndef handle(m):\n    return init(['turn_start'])",
        pid_file.to_string_lossy()
    );
    let path = script(&dir, "pid", &body);
    let (runner, _) = load(&path).await;
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let alive = |pid: i32| {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z ")
    };
    assert!(alive(pid));
    drop(runner);
    let start = Instant::now();
    while alive(pid) && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(pid), "the extension process outlived the runner");
}

fn quick_init() -> SubprocessOptions {
    SubprocessOptions { init_timeout: Duration::from_millis(3000), ..fast() }
}

async fn load_with(path: &str, options: SubprocessOptions) -> ExtensionRunner {
    let ext: Arc<dyn Extension> = Arc::new(SubprocessExtension::new(path).with_options(options));
    ExtensionRunner::load(vec![ext], std::env::temp_dir().to_string_lossy()).await
}

#[tokio::test]
async fn hanging_at_initialize_is_a_load_error_within_the_init_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let body = format!(
        "import os\nopen({:?}, 'w').write(str(os.getpid()))\ndef handle(m):\n    time.sleep(60)",
        pid_file.to_string_lossy()
    );
    let path = script(&dir, "hang_init", &body);
    let start = Instant::now();
    let runner = load_with(&path, quick_init()).await;
    assert!(start.elapsed() < Duration::from_secs(8), "load waited {:?}", start.elapsed());
    assert_eq!(runner.load_errors().len(), 1);
    assert_eq!(
        runner.load_errors()[0].error,
        "Failed to load extension: Extension did not answer \"initialize\" within 3000 ms; the process was stopped"
    );
    assert!(runner.extension_paths().is_empty());
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let gone = |pid: i32| {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z ")
    };
    let start = Instant::now();
    while !gone(pid) && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone(pid), "the hanging process was not stopped");
}

#[tokio::test]
async fn printing_only_garbage_is_a_load_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let body = "def handle(m):\n    while True:\n        print('garbage ' * 50); print('{\"id\": \"x\"'); sys.stdout.flush(); time.sleep(0.05)";
    let path = script(&dir, "garbage_only", body);
    let start = Instant::now();
    let runner = load_with(&path, quick_init()).await;
    assert!(start.elapsed() < Duration::from_secs(8));
    assert_eq!(
        runner.load_errors()[0].error,
        "Failed to load extension: Extension did not answer \"initialize\" within 3000 ms; the process was stopped"
    );
}

#[tokio::test]
async fn an_initialize_answer_without_a_protocol_version_is_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = script(&dir, "no_version", "def handle(m):\n    return {'events': ['tool_result']}");
    let runner = load_with(&path, fast()).await;
    assert_eq!(
        runner.load_errors()[0].error,
        "Failed to load extension: Unsupported extension protocol version none (this host speaks 4)"
    );
}

#[tokio::test]
async fn a_malformed_initialize_answer_is_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = script(&dir, "bad_init", "def handle(m):\n    return {'protocolVersion': 1, 'events': 'tool_result'}");
    let runner = load_with(&path, fast()).await;
    assert_eq!(runner.load_errors().len(), 1);
    assert!(
        runner.load_errors()[0].error.starts_with("Failed to load extension: Invalid initialize result: "),
        "{:?}",
        runner.load_errors()
    );
}

#[tokio::test]
async fn a_malformed_event_answer_is_reported_and_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let body = "def handle(m):\n    if m['method'] == 'initialize': return init(['tool_result'])\n    return {'content': 'not a list of blocks', 'isError': 'maybe'}";
    let path = script(&dir, "bad_answer", body);
    let (runner, errors) = load(&path).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    assert_eq!(runner.emit_tool_result(tool_result_event()).await, None, "nothing is patched");
    let errs = errors.lock().unwrap().clone();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].event, "tool_result");
    assert!(errs[0].error.starts_with("Invalid tool_result result from extension: "), "{errs:?}");
    // The process is still healthy: the next event is answered (and fails the same way).
    runner.emit_tool_result(tool_result_event()).await;
    assert_eq!(errors.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn exiting_after_initialize_is_reported_once_and_later_events_are_quiet() {
    let dir = tempfile::tempdir().unwrap();
    // It exits a moment after answering, once the test's error listener is attached.
    let body = "def handle(m):\n    send({'id': m['id'], 'result': init(['tool_result'])})\n    time.sleep(2)\n    sys.exit(0)";
    let path = script(&dir, "exit_after_init", body);
    let (runner, errors) = load(&path).await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let start = Instant::now();
    while !errors.lock().unwrap().iter().any(|e| e.event == "process") && start.elapsed() < Duration::from_secs(15) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let errs = errors.lock().unwrap().clone();
    assert_eq!(errs.len(), 1, "{errs:?}");
    // The status is known when the process was reaped by the time its stdout closed.
    assert!(errs[0].error.starts_with("Extension process exited"), "{errs:?}");
    assert_eq!(runner.emit_tool_result(tool_result_event()).await, None);
    assert_eq!(errors.lock().unwrap().len(), 1, "a dead extension is skipped quietly");
}

/// Every fault at once, in a real SDK session talking HTTP: the faulty extensions are reported
/// (load errors, handler errors), the healthy audit extension still writes its entry, and the
/// requests the provider receives are those of a session without the faulty ones.
#[tokio::test]
async fn a_session_with_faulty_extensions_goes_on() {
    use http_support::{Setup, roles, tool_names, tool_reply};
    let dir = tempfile::tempdir().unwrap();
    let on_event = |what: &str| {
        format!(
            "def handle(m):\n    if m['method'] == 'initialize': return init(['tool_result', 'context'])\n    {what}"
        )
    };
    let faulty = [
        script(&dir, "crash_at_start", "sys.exit(3)\ndef handle(m): pass"),
        script(&dir, "v99", "def handle(m):\n    return init(['tool_result'], version=99)"),
        script(&dir, "hang_init", "def handle(m):\n    time.sleep(60)"),
        script(&dir, "hang_event", &on_event("time.sleep(60)")),
        script(&dir, "crash_event", &on_event("sys.exit(5)")),
        script(&dir, "garbage_event", &on_event("print('not json'); sys.stdout.flush(); return None")),
    ];
    let mut extensions: Vec<Arc<dyn Extension>> = faulty
        .iter()
        .map(|p| Arc::new(SubprocessExtension::new(p.as_str()).with_options(quick_init())) as Arc<dyn Extension>)
        .collect();
    extensions.push(Arc::new(SubprocessExtension::new(audit_path()).with_options(fast())));
    let call = tool_reply("call_1", "bash", json!({"command": "echo checked"}));
    let h = Setup { replies: vec![call.clone()], extensions, ..Default::default() }.start().await;
    let runner = h.session.extension_runner().expect("a runner").clone();
    let load_errors: Vec<String> = runner.load_errors().iter().map(|e| e.error.clone()).collect();
    assert_eq!(load_errors.len(), 3, "{load_errors:?}");
    assert!(load_errors[0].starts_with("Failed to load extension: "), "{load_errors:?}");
    assert_eq!(
        load_errors[1],
        "Failed to load extension: Unsupported extension protocol version 99 (this host speaks 4)"
    );
    assert!(load_errors[2].contains("did not answer \"initialize\""), "{load_errors:?}");
    h.session.bind_extensions(|_| {}).await;
    let start = Instant::now();
    h.session.prompt("跑一下检查").await.expect("the prompt completes");
    assert!(start.elapsed() < Duration::from_secs(15), "took {:?}", start.elapsed());
    // The healthy extension did its job.
    let audit: Vec<Value> =
        h.entries().into_iter().filter(|e| e["type"] == "custom" && e["customType"] == "audit-note").collect();
    assert_eq!(audit.len(), 1, "{:#?}", h.entries());
    // The faulty ones were reported.
    let errs = h.error_pairs();
    let hang = faulty[3].as_str();
    assert!(
        h.errors.lock().unwrap().iter().any(|e| e.extension_path == hang && e.error.contains("within 700 ms")),
        "{errs:?}"
    );
    assert!(errs.iter().any(|(event, error)| event == "protocol" && error.contains("not json")), "{errs:?}");
    assert!(errs.iter().any(|(event, _)| event == "process"), "{errs:?}");
    // The wire saw a normal run.
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(roles(&bodies[1]), ["system", "user", "assistant", "tool"]);
    assert_eq!(tool_names(&bodies[1]), ["read", "bash", "edit", "write"]);
    let clean = Setup { replies: vec![call], ..Default::default() }.start().await;
    clean.session.prompt("跑一下检查").await.expect("clean prompt");
    let clean_bodies: Vec<Value> = clean.server.bodies().iter().map(|b| clean.mask(b)).collect();
    let ours: Vec<Value> = bodies.iter().map(|b| h.mask(b)).collect();
    assert_eq!(ours, clean_bodies, "faulty extensions change nothing the provider receives");
}
