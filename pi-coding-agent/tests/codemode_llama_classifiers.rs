//! codemode's `models.*` offers the llama.cpp provider's classifier models as pi's does: with a
//! llama.cpp server configured (auth.json's credential names it), the classifiers its refresh
//! stored in `models-store.json` are listed and available, and `models.classify()` runs them with
//! the provider's key. Through our `pi -p` against `scripts/fixtures/codemode_models_server.py`
//! (its chat model runs the script; a decision model is served by its System One endpoint, as
//! `llama-server` serves decision models through `typesafe-system-one`). Needs `python3`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(dir: &Path) -> Server {
    let port_file = dir.join("port");
    let child = Command::new("python3")
        .arg(repo_root().join("scripts/fixtures/codemode_models_server.py"))
        .args([dir.join("script.js"), dir.join("bodies.jsonl"), port_file.clone()])
        .stdout(Stdio::null())
        .spawn()
        .expect("python3 runs codemode_models_server.py");
    let mut server = Server { child, port: 0 };
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

const SCRIPT: &str = r#"
const listed = (await models.getModelsOfType("classifier", "llama.cpp")).map((m) => `${m.id} ${m.api}`);
const available = (await models.getAvailableOfType("classifier", "llama.cpp")).map((m) => m.id);
const model = await models.getModelOfType("classifier", "llama.cpp", "decider");
const result = await models.classify(model, {
  state: { message: "ok" },
  questions: { approved: { type: "bool", instructions: "Approved?", criteria: { true: "yes", false: "no" } } },
});
return { listed, available, stop: result.stopReason, answers: result.answers, error: result.errorMessage ?? null };
"#;

/// Runs the script with `credential` as auth.json's llama.cpp entry (none when `None`); the
/// tool message the model got and the recorded classifier requests.
fn run(dir: &Path, server: &Server, credential: Option<Value>) -> (Value, Vec<Value>) {
    std::fs::write(dir.join("script.js"), SCRIPT).unwrap();
    std::fs::write(dir.join("bodies.jsonl"), "").unwrap();
    let (agent, proj, home) = (dir.join("agent"), dir.join("proj"), dir.join("home"));
    for d in [&agent, &proj, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let u = format!("http://127.0.0.1:{}", server.port);
    let models = json!({"providers": {"local": {"baseUrl": format!("{u}/v1"), "api": "openai-completions",
        "apiKey": "none", "models": [{"id": "smollm2-135m", "contextWindow": 8192, "maxTokens": 256}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let classifier = |id: &str, api: &str, base: String| {
        json!({"type": "classifier", "id": id, "name": id, "api": api, "provider": "llama.cpp", "baseUrl": base,
               "input": ["text"], "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
               "contextWindow": 4096})
    };
    let store = json!({"llama.cpp": {"checkedAt": 1, "models": [
        classifier("qwen", "llama-cpp-classify", u.clone()),
        classifier("decider", "typesafe-system-one", format!("{u}/typesafe")),
    ]}});
    std::fs::write(agent.join("models-store.json"), store.to_string()).unwrap();
    let auth = match credential {
        Some(c) => json!({"llama.cpp": c}),
        None => json!({}),
    };
    std::fs::write(agent.join("auth.json"), auth.to_string()).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["-p", "go", "--model", "local/smollm2-135m", "--tools", "codemode"])
        .current_dir(&proj)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("PI_CODING_AGENT_DIR", &agent)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("run pi");
    assert!(status.success(), "pi -p failed: {status}");
    let lines: Vec<Value> = std::fs::read_to_string(dir.join("bodies.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("body line"))
        .collect();
    let chat = lines.iter().find(|l| l["path"] == "/v1/chat/completions").expect("the request after the tool result");
    let tool = chat["body"]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").cloned();
    let content = tool.expect("tool message")["content"].as_str().unwrap_or_default().to_owned();
    let start = content.find('{').unwrap_or_else(|| panic!("no result in {content}"));
    let end = content.rfind('}').unwrap_or(start);
    let result: Value = serde_json::from_str(&content[start..=end]).unwrap_or_else(|e| panic!("{e}: {content}"));
    (result, lines.into_iter().filter(|l| l["path"] != "/v1/chat/completions").collect())
}

#[test]
fn the_llama_providers_stored_classifiers_are_offered_to_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_server(dir.path());
    let u = format!("http://127.0.0.1:{}", server.port);
    let credential = json!({"type": "api_key", "key": "llama-key", "env": {"LLAMA_BASE_URL": u}});
    let (result, requests) = run(dir.path(), &server, Some(credential));
    assert_eq!(result["listed"], json!(["qwen llama-cpp-classify", "decider typesafe-system-one"]), "{result}");
    assert_eq!(result["available"], json!(["qwen", "decider"]));
    assert_eq!(result["stop"], "stop", "{result}");
    assert_eq!(result["answers"]["approved"]["probability"], 0.8, "{result}");
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["path"], "/typesafe/systemone");
    assert_eq!(requests[0]["authorization"], "Bearer llama-key");

    // Without a configured server they are listed but not available, and do not run.
    let (result, requests) = run(dir.path(), &server, None);
    assert_eq!(result["listed"], json!(["qwen llama-cpp-classify", "decider typesafe-system-one"]), "{result}");
    assert_eq!(result["available"], json!([]));
    assert_eq!(
        (result["stop"].clone(), result["error"].clone()),
        (json!("error"), json!("Provider is not configured: llama.cpp"))
    );
    assert!(requests.is_empty(), "{requests:?}");
}
