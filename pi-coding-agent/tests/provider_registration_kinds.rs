//! pi's checks of `registerProvider` for a Rust in-process extension and a JSON-RPC subprocess
//! extension (the JavaScript host's are in `provider_registration.rs`): a registration rejected
//! while loading is reported with pi's message (`ExtensionRunner::provider_errors`, which `pi`
//! prints as `Extension "<path>" error: <message>`) and the extension loads with its other
//! registrations; once bound it is an error to the extension (a `Result`, an error reply). A
//! re-registration merges over the previous one, and only providers with configured auth are
//! available to `setModel` and `ctx.modelRegistry.getAvailable()`.

mod http_support;

use std::sync::{Arc, Mutex};

use http_support::Setup;
use pi_coding_agent::extensions::{Extension, ExtensionApi, ExtensionApiError, FnExtension};
use serde_json::{Value, json};

fn model(id: &str) -> Value {
    json!({"id": id, "name": id, "reasoning": false, "input": ["text"], "contextWindow": 8192, "maxTokens": 256,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}})
}

const NO_API: &str = "Provider broken, model b1: no \"api\" specified. Set it at model level or provider level.";

/// Registers `good` (with a key), `keyless` (no key) and the rejected `broken` while loading.
fn rust_extension(slot: Arc<Mutex<Option<ExtensionApi>>>) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:providers>", move |pi| {
        let base = json!({"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions"});
        let with = |extra: Value| {
            let mut config = base.clone();
            config.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            config
        };
        pi.register_provider("good", with(json!({"apiKey": "k", "models": [model("g1")]})))?;
        pi.register_provider("broken", json!({"apiKey": "k", "models": [model("b1")]}))?;
        pi.register_provider("keyless", with(json!({"models": [model("k1")]})))?;
        *slot.lock().unwrap() = Some(pi.clone());
        Ok(())
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_extension_gets_pis_checks_merge_and_availability() {
    let slot = Arc::new(Mutex::new(None));
    let h = Setup { extensions: vec![rust_extension(slot.clone())], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let runner = h.session.extension_runner().unwrap().clone();
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let errors: Vec<(String, String)> = runner.provider_errors().into_iter().map(|e| (e.path, e.error)).collect();
    assert_eq!(errors, vec![("<inline:providers>".to_owned(), NO_API.to_owned())]);
    let names: Vec<String> = runner.registered_providers().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["good", "keyless"]);
    let available: Vec<String> = runner.available_registered_providers().into_iter().map(|p| p.name).collect();
    assert_eq!(available, ["good"]);

    // Once bound, a rejected registration is the extension's error and changes nothing.
    let pi = slot.lock().unwrap().clone().unwrap();
    let late = pi.register_provider("late", json!({"models": [model("l1")], "streamSimple": true}));
    assert_eq!(
        late,
        Err(ExtensionApiError::Invalid("Provider late: \"api\" is required when registering streamSimple.".into()))
    );
    let late = pi.register_provider("late", json!({"api": "openai-completions", "models": [model("l1")]}));
    assert_eq!(
        late,
        Err(ExtensionApiError::Invalid("Provider late: \"baseUrl\" is required when defining custom models.".into()))
    );
    assert!(!runner.registered_providers().iter().any(|p| p.name == "late"));

    // The keyless provider's models are not available; its model cannot be chosen.
    assert!(!pi.set_model("keyless", "k1").await.unwrap());
    let ctx = runner.create_context();
    let ids = |models: Vec<pi_ai::Model>| -> Vec<String> {
        let ours = |m: &pi_ai::Model| m.provider == "good" || m.provider == "keyless";
        models.into_iter().filter(ours).map(|m| format!("{}/{}", m.provider, m.id)).collect()
    };
    assert_eq!(ids(ctx.model_registry().get_available()), ["good/g1"]);
    assert_eq!(ids(ctx.model_registry().get_all()), ["good/g1", "keyless/k1"]);

    // A re-registration keeps what it does not set: the key makes `keyless` available.
    pi.register_provider("keyless", json!({"apiKey": "now"})).unwrap();
    let merged = runner.registered_providers().into_iter().find(|p| p.name == "keyless").unwrap();
    assert_eq!(merged.config["baseUrl"], "http://127.0.0.1:9/v1");
    assert_eq!(merged.config["models"][0]["id"], "k1");
    assert!(pi.set_model("keyless", "k1").await.unwrap());
    assert_eq!(ids(ctx.model_registry().get_available()), ["good/g1", "keyless/k1"]);
}

/// A JSON-RPC extension: while loading (before its `initialize` answer) it registers `subgood`
/// and the rejected `broken`, each a call it waits for; `/late` registers a rejected provider
/// once bound and writes the error reply it gets to the file its argument names.
const SUBPROCESS: &str = r#"
import json, sys
def send(m):
    m["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def call(id, method, params):
    send({"id": id, "method": method, "params": params})
    for line in sys.stdin:
        m = json.loads(line)
        if m.get("id") == id and "method" not in m:
            return m
model = lambda i: {"id": i, "name": i, "reasoning": False, "input": ["text"], "contextWindow": 10, "maxTokens": 5,
                   "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}
for line in sys.stdin:
    m = json.loads(line)
    if "method" not in m: continue
    method = m["method"]
    r = None
    if method == "initialize":
        ok = call("r1", "pi.registerProvider", {"name": "subgood", "config": {"baseUrl": "http://127.0.0.1:9/v1",
                  "api": "openai-completions", "apiKey": "k", "models": [model("s1")]}})
        bad = call("r2", "pi.registerProvider", {"name": "broken", "config": {"apiKey": "k", "models": [model("b1")]}})
        assert "error" not in ok and "error" not in bad, (ok, bad)
        r = {"protocolVersion": 2, "events": [], "commands": [{"name": "late"}]}
    elif method == "command.run":
        late = call("r3", "pi.registerProvider", {"name": "late", "config": {"baseUrl": "http://h",
                    "models": [model("l1")]}})
        with open(m["params"]["args"], "w") as f:
            json.dump(late.get("error"), f)
    if "id" in m: send({"id": m["id"], "result": r})
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subprocess_extension_gets_pis_checks_as_an_error_reply() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("providers.py");
    std::fs::write(&path, SUBPROCESS).unwrap();
    let h = Setup { extension_paths: vec![path.clone()], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let runner = h.session.extension_runner().unwrap().clone();
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let errors: Vec<String> = runner.provider_errors().into_iter().map(|e| e.error).collect();
    assert_eq!(errors, [NO_API]);
    assert_eq!(runner.provider_errors()[0].path, path.display().to_string());
    let names: Vec<String> = runner.registered_providers().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["subgood"]);

    let out = dir.path().join("late.json");
    h.session.prompt(&format!("/late {}", out.display())).await.unwrap();
    let reply: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        reply["message"],
        "Provider late, model l1: no \"api\" specified. Set it at model level or provider level."
    );
    assert!(!runner.registered_providers().iter().any(|p| p.name == "late"));
}
