//! codemode's `models.*` against the reference pi 1.6.0: each script of
//! `scripts/fixtures/codemode_models_scripts.json` runs through our `pi -p` against
//! `scripts/fixtures/codemode_models_server.py` (a chat model, TypeSafe's System One, OpenAI's
//! Decisions and OpenRouter's image generation on 127.0.0.1, reached through models.json base URLs
//! and the providers' environment keys), exactly as `scripts/fixtures/codemode_models_results.sh`
//! ran the reference into `tests/fixtures/codemode/models_results.json`. The `codemode` tool message
//! the model gets and every classifier and image request (path, key, body byte for byte) must be
//! the reference's; wall times, saved image paths and the docs path are masked. Needs `python3`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read_json(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo_root().join(path)).expect(path)).expect(path)
}

/// Cuts every `start…end` span (end included) and puts `with` in its place.
fn mask_spans(text: &str, start: &str, end: &str, with: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(start) {
        let Some(len) = rest[i..].find(end) else { break };
        out.push_str(&rest[..i]);
        out.push_str(with);
        rest = &rest[i + len + end.len()..];
    }
    out.push_str(rest);
    out
}

fn mask(text: &str) -> String {
    let text = mask_spans(text, "Wall time ", " seconds", "Wall time <T> seconds");
    let text = mask_spans(&text, "/tmp/pi-codemode-", ".png", "<IMAGE>");
    // The docs path is the installation's: `See "Classify" in <path>.`
    let text = mask_spans(&text, " in /", "codemode.md", " in <DOCS>");
    mask_spans(&text, "in /", "codemode.md", "in <DOCS>")
}

struct Server {
    child: Child,
    bodies: PathBuf,
    script: PathBuf,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(dir: &Path) -> Server {
    let (script, bodies, port_file) = (dir.join("script.js"), dir.join("bodies.jsonl"), dir.join("port"));
    let child = Command::new("python3")
        .arg(repo_root().join("scripts/fixtures/codemode_models_server.py"))
        .args([&script, &bodies, &port_file])
        .stdout(Stdio::null())
        .spawn()
        .expect("python3 runs codemode_models_server.py");
    let mut server = Server { child, bodies, script, port: 0 };
    // The server writes its port once it listens; its exit is the only other way out.
    loop {
        if let Some(port) = std::fs::read_to_string(&port_file).ok().and_then(|p| p.trim().parse().ok()) {
            server.port = port;
            return server;
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("codemode_models_server.py exited: {status}");
        }
        std::thread::yield_now();
    }
}

fn run_script(server: &Server, dir: &Path, code: &str) -> Value {
    std::fs::write(&server.script, code).expect("script");
    std::fs::write(&server.bodies, "").expect("bodies");
    let (agent, proj, home) = (dir.join("agent"), dir.join("proj"), dir.join("home"));
    for d in [&agent, &proj, &home] {
        std::fs::create_dir_all(d).expect("dir");
    }
    let u = format!("http://127.0.0.1:{}", server.port);
    let models = serde_json::json!({"providers": {
        "local": {"baseUrl": format!("{u}/v1"), "api": "openai-completions", "apiKey": "none",
                  "models": [{"id": "smollm2-135m", "contextWindow": 8192, "maxTokens": 256}]},
        "typesafe": {"baseUrl": format!("{u}/typesafe")},
        "openai": {"baseUrl": format!("{u}/openai")},
        "openrouter": {"baseUrl": format!("{u}/openrouter")},
    }});
    std::fs::write(agent.join("models.json"), models.to_string()).expect("models.json");
    let status = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["-p", "go", "--model", "local/smollm2-135m", "--tools", "codemode"])
        .current_dir(&proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("TYPESAFE_API_KEY", "ts-key")
        .env("OPENAI_API_KEY", "oa-key")
        .env("OPENROUTER_API_KEY", "or-key")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("run pi");
    assert!(status.success(), "pi -p failed: {status}");
    let lines: Vec<Value> = std::fs::read_to_string(&server.bodies)
        .expect("bodies")
        .lines()
        .map(|l| serde_json::from_str(l).expect("body line"))
        .collect();
    let chat = lines.iter().find(|l| l["path"] == "/v1/chat/completions").expect("the request after the tool result");
    let tool = chat["body"]["messages"].as_array().expect("messages").iter().find(|m| m["role"] == "tool").cloned();
    let mut requests: Vec<Value> = lines
        .iter()
        .filter(|l| l["path"] != "/v1/chat/completions")
        .map(|l| serde_json::json!([l["path"], l["authorization"], l["body"]]))
        .collect();
    requests.sort_by_key(|r| r.to_string());
    serde_json::json!({"tool": tool.expect("tool message")["content"], "requests": requests})
}

#[test]
fn models_scripts_match_the_reference() {
    let scripts = read_json("scripts/fixtures/codemode_models_scripts.json");
    let expected = read_json("pi-coding-agent/tests/fixtures/codemode/models_results.json");
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start_server(dir.path());
    let mut mismatches = Vec::new();
    for (name, code) in scripts.as_object().expect("scripts") {
        let ours = run_script(&server, dir.path(), code.as_str().expect("script"));
        let reference = &expected[name];
        let (our_tool, their_tool) =
            (mask(ours["tool"].as_str().unwrap_or_default()), mask(reference["tool"].as_str().unwrap_or_default()));
        if our_tool != their_tool {
            mismatches.push(format!("{name} tool:\n  ours:      {our_tool:?}\n  reference: {their_tool:?}"));
        }
        if ours["requests"] != reference["requests"] {
            mismatches.push(format!(
                "{name} requests:\n  ours:      {}\n  reference: {}",
                ours["requests"], reference["requests"]
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
