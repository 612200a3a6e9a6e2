//! `--model llama.cpp/<id>` at startup, as pi 1.6.0 resolves it: from the llama.cpp provider's
//! stored catalog (`models-store.json`) when a server is configured, before the built-in extension
//! registers the provider; a model missing from the stored catalog is not found (pi does not ask
//! the router at startup either). Recorded from the reference with the same files: the stored
//! model answers through its `baseUrl` (also as the saved default model), and the missing one
//! fails with the same message.

mod cli_support;
mod llama_support;

use cli_support::{Env, Reply, ScriptedServer, text_reply};
use serde_json::json;

fn stored_catalog(base_url: &str) -> serde_json::Value {
    json!({"llama.cpp": {"models": [{"id": "m1", "name": "m1", "api": "openai-completions", "provider": "llama.cpp",
        "baseUrl": base_url, "reasoning": false, "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 4096, "maxTokens": 4096,
        "compat": {"supportsStore": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": true,
            "supportsStrictMode": false, "maxTokensField": "max_tokens"}}], "checkedAt": 1}})
}

fn env_with_llama(server: &ScriptedServer, stored: bool) -> Env {
    let env = Env::new(&server.base_url);
    let root = server.base_url.trim_end_matches("/v1");
    let auth = json!({"llama.cpp": {"type": "api_key", "env": {"LLAMA_BASE_URL": root}}});
    std::fs::write(env.agent().join("auth.json"), auth.to_string()).unwrap();
    if stored {
        std::fs::write(env.agent().join("models-store.json"), stored_catalog(&server.base_url).to_string()).unwrap();
    }
    env
}

#[test]
fn a_stored_llama_model_is_chosen_with_model_at_startup() {
    let server = ScriptedServer::start(vec![text_reply(&["hello from m1"])]);
    let env = env_with_llama(&server, true);
    let out = env.pi().env("PI_OFFLINE", "1").args(["-p", "--model", "llama.cpp/m1", "hi"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.trim(), "hello from m1");
    let requests = server.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["model"], "m1");
}

#[test]
fn a_llama_model_missing_from_the_stored_catalog_is_not_found() {
    let server = ScriptedServer::start(vec![]);
    let env = env_with_llama(&server, false);
    let out = env.pi().env("PI_OFFLINE", "1").args(["-p", "--model", "llama.cpp/m1", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Model \"llama.cpp/m1\" not found. Use --list-models to see available models."),
        "{stderr}"
    );
    assert!(server.requests.lock().unwrap().is_empty());
}

#[test]
fn a_saved_default_llama_model_is_used_at_startup() {
    let server = ScriptedServer::start(vec![text_reply(&["hello from m1"])]);
    let env = env_with_llama(&server, true);
    let settings = json!({"defaultProvider": "llama.cpp", "defaultModel": "m1"});
    std::fs::write(env.agent().join("settings.json"), settings.to_string()).unwrap();
    let out = env.pi().env("PI_OFFLINE", "1").args(["-p", "hi"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.trim(), "hello from m1");
    assert_eq!(server.requests.lock().unwrap()[0]["model"], "m1");
}

/// A configured router (`auth.json`) that records what it is asked, and the chat server.
fn env_with_router(server: &ScriptedServer) -> (Env, llama_support::FakeRouter) {
    let router = llama_support::FakeRouter::start(vec![
        json!({"id": "r1", "source": "models-dir", "status": {"value": "loaded"}, "meta": {"n_ctx": 4096}}),
    ]);
    let env = Env::new(&server.base_url);
    let auth = json!({"llama.cpp": {"type": "api_key", "env": {"LLAMA_BASE_URL": router.url}}});
    std::fs::write(env.agent().join("auth.json"), auth.to_string()).unwrap();
    (env, router)
}

/// pi refreshes model catalogs from the network only in the interactive and RPC modes
/// (`main.js`: `appMode === "rpc"`, and the interactive mode after its UI starts): `pi -p` asks the
/// router nothing and leaves `models-store.json` alone.
#[test]
fn print_mode_does_not_refresh_the_llama_catalog() {
    // The answer is held back until the router is asked something or two seconds have passed,
    // so a refresh started at `session_start` would reach the router before pi could exit.
    let gate = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server = ScriptedServer::start_replies(vec![Reply::Gated(gate.clone(), text_reply(&["hi there"]))]);
    let (env, router) = env_with_router(&server);
    let watcher = {
        let seen = router.clone();
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
            while seen.seen().is_empty() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            gate.store(true, std::sync::atomic::Ordering::SeqCst);
        })
    };
    let out = env.pi().args(["-p", "--model", "local/smollm2-135m", "hi"]).output().unwrap();
    watcher.join().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hi there");
    assert!(router.seen().is_empty(), "{:?}", router.seen());
    assert!(!env.agent().join("models-store.json").exists());
}

/// The RPC mode still refreshes the router's catalog at startup, in the background, and stores it.
#[test]
fn rpc_mode_refreshes_the_llama_catalog() {
    let server = ScriptedServer::start(vec![]);
    let (env, router) = env_with_router(&server);
    let mut child = env
        .pi()
        .args(["--mode", "rpc", "--model", "local/smollm2-135m"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let store = env.agent().join("models-store.json");
    // Waits for the refresh (no timing is asserted: the loop ends once the catalog is stored).
    for _ in 0..6000 {
        if std::fs::read_to_string(&store).is_ok_and(|s| s.contains("\"r1\"")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(child.stdin.take());
    let _ = child.wait();
    let stored = std::fs::read_to_string(&store).unwrap_or_default();
    assert!(stored.contains("\"r1\""), "models-store.json: {stored}");
    assert!(router.seen().iter().any(|(method, path, _)| method == "GET" && path.starts_with("/models")));
}
