//! A JavaScript extension outside the interactive mode, against pi 1.6.0 (which takes over stdout
//! there, `core/output-guard.js`): what it prints (`console.log`, `console.error`, raw writes to
//! either stream) reaches pi's stderr, and stdout keeps only pi's own output
//! (`fixtures/js_extensions/print-output.ts`).

mod cli_support;
mod js_support;

use cli_support::Env;

/// `pi -e print-output.ts ARGS` with Node; `None` (skipped) without Node.
fn run(env: &Env, args: &[&str]) -> Option<std::process::Output> {
    let node = js_support::node_path()?;
    let extension = format!("{}/tests/fixtures/js_extensions/print-output.ts", env!("CARGO_MANIFEST_DIR"));
    Some(env.pi().env("PI_NODE", node).arg("-e").arg(&extension).args(args).output().expect("run pi"))
}

#[test]
fn what_an_extension_prints_goes_to_stderr_and_stdout_stays_clean() {
    let env = Env::new("http://127.0.0.1:9/v1");
    let Some(out) = run(&env, &["--model", "local/smollm2-135m", "-p", "/hello"]) else { return };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pi failed: {stderr}");
    // pi 1.6.0 printed exactly these four lines, in this order, on stderr and nothing on stdout.
    assert_eq!(stderr, "log line\nerror line\nraw stdout\nraw stderr\n");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

/// pi's guidance after a missing key (its docs folder; pi-rs links the docs).
fn login_help() -> String {
    let docs = pi_coding_agent::cli::DOCS_DIR;
    format!("Use /login to log into a provider via OAuth or API key. See:\n  {docs}/providers.md\n  {docs}/models.md")
}

/// An agent dir without any credentials (no models.json, no keys in the environment).
fn no_credentials() -> Env {
    let env = Env::new("http://127.0.0.1:9/v1");
    std::fs::remove_file(env.agent().join("models.json")).expect("models.json");
    env
}

#[test]
fn without_credentials_a_command_runs_and_the_next_prompt_fails_before_it_is_sent() {
    // pi 1.6.0 (`-p /hello hi`, no credentials): the warning at startup, the command's output,
    // then the prompt's error; exit 1.
    let env = no_credentials();
    let Some(out) = run(&env, &["-p", "/hello", "hi"]) else { return };
    let help = login_help();
    let expected = format!(
        "Warning: No models available. {help}\nlog line\nerror line\nraw stdout\nraw stderr\n\
         No API key found for the selected model.\n\n{help}\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), expected);
    assert_eq!(out.status.code(), Some(1));
    // The command alone succeeds.
    let Some(out) = run(&env, &["-p", "/hello"]) else { return };
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_model_without_a_key_runs_commands_and_fails_a_prompt_with_the_providers_name() {
    let env = no_credentials();
    let Some(out) = run(&env, &["--model", "openai/gpt-4o", "-p", "/hello"]) else { return };
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "log line\nerror line\nraw stdout\nraw stderr\n");
    let Some(out) = run(&env, &["--model", "openai/gpt-4o", "-p", "hi"]) else { return };
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), format!("No API key found for openai.\n\n{}\n", login_help()));
    // Nothing was sent, so the session holds no user message (pi throws before the run).
    let messages: Vec<String> = env
        .session_files()
        .iter()
        .flat_map(|f| std::fs::read_to_string(f).unwrap_or_default().lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|l| l.contains("\"type\":\"message\""))
        .collect();
    assert!(messages.is_empty(), "{messages:?}");
}

#[test]
fn json_mode_writes_no_agent_settled_for_a_command() {
    // pi 1.6.0 `--mode json /hello`: the session header alone (no run, so no `agent_settled`).
    let env = Env::new("http://127.0.0.1:9/v1");
    let Some(out) = run(&env, &["--model", "local/smollm2-135m", "--mode", "json", "/hello"]) else { return };
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = cli_support::json_lines(&String::from_utf8_lossy(&out.stdout));
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(kinds, ["session"]);
}

#[test]
fn a_provider_registered_in_a_handler_is_in_the_registry_at_once() {
    // pi 1.6.0 printed {"before":0,"after":1,"find":"pm"}: `pi.registerProvider` in a bound
    // session changes `ctx.modelRegistry` before the handler's next line.
    let env = Env::new("http://127.0.0.1:9/v1");
    let Some(out) = run(&env, &["--model", "local/smollm2-135m", "-p", "/probe"]) else { return };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "{\"before\":0,\"after\":1,\"find\":\"pm\"}\n");
}

fn fixture_text(name: &str) -> String {
    let path = format!("{}/tests/fixtures/js_extensions/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn a_message_update_handler_sees_the_whole_message_at_every_delta() {
    // `fixtures/js_extensions/update-stream.json`: thinking, text (with multi-byte characters) and
    // a tool call streamed in deltas, then a second answer after the tool's result.
    let replies: Vec<String> = serde_json::from_str(&fixture_text("update-stream.json")).expect("replies");
    let server = cli_support::ScriptedServer::start(replies);
    let env = Env::new(&server.base_url);
    if !js_support::node_available() {
        return;
    }
    let Some(node) = js_support::node_path() else { return };
    let log = env.dir.path().join("updates.jsonl");
    let extension = format!("{}/tests/fixtures/js_extensions/update-log.ts", env!("CARGO_MANIFEST_DIR"));
    let out = env
        .pi()
        .env("PI_NODE", node)
        .env("PI_UPDATE_LOG", &log)
        .args(["-e", &extension, "--no-tools", "--model", "local/smollm2-135m", "-p", "hi"])
        .output()
        .expect("run pi");
    assert!(out.status.success(), "pi failed: {}", String::from_utf8_lossy(&out.stderr));
    let events = cli_support::json_lines(&std::fs::read_to_string(&log).expect("the first handler's log"));
    // The second handler saw the same events (each handler's host copy is its own).
    let second = cli_support::json_lines(&std::fs::read_to_string(log.with_extension("jsonl.2")).expect("log 2"));
    assert_eq!(events, second);

    // The provider events, in order, as pi 1.6.0's handler saw them (recorded, `partial` aside).
    let reference: Vec<serde_json::Value> =
        serde_json::from_str(&fixture_text("update-events.ref.json")).expect("reference events");
    let provider_events: Vec<&serde_json::Value> = events.iter().map(|e| &e["assistantMessageEvent"]).collect();
    assert_eq!(provider_events, reference.iter().collect::<Vec<_>>());

    for event in &events {
        assert_eq!(event["partialIsMessage"], true, "{event}");
    }
    cli_support::assert_updates_grow_by_their_deltas(&events);

    // The last event of each answer holds the content the session saved.
    let saved: Vec<serde_json::Value> = env
        .session_files()
        .iter()
        .flat_map(|f| cli_support::json_lines(&std::fs::read_to_string(f).expect("session")))
        .filter(|e| e["message"]["role"] == "assistant")
        .map(|e| e["message"]["content"].clone())
        .collect();
    let last_of_each: Vec<serde_json::Value> =
        [17, 21].iter().map(|&i| events[i]["message"]["content"].clone()).collect();
    assert_eq!(last_of_each, saved);
    assert_eq!(events[17]["message"]["content"][2]["arguments"], serde_json::json!({"path": "a.txt"}));
}

#[test]
fn message_update_handlers_run_in_order_before_the_message_end_and_their_failures_are_reported() {
    // pi 1.6.0 with `fixtures/js_extensions/update-order.ts` (each handler waits 2 ms before it
    // writes its delta; "c" fails): the log `abcde|end`, the answer on stdout, one error on stderr.
    let server = cli_support::ScriptedServer::start(vec![cli_support::text_reply(&["a", "b", "c", "d", "e"])]);
    let env = Env::new(&server.base_url);
    if !js_support::node_available() {
        return;
    }
    let Some(node) = js_support::node_path() else { return };
    let log = env.dir.path().join("order.log");
    let extension = format!("{}/tests/fixtures/js_extensions/update-order.ts", env!("CARGO_MANIFEST_DIR"));
    let out = env
        .pi()
        .env("PI_NODE", node)
        .env("PI_ORDER_LOG", &log)
        .args(["-e", &extension, "--no-tools", "--no-session", "--model", "local/smollm2-135m", "-p", "hi"])
        .output()
        .expect("run pi");
    assert!(out.status.success(), "pi failed: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&log).expect("the log"), "abcde|end");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "abcde\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), format!("Extension error ({extension}): update failed at c\n"));
}
