//! `/llama` and the llama.cpp provider driven through the real `pi` in a pseudo-terminal: the
//! router's models listed, one loaded beside another, one unloaded, a Hugging Face download, the
//! loaded model chosen in `/model`, and a prompt answered through the provider by the real local
//! llama.cpp server (when `PI_LOCAL_LLM_URL` names one). The router is `llama_support`'s
//! (xllamacpp cannot run llama.cpp's router mode), its chat requests forwarded to that server.

mod cli_support;
mod interactive_support;
mod llama_support;

use cli_support::{Env, ScriptedServer};
use interactive_support::*;
use llama_support::{FakeHub, FakeRouter};
use serde_json::{Value, json};

fn catalog() -> Vec<Value> {
    vec![
        json!({"id": "smollm2-a", "source": "models-dir", "status": {"value": "unloaded"}, "meta": {"n_ctx_train": 8192}}),
        json!({"id": "smollm2-b", "source": "models-dir", "status": {"value": "loaded"}, "meta": {"n_ctx": 4096}}),
    ]
}

/// An agent dir whose auth.json points llama.cpp at `router`.
fn env_for(router: &FakeRouter) -> Env {
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let auth = json!({"llama.cpp": {"type": "api_key", "env": {"LLAMA_BASE_URL": router.url}}});
    std::fs::write(env.agent().join("auth.json"), auth.to_string()).expect("auth.json");
    env
}

/// The lines between the dialog's two borders, the router's address as `<ROUTER>`.
fn dialog(screen: &str, router: &FakeRouter) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let borders: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.is_empty() && l.chars().all(|c| c == '─'))
        .map(|(i, _)| i)
        .collect();
    let [.., top, bottom] = borders[..] else { panic!("no dialog: {screen}") };
    lines[top + 1..bottom].join("\n").replace(&router.url, "<ROUTER>")
}

fn reference(name: &str) -> String {
    let path = format!("{}/tests/fixtures/llama/{name}.ref.txt", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")).trim_end().to_owned()
}

fn spawn(env: &Env, hub: Option<&FakeHub>) -> Pty {
    // A short prompt without tools: the 135M model answers the demo question in seconds.
    let args = ["--no-tools", "--system-prompt", "You are a helpful assistant."];
    let mut vars = vec![];
    if let Some(hub) = hub {
        vars.push(("HF_ENDPOINT", hub.url.as_str()));
    }
    let pty = Pty::spawn_with(env, &args, &vars);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty
}

#[test]
fn llama_lists_loads_and_unloads_router_models() {
    let router = FakeRouter::start(catalog());
    let env = env_for(&router);
    let mut pty = spawn(&env, None);
    type_keys(&mut pty, &["/llama", "WAIT", "Enter"]);
    let screen = pty.wait_for("the model list", |s| s.contains("Download model…"));
    assert_eq!(dialog(&screen, &router), reference("list"));
    assert!(screen.contains(&router.url), "{screen}");
    // Loaded models first, with their context.
    let b = screen.find("smollm2-b").expect("b listed");
    let a = screen.find("smollm2-a").expect("a listed");
    assert!(b < a, "{screen}");
    assert!(screen.contains("loaded · 4k context"), "{screen}");
    assert!(screen.contains("Hugging Face owner/repository[:quant]"), "{screen}");
    assert!(screen.contains("enter load/unload/download • escape/ctrl+c close"), "{screen}");

    // Load smollm2-a beside the loaded smollm2-b.
    type_keys(&mut pty, &["Down", "Enter"]);
    let screen = pty.wait_for("the loaded-models question", |s| s.contains("1 model is loaded"));
    assert_eq!(dialog(&screen, &router), reference("loaded_question"));
    type_keys(&mut pty, &["Down", "Enter"]);
    let screen = pty.wait_for("the loaded notice", |s| s.contains("Loaded smollm2-a"));
    assert!(screen.contains("Download model…"), "the list is back: {screen}");
    assert_eq!(router.status("smollm2-a").as_deref(), Some("loaded"));
    assert_eq!(router.status("smollm2-b").as_deref(), Some("loaded"));

    // Unload smollm2-b (loaded models sort by id: a, then b).
    type_keys(&mut pty, &["Down", "Enter"]);
    let screen = pty.wait_for("the unload question", |s| s.contains("Unload model?"));
    assert_eq!(dialog(&screen, &router), reference("unload"));
    type_keys(&mut pty, &["Enter"]);
    pty.wait_for("the unloaded notice", |s| s.contains("Unloaded smollm2-b"));
    assert_eq!(router.status("smollm2-b").as_deref(), Some("unloaded"));
    type_keys(&mut pty, &["Escape"]);
    pty.wait_for("the editor", |s| !s.contains("Download model…"));

    // The loaded model is in /model, and the catalog was stored for the next run.
    type_keys(&mut pty, &["/model", "WAIT", "Enter"]);
    let screen = pty.wait_for("the model selector", |s| s.contains("smollm2-a [llama.cpp]"));
    assert!(!screen.contains("smollm2-b [llama.cpp]"), "unloaded models are not selectable: {screen}");
    let store: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent().join("models-store.json")).expect("store"))
            .expect("json");
    assert_eq!(store["llama.cpp"]["models"][0]["id"], "smollm2-a", "{store}");
    type_keys(&mut pty, &["smollm2-a", "WAIT", "Enter"]);
    pty.wait_for("the model line", |s| s.contains("Model: smollm2-a"));

    // A prompt through the provider: the router forwards it to the real llama.cpp server.
    if std::env::var("PI_LOCAL_LLM_URL").is_ok() {
        type_keys(&mut pty, &["What is the capital of France?", "Enter"]);
        // The 135M model on a shared CPU may take longer than a screen wait allows, both before
        // "Paris" shows and between it and the end of the answer: wait for the whole answer.
        let answered = |s: &str| s.contains("Paris") && !s.contains("Working");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
        while !answered(&pty.screen()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let screen = pty.wait_for("the answer", answered);
        assert!(screen.contains("Paris"), "{screen}");
        let chat = router.seen().into_iter().find(|(_, p, _)| p == "/v1/chat/completions").expect("a chat request");
        assert_eq!(chat.2["model"], "smollm2-a");
    } else {
        eprintln!("skipped the prompt: PI_LOCAL_LLM_URL is not set (scripts/test-all.sh starts the local LLM)");
    }
    assert_eq!(pty.quit(), 0);

    // The next run restores the stored catalog before any network refresh (offline here).
    let mut pty = Pty::spawn_with(&env, &[], &[("PI_OFFLINE", "1")]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    type_keys(&mut pty, &["/model", "WAIT", "Enter"]);
    pty.wait_for("the restored model", |s| s.contains("smollm2-a [llama.cpp]"));
    assert_eq!(pty.quit(), 0);
}

#[test]
fn llama_downloads_from_hugging_face_and_reports_unreachable_routers() {
    let router = FakeRouter::start(catalog());
    let details = json!({"id": "ggml-org/SmolLM2-135M-GGUF", "siblings": [
        {"rfilename": "SmolLM2-135M-Q8_0.gguf", "size": 145_000_000u64},
        {"rfilename": "SmolLM2-135M-Q4_K_M.gguf", "size": 105_000_000u64}]});
    let hub = FakeHub::start(json!([{"id": "ggml-org/SmolLM2-135M-GGUF", "downloads": 12345}]), vec![details]);
    let env = env_for(&router);
    let mut pty = spawn(&env, Some(&hub));
    type_keys(&mut pty, &["/llama", "WAIT", "Enter"]);
    pty.wait_for("the model list", |s| s.contains("Download model…"));
    type_keys(&mut pty, &["Up", "Enter"]);
    let screen = pty.wait_for("the search", |s| s.contains("Type at least 2 characters"));
    assert!(screen.contains("Download model") && screen.contains("Model name or owner/repository[:quant]"), "{screen}");
    type_keys(&mut pty, &["smol"]);
    let screen = pty.wait_for("the results", |s| s.contains("12.3k downloads"));
    assert!(screen.contains("→ ggml-org/SmolLM2-135M-GGUF"), "{screen}");
    type_keys(&mut pty, &["Enter"]);
    let screen = pty.wait_for("the quantizations", |s| s.contains("Select quantization"));
    assert!(screen.contains("Q4_K_M · 100.1 MiB · recommended"), "{screen}");
    assert!(screen.contains("Q8_0 · 138.3 MiB"), "{screen}");
    type_keys(&mut pty, &["Enter"]);
    pty.wait_for("the downloaded notice", |s| s.contains("Downloaded ggml-org/SmolLM2-135M-GGUF:Q4_K_M"));
    let screen = pty.wait_for("the new model", |s| s.contains("ggml-org/SmolLM2-135M-GGUF:Q4_K_M"));
    assert!(screen.contains("Download model…"), "{screen}");
    let posted = router.seen().into_iter().find(|(m, p, _)| m == "POST" && p == "/models").expect("download request");
    assert_eq!(posted.2, json!({"model": "ggml-org/SmolLM2-135M-GGUF:Q4_K_M"}));
    type_keys(&mut pty, &["Escape"]);
    pty.wait_for("the editor", |s| !s.contains("Download model…"));

    // A router that is gone: Retry / Close.
    let auth = json!({"llama.cpp": {"type": "api_key", "env": {"LLAMA_BASE_URL": "http://127.0.0.1:9"}}});
    std::fs::write(env.agent().join("auth.json"), auth.to_string()).expect("auth.json");
    type_keys(&mut pty, &["/llama", "WAIT", "Enter"]);
    let screen = pty.wait_for("the connection error", |s| s.contains("llama.cpp unavailable"));
    assert!(
        screen.contains("Could not reach llama.cpp server at http://127.0.0.1:9: connect ECONNREFUSED 127.0.0.1:9"),
        "{screen}"
    );
    assert!(screen.contains("→ Retry") && screen.contains("Close"), "{screen}");
    type_keys(&mut pty, &["Down", "Enter"]);
    pty.wait_for("the editor", |s| !s.contains("llama.cpp unavailable"));

    // Not configured: the notice.
    std::fs::remove_file(env.agent().join("auth.json")).expect("rm auth.json");
    type_keys(&mut pty, &["/llama", "WAIT", "Enter"]);
    pty.wait_for("the notice", |s| s.contains("Configure llama.cpp with /login llama.cpp"));
    assert_eq!(pty.quit(), 0);
}

#[test]
fn a_load_in_progress_can_be_stopped() {
    let mut models = catalog();
    models.push(json!({"id": "slow-model", "source": "models-dir", "status": {"value": "unloaded"}}));
    let router = FakeRouter::start(models);
    let env = env_for(&router);
    let mut pty = spawn(&env, None);
    type_keys(&mut pty, &["/llama", "WAIT", "Enter"]);
    pty.wait_for("the model list", |s| s.contains("Download model…"));
    // smollm2-b (loaded), then slow-model, smollm2-a.
    type_keys(&mut pty, &["Down", "Enter", "WAIT", "Down", "Enter"]);
    let screen = pty.wait_for("the progress", |s| s.contains("Loading load tensors"));
    let expected = [
        " Loading model",
        " slow-model",
        "",
        " Loading load tensors",
        &format!(" {}{} 50%", "█".repeat(20), "─".repeat(20)),
        "",
        " escape/ctrl+c stop",
    ]
    .join("\n");
    assert_eq!(dialog(&screen, &router), expected);
    type_keys(&mut pty, &["Escape"]);
    let screen = pty.wait_for("the stop question", |s| s.contains("Stop loading?"));
    assert_eq!(
        dialog(&screen, &router),
        " Stop loading?\n slow-model\n\n→ Yes\n  No\n\n enter select • escape/ctrl+c cancel"
    );
    type_keys(&mut pty, &["Enter"]);
    pty.wait_for("the list again", |s| s.contains("Download model…"));
    assert_eq!(router.status("slow-model").as_deref(), Some("unloaded"));
    let unloads: Vec<Value> =
        router.seen().into_iter().filter(|(m, p, _)| m == "POST" && p == "/models/unload").map(|(_, _, b)| b).collect();
    assert_eq!(unloads, [json!({"model": "slow-model"})]);
    assert!(!pty.screen().contains("Loaded slow-model"));
    assert_eq!(pty.quit(), 0);
}

#[test]
fn login_llama_cpp_stores_the_router_through_the_extensions_login() {
    let router = FakeRouter::start(catalog());
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let mut pty = spawn(&env, None);
    type_keys(&mut pty, &["/login llama.cpp", "WAIT", "Enter"]);
    pty.wait_for("the URL question", |s| s.contains("llama.cpp server URL"));
    pty.send(&router.url);
    type_keys(&mut pty, &["WAIT", "Enter"]);
    pty.wait_for("the key question", |s| s.contains("API key (optional)"));
    type_keys(&mut pty, &["Enter"]);
    // pi's llama.cpp guidance follows a login only when no model was selected; this one has one.
    pty.wait_for("the saved line", |s| s.contains("Saved API key for llama.cpp. Credentials saved to"));
    // The provider's models were refreshed right after the login.
    let store: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent().join("models-store.json")).expect("models-store"))
            .expect("models-store.json is JSON");
    let stored: Vec<&str> = store["llama.cpp"]["models"]
        .as_array()
        .map(|m| m.iter().filter_map(|m| m["id"].as_str()).collect())
        .unwrap_or_default();
    assert!(stored.contains(&"smollm2-b"), "{store}");
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(env.agent().join("auth.json")).expect("auth.json"))
        .expect("auth.json is JSON");
    assert_eq!(auth["llama.cpp"]["type"], "api_key");
    assert_eq!(auth["llama.cpp"]["env"]["LLAMA_BASE_URL"], router.url.trim_end_matches('/'));
    // The login checked the server with the router's model list.
    assert!(router.seen().iter().any(|(m, p, _)| m == "GET" && p.starts_with("/models")));
    assert_eq!(pty.quit(), 0);
}
