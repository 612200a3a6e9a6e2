//! Compaction under a virtual selection (pi's `docs/virtual-models.md`, "Context usage ... and
//! compaction"): limits come from the physical model a response came from (the virtual model's
//! window is unknown, 0, and must not make every turn compact); before a request routed to a
//! model whose window the conversation exceeds, pi compacts first and keeps the route; the
//! summary is a request outside the agent loop, routed with reason `direct` (no state, and the
//! state it returns is not stored). The footer's window follows the routed model. Real HTTP on
//! 127.0.0.1.

mod http_support;

use std::sync::{Arc, Mutex};

use http_support::{Setup, text_reply};
use pi_ai::ThinkingLevel;
use pi_coding_agent::compaction::CompactionSettings;
use pi_coding_agent::extensions::{
    Extension, ExtensionApi, FnExtension, Route, RouteReason, VIRTUAL_MODEL_STATE_ENTRY, VirtualModelDefinition,
};
use pi_coding_agent::sdk::SessionSettings;
use pi_coding_agent::session::SessionEntry;
use serde_json::{Value, json};

type Seen = Arc<Mutex<Vec<(RouteReason, bool)>>>;

/// `router/auto`: `high` goes to phys/tiny (window 600), anything else to phys/wide (window
/// 100000); every route returns a new state. Records each request's reason and whether it had
/// state.
fn router(slot: Arc<Mutex<Option<ExtensionApi>>>, seen: Seen) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:router>", move |pi| {
        *slot.lock().unwrap() = Some(pi.clone());
        let seen = seen.clone();
        pi.register_virtual_model(VirtualModelDefinition {
            provider: "router".into(),
            id: "auto".into(),
            name: "Auto".into(),
            thinking_levels: Some(vec![ThinkingLevel::Low, ThinkingLevel::High]),
            context_window: None,
            max_tokens: None,
            input: None,
            route: Arc::new(move |request, ctx| {
                seen.lock().unwrap().push((request.reason, request.state.is_some()));
                let id = if request.thinking_level == ThinkingLevel::High { "tiny" } else { "wide" };
                let model = ctx.model_registry().find("phys", id).expect("phys model");
                let state = Some(json!({"reason": request.reason.as_str()}));
                Box::pin(async move { Ok(Route { model, thinking_level: ThinkingLevel::Off, state }) })
            }),
        })?;
        Ok(())
    }))
}

fn model(id: &str, window: u64) -> Value {
    json!({"id": id, "name": id, "reasoning": false, "input": ["text"], "contextWindow": window, "maxTokens": 256,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}})
}

fn words(n: usize) -> String {
    "word ".repeat(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_uses_the_routed_models_window_and_routes_its_summary_directly() {
    let slot = Arc::new(Mutex::new(None));
    let seen: Seen = Arc::default();
    let settings = SessionSettings {
        compaction: CompactionSettings { enabled: true, reserve_tokens: 100, keep_recent_tokens: 30 },
        ..SessionSettings::default()
    };
    let h = Setup {
        replies: vec![text_reply(&words(200)), text_reply(&words(200))],
        extensions: vec![router(slot.clone(), seen.clone())],
        settings: Some(settings),
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    let pi = slot.lock().unwrap().clone().unwrap();
    pi.register_provider(
        "phys",
        json!({"baseUrl": h.server.base_url, "api": "openai-completions", "apiKey": "k",
               "models": [model("tiny", 600), model("wide", 100_000)]}),
    )
    .unwrap();
    assert!(pi.set_model("router", "auto").await.unwrap());
    h.session.set_thinking_level(ThinkingLevel::Low).unwrap();
    // Without a response the window is the virtual model's (unknown).
    assert!(h.session.get_context_usage().is_none());

    // Two turns on the wide model: its window applies, nothing is compacted.
    h.session.prompt(&words(200)).await.unwrap();
    h.session.prompt(&words(200)).await.unwrap();
    let compactions = |h: &http_support::HttpSession| {
        h.session.branch(None).iter().filter(|e| matches!(e, SessionEntry::Compaction(_))).count()
    };
    assert_eq!(compactions(&h), 0, "{:?}", h.entry_types());
    assert_eq!(h.session.get_context_usage().map(|u| u.context_window), Some(100_000));
    assert_eq!(*seen.lock().unwrap(), [(RouteReason::User, false), (RouteReason::User, true)]);

    // The next request goes to the tiny model: the conversation is compacted first (its summary
    // routed directly, to the tiny model), then the request is sent as routed.
    h.session.set_thinking_level(ThinkingLevel::High).unwrap();
    h.session.prompt(&words(600)).await.unwrap();
    assert_eq!(compactions(&h), 1, "{:?}", h.entry_types());
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[2], (RouteReason::User, true));
    let direct: Vec<&(RouteReason, bool)> = seen[3..].iter().filter(|(r, _)| *r == RouteReason::Direct).collect();
    assert!(!direct.is_empty(), "{seen:?}");
    assert!(direct.iter().all(|(_, state)| !state), "direct requests have no state: {seen:?}");
    let bodies = h.server.bodies();
    let models: Vec<&str> = bodies.iter().map(|b| b["model"].as_str().unwrap_or_default()).collect();
    assert_eq!(&models[..2], ["wide", "wide"]);
    assert!(models[2..].iter().all(|m| *m == "tiny"), "{models:?}");
    // The state of a direct request is not stored.
    let stored: Vec<Value> = h
        .entries()
        .iter()
        .filter(|e| e["customType"] == VIRTUAL_MODEL_STATE_ENTRY)
        .map(|e| e["data"]["state"]["reason"].clone())
        .collect();
    assert!(stored.iter().all(|r| r == "user"), "{stored:?}");
    assert_eq!(h.session.get_context_usage().map(|u| u.context_window), Some(600));
}
