//! Virtual models over the JSON-RPC subprocess protocol (version 3): a Python extension declares
//! `router/auto` in its `initialize` answer and registers `router/other` with a
//! `pi.registerVirtualModel` call; pi asks it `virtualModel.route` for every request made with
//! the virtual model (pi's reasons `user` / `continuation`, `previous`, the state it returned),
//! the server on 127.0.0.1 receives the physical model it picked, an error answer ends the run
//! with an error response carrying the router's message, and `pi.unregisterVirtualModel` removes
//! a model. A version 2 extension still loads beside it.

mod http_support;

use std::sync::{Arc, Mutex};

use http_support::{Setup, text_reply, tool_reply};
use pi_coding_agent::extensions::{Extension, ExtensionApi, FnExtension, VIRTUAL_MODEL_API};
use serde_json::{Value, json};

/// The extension: `router/auto` (levels low and high) routes `high` to phys/big and anything else
/// to phys/small and keeps `{count, reason, previous}` as its state; a user message with
/// "explode" makes it answer an error. The command `/drop` unregisters `router/other`.
const ROUTER: &str = r#"
import json, sys
def send(m):
    m["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def route(req):
    user = [m for m in req["messages"] if m["role"] == "user"][-1]
    if "explode" in json.dumps(user["content"]):
        raise Exception("router exploded")
    state = req.get("state") or {"count": 0}
    previous = (req.get("previous") or {}).get("model", {}).get("id")
    target = "big" if req["thinkingLevel"] == "high" else "small"
    new = {"count": state["count"] + 1, "reason": req["reason"], "previous": previous}
    return {"model": {"provider": "phys", "id": target}, "thinkingLevel": "medium", "hasState": True, "state": new}
for line in sys.stdin:
    m = json.loads(line)
    if "method" not in m: continue
    method = m["method"]
    try:
        if method == "initialize":
            send({"method": "pi.registerVirtualModel", "params": {"model": {"provider": "router", "id": "other", "name": "Other"}}})
            r = {"protocolVersion": 3, "events": [], "commands": [{"name": "drop"}],
                 "virtualModels": [{"provider": "router", "id": "auto", "name": "Auto",
                                    "thinkingLevels": ["low", "high"], "contextWindow": 1000}]}
        elif method == "virtualModel.route":
            assert m["params"]["extensionPath"].endswith("router.py")
            r = route(m["params"]["request"])
        elif method == "command.run":
            send({"method": "pi.unregisterVirtualModel", "params": {"provider": "router", "id": "other"}})
            r = None
        else:
            r = None
        if "id" in m: send({"id": m["id"], "result": r})
    except Exception as e:
        if "id" in m: send({"id": m["id"], "error": {"code": -32000, "message": str(e)}})
"#;

/// A version 2 extension with nothing to register.
const OLD: &str = r#"
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": 2}}) + "\n")
        sys.stdout.flush()
    elif "id" in m and "method" in m:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": None}) + "\n")
        sys.stdout.flush()
"#;

fn handle(slot: Arc<Mutex<Option<ExtensionApi>>>) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:handle>", move |pi| {
        *slot.lock().unwrap() = Some(pi.clone());
        Ok(())
    }))
}

fn model(id: &str) -> Value {
    json!({"id": id, "name": id, "reasoning": false, "input": ["text"], "contextWindow": 8192, "maxTokens": 256,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}})
}

fn states(entries: &[Value]) -> Vec<Value> {
    entries.iter().filter(|e| e["customType"] == "pi.virtual-model-state").map(|e| e["data"]["state"].clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subprocess_router_routes_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let (router, old) = (dir.path().join("router.py"), dir.path().join("old.py"));
    std::fs::write(&router, ROUTER).unwrap();
    std::fs::write(&old, OLD).unwrap();
    let slot = Arc::new(Mutex::new(None));
    let h = Setup {
        replies: vec![tool_reply("call_1", "read", json!({"path": "missing.txt"})), text_reply("done")],
        extensions: vec![handle(slot.clone())],
        extension_paths: vec![router, old],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    let runner = h.session.extension_runner().unwrap().clone();
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let pi = slot.lock().unwrap().clone().unwrap();
    pi.register_provider(
        "phys",
        json!({"baseUrl": h.server.base_url, "api": "openai-completions", "apiKey": "phys-key",
               "models": [model("small"), model("big")]}),
    )
    .unwrap();

    // Both registrations: the `initialize` answer's and the call's.
    let auto = runner.virtual_model("router", "auto").expect("router/auto");
    assert_eq!(
        (auto.model.api.as_str(), auto.model.name.as_str(), auto.model.context_window),
        (VIRTUAL_MODEL_API, "Auto", 1000)
    );
    assert!(auto.model.reasoning);
    let other = runner.virtual_model("router", "other").expect("router/other");
    assert_eq!((other.model.name.as_str(), other.model.reasoning), ("Other", false));

    assert!(pi.set_model("router", "auto").await.unwrap());
    h.session.set_thinking_level(pi_ai::ThinkingLevel::High).unwrap();
    h.session.prompt("list").await.unwrap();
    let models: Vec<Value> = h.server.bodies().iter().map(|b| b["model"].clone()).collect();
    assert_eq!(models, vec![json!("big"), json!("big")], "{:#?}", h.entries().last());
    assert_eq!(
        states(&h.entries()),
        vec![
            json!({"count": 1, "reason": "user", "previous": null}),
            json!({"count": 2, "reason": "continuation", "previous": "big"})
        ]
    );
    assert_eq!(h.session.model().id, "auto");

    // The router answers an error: an error response naming the virtual model, nothing sent.
    h.session.prompt("explode now").await.unwrap();
    assert_eq!(h.server.count(), 2);
    let last = h.entries().into_iter().rev().find(|e| e["message"]["role"] == "assistant").unwrap();
    assert_eq!(
        (last["message"]["provider"].clone(), last["message"]["model"].clone()),
        (json!("router"), json!("auto"))
    );
    assert_eq!(last["message"]["stopReason"], "error");
    assert_eq!(last["message"]["errorMessage"], "router exploded");
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());

    // `pi.unregisterVirtualModel` (sent while the command runs).
    h.session.prompt("/drop").await.unwrap();
    assert!(runner.virtual_model("router", "other").is_none());
    assert!(runner.virtual_model("router", "auto").is_some());
}

/// The repository's example (`examples/extensions/virtual_router.py`) routes as its docstring says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_example_routes_user_turns_and_keeps_follow_ups_on_their_model() {
    let example = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/extensions/virtual_router.py");
    // The example with its models named by the environment, as a user would start it.
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("router.sh");
    let script =
        format!("#!/bin/sh\nROUTER_STRONG=phys/big ROUTER_FAST=phys/small exec python3 {}\n", example.display());
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let slot = Arc::new(Mutex::new(None));
    let h = Setup {
        replies: vec![
            tool_reply("call_1", "read", json!({"path": "missing.txt"})),
            text_reply("done"),
            text_reply("fast"),
        ],
        extensions: vec![handle(slot.clone())],
        extension_paths: vec![wrapper],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    let runner = h.session.extension_runner().unwrap().clone();
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let pi = slot.lock().unwrap().clone().unwrap();
    pi.register_provider(
        "phys",
        json!({"baseUrl": h.server.base_url, "api": "openai-completions", "apiKey": "phys-key",
               "models": [model("small"), model("big")]}),
    )
    .unwrap();
    assert!(pi.set_model("router", "auto").await.unwrap());
    h.session.set_thinking_level(pi_ai::ThinkingLevel::High).unwrap();
    h.session.prompt("list").await.unwrap();
    h.session.set_thinking_level(pi_ai::ThinkingLevel::Low).unwrap();
    h.session.prompt("quick").await.unwrap();
    let models: Vec<Value> = h.server.bodies().iter().map(|b| b["model"].clone()).collect();
    assert_eq!(models, vec![json!("big"), json!("big"), json!("small")]);
    assert_eq!(states(&h.entries()), vec![json!({"turns": 1}), json!({"turns": 2})]);
}
