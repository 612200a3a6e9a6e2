//! The `pi` binary's session flags as a process against scripted 127.0.0.1 servers: `--fork`,
//! `--session-id`, `--resume`, `--name`, `--export`, `--models`, `-e`, compared with messages the
//! reference pi 1.6.0 printed (tests/fixtures/cli_sessions, from scripts/fixtures/pi_cli_sessions.sh);
//! a session written by the reference continued by ours; Ctrl-C during a print-mode run.

mod cli_support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use cli_support::{Env, ScriptedServer, StallingServer, json_lines, redact, text_reply};
use serde_json::Value;

const MODEL: &str = "local/smollm2-135m";

fn fixture(name: &str) -> String {
    let p = format!("{}/tests/fixtures/cli_sessions/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The reference's session with its cwd set to `cwd`.
fn reference_session(cwd: &Path) -> String {
    fixture("ref_session.jsonl").replace("<CWD>", &cwd.display().to_string())
}

/// Writes the reference session into `dir` under its own file name and returns the path.
fn install_reference_session(env: &Env, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let text = reference_session(&env.proj());
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let path = dir.join(format!("2026-11-30T13-51-14-441Z_{}.jsonl", header["id"].as_str().unwrap()));
    std::fs::write(&path, text).unwrap();
    path
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn entries(path: &Path) -> Vec<Value> {
    json_lines(&std::fs::read_to_string(path).unwrap())
}

/// `redact`, and without `durationMs`: whether pi records it depends on timing (a reply within
/// the millisecond of the request gets none).
fn redacted(mut values: Vec<Value>, env: &Env) -> Vec<Value> {
    fn drop_duration(v: &mut Value) {
        match v {
            Value::Object(o) => {
                o.remove("durationMs");
                o.values_mut().for_each(drop_duration);
            }
            Value::Array(a) => a.iter_mut().for_each(drop_duration),
            _ => {}
        }
    }
    values.iter_mut().for_each(|v| {
        redact(v, env);
        drop_duration(v);
    });
    values
}

#[test]
fn session_flag_messages_match_the_reference() {
    let server = ScriptedServer::start((0..8).map(|_| text_reply(&["Paris is the capital."])).collect());
    let env = Env::new(&server.base_url);
    let work = env.dir.path().display().to_string();
    let reference = install_reference_session(&env, &env.dir.path().join("sessions"));
    let id = reference.file_stem().unwrap().to_string_lossy().split('_').nth(1).unwrap().to_owned();
    let first = env.run(&["--model", MODEL, "-p", "first"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let models_json = env.agent().join("models.json").display().to_string();
    let reference_path = reference.display().to_string();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("fork_with_continue", vec!["-p", "--fork", &id, "-c", "hi"]),
        ("fork_with_no_session", vec!["-p", "--fork", &id, "--no-session", "hi"]),
        ("fork_not_found", vec!["-p", "--fork", "nope", "hi"]),
        ("session_id_invalid", vec!["-p", "--session-id", "bad-", "hi"]),
        ("session_id_with_session", vec!["-p", "--session-id", "x", "--session", "y", "hi"]),
        ("session_id_new", vec!["-p", "--session-id", "my-id", "hi"]),
        ("session_id_existing", vec!["-p", "--session-id", "my-id", "again"]),
        ("fork_onto_existing_id", vec!["-p", "--fork", &reference_path, "--session-id", "my-id", "hi"]),
        ("session_not_found", vec!["-p", "--session", "nope", "hi"]),
        ("name_empty", vec!["-p", "--name", "  ", "hi"]),
        ("extension_missing", vec!["-p", "-e", "./missing-extension.py", "hi"]),
        ("extension_missing_ne", vec!["-p", "-ne", "-e", "./missing-extension.py", "hi"]),
        ("export_missing", vec!["--export", "missing.jsonl"]),
        ("export_not_a_session", vec!["--export", &models_json, "out.html"]),
        ("export_no_dir", vec!["--export", &reference_path, "nodir/out.html"]),
        ("models_no_match", vec!["-p", "--models", "zzz*,local/smol*", "hi"]),
    ];
    for (name, args) in cases {
        let mut full = vec!["--model", MODEL];
        if name == "models_no_match" {
            full.clear(); // the scope chooses the model
        }
        full.extend(args);
        let out = env.run(&full);
        let expected_rc: i32 = fixture(&format!("{name}.rc")).trim().parse().unwrap();
        assert_eq!(out.status.code(), Some(expected_rc), "{name}: {}", stderr(&out));
        let ours = stderr(&out).replace(&work, "<WORK>");
        assert_eq!(ours.trim_end(), fixture(&format!("{name}.stderr")).trim_end(), "{name}");
    }
    let files: Vec<String> =
        env.session_files().iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(files.iter().filter(|f| f.ends_with("_my-id.jsonl")).count(), 1, "{files:?}");
}

#[test]
fn resume_without_a_terminal_runs_nothing() {
    let server = ScriptedServer::start(vec![text_reply(&["unused"])]);
    let env = Env::new(&server.base_url);
    let out = env.run(&["--model", MODEL, "-p", "-r", "hi"]);
    assert_eq!(out.status.code(), Some(fixture("resume_non_interactive.rc").trim().parse().unwrap()));
    assert!(out.stdout.is_empty());
    assert!(server.requests.lock().unwrap().is_empty());
    assert!(env.session_files().is_empty());
}

#[test]
fn continues_a_session_written_by_the_reference() {
    let server = ScriptedServer::start(vec![text_reply(&["Rome", " is."]), text_reply(&["Berlin."])]);
    let env = Env::new(&server.base_url);
    let dir = env.dir.path().join("sessions");
    let file = install_reference_session(&env, &dir);
    let original = std::fs::read_to_string(&file).unwrap();
    let dir_arg = dir.display().to_string();
    let out = env.run(&["--session-dir", &dir_arg, "-c", "--mode", "json", "--no-context-files", "And of Italy?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.starts_with(&original), "the reference's lines stay as they were");
    let all = json_lines(&written);
    let old_count = json_lines(&original).len();
    let appended: Vec<Value> = all[old_count..].to_vec();
    assert_eq!(appended[0]["parentId"], all[old_count - 1]["id"], "the new entries continue the leaf");
    let events = redacted(json_lines(&String::from_utf8_lossy(&out.stdout)), &env);
    insta::assert_json_snapshot!("continue_reference_stdout", events);
    insta::assert_json_snapshot!("continue_reference_appended_entries", redacted(appended, &env));
    let request = server.requests.lock().unwrap()[0].clone();
    let roles: Vec<String> =
        request["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(request["messages"][2]["content"], "Paris is the capital.");

    // The same file by path with --session.
    let path = file.display().to_string();
    let out = env.run(&["--session", &path, "-p", "And of Germany?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Berlin.\n");
    let request = server.requests.lock().unwrap()[1].clone();
    assert_eq!(request["messages"].as_array().unwrap().len(), 6);
}

/// The keys of each entry (and of its message), to compare file formats without the values.
fn shape(entries: &[Value]) -> Vec<(String, Vec<String>, Vec<String>)> {
    let keys = |v: &Value| -> Vec<String> {
        // `durationMs` is timing-dependent (see `redacted`).
        let mut k: Vec<String> =
            v.as_object().map(|o| o.keys().filter(|k| *k != "durationMs").cloned().collect()).unwrap_or_default();
        k.sort();
        k
    };
    entries
        .iter()
        .map(|e| {
            let kind = match e["message"]["role"].as_str() {
                Some(role) => format!("message/{role}"),
                None => e["type"].as_str().unwrap_or("").to_owned(),
            };
            (kind, keys(e), keys(&e["message"]))
        })
        .collect()
}

#[test]
fn our_session_file_has_the_reference_format() {
    let server = ScriptedServer::start(vec![text_reply(&["Paris is the capital."])]);
    let env = Env::new(&server.base_url);
    let dir = env.dir.path().join("sessions").display().to_string();
    let out = env.run(&["--model", MODEL, "--session-dir", &dir, "--no-tools", "-p", "What is the capital of France?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ours = entries(&env.dir.path().join("sessions").read_dir().unwrap().next().unwrap().unwrap().path());
    let reference = json_lines(&reference_session(&env.proj()));
    assert_eq!(shape(&ours), shape(&reference));
    assert_eq!(ours[4]["message"]["content"], reference[4]["message"]["content"]);
}

#[test]
fn fork_session_id_name_and_models_write_what_pi_writes() {
    let server = ScriptedServer::start(vec![text_reply(&["Forked."]), text_reply(&["Named."])]);
    let env = Env::new(&server.base_url);
    let reference = install_reference_session(&env, &env.dir.path().join("elsewhere"));
    let path = reference.display().to_string();
    let out = env.run(&["--fork", &path, "--session-id", "fork-1", "--mode", "json", "--no-context-files", "Go on"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let files = env.session_files();
    assert_eq!(files.len(), 1);
    assert!(files[0].to_string_lossy().ends_with("_fork-1.jsonl"));
    let forked = entries(&files[0]);
    assert_eq!(forked[0]["id"], "fork-1");
    assert_eq!(forked[0]["parentSession"], path.as_str());
    insta::assert_json_snapshot!("fork_session_file", redacted(forked, &env));
    insta::assert_json_snapshot!("fork_stdout", redacted(json_lines(&String::from_utf8_lossy(&out.stdout)), &env));

    // --name and --models (a glob choosing the model) on a new session with a chosen id.
    let out = env.run(&["--models", "local/smol*:low", "--session-id", "named", "--name", " Demo run ", "-p", "Hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().next(), Some(fixture("session_id_new.stderr").replace("my-id", "named").trim()));
    let file = env.session_files().into_iter().find(|p| p.to_string_lossy().ends_with("_named.jsonl")).unwrap();
    let named = redacted(entries(&file), &env);
    insta::assert_json_snapshot!("name_and_models_session_file", named);
    let requests = redacted(server.requests.lock().unwrap().clone(), &env);
    insta::assert_json_snapshot!("fork_and_models_request_bodies", requests);
}

fn tool_call_reply(name: &str, arguments: &str) -> String {
    let chunk = |delta: Value, finish: Option<&str>| {
        let c = serde_json::json!({"id":"chatcmpl-2","object":"chat.completion.chunk","created":1,"model":"scripted",
            "choices":[{"index":0,"delta":delta,"finish_reason":finish}]});
        format!("data: {c}\n\n")
    };
    let call = serde_json::json!({"tool_calls":[{"index":0,"id":"call_1","type":"function",
        "function":{"name":name,"arguments":arguments}}]});
    format!("{}{}{}data: [DONE]\n\n", chunk(serde_json::json!({"role":"assistant"}), None), chunk(call, None), {
        chunk(serde_json::json!({}), Some("tool_calls"))
    })
}

/// The bash tool follows the `shellCommandPrefix` and `shellPath` settings, as pi's
/// `_buildRuntime` passes them to it (the call the model made is kept as it was written).
#[test]
fn the_bash_tool_follows_the_shell_settings() {
    let server = ScriptedServer::start(vec![
        tool_call_reply("bash", r#"{"command":"echo $GREETING"}"#),
        text_reply(&["done"]),
        tool_call_reply("bash", r#"{"command":"echo hi"}"#),
        text_reply(&["done"]),
    ]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"shellCommandPrefix": "GREETING=prefixed"}"#).unwrap();
    let out = env.run(&["--model", MODEL, "-p", "Greet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let tool_message = |body: &Value| -> Value {
        body["messages"].as_array().and_then(|m| m.iter().find(|m| m["role"] == "tool").cloned()).unwrap_or_default()
    };
    let second = server.requests.lock().unwrap()[1].clone();
    assert_eq!(tool_message(&second)["content"], "prefixed\n", "{second}");
    let call =
        &second["messages"].as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap()["tool_calls"][0];
    assert_eq!(call["function"]["arguments"], r#"{"command":"echo $GREETING"}"#);

    std::fs::write(env.agent().join("settings.json"), r#"{"shellPath": "/nonexistent/shell"}"#).unwrap();
    let out = env.run(&["--model", MODEL, "--no-session", "-p", "Greet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fourth = server.requests.lock().unwrap()[3].clone();
    let result = tool_message(&fourth);
    assert!(
        result["content"].as_str().unwrap_or_default().contains("Custom shell path not found: /nonexistent/shell"),
        "{result}"
    );
}

#[test]
fn export_writes_an_escaped_html_page_of_the_session() {
    let server = ScriptedServer::start(vec![
        tool_call_reply("bash", r#"{"command":"echo '<tag> & done'"}"#),
        text_reply(&["<b>bold</b> answer"]),
    ]);
    let env = Env::new(&server.base_url);
    let out = env.run(&["--model", MODEL, "-p", "Run <script>alert(\"x\")</script> & report"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = env.session_files().remove(0);
    let session_arg = session.display().to_string();
    let out = env.run(&["--export", &session_arg, "page.html"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Exported to: page.html\n");
    let html = std::fs::read_to_string(env.proj().join("page.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("Run &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; report"));
    assert!(!html.contains("<script>"), "session text must not become markup");
    assert!(html.contains("&lt;b&gt;bold&lt;/b&gt; answer"));
    assert!(html.contains("<strong>bash</strong>"), "the tool call is named");
    assert!(html.contains("&lt;tag&gt; &amp; done"), "the tool call's arguments and result are shown");
    assert!(html.contains("tool result · bash"));
    assert!(html.contains("assistant · smollm2-135m"));

    // Default name: pi-session-<file name>.html in the cwd.
    let out = env.run(&["--export", &session_arg]);
    let expected = format!("pi-session-{}.html", session.file_stem().unwrap().to_string_lossy());
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("Exported to: {expected}\n"));
    assert!(env.proj().join(expected).is_file());
}

const EXTENSION: &str = r#"#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    result = None
    if msg["method"] == "initialize":
        result = {"protocolVersion": 1, "events": [], "commands": [],
                  "tools": [{"name": "shout", "label": "Shout", "description": "Upper-case a text",
                             "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}],
                  "flags": [{"name": "loud", "type": "boolean", "default": False, "description": "Be loud"}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"#;

#[test]
fn extension_paths_load_even_with_no_extensions_and_claim_their_flags() {
    let server = ScriptedServer::start(vec![text_reply(&["Done."])]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.proj().join("shout.py"), EXTENSION).unwrap();
    let out = env.run(&["--model", MODEL, "-ne", "-e", "./shout.py", "--loud", "--no-session", "-p", "Hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Done.\n");
    let request = server.requests.lock().unwrap()[0].clone();
    let tools: Vec<&str> =
        request["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"shout"), "{tools:?}");

    let out = env.run(&["--model", MODEL, "-e", "./shout.py", "--quiet", "--no-session", "-p", "Hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).trim_end(), "Error: Unknown option: --quiet");
}

#[test]
fn ctrl_c_in_print_mode_exits_130_and_keeps_the_user_message() {
    let server = StallingServer::start();
    let env = Env::new(&server.base_url);
    let child = env
        .pi()
        .args(["--model", MODEL, "--no-tools", "-p", "hello there"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !server.hit.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the request never arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300)); // let the partial chunk arrive
    let status = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let files = env.session_files();
    assert_eq!(files.len(), 1);
    let kinds: Vec<String> = entries(&files[0])
        .iter()
        .map(|e| e["message"]["role"].as_str().or(e["type"].as_str()).unwrap_or("").to_owned())
        .collect();
    // As the reference: header, model, thinking level, system prompt and the user message; the
    // interrupted reply is not written.
    assert_eq!(kinds, ["session", "model_change", "thinking_level_change", "system", "user"]);
}

#[test]
fn broken_settings_and_models_files_are_named_with_their_line() {
    let env = Env::new("http://127.0.0.1:9/v1");
    std::fs::write(env.agent().join("settings.json"), "{\n  \"defaultModel\": \"x\",\n  oops\n}\n").unwrap();
    std::fs::write(env.agent().join("models.json"), "{\n \"providers\": {\n   \"local\": {,\n }\n}\n").unwrap();
    let out = env.run(&["-p", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let settings = env.agent().join("settings.json").display().to_string();
    let models = env.agent().join("models.json").display().to_string();
    assert!(err.contains(&format!("Warning: Invalid settings file {settings}: ")), "{err}");
    assert!(err.contains("line 3 column 3"), "{err}");
    // pi's wording: `Failed to parse models.json: <parser message>` then the file (the message is
    // serde_json's, which names the line too).
    assert!(err.contains("Failed to parse models.json: ") && err.contains("line 3"), "{err}");
    assert!(err.contains(&format!("\n\nFile: {models}")), "{err}");
}

#[test]
fn the_reference_continues_our_session_and_we_read_its_additions() {
    // Our session file after the reference ran `pi -p --session <file> "And of Italy?"` on it.
    let fixture = fixture("ours_continued_by_ref.jsonl");
    let lines = json_lines(&fixture);
    let ours_last = lines.iter().position(|e| e["message"]["content"][0]["text"] == "And of Italy?").unwrap() - 2;
    assert_eq!(lines[ours_last]["message"]["role"], "assistant", "our reply ends our part");
    assert_eq!(lines[ours_last + 1]["parentId"], lines[ours_last]["id"], "the reference continued our leaf");

    let server = ScriptedServer::start(vec![text_reply(&["Madrid."])]);
    let env = Env::new(&server.base_url);
    let text = fixture.replace("<CWD>", &env.proj().display().to_string()).replace("<PKG>", env!("CARGO_MANIFEST_DIR"));
    let file = env.dir.path().join("ours_then_reference.jsonl");
    std::fs::write(&file, &text).unwrap();
    let path = file.display().to_string();
    let out = env.run(&["--session", &path, "-p", "And of Spain?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Madrid.\n");
    let request = server.requests.lock().unwrap()[0].clone();
    let contents: Vec<String> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["content"].as_str().map(str::to_owned).unwrap_or_else(|| m["content"].to_string()))
        .collect();
    assert_eq!(contents.len(), 5, "{contents:?}");
    assert!(contents[2].contains("And of Italy?") && contents[4].contains("And of Spain?"), "{contents:?}");
    let after = json_lines(&std::fs::read_to_string(&file).unwrap());
    assert_eq!(after[lines.len()]["parentId"], lines[lines.len() - 1]["id"]);
}

#[test]
fn session_of_another_project_asks_before_forking() {
    let server = ScriptedServer::start(vec![text_reply(&["There."]), text_reply(&["Forked here."])]);
    let env = Env::new(&server.base_url);
    let other = env.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let out = env.pi().current_dir(&other).args(["--model", MODEL, "-p", "hello"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let source = env.session_files().remove(0);
    let id = source.file_stem().unwrap().to_string_lossy().split('_').nth(1).unwrap()[..8].to_owned();

    // No answer (stdin closed): pi asks and ends with status 0, running nothing.
    let out = env.run(&["--model", MODEL, "--session", &id, "-p", "again"]);
    assert_eq!(out.status.code(), Some(0));
    let question = format!(
        "Session found in different project: {}\nFork this session into current directory? [y/N] ",
        other.display()
    );
    assert_eq!(stderr(&out), question);
    assert_eq!(server.requests.lock().unwrap().len(), 1);

    // "y": the session is forked into the current project and the prompt runs there.
    let mut child = env
        .pi()
        .args(["--model", MODEL, "--session", &id, "-p", "again"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"y\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Forked here.\n");
    let forked: Vec<PathBuf> = env.session_files().into_iter().filter(|p| *p != source).collect();
    assert_eq!(forked.len(), 1);
    let header = &entries(&forked[0])[0];
    assert_eq!(header["cwd"], env.proj().display().to_string());
    assert_eq!(header["parentSession"], source.display().to_string());
}

#[test]
fn skill_and_prompt_template_paths_load_and_no_skills_stops_discovery() {
    let server = ScriptedServer::start(vec![text_reply(&["ok"]), text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    let skill = |dir: &std::path::Path, name: &str| {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        let text = format!("---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name} things.\n");
        std::fs::write(dir.join(name).join("SKILL.md"), text).unwrap();
    };
    skill(&env.agent().join("skills"), "discovered");
    skill(&env.proj().join("extra"), "given");
    std::fs::create_dir_all(env.proj().join("prompts")).unwrap();
    std::fs::write(env.proj().join("prompts/greet.md"), "Say hello to $1.\n").unwrap();
    let system = |body: &serde_json::Value| body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();

    let args = ["--no-session", "--skill", "./extra/given", "--prompt-template", "./prompts/greet.md", "-p"];
    let out = env.run(&[&args[..], &["/greet Ada"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = server.requests.lock().unwrap()[0].clone();
    assert!(system(&first).contains("<name>given</name>"), "{}", system(&first));
    assert!(system(&first).contains("<name>discovered</name>"));
    let messages = first["messages"].as_array().unwrap();
    let expanded = serde_json::json!([{"type": "text", "text": "Say hello to Ada.\n"}]);
    assert_eq!(messages.last().unwrap()["content"], expanded, "the template expanded");

    let out = env.run(&["--no-session", "-ns", "--skill", "./extra/given", "-p", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let second = server.requests.lock().unwrap()[1].clone();
    assert!(system(&second).contains("<name>given</name>"), "an explicit --skill still loads with -ns");
    assert!(!system(&second).contains("<name>discovered</name>"), "-ns stops discovery");
}
