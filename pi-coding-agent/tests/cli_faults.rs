//! The `pi` binary under faults (issue 18): unwritable session directories, bytes that are not
//! UTF-8 in argv and on stdin, stop signals with running tool processes, stalled providers.

mod cli_support;

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use cli_support::{Env, Reply, ScriptedServer, StallingServer, text_reply};

/// The SSE body of a reply that calls the bash tool with `command`.
fn bash_call_reply(command: &str) -> String {
    let args = serde_json::json!({ "command": command }).to_string();
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let c = serde_json::json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"scripted",
            "choices":[{"index":0,"delta":delta,"finish_reason":finish}]});
        format!("data: {c}\n\n")
    };
    let mut out = chunk(serde_json::json!({"role":"assistant","content":null}), None);
    out.push_str(&chunk(
        serde_json::json!({"tool_calls":[{"index":0,"id":"call_1","type":"function",
            "function":{"name":"bash","arguments":args}}]}),
        None,
    ));
    out.push_str(&chunk(serde_json::json!({}), Some("tool_calls")));
    out.push_str("data: [DONE]\n\n");
    out
}

/// A directory this process cannot create files in: a read-only directory when not root, else
/// `/sys` (root ignores permission bits; sysfs refuses new files to everyone).
fn unwritable_dir(env: &Env) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = env.dir.path().join("readonly");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    for candidate in [dir, PathBuf::from("/sys")] {
        let probe = candidate.join("pi-write-probe.jsonl");
        match std::fs::File::create(&probe) {
            Ok(_) => {
                let _ = std::fs::remove_file(&probe);
            }
            Err(_) => return candidate,
        }
    }
    panic!("no directory refuses new files here (neither a 0555 directory nor /sys)");
}

fn user_text(body: &serde_json::Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect()
}

#[test]
fn an_unwritable_session_dir_shows_the_answer_and_fails() {
    let server = ScriptedServer::start(vec![text_reply(&["Paris"]), text_reply(&["Paris"])]);
    let env = Env::new(&server.base_url);
    let dir = unwritable_dir(&env);
    let dir = dir.to_str().unwrap();
    let out = env.run(&["-p", "--model", "local/smollm2-135m", "--no-tools", "--session-dir", dir, "capital?"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Paris\n");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("Error: ").count(), 1, "reported once: {stderr}");
    assert!(stderr.contains(dir), "{stderr}");

    let out =
        env.run(&["--mode", "json", "--model", "local/smollm2-135m", "--no-tools", "--session-dir", dir, "capital?"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("Error: ") && stderr.contains(dir), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"type\":\"agent_settled\""));
}

#[test]
fn argv_that_is_not_utf8_is_decoded_lossily_and_file_names_keep_their_bytes() {
    let server = ScriptedServer::start(vec![text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    let name = std::ffi::OsStr::from_bytes(b"n\xffme.txt");
    std::fs::write(env.proj().join(name), "FILE-BODY").unwrap();
    let mut at_file = std::ffi::OsString::from("@");
    at_file.push(name);
    let out = env
        .pi()
        .args(["-p", "--model", "local/smollm2-135m", "--no-tools", "--no-session"])
        .arg(at_file)
        .arg(std::ffi::OsStr::from_bytes(b"caf\xff?"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = user_text(&server.requests.lock().unwrap()[0]);
    assert!(text.contains("FILE-BODY"), "{text}");
    assert!(text.contains("n\u{FFFD}me.txt"), "{text}");
    assert!(text.contains("caf\u{FFFD}?"), "{text}");
}

#[test]
fn print_mode_decodes_piped_stdin_lossily() {
    let server = ScriptedServer::start(vec![text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    let mut child = env
        .pi()
        .args(["-p", "--model", "local/smollm2-135m", "--no-tools", "--no-session"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"hi \xff there").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(user_text(&server.requests.lock().unwrap()[0]).contains("hi \u{FFFD} there"));
}

#[test]
fn rpc_answers_a_line_that_is_not_utf8_and_goes_on() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let mut child = env
        .pi()
        .args(["--model", "local/smollm2-135m", "--mode", "rpc", "--no-session", "--no-tools"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"\xff\xfe{garbage\n").unwrap();
    stdin.write_all(b"{\"id\":\"1\",\"type\":\"set_session_name\",\"name\":\"a\xffb\"}\n").unwrap();
    stdin.write_all(b"{\"id\":\"2\",\"type\":\"get_state\"}\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let records = cli_support::json_lines(&String::from_utf8_lossy(&out.stdout));
    let responses: Vec<_> = records.iter().filter(|r| r["type"] == "response").collect();
    assert_eq!(responses.len(), 3, "{records:?}");
    assert_eq!(responses[0]["command"], "parse");
    assert!(responses[0]["error"].as_str().unwrap().starts_with("Failed to parse command: "));
    assert_eq!(responses[1]["success"], true);
    assert_eq!(responses[2]["data"]["sessionName"], "a\u{FFFD}b");
}

/// Processes (not zombies) in process group `pgid`.
fn live_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2].parse() == Ok(pgid) {
            out.push(pid);
        }
    }
    out
}

fn wait_for_file(path: &Path) -> String {
    for _ in 0..6000 {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.trim().is_empty()
        {
            return text;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the bash tool never started: {} missing", path.display());
}

/// `pi -p` runs a bash tool call whose shell has a child; `signal` stops pi. Returns pi's exit
/// status and the tool's process group.
fn stop_a_running_tool(signal: nix::sys::signal::Signal) -> (Option<i32>, i32, Env) {
    let env = Env::new("http://127.0.0.1:9/v1");
    let mark = env.proj().join("started");
    // Both children are forked before the mark is written.
    let command = format!("sleep 300 & sleep 301 & echo $$ > {0}.tmp && mv {0}.tmp {0}; wait", mark.display());
    let server = ScriptedServer::start(vec![bash_call_reply(&command), text_reply(&["done"])]);
    std::fs::write(
        env.agent().join("models.json"),
        serde_json::json!({"providers":{"local":{"baseUrl":server.base_url,"api":"openai-completions",
            "apiKey":"none","models":[{"id":"smollm2-135m","contextWindow":8192,"maxTokens":256}]}}})
        .to_string(),
    )
    .unwrap();
    let mut child = env
        .pi()
        .args(["-p", "--model", "local/smollm2-135m", "--tools", "bash", "run it"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pgid: i32 = wait_for_file(&mark).trim().parse().unwrap();
    // `mv` may still be exiting when the mark appears: wait (bounded) until only bash and its two
    // sleeps are left in the group.
    let mut members = live_members(pgid);
    for _ in 0..500 {
        if members.len() == 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        members = live_members(pgid);
    }
    assert_eq!(members.len(), 3, "bash and its two sleeps: {members:?}");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    let status = child.wait().unwrap();
    (status.code(), pgid, env)
}

fn assert_sessions_intact(env: &Env) {
    let files = env.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.ends_with('\n'));
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    assert!(text.contains("\"toolCall\""), "the tool call was saved: {text}");
}

#[test]
fn sigterm_kills_the_tool_process_group_and_exits_143() {
    let (code, pgid, env) = stop_a_running_tool(nix::sys::signal::Signal::SIGTERM);
    assert_eq!(code, Some(143));
    assert_eq!(live_members(pgid), Vec::<i32>::new());
    assert_sessions_intact(&env);
}

#[test]
fn sighup_kills_the_tool_process_group_and_exits_129() {
    let (code, pgid, env) = stop_a_running_tool(nix::sys::signal::Signal::SIGHUP);
    assert_eq!(code, Some(129));
    assert_eq!(live_members(pgid), Vec::<i32>::new());
    assert_sessions_intact(&env);
}

#[test]
fn sigint_in_print_mode_leaves_no_orphan() {
    let (code, pgid, env) = stop_a_running_tool(nix::sys::signal::Signal::SIGINT);
    assert_eq!(code, Some(130));
    assert_eq!(live_members(pgid), Vec::<i32>::new());
    assert_sessions_intact(&env);
}

/// Settings of a test agent dir.
fn write_settings(env: &Env, settings: serde_json::Value) {
    std::fs::write(env.agent().join("settings.json"), settings.to_string()).unwrap();
}

#[test]
fn a_server_that_never_answers_times_out_with_the_usual_error() {
    let server = ScriptedServer::start_replies(vec![Reply::Stall]);
    let env = Env::new(&server.base_url);
    write_settings(&env, serde_json::json!({"httpIdleTimeoutMs": 200, "retry": {"enabled": false}}));
    let out = env.run(&["-p", "--model", "local/smollm2-135m", "--no-tools", "--no-session", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "Request timed out.: This operation was aborted (20)\n");
}

#[test]
fn a_stream_that_stalls_times_out_and_auto_retry_tries_again() {
    let server = StallingServer::start();
    let env = Env::new(&server.base_url);
    write_settings(
        &env,
        serde_json::json!({"httpIdleTimeoutMs": 200, "retry": {"enabled": true, "maxRetries": 1, "baseDelayMs": 1}}),
    );
    let out = env.run(&["--mode", "json", "--model", "local/smollm2-135m", "--no-tools", "--no-session", "hi"]);
    let records = cli_support::json_lines(&String::from_utf8_lossy(&out.stdout));
    let retries: Vec<_> = records.iter().filter(|r| r["type"] == "auto_retry_start").collect();
    assert_eq!(retries.len(), 1, "one retry after the idle timeout: {records:?}");
    assert_eq!(retries[0]["errorMessage"], "Request timed out.");
    let last_end = records.iter().rev().find(|r| r["type"] == "message_end").unwrap();
    assert_eq!(last_end["message"]["stopReason"], "error");
    assert_eq!(last_end["message"]["errorMessage"], "Request timed out.");
}

/// A raw 429 answer with a `retry-after` header.
fn too_many_requests(retry_after_s: u32) -> Reply {
    let body = r#"{"error":{"message":"slow down"}}"#;
    Reply::Raw(format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: {retry_after_s}\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    ))
}

#[test]
fn provider_retries_honour_retry_after_within_the_settings_cap() {
    let server = ScriptedServer::start_replies(vec![too_many_requests(0), Reply::Sse(text_reply(&["late"]))]);
    let env = Env::new(&server.base_url);
    let settings =
        serde_json::json!({"retry": {"enabled": false, "provider": {"maxRetries": 2, "maxRetryDelayMs": 1000}}});
    write_settings(&env, settings);
    let out = env.run(&["-p", "--model", "local/smollm2-135m", "--no-tools", "--no-session", "hi"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "late\n", "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(server.requests.lock().unwrap().len(), 2);

    // A server asking for longer than `retry.provider.maxRetryDelayMs` fails at once.
    let server = ScriptedServer::start_replies(vec![too_many_requests(120), Reply::Sse(text_reply(&["late"]))]);
    let env = Env::new(&server.base_url);
    write_settings(
        &env,
        serde_json::json!({"retry": {"enabled": false, "provider": {"maxRetries": 2, "maxRetryDelayMs": 1000}}}),
    );
    let out = env.run(&["-p", "--model", "local/smollm2-135m", "--no-tools", "--no-session", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "Server requested 120s retry delay (max: 1s). 429 slow down\n");
    assert_eq!(server.requests.lock().unwrap().len(), 1);
}

#[test]
fn the_credentials_hint_is_the_references() {
    // pi 1.6.0 with no credentials: a warning that no model is available, then the failed prompt,
    // each with its /login guidance (pi lists its install's docs; this port links them).
    let env = Env::new("http://127.0.0.1:9/v1");
    std::fs::remove_file(env.agent().join("models.json")).unwrap();
    let out = env.run(&["-p", "hi"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    let docs = pi_coding_agent::cli::DOCS_DIR;
    let help = format!(
        "Use /login to log into a provider via OAuth or API key. See:\n  {docs}/providers.md\n  {docs}/models.md"
    );
    let expected =
        format!("Warning: No models available. {help}\nNo API key found for the selected model.\n\n{help}\n");
    assert_eq!(stderr, expected);
    let out = env.run(&["--list-models"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("No models available. {help}\n"));
}

#[test]
fn a_connection_that_is_never_accepted_times_out() {
    // A listener whose accept queue is full (backlog 0, filled by its own clients): a new
    // connection's SYN is dropped, so connecting never finishes. Python makes the listener.
    let env = Env::new("http://127.0.0.1:9/v1");
    let script = env.dir.path().join("full.py");
    std::fs::write(
        &script,
        "import socket, time\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(0)\nfill = []\n\
         for _ in range(4):\n    c = socket.socket(); c.setblocking(False)\n    try: c.connect(s.getsockname())\n    \
         except BlockingIOError: pass\n    fill.append(c)\ntime.sleep(0.2)\nprint(s.getsockname()[1], flush=True)\ntime.sleep(600)\n",
    )
    .unwrap();
    let mut listener = std::process::Command::new("python3").arg(&script).stdout(Stdio::piped()).spawn().unwrap();
    let mut port = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(listener.stdout.take().unwrap()), &mut port).unwrap();
    let models = serde_json::json!({"providers":{"local":{"baseUrl":format!("http://127.0.0.1:{}/v1", port.trim()),
        "api":"openai-completions","apiKey":"none","models":[{"id":"smollm2-135m","contextWindow":8192,"maxTokens":256}]}}});
    std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
    // The idle timeout is far away: only the connect timeout can end the request.
    write_settings(
        &env,
        serde_json::json!({"httpConnectTimeoutMs": 300, "httpIdleTimeoutMs": 600000, "retry": {"enabled": false}}),
    );
    let out = env.run(&["-p", "--model", "local/smollm2-135m", "--no-tools", "--no-session", "hi"]);
    let _ = listener.kill();
    let _ = listener.wait();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "Request timed out.: This operation was aborted (20)\n");
}

#[test]
fn one_version_for_the_user_agent_and_the_version_flag() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let out = env.run(&["--version"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1.6.0\n");
    assert!(pi_ai::http::user_agent().starts_with("pi/1.6.0 ("), "{}", pi_ai::http::user_agent());
    assert_eq!(pi_ai::http::PI_VERSION, pi_coding_agent::cli::VERSION);
}
