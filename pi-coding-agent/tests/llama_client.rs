//! The llama.cpp extension's pieces against real HTTP servers on 127.0.0.1: the router client
//! (load, unload and download with their progress), `/login llama.cpp` through the login seam,
//! the real single-model llama.cpp server (which is not a router), and the Hugging Face client.

mod llama_support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use llama_support::{FakeHub, FakeRouter};
use pi_coding_agent::auth::{AuthEvent, AuthInteraction, AuthPrompt, LoginError};
use pi_coding_agent::builtin_extensions::llama::client::{LlamaClient, Progress};
use pi_coding_agent::builtin_extensions::llama::huggingface::HuggingFaceClient;
use pi_coding_agent::builtin_extensions::llama::login::LlamaLogin;
use pi_coding_agent::builtin_extensions::llama::provider::{LlamaModels, refresh_from_server};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn catalog() -> Vec<Value> {
    vec![
        json!({"id": "smollm2-a", "source": "models-dir", "status": {"value": "unloaded"}, "meta": {"n_ctx_train": 8192}}),
        json!({"id": "smollm2-b", "source": "models-dir", "status": {"value": "loaded", "args": ["llama-server", "-c", "4096"]}, "meta": {"n_ctx": 4096}}),
    ]
}

/// Answers prompts in order and records them.
struct Answers {
    answers: Mutex<Vec<String>>,
    asked: Mutex<Vec<AuthPrompt>>,
}

impl Answers {
    fn new(answers: &[&str]) -> Self {
        Answers {
            answers: Mutex::new(answers.iter().rev().map(|s| s.to_string()).collect()),
            asked: Mutex::new(Vec::new()),
        }
    }
}

#[async_trait]
impl AuthInteraction for Answers {
    async fn prompt(&self, prompt: AuthPrompt) -> Result<String, LoginError> {
        self.asked.lock().unwrap().push(prompt);
        self.answers.lock().unwrap().pop().ok_or(LoginError::Cancelled)
    }
    fn notify(&self, _event: AuthEvent) {}
    fn cancel(&self) -> CancellationToken {
        CancellationToken::new()
    }
}

fn login_with_env(url: Option<String>) -> LlamaLogin {
    LlamaLogin::with_env(move |n| if n == "LLAMA_BASE_URL" { url.clone() } else { None })
}

#[tokio::test]
async fn login_asks_for_the_url_and_key_and_checks_the_router() {
    use pi_coding_agent::auth::LoginProvider;
    let router = FakeRouter::start(catalog());
    router.require_key("sekret");
    // The URL prompt's placeholder is LLAMA_BASE_URL; an empty answer takes it.
    let login = login_with_env(Some(format!("{}/v1/", router.url)));
    let answers = Answers::new(&["", " sekret "]);
    let credential = login.login(&answers).await.unwrap();
    assert_eq!(
        Value::Object(credential.into_json()),
        json!({"type": "api_key", "key": "sekret", "env": {"LLAMA_BASE_URL": router.url}})
    );
    let asked = answers.asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        vec![
            AuthPrompt::Text {
                message: "llama.cpp server URL".into(),
                placeholder: Some(format!("{}/v1/", router.url))
            },
            AuthPrompt::Secret { message: "API key (optional)".into(), placeholder: None },
        ]
    );
    // A wrong key: the router's error message.
    let err = login.login(&Answers::new(&[&router.url, "nope"])).await.unwrap_err();
    assert_eq!(err.to_string(), "Invalid API Key");
    // Without LLAMA_BASE_URL the placeholder is the default router address.
    let answers = Answers::new(&["http://127.0.0.1:9"]);
    let err = login_with_env(None).login(&answers).await.unwrap_err();
    assert!(matches!(err, LoginError::Cancelled), "{err}");
    let placeholder = match &answers.asked.lock().unwrap()[0] {
        AuthPrompt::Text { placeholder, .. } => placeholder.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(placeholder.as_deref(), Some("http://127.0.0.1:9931"));
    // Nothing listens: the server and the network cause are named.
    let err = login_with_env(None).login(&Answers::new(&["http://127.0.0.1:9", ""])).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Could not reach llama.cpp server at http://127.0.0.1:9: connect ECONNREFUSED 127.0.0.1:9"
    );
    let err = login_with_env(None).login(&Answers::new(&["ftp://x", ""])).await.unwrap_err();
    assert_eq!(err.to_string(), "Server URL must use http or https");
}

/// The real llama.cpp server of the tests runs one model: its `/models` has no router status,
/// and the client says so.
#[tokio::test]
async fn the_single_model_server_is_not_a_router() {
    let Ok(root) = std::env::var("PI_LOCAL_LLM_URL") else {
        eprintln!("skipped: PI_LOCAL_LLM_URL is not set (scripts/test-all.sh starts the local LLM)");
        return;
    };
    let client = LlamaClient::new(&root, None).unwrap();
    let err = client.list(false, &CancellationToken::new()).await.unwrap_err();
    assert_eq!(err.to_string(), "Server is not running in llama.cpp router mode");
}

#[tokio::test]
async fn load_unload_and_download_wait_for_the_router() {
    let router = FakeRouter::start(catalog());
    let client = LlamaClient::new(&format!("{}/v1", router.url), None).unwrap();
    let never = CancellationToken::new();
    let progress: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = progress.clone();
    let loaded =
        client.load_and_wait("smollm2-a", Arc::new(move |p| sink.lock().unwrap().push(p)), &never).await.unwrap();
    assert_eq!((loaded.id.as_str(), loaded.status.as_str(), loaded.n_ctx()), ("smollm2-a", "loaded", Some(32768)));
    // The router's own progress events may arrive before the load request returns.
    assert!(progress.lock().unwrap().iter().any(|p| p.message == "Loading model"));
    client.unload_and_wait("smollm2-b", &never).await.unwrap();
    assert_eq!(router.status("smollm2-b").as_deref(), Some("unloaded"));
    let err = client.load_and_wait("missing", Arc::new(|_| {}), &never).await.unwrap_err();
    assert_eq!(err.to_string(), "model missing not found");

    let progress: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = progress.clone();
    let catalog =
        client.download_and_wait("o/r:Q4_K_M", Arc::new(move |p| sink.lock().unwrap().push(p)), &never).await.unwrap();
    assert!(catalog.iter().any(|m| m.id == "o/r:Q4_K_M" && m.status == "unloaded"));
    let reported = progress.lock().unwrap().clone();
    assert_eq!(reported[0].message, "Downloading model");
    assert!(
        reported.iter().any(|p| p.detail.as_deref() == Some("1.00 KiB / 2.00 KiB") && p.ratio == Some(0.5)),
        "{reported:?}"
    );
    let paths: Vec<String> = router.seen().into_iter().map(|(m, p, _)| format!("{m} {p}")).collect();
    assert!(
        paths.contains(&"POST /models".to_owned()) && paths.contains(&"GET /models?reload=1".to_owned()),
        "{paths:?}"
    );
}

#[tokio::test]
async fn the_provider_lists_loaded_models_with_their_templates() {
    let router = FakeRouter::start(catalog());
    let mut credential = pi_coding_agent::auth::Credential::api_key("k");
    credential.set("env", json!({"LLAMA_BASE_URL": router.url}));
    let models: LlamaModels = refresh_from_server(&credential, None, &CancellationToken::new()).await.unwrap().unwrap();
    assert_eq!(models.models.len(), 1);
    let m = &models.models[0];
    assert_eq!(
        (m["id"].as_str(), m["contextWindow"].as_u64(), m["reasoning"].as_bool()),
        (Some("smollm2-b"), Some(4096), Some(true))
    );
    assert_eq!(m["baseUrl"], format!("{}/v1", router.url));
    assert_eq!(models.classifiers[0]["api"], "llama-cpp-classify");
    let seen: Vec<String> = router.seen().into_iter().map(|(_, p, _)| p).collect();
    assert_eq!(seen, ["/models", "/props?model=smollm2-b&autoload=false"]);
}

#[tokio::test]
async fn hugging_face_search_and_quantizations() {
    let details = json!({"id": "ggml-org/SmolLM2-GGUF", "gated": "manual", "siblings": [
        {"rfilename": "SmolLM2-Q8_0.gguf", "size": 3000},
        {"rfilename": "SmolLM2-Q4_K_M.gguf", "size": 2000},
        {"rfilename": "SmolLM2-F16.gguf"},
        {"rfilename": "mmproj-SmolLM2-F16.gguf", "size": 5},
        {"rfilename": "big/SmolLM2-IQ2_XS-00001-of-00002.gguf", "size": 500},
        {"rfilename": "big/SmolLM2-IQ2_XS-00002-of-00002.gguf", "size": 500},
        {"rfilename": "README.md", "size": 1}]});
    let hub = FakeHub::start(
        json!([{"id": "ggml-org/SmolLM2-GGUF", "downloads": 12345}, {"id": "x/y"}, {"nope": 1}]),
        vec![details],
    );
    let client = HuggingFaceClient::new(Some("hf_t".into()), &hub.url);
    let never = CancellationToken::new();
    let results = client.search("smol lm", &never).await.unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!((results[0].downloads, results[1].downloads), (12345, 0));
    let d = client.details("ggml-org/SmolLM2-GGUF", &never).await.unwrap();
    assert_eq!(d.gated.as_deref(), Some("manual"));
    let names: Vec<(String, Option<u64>)> = d.quantizations.iter().map(|q| (q.name.clone(), q.size)).collect();
    assert_eq!(
        names,
        [
            ("Q4_K_M".into(), Some(2000)),
            ("IQ2_XS".into(), Some(1000)),
            ("Q8_0".into(), Some(3000)),
            ("F16".into(), None)
        ]
    );
    let err = client.details("a/b", &never).await.unwrap_err();
    assert_eq!(err, "Repository not found");
    let seen = hub.seen.lock().unwrap().clone();
    assert_eq!(seen[0], "/api/models?search=smol+lm&filter=gguf&sort=downloads&direction=-1&limit=20");
    assert_eq!(seen[1], "/api/models/ggml-org/SmolLM2-GGUF?blobs=true");
}

/// Serves the test router until killed, for recording the reference's screens by hand:
/// `cargo test --test llama_client serve_router_for_the_reference -- --ignored --nocapture`.
#[test]
#[ignore]
fn serve_router_for_the_reference() {
    let router = FakeRouter::start(catalog());
    let hub = FakeHub::start(
        json!([{"id": "ggml-org/SmolLM2-135M-GGUF", "downloads": 12345}]),
        vec![json!({"id": "ggml-org/SmolLM2-135M-GGUF", "siblings": [
        {"rfilename": "SmolLM2-135M-Q8_0.gguf", "size": 145_000_000u64},
        {"rfilename": "SmolLM2-135M-Q4_K_M.gguf", "size": 105_000_000u64}]})],
    );
    println!("ROUTER {} HUB {}", router.url, hub.url);
    std::thread::sleep(std::time::Duration::from_secs(1800));
}
