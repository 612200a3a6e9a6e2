//! `ctx.modelRegistry.stream` over the JSON-RPC subprocess protocol (issue 15): a Python
//! extension's command asks for a `streamSimple` request with its virtual model `router/auto`;
//! pi asks its router (`virtualModel.route`, reason `direct`, no state) while the call runs, the
//! request reaches the routed physical model on 127.0.0.1 and the events come back as
//! `modelRegistry.event` notifications before the answer; `simple: false` (pi's `stream`) fails
//! with pi's "must be routed before streaming".

mod http_support;

use std::sync::{Arc, Mutex};

use http_support::{Setup, text_reply};
use pi_coding_agent::extensions::{Extension, ExtensionApi, FnExtension};
use serde_json::{Value, json};

const EXTENSION: &str = r#"
import json, sys
pending = {}
def send(m):
    m["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
routes = []
def answer(m):
    method = m["method"]
    if method == "initialize":
        return {"protocolVersion": 3, "commands": [{"name": "direct"}],
                "virtualModels": [{"provider": "router", "id": "auto", "name": "Auto", "thinkingLevels": ["off", "high"]}]}
    if method == "virtualModel.route":
        req = m["params"]["request"]
        routes.append({"reason": req["reason"], "thinkingLevel": req["thinkingLevel"], "state": req.get("state"),
                       "roles": [x["role"] for x in req["messages"]]})
        return {"model": {"provider": "phys", "id": "big"}, "thinkingLevel": "high", "hasState": True, "state": {"x": 1}}
    if method == "command.run":
        snapshot = call("ctx.modelRegistry", {})
        model = [x for x in snapshot["models"] if x["provider"] == "router" and x["id"] == "auto"][0]
        context = {"systemPrompt": "Be brief.", "messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
        seen = {}
        for rid, simple in ((1, True), (2, False)):
            events = []
            pending_events[rid] = events
            call("ctx.modelRegistry.stream", {"requestId": rid, "simple": simple, "model": model, "context": context,
                                              "options": {"reasoning": "high", "maxTokens": 100000}})
            seen[str(rid)] = events
        call("pi.appendEntry", {"customType": "direct", "data": {"routes": routes, "seen": seen}})
        return None
    return None
pending_events = {}
counter = [0]
def call(method, params):
    counter[0] += 1
    rid = "ext-%d" % counter[0]
    send({"id": rid, "method": method, "params": params})
    while True:
        m = json.loads(sys.stdin.readline())
        if m.get("id") == rid and "method" not in m:
            if "error" in m: raise Exception(m["error"]["message"])
            return m.get("result")
        handle(m)
def handle(m):
    if m.get("method") == "modelRegistry.event":
        e = m["params"]["event"]
        out = {"type": e["type"]}
        final = e.get("message") or e.get("error")
        if final:
            out.update({"provider": final["provider"], "model": final["model"], "stopReason": final["stopReason"],
                        "errorMessage": final.get("errorMessage")})
        pending_events[m["params"]["requestId"]].append(out)
        return
    if "method" not in m: return
    try:
        r = answer(m)
        if "id" in m: send({"id": m["id"], "result": r})
    except Exception as e:
        if "id" in m: send({"id": m["id"], "error": {"code": -32000, "message": str(e)}})
for line in sys.stdin:
    handle(json.loads(line))
"#;

fn handle(slot: Arc<Mutex<Option<ExtensionApi>>>) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:handle>", move |pi| {
        *slot.lock().unwrap() = Some(pi.clone());
        Ok(())
    }))
}

fn model(id: &str, max_tokens: u64) -> Value {
    json!({"id": id, "name": id, "reasoning": true, "input": ["text"], "contextWindow": 8192, "maxTokens": max_tokens,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subprocess_extension_streams_with_its_virtual_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("direct.py");
    std::fs::write(&path, EXTENSION).unwrap();
    let slot = Arc::new(Mutex::new(None));
    let h = Setup {
        replies: vec![text_reply("routed")],
        extensions: vec![handle(slot.clone())],
        extension_paths: vec![path],
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
               "models": [model("big", 512)]}),
    )
    .unwrap();
    h.session.prompt("/direct").await.unwrap();
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
    let entry = h.entries().into_iter().find(|e| e["customType"] == "direct").expect("the extension's entry");
    let data = &entry["data"];
    assert_eq!(
        data["routes"],
        json!([{"reason": "direct", "thinkingLevel": "high", "state": null, "roles": ["system", "user"]}])
    );
    let types: Vec<&str> = data["seen"]["1"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["start", "text_start", "text_delta", "text_end", "done"]);
    let done = data["seen"]["1"].as_array().unwrap().last().unwrap();
    assert_eq!((done["provider"].as_str(), done["model"].as_str()), (Some("phys"), Some("big")));
    assert_eq!(
        data["seen"]["2"],
        json!([{"type": "error", "provider": "router", "model": "auto", "stopReason": "error",
                "errorMessage": "Virtual model router/auto must be routed before streaming"}])
    );
    // The routed request: the physical model, its output budget, the routed level; no state kept.
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 1);
    assert_eq!((bodies[0]["model"].as_str(), bodies[0]["max_completion_tokens"].as_u64()), (Some("big"), Some(512)));
    assert_eq!(bodies[0]["reasoning_effort"], "high");
    assert!(!h.entries().iter().any(|e| e["customType"] == "pi.virtual-model-state"));
}
