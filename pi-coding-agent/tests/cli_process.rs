//! The `pi` binary as a process against a scripted chat-completions server on 127.0.0.1:
//! pi's error messages and exit codes, print mode, json mode (stdout, session file and request
//! bodies as snapshots) and rpc mode through stdin.

mod cli_support;

use std::io::Write;
use std::process::Stdio;

use cli_support::{Env, Reply, ScriptedServer, json_lines, redact, text_reply};

fn fixture(name: &str) -> String {
    let p = format!("{}/tests/fixtures/cli/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn version_and_help_match_the_reference() {
    let env = Env::new("http://127.0.0.1:9/v1");
    // A refused connection is retryable in pi: keep its three retries quick.
    std::fs::write(env.agent().join("settings.json"), r#"{"retry": {"baseDelayMs": 5}}"#).unwrap();
    let out = env.run(&["--version"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), fixture("version.stdout"));
    let out = env.run(&["--help"]);
    // The port's help leaves out what it does not have (README, "Deliberate differences").
    let mut expected = fixture("help.stdout");
    for (reference, port) in HELP_CHANGES {
        assert!(expected.contains(reference), "{reference}");
        expected = expected.replace(reference, port);
    }
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}

/// Lines of pi 1.6.0's help this port changes: no self-update, no model-catalog refresh.
const HELP_CHANGES: [(&str, &str); 2] = [
    (
        "  pi update [source|self|pi]   Update pi, extensions, or model catalogs\n",
        "  pi update --extensions       Update installed packages (pi update <source> updates one)\n",
    ),
    (
        "  PI_SELF_UPDATE_COMMAND           - Command pi update runs to update pi itself ({packageName}, {version}, {installSpec})\n",
        "",
    ),
];

#[test]
fn errors_match_the_reference() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let cases: &[(&str, &[&str])] = &[
        ("unknown_long", &["--bogus", "-p", "hi"]),
        ("unknown_short", &["-x"]),
        ("model_missing_value", &["--model"]),
        ("invalid_mode", &["--mode", "xml", "-p", "hi"]),
        ("mode_no_value", &["--mode"]),
        ("api_key_without_model", &["--api-key", "k", "-p", "hi"]),
        ("model_not_found", &["--model", "nope", "-p", "hi"]),
        ("unknown_provider", &["--provider", "nope", "--model", "x", "-p", "hi"]),
        ("file_not_found", &["-p", "@/nonexistent/file.txt", "hi"]),
        ("tools_mixed", &["--tools", "read,+bash", "-p", "hi"]),
        ("list_models", &["--list-models"]),
        ("list_models_search", &["--list-models", "smol"]),
        ("list_models_nomatch", &["--list-models", "zzz"]),
    ];
    for (name, args) in cases {
        let out = env.run(args);
        let expected_rc: i32 = fixture(&format!("{name}.rc")).trim().parse().unwrap();
        assert_eq!(out.status.code(), Some(expected_rc), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = fixture(&format!("{name}.stderr"));
        assert_eq!(stderr.trim_end(), expected.trim_end(), "{name}");
        if !name.starts_with("list_models") {
            continue;
        }
        // The reference lists `local/smollm2-135m`; ours lists `local/smollm2-135m`.
        let ours = String::from_utf8_lossy(&out.stdout)
            .replace("scripted    ", "smollm2-135m")
            .replace("scripted", "smollm2-135m");
        assert_eq!(ours.trim_end(), fixture(&format!("{name}.stdout")).trim_end(), "{name}");
    }
    let out = env.run(&["--provider", "local", "-p", "hi"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim_end(), fixture("provider_without_model.stderr").trim_end());
}

#[test]
fn print_mode_writes_the_final_text() {
    let server = ScriptedServer::start(vec![text_reply(&["Paris", " is the capital."])]);
    let env = Env::new(&server.base_url);
    let out = env.run(&["--model", "local/smollm2-135m", "-p", "What is the capital of France?"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Paris is the capital.\n");
    assert_eq!(env.session_files().len(), 1);
}

#[test]
fn unreachable_server_is_an_error_exit_1() {
    let env = Env::new("http://127.0.0.1:9/v1");
    // A refused connection is retryable in pi: keep its three retries quick.
    std::fs::write(env.agent().join("settings.json"), r#"{"retry": {"baseDelayMs": 5}}"#).unwrap();
    let out = env.run(&["--model", "local/smollm2-135m", "--no-session", "-p", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(!out.stderr.is_empty());
}

#[test]
fn json_mode_stream_session_and_request() {
    let server = ScriptedServer::start(vec![text_reply(&["Hello", " there"])]);
    let env = Env::new(&server.base_url);
    let out =
        env.run(&["--model", "local/smollm2-135m", "--mode", "json", "--no-tools", "--no-context-files", "Say hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut events = json_lines(&String::from_utf8_lossy(&out.stdout));
    events.iter_mut().for_each(|e| redact(e, &env));
    assert_eq!(events[0]["type"], "session");
    insta::assert_json_snapshot!("json_mode_stdout", events);
    let files = env.session_files();
    assert_eq!(files.len(), 1);
    let mut entries = json_lines(&std::fs::read_to_string(&files[0]).unwrap());
    entries.iter_mut().for_each(|e| redact(e, &env));
    insta::assert_json_snapshot!("json_mode_session_file", entries);
    let mut requests = server.requests.lock().unwrap().clone();
    requests.iter_mut().for_each(|e| redact(e, &env));
    insta::assert_json_snapshot!("json_mode_request_bodies", requests);
}

#[test]
fn json_mode_agent_end_tells_when_auto_retry_follows() {
    let overloaded = r#"{"error":{"message":"Overloaded","type":"overloaded_error"}}"#;
    let server =
        ScriptedServer::start_replies(vec![Reply::Status(529, overloaded.to_owned()), Reply::Sse(text_reply(&["Hi"]))]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"retry": {"baseDelayMs": 5}}"#).unwrap();
    let out = env.run(&["--model", "local/smollm2-135m", "--mode", "json", "--no-tools", "--no-session", "Say hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let events = json_lines(&String::from_utf8_lossy(&out.stdout));
    let outline: Vec<String> = events
        .iter()
        .filter(|e| e["type"] != "message_update")
        .map(|e| match e["type"].as_str().unwrap_or_default() {
            "agent_end" => format!("agent_end willRetry={}", e["willRetry"]),
            t @ ("message_start" | "message_end") => format!("{t} {}", e["message"]["role"].as_str().unwrap_or("?")),
            "entry_appended" => format!("entry_appended {}", e["entry"]["type"].as_str().unwrap_or("?")),
            t => t.to_owned(),
        })
        .collect();
    // pi 1.6.0's stream for the same exchange (its json mode against the same replies).
    let expected = [
        "session",
        "agent_start",
        "turn_start",
        "message_start system",
        "message_end system",
        "message_start user",
        "message_end user",
        "message_start assistant",
        "message_end assistant",
        "turn_end",
        "agent_end willRetry=true",
        "auto_retry_start",
        "entry_appended context_edit",
        "agent_start",
        "turn_start",
        "message_start assistant",
        "message_end assistant",
        "auto_retry_end",
        "turn_end",
        "agent_end willRetry=false",
        "agent_settled",
    ];
    assert_eq!(outline, expected);
    let retry = events.iter().find(|e| e["type"] == "auto_retry_start").unwrap();
    assert_eq!(retry["attempt"], 1);
    assert_eq!(retry["maxAttempts"], 3);
    assert_eq!(retry["delayMs"], 5);
    assert_eq!(retry["errorMessage"], r#"529: {"message":"Overloaded","type":"overloaded_error"}"#);
    let edit = &events.iter().find(|e| e["type"] == "entry_appended").unwrap()["entry"];
    assert_eq!(edit["replacement"], serde_json::Value::Null);
    assert!(edit["targetId"].is_string(), "{edit}");
    let end = events.iter().find(|e| e["type"] == "auto_retry_end").unwrap();
    assert_eq!(end, &serde_json::json!({"type": "auto_retry_end", "success": true, "attempt": 1}));
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

#[test]
fn rpc_mode_commands_and_parse_errors() {
    let server = ScriptedServer::start(vec![text_reply(&["Hi"])]);
    let env = Env::new(&server.base_url);
    let mut child = env
        .pi()
        .args(["--model", "local/smollm2-135m", "--mode", "rpc", "--no-session", "--no-tools"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let commands = [
        "{not json",
        r#"{"id":"1","type":"get_state"}"#,
        r#"{"id":"2","type":"nope"}"#,
        r#"{"id":"3","type":"prompt"}"#,
        r#"{"id":"4","type":"set_thinking_level","level":"bogus"}"#,
        r#"{"id":"5","type":"set_model","provider":"x","modelId":"y"}"#,
        r#"{"id":"6","type":"bash","command":"echo rpc-bash"}"#,
    ];
    for c in commands {
        writeln!(stdin, "{c}").unwrap();
    }
    stdin.flush().unwrap();
    // As pi, closing stdin aborts a running user command: close it once `bash` answered.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut records = Vec::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            let record: serde_json::Value = serde_json::from_str(&line).unwrap();
            if record["type"] == "response" && record["id"] == "6" {
                let _ = tx.send(());
            }
            records.push(record);
        }
        records
    });
    rx.recv_timeout(std::time::Duration::from_secs(60)).expect("bash answered in time");
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let records: Vec<serde_json::Value> =
        reader.join().unwrap().into_iter().filter(|r| r["type"] != "bash_execution_update").collect();
    assert_eq!(records[0]["command"], "parse");
    assert_eq!(records[0]["success"], false);
    assert!(records[0]["error"].as_str().unwrap().starts_with("Failed to parse command: "));
    assert!(records[0].get("id").is_none());
    assert_eq!(records[1]["id"], "1");
    assert_eq!(records[1]["data"]["model"]["id"], "smollm2-135m");
    assert_eq!(records[2]["error"], "Unknown command: nope");
    assert_eq!(records[3]["success"], false);
    assert_eq!(records[4]["success"], false);
    assert_eq!(records[5]["error"], "Model not found: x/y");
    assert_eq!(records[6]["id"], "6");
    assert_eq!(records[6]["data"]["output"], "rpc-bash\n");
}

/// The demo's question (`scripts/demo.sh`) on the real local LLM: the server samples greedily
/// with a fixed seed, so `pi -p` names Paris, and twice the same way. Skipped without
/// `PI_LOCAL_LLM_URL` (scripts/test-all.sh starts the server and sets it).
#[test]
fn the_demo_question_gets_the_same_sensible_answer_every_run() {
    let Ok(root) = std::env::var("PI_LOCAL_LLM_URL") else {
        eprintln!("skipped: PI_LOCAL_LLM_URL is not set (scripts/test-all.sh starts the local LLM)");
        return;
    };
    let env = Env::new(&format!("{}/v1", root.trim_end_matches('/')));
    let args = [
        "--model",
        "local/smollm2-135m",
        "--no-tools",
        "--no-session",
        "--system-prompt",
        "You are a helpful assistant.",
        "-p",
        "What is the capital of France?",
    ];
    // The working directory is part of the system prompt (`<cwd>`): a fixed one, so that the
    // prompt is the same on every run (a random temporary path changes what the model answers).
    let cwd = std::env::temp_dir().join("pi-demo-question").join("proj");
    std::fs::create_dir_all(&cwd).expect("cwd");
    let run = || env.pi().current_dir(&cwd).args(args).output().expect("run pi");
    let first = run();
    assert!(first.status.success(), "stderr: {}", String::from_utf8_lossy(&first.stderr));
    let answer = String::from_utf8_lossy(&first.stdout).into_owned();
    assert!(answer.contains("Paris"), "the demo's answer: {answer}");
    let second = run();
    assert_eq!(String::from_utf8_lossy(&second.stdout), answer, "greedy sampling answers the same every run");
}

#[test]
fn a_version_4_subprocess_extension_follows_the_stream_through_patches() {
    // `examples/extensions/stream_progress.py` keeps the streaming message from `message_update`
    // patches (thinking, text with multi-byte characters and a tool call, then a second answer).
    let fixture = format!("{}/tests/fixtures/js_extensions/update-stream.json", env!("CARGO_MANIFEST_DIR"));
    let replies: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(fixture).expect("fixture")).expect("replies");
    let server = ScriptedServer::start(replies);
    let env = Env::new(&server.base_url);
    let log = env.dir.path().join("progress.jsonl");
    let extension = format!("{}/../examples/extensions/stream_progress.py", env!("CARGO_MANIFEST_DIR"));
    let out = env
        .pi()
        .env("PI_PROGRESS_LOG", &log)
        .args(["-e", &extension, "--no-tools", "--model", "local/smollm2-135m", "-p", "hi"])
        .output()
        .expect("run pi");
    assert!(out.status.success(), "pi failed: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let events = json_lines(&std::fs::read_to_string(&log).expect("the extension's log"));
    assert_eq!(events.len(), 22);
    cli_support::assert_updates_grow_by_their_deltas(&events);
    // The message came whole once per answer, then as patches; the copy it kept is the message
    // pi saved, for both answers.
    let entries: Vec<serde_json::Value> = env
        .session_files()
        .iter()
        .flat_map(|f| json_lines(&std::fs::read_to_string(f).expect("session")))
        .filter(|e| e["customType"] == "stream-stats")
        .map(|e| e["data"].clone())
        .collect();
    assert_eq!(
        entries,
        vec![
            serde_json::json!({"updates": 18, "whole": 1, "characters": 15, "matches": true}),
            serde_json::json!({"updates": 4, "whole": 1, "characters": 5, "matches": true}),
        ]
    );
}
