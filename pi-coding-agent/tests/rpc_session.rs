//! RPC mode's session commands (`get_session_stats`, `get_fork_messages`, `fork`, `clone`,
//! `new_session`, `switch_session`, `compact`, `set_auto_compaction`, `set_auto_retry`,
//! `abort_retry`, `clear_queue`) driven through the `pi` binary's stdin against the scripted
//! 127.0.0.1 server, with pi's response shapes; commands handled concurrently (`abort` during
//! `compact`, `get_state` during `bash`); `bash` output updates and `abort_bash`; images on
//! `prompt`.

#[path = "cli_support/mod.rs"]
mod cli_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use cli_support::{Env, Reply, ScriptedServer, text_reply};
use serde_json::{Value, json};

struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Records skipped while waiting.
    seen: Vec<Value>,
}

impl Rpc {
    fn start(env: &Env, extra: &[&str]) -> Rpc {
        let mut child = env
            .pi()
            .args(["--model", "local/smollm2-135m", "--mode", "rpc", "--no-tools"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn pi");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        Rpc { child, stdin, lines, seen: Vec::new() }
    }

    /// Sends a command and returns its response (events before it are skipped).
    fn call(&mut self, command: Value) -> Value {
        let id = command["id"].clone();
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{command}").expect("write");
        stdin.flush().expect("flush");
        self.wait(|v| v["type"] == "response" && v["id"] == id)
    }

    /// Sends a command without waiting for its response.
    fn send(&mut self, command: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{command}").expect("write");
        stdin.flush().expect("flush");
    }

    /// The response to `id`, whether it already arrived or not.
    fn response(&mut self, id: &str) -> Value {
        let is_it = |v: &Value| v["type"] == "response" && v["id"] == id;
        if let Some(i) = self.seen.iter().position(is_it) {
            return self.seen.remove(i);
        }
        self.wait(is_it)
    }

    /// Whether the response to `id` arrived (among the records read so far).
    fn answered(&self, id: &str) -> bool {
        self.seen.iter().any(|v| v["type"] == "response" && v["id"] == id)
    }

    /// Waits for the first record matching `f`.
    fn wait(&mut self, f: impl Fn(&Value) -> bool) -> Value {
        loop {
            let v = self.lines.recv_timeout(Duration::from_secs(60)).expect("pi answered in time");
            if f(&v) {
                return v;
            }
            self.seen.push(v);
        }
    }

    /// Prompts and waits until the run settled.
    fn prompt(&mut self, id: &str, text: &str) {
        let r = self.call(json!({"id": id, "type": "prompt", "message": text}));
        assert_eq!(r["success"], true, "{r}");
        self.wait(|v| v["type"] == "agent_settled");
    }

    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait");
        assert_eq!(status.code(), Some(0));
    }
}

#[test]
fn session_commands_answer_with_pi_shapes() {
    let server = ScriptedServer::start(vec![text_reply(&["one"]), text_reply(&["two"])]);
    let env = Env::new(&server.base_url);
    let mut rpc = Rpc::start(&env, &[]);
    rpc.prompt("p1", "first question");
    rpc.prompt("p2", "second question");

    let stats = rpc.call(json!({"id": "s", "type": "get_session_stats"}));
    assert_eq!(stats["command"], "get_session_stats");
    let mut data = stats["data"].clone();
    let original = data["sessionFile"].as_str().unwrap().to_owned();
    assert!(original.ends_with(".jsonl"));
    assert!(data["sessionId"].is_string());
    data.as_object_mut().unwrap().retain(|k, _| k != "sessionFile" && k != "sessionId");
    // What pi 1.6.0 answers for the same exchange (checked with the reference's rpc mode).
    // JavaScript writes the zero cost as `0` (a `0.0` on the wire would be read back as a float).
    assert_eq!(
        data,
        json!({"userMessages": 2, "assistantMessages": 2, "toolCalls": 0, "toolResults": 0, "totalMessages": 5,
               "tokens": {"input": 20, "output": 6, "cacheRead": 0, "cacheWrite": 0, "total": 26}, "cost": 0,
               "contextUsage": {"tokens": 13, "contextWindow": 8192, "percent": 0.15869140625}})
    );

    let forkable = rpc.call(json!({"id": "f", "type": "get_fork_messages"}));
    let messages = forkable["data"]["messages"].as_array().unwrap().clone();
    assert_eq!(
        messages.iter().map(|m| m["text"].clone()).collect::<Vec<_>>(),
        [json!("first question"), json!("second question")]
    );
    assert!(messages[0]["entryId"].is_string());

    let fork = rpc.call(json!({"id": "k", "type": "fork", "entryId": messages[1]["entryId"]}));
    assert_eq!(
        fork,
        json!({"id": "k", "type": "response", "command": "fork", "success": true,
                            "data": {"text": "second question", "cancelled": false}})
    );
    let state = rpc.call(json!({"id": "st", "type": "get_state"}));
    assert_ne!(state["data"]["sessionFile"], json!(original));
    assert_eq!(state["data"]["messageCount"], 3, "system prompt, first question and its answer");

    let bad = rpc.call(json!({"id": "b", "type": "fork", "entryId": "nope"}));
    assert_eq!(bad["success"], false);
    assert_eq!(bad["error"], "Invalid entry ID for forking");

    let clone = rpc.call(json!({"id": "c", "type": "clone"}));
    assert_eq!(clone["data"], json!({"cancelled": false}));

    let new = rpc.call(json!({"id": "n", "type": "new_session"}));
    assert_eq!(
        new,
        json!({"id": "n", "type": "response", "command": "new_session", "success": true,
                           "data": {"cancelled": false}})
    );
    let state = rpc.call(json!({"id": "st2", "type": "get_state"}));
    assert_eq!(state["data"]["messageCount"], 0);

    let nothing = rpc.call(json!({"id": "x", "type": "compact"}));
    assert_eq!(
        nothing,
        json!({"id": "x", "type": "response", "command": "compact", "success": false,
                               "error": "Nothing to compact (session too small)"})
    );
    let end = rpc.seen.iter().rev().find(|v| v["type"] == "compaction_end").expect("compaction_end").clone();
    assert_eq!(end["errorMessage"], "Compaction failed: Nothing to compact (session too small)");
    assert_eq!(end["aborted"], false);

    let switched = rpc.call(json!({"id": "w", "type": "switch_session", "sessionPath": original}));
    assert_eq!(switched["data"], json!({"cancelled": false}));
    let state = rpc.call(json!({"id": "st3", "type": "get_state"}));
    assert_eq!(state["data"]["sessionFile"], json!(original));
    assert_eq!(state["data"]["messageCount"], 5);

    for (id, command) in [
        ("a1", json!({"type": "set_auto_compaction", "enabled": false})),
        ("a2", json!({"type": "set_auto_retry", "enabled": false})),
        ("a3", json!({"type": "abort_retry"})),
    ] {
        let mut c = command.clone();
        c["id"] = json!(id);
        let r = rpc.call(c);
        assert_eq!(r, json!({"id": id, "type": "response", "command": command["type"], "success": true}));
    }
    let state = rpc.call(json!({"id": "st4", "type": "get_state"}));
    assert_eq!(state["data"]["autoCompactionEnabled"], false);
    let cleared = rpc.call(json!({"id": "q", "type": "clear_queue"}));
    assert_eq!(cleared["data"], json!({"steering": [], "followUp": []}));
    let missing = rpc.call(json!({"id": "m", "type": "switch_session"}));
    assert_eq!(missing["error"], "Missing required field: sessionPath");
    rpc.finish();
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

#[test]
fn compact_summarizes_the_older_turns_through_the_model() {
    let server = ScriptedServer::start(vec![
        text_reply(&["first answer"]),
        text_reply(&["second answer"]),
        text_reply(&["Goal: testing"]),
    ]);
    let env = Env::new(&server.base_url);
    // Manual compaction only: with pi's default settings the threshold would compact on its own.
    std::fs::write(env.agent().join("settings.json"), r#"{"compaction": {"enabled": false}}"#).unwrap();
    let mut rpc = Rpc::start(&env, &[]);
    // Each prompt is over pi's default 20000 kept tokens, so the first turn is summarized.
    rpc.prompt("p1", &format!("alpha {}", "word ".repeat(20_000)));
    rpc.prompt("p2", &format!("beta {}", "word ".repeat(20_000)));
    let r = rpc.call(json!({"id": "c", "type": "compact", "customInstructions": "mention tests"}));
    assert_eq!(r["success"], true, "{r}");
    let data = &r["data"];
    assert!(data["summary"].as_str().unwrap().starts_with("Goal: testing"), "{data}");
    assert!(data["firstKeptEntryId"].is_string());
    assert!(data["tokensBefore"].as_u64().unwrap() > 0);
    assert!(data["estimatedTokensAfter"].is_u64());
    assert_eq!(data["details"], json!({"readFiles": [], "modifiedFiles": []}));
    rpc.finish();
    let requests = server.requests.lock().unwrap();
    assert_eq!(requests.len(), 3);
    let summary_request = requests[2].to_string();
    assert!(summary_request.contains("mention tests"));
}

#[test]
fn cycle_model_goes_through_the_models_scope_with_its_thinking_levels() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let models = json!({"providers": {"local": {"baseUrl": server.base_url, "api": "openai-completions",
        "apiKey": "none", "models": [
            {"id": "smollm2-135m", "contextWindow": 8192, "maxTokens": 256},
            {"id": "m2", "contextWindow": 8192, "maxTokens": 256},
            {"id": "m3", "reasoning": true, "contextWindow": 8192, "maxTokens": 256}]}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
    let mut rpc = Rpc::start(&env, &["--models", "local/smollm2-135m,local/m3:high"]);
    let first = rpc.call(json!({"id": "1", "type": "cycle_model"}));
    assert_eq!(first["success"], true, "{first}");
    assert_eq!(first["data"]["model"]["id"], "m3");
    assert_eq!(first["data"]["thinkingLevel"], "high");
    assert_eq!(first["data"]["isScoped"], true);
    let second = rpc.call(json!({"id": "2", "type": "cycle_model"}));
    assert_eq!(second["data"]["model"]["id"], "smollm2-135m", "m2 is outside the scope: {second}");
    assert_eq!(second["data"]["isScoped"], true);
    rpc.finish();

    // Without a scope every model with credentials takes its turn.
    let mut rpc = Rpc::start(&env, &[]);
    let next = rpc.call(json!({"id": "3", "type": "cycle_model"}));
    assert_eq!(next["data"]["model"]["id"], "m2", "{next}");
    assert_eq!(next["data"]["isScoped"], false);
    rpc.finish();
}

#[test]
fn prompt_is_answered_when_its_preflight_decides() {
    let server = cli_support::StallingServer::start();
    let env = Env::new(&server.base_url);
    let mut rpc = Rpc::start(&env, &[]);
    let started = rpc.call(json!({"id": "p1", "type": "prompt", "message": "hi"}));
    assert_eq!(started["data"], json!({"disposition": "started"}), "{started}");
    assert!(
        !rpc.seen.iter().any(|v| v["type"] == "agent_start"),
        "pi answers before the run's first event: {:?}",
        rpc.seen
    );
    let start = std::time::Instant::now();
    while !server.hit.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(start.elapsed() < Duration::from_secs(60), "the request never reached the server");
        std::thread::sleep(Duration::from_millis(10));
    }
    let busy = rpc.call(json!({"id": "p2", "type": "prompt", "message": "again"}));
    assert_eq!(busy["success"], false, "{busy}");
    assert_eq!(
        busy["error"],
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
    );
    let queued = rpc.call(json!({"id": "p3", "type": "prompt", "message": "later", "streamingBehavior": "followUp"}));
    assert_eq!(queued["data"], json!({"disposition": "queued"}), "{queued}");
    let aborted = rpc.call(json!({"id": "a", "type": "abort"}));
    assert_eq!(aborted["success"], true);
    rpc.finish();
}

/// Polls `f` until it holds (a generous deadline: it only guards against hanging forever).
fn eventually(what: &str, f: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(60), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn abort_cancels_a_running_compact_and_both_are_answered() {
    let server = ScriptedServer::start_replies(vec![
        Reply::Sse(text_reply(&["first answer"])),
        Reply::Sse(text_reply(&["second answer"])),
        Reply::Stall,
    ]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"compaction": {"enabled": false}}"#).unwrap();
    let mut rpc = Rpc::start(&env, &[]);
    rpc.prompt("p1", &format!("alpha {}", "word ".repeat(20_000)));
    rpc.prompt("p2", &format!("beta {}", "word ".repeat(20_000)));
    rpc.send(json!({"id": "c", "type": "compact"}));
    rpc.wait(|v| v["type"] == "compaction_start");
    // The summary request is in flight (the server holds it).
    eventually("the summary request", || server.requests.lock().unwrap().len() == 3);
    let state = rpc.call(json!({"id": "s", "type": "get_state"}));
    assert_eq!(state["data"]["isCompacting"], true, "{state}");
    rpc.send(json!({"id": "a", "type": "abort"}));
    let compact = rpc.response("c");
    assert_eq!(
        compact,
        json!({"id": "c", "type": "response", "command": "compact", "success": false, "error": "Compaction cancelled"})
    );
    let abort = rpc.response("a");
    assert_eq!(abort, json!({"id": "a", "type": "response", "command": "abort", "success": true}));
    let end = rpc.seen.iter().find(|v| v["type"] == "compaction_end").expect("compaction_end").clone();
    assert_eq!(end, json!({"type": "compaction_end", "reason": "manual", "aborted": true, "willRetry": false}));
    let state = rpc.call(json!({"id": "s2", "type": "get_state"}));
    assert_eq!(state["data"]["isCompacting"], false, "{state}");
    assert_eq!(state["data"]["messageCount"], 5, "nothing was compacted");
    rpc.finish();
}

#[test]
fn get_state_answers_while_bash_runs() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let gate = env.proj().join("go");
    let mut rpc = Rpc::start(&env, &[]);
    // The command runs until the test creates the file: no timing is involved.
    rpc.send(json!({"id": "b", "type": "bash", "command": "while [ ! -f go ]; do sleep 0.05; done; echo done"}));
    let state = rpc.call(json!({"id": "s", "type": "get_state"}));
    assert_eq!(state["success"], true, "{state}");
    assert!(!rpc.answered("b"), "bash is still running");
    let stats = rpc.call(json!({"id": "t", "type": "get_session_stats"}));
    assert_eq!(stats["success"], true, "{stats}");
    assert!(!rpc.answered("b"), "bash is still running");
    std::fs::write(&gate, "").unwrap();
    let bash = rpc.response("b");
    assert_eq!(bash["success"], true, "{bash}");
    assert_eq!(bash["data"]["output"], "done\n");
    assert_eq!(bash["data"]["exitCode"], 0);
    rpc.finish();
}

/// The records pi 1.6.0 writes for `bash` (recorded with `anchor.sh pi --mode rpc`): one
/// `bash_execution_update` per output chunk with the command's id (none without one), ANSI
/// sequences stripped, then the response.
#[test]
fn bash_streams_updates_with_the_command_id() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let mut rpc = Rpc::start(&env, &[]);
    // Each line waits for the previous one to be read by the test, so chunks cannot merge.
    let command = r#"echo hi; while [ ! -f one ]; do sleep 0.05; done; printf '\033[31mred\033[0m\n'; while [ ! -f two ]; do sleep 0.05; done; echo err 1>&2; exit 3"#;
    rpc.send(json!({"id": "b1", "type": "bash", "command": command}));
    let first = rpc.wait(|v| v["type"] == "bash_execution_update");
    assert_eq!(first, json!({"type": "bash_execution_update", "id": "b1", "delta": "hi\n"}));
    std::fs::write(env.proj().join("one"), "").unwrap();
    let second = rpc.wait(|v| v["type"] == "bash_execution_update");
    assert_eq!(second, json!({"type": "bash_execution_update", "id": "b1", "delta": "red\n"}));
    std::fs::write(env.proj().join("two"), "").unwrap();
    let third = rpc.wait(|v| v["type"] == "bash_execution_update");
    assert_eq!(third, json!({"type": "bash_execution_update", "id": "b1", "delta": "err\n"}));
    let response = rpc.response("b1");
    assert_eq!(
        response,
        json!({"id": "b1", "type": "response", "command": "bash", "success": true,
            "data": {"output": "hi\nred\nerr\n", "exitCode": 3, "cancelled": false, "truncated": false}})
    );
    rpc.send(json!({"type": "bash", "command": "echo noid"}));
    let update = rpc.wait(|v| v["type"] == "bash_execution_update");
    assert_eq!(update, json!({"type": "bash_execution_update", "delta": "noid\n"}));
    let response = rpc.wait(|v| v["type"] == "response");
    assert_eq!(
        response,
        json!({"type": "response", "command": "bash", "success": true,
            "data": {"output": "noid\n", "exitCode": 0, "cancelled": false, "truncated": false}})
    );
    rpc.finish();
}

/// As pi 1.6.0: `abort` leaves a running user command alone; `abort_bash` cancels it (answered at
/// once, the command after it with its output so far, `cancelled` and no exit code), and answers
/// the same when nothing runs. The cancelled command is still recorded.
#[test]
fn abort_bash_cancels_the_running_command_and_abort_does_not() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let mut rpc = Rpc::start(&env, &[]);
    rpc.send(json!({"id": "b", "type": "bash", "command": "echo start; while true; do sleep 0.05; done"}));
    rpc.wait(|v| v["type"] == "bash_execution_update");
    let abort = rpc.call(json!({"id": "a", "type": "abort"}));
    assert_eq!(abort, json!({"id": "a", "type": "response", "command": "abort", "success": true}));
    assert!(!rpc.answered("b"), "abort leaves the command running");
    let abort_bash = rpc.call(json!({"id": "ab", "type": "abort_bash"}));
    assert_eq!(abort_bash, json!({"id": "ab", "type": "response", "command": "abort_bash", "success": true}));
    let bash = rpc.response("b");
    assert_eq!(
        bash,
        json!({"id": "b", "type": "response", "command": "bash", "success": true,
            "data": {"output": "start\n", "cancelled": true, "truncated": false}})
    );
    let idle = rpc.call(json!({"id": "ab2", "type": "abort_bash"}));
    assert_eq!(idle, json!({"id": "ab2", "type": "response", "command": "abort_bash", "success": true}));
    let messages = rpc.call(json!({"id": "m", "type": "get_messages"}));
    let recorded = &messages["data"]["messages"][0];
    assert_eq!(recorded["role"], "bashExecution", "{messages}");
    assert_eq!(recorded["output"], "start\n");
    assert_eq!(recorded["cancelled"], true);
    assert!(recorded.get("exitCode").is_none(), "{recorded}");
    rpc.finish();
}

/// As pi's `executeBash`: the `shellCommandPrefix` setting runs before the command (recorded as
/// typed), and a `shellPath` that does not exist fails the command with pi's message.
#[test]
fn bash_uses_the_shell_settings() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"shellCommandPrefix": "GREETING=prefixed"}"#).unwrap();
    let mut rpc = Rpc::start(&env, &[]);
    let bash = rpc.call(json!({"id": "b", "type": "bash", "command": "echo $GREETING"}));
    assert_eq!(bash["data"]["output"], "prefixed\n", "{bash}");
    let messages = rpc.call(json!({"id": "m", "type": "get_messages"}));
    assert_eq!(messages["data"]["messages"][0]["command"], "echo $GREETING", "{messages}");
    rpc.finish();

    std::fs::write(env.agent().join("settings.json"), r#"{"shellPath": "/nonexistent/shell"}"#).unwrap();
    let mut rpc = Rpc::start(&env, &[]);
    let bash = rpc.call(json!({"id": "b", "type": "bash", "command": "echo hi"}));
    assert_eq!(
        bash,
        json!({"id": "b", "type": "response", "command": "bash", "success": false,
            "error": "Custom shell path not found: /nonexistent/shell"})
    );
    rpc.finish();
}

/// Closing stdin ends a running user command (pi's shutdown disposes the session, which aborts
/// it) instead of waiting for it.
#[test]
fn stdin_eof_cancels_a_running_bash() {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    let mut rpc = Rpc::start(&env, &[]);
    rpc.send(json!({"id": "b", "type": "bash", "command": "echo start; while true; do sleep 0.05; done"}));
    rpc.wait(|v| v["type"] == "bash_execution_update");
    drop(rpc.stdin.take());
    // A generous deadline: it only guards against waiting for the endless command.
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = rpc.child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = rpc.child.kill();
            panic!("pi kept running the command after stdin closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}

#[test]
fn prompt_images_reach_the_provider_after_the_text() {
    let server = ScriptedServer::start(vec![text_reply(&["A red pixel."])]);
    let env = Env::new(&server.base_url);
    let models = json!({"providers": {"local": {"baseUrl": server.base_url, "api": "openai-completions",
        "apiKey": "none", "models": [{"id": "smollm2-135m", "input": ["text", "image"],
        "contextWindow": 8192, "maxTokens": 256}]}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
    // A 1x1 PNG.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    let mut rpc = Rpc::start(&env, &[]);
    let r = rpc.call(json!({"id": "p", "type": "prompt", "message": "What is this?",
        "images": [{"type": "image", "data": png, "mimeType": "image/png"}]}));
    assert_eq!(r["data"], json!({"disposition": "started"}), "{r}");
    rpc.wait(|v| v["type"] == "agent_settled");
    let messages = rpc.call(json!({"id": "m", "type": "get_messages"}));
    let user = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .expect("the user message")
        .clone();
    assert_eq!(
        user["content"],
        json!([{"type": "text", "text": "What is this?"}, {"type": "image", "data": png, "mimeType": "image/png"}])
    );
    rpc.finish();
    let requests = server.requests.lock().unwrap();
    let last = requests[0]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last,
        json!({"role": "user", "content": [{"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}")}}]})
    );
}

#[test]
fn queued_follow_up_images_reach_the_provider() {
    let gate = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server = ScriptedServer::start_replies(vec![
        Reply::Gated(gate.clone(), text_reply(&["first"])),
        Reply::Sse(text_reply(&["second"])),
    ]);
    let env = Env::new(&server.base_url);
    let models = json!({"providers": {"local": {"baseUrl": server.base_url, "api": "openai-completions",
        "apiKey": "none", "models": [{"id": "smollm2-135m", "input": ["text", "image"],
        "contextWindow": 8192, "maxTokens": 256}]}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
    let gif = "R0lGODlhAQABAAAAACw=";
    let mut rpc = Rpc::start(&env, &[]);
    let r = rpc.call(json!({"id": "p", "type": "prompt", "message": "hi"}));
    assert_eq!(r["data"], json!({"disposition": "started"}), "{r}");
    eventually("the first request", || server.requests.lock().unwrap().len() == 1);
    let queued = rpc.call(json!({"id": "f", "type": "follow_up", "message": "and this?",
        "images": [{"type": "image", "data": gif, "mimeType": "image/gif"}]}));
    assert_eq!(queued["data"], json!({"disposition": "queued"}), "{queued}");
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    rpc.wait(|v| v["type"] == "agent_settled");
    rpc.finish();
    let requests = server.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    let last = requests[1]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last,
        json!({"role": "user", "content": [{"type": "text", "text": "and this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/gif;base64,{gif}")}}]})
    );
}
