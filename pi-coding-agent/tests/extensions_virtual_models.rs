//! `pi.registerVirtualModel` for in-process extensions (pi's `virtual-models.js` and
//! `AgentSession` under a virtual selection): the virtual model is listed with the session's
//! models and selectable; each request is routed to the physical model the router picks, which
//! is what the server receives and what the assistant message names; router state is stored on
//! the branch; a failed routing ends the run with an error response naming the virtual model.
//! Real HTTP on 127.0.0.1 (the scripted chat-completions server).

mod http_support;

use std::sync::{Arc, Mutex};

use http_support::{Setup, text_reply, tool_reply};
use pi_ai::ThinkingLevel;
use pi_coding_agent::extensions::{
    Extension, ExtensionApi, FnExtension, Route, RouteReason, VIRTUAL_MODEL_API, VIRTUAL_MODEL_STATE_ENTRY,
    VirtualModelDefinition,
};
use pi_coding_agent::session::SessionEntry;
use serde_json::{Value, json};

/// What the router saw: reason, selected level, `previous` model id, state, message count.
type Seen = Arc<Mutex<Vec<(RouteReason, ThinkingLevel, Option<String>, Option<Value>)>>>;

/// An extension with a router `router/auto` (levels low and high): `high` goes to `phys/big`,
/// anything else to `phys/small`; a user message `fail` routes to a model that does not exist.
/// Each routed request bumps the state's counter.
fn router(slot: Arc<Mutex<Option<ExtensionApi>>>, seen: Seen) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:router>", move |pi| {
        *slot.lock().unwrap() = Some(pi.clone());
        let seen = seen.clone();
        pi.register_virtual_model(VirtualModelDefinition {
            provider: "router".into(),
            id: "auto".into(),
            name: "Auto".into(),
            thinking_levels: Some(vec![ThinkingLevel::Low, ThinkingLevel::High]),
            context_window: Some(1000),
            max_tokens: None,
            input: None,
            route: Arc::new(move |request, ctx| {
                let previous = request.previous.as_ref().map(|p| p.model.id.clone());
                seen.lock().unwrap().push((request.reason, request.thinking_level, previous, request.state.clone()));
                let asked_to_fail = request.messages.iter().rev().find_map(|m| match m {
                    pi_ai::Message::User(u) => Some(format!("{:?}", u.content).contains("fail")),
                    _ => None,
                });
                let registry = ctx.model_registry();
                let id = if request.thinking_level == ThinkingLevel::High { "big" } else { "small" };
                let model = if asked_to_fail == Some(true) {
                    pi_ai::Model { provider: "nowhere".into(), id: "x".into(), ..Default::default() }
                } else {
                    registry.find("phys", id).expect("phys model")
                };
                let count = request.state.as_ref().and_then(|s| s["count"].as_u64()).unwrap_or(0);
                let state = Some(json!({"count": count + 1}));
                Box::pin(async move { Ok(Route { model, thinking_level: ThinkingLevel::Medium, state }) })
            }),
        })?;
        Ok(())
    }))
}

fn model(id: &str) -> Value {
    json!({"id": id, "name": id, "reasoning": false, "input": ["text"], "contextWindow": 8192, "maxTokens": 256,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}})
}

fn register_phys(pi: &ExtensionApi, base_url: &str) {
    pi.register_provider(
        "phys",
        json!({"baseUrl": base_url, "api": "openai-completions", "apiKey": "phys-key",
               "models": [model("small"), model("big")]}),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_virtual_model_is_listed_selected_and_routed_per_request() {
    let slot = Arc::new(Mutex::new(None));
    let seen: Seen = Arc::default();
    let replies =
        vec![tool_reply("call_1", "read", json!({"path": "missing.txt"})), text_reply("listed"), text_reply("second")];
    let h = Setup { replies, extensions: vec![router(slot.clone(), seen.clone())], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let pi = slot.lock().unwrap().clone().unwrap();
    register_phys(&pi, &h.server.base_url);
    let runner = h.session.extension_runner().unwrap();

    // Listed beside the physical models, selectable through `pi.setModel`.
    let listed = runner.create_context().model_registry().get_all();
    let auto = listed.iter().find(|m| m.provider == "router" && m.id == "auto").expect("listed");
    assert_eq!(auto.api, VIRTUAL_MODEL_API);
    assert_eq!((auto.context_window, auto.max_tokens, auto.reasoning), (1000, 0, true));
    assert_eq!(auto.input, vec!["text", "image"]);
    assert!(pi.set_model("router", "auto").await.unwrap());
    h.session.set_thinking_level(ThinkingLevel::High).unwrap();
    assert_eq!(h.session.thinking_level(), ThinkingLevel::High);

    h.session.prompt("list files").await.unwrap();
    // The tool follow-up is a continuation with the previous response's physical model.
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?} {:#?}", h.entries());
        assert_eq!(seen[0], (RouteReason::User, ThinkingLevel::High, None, None));
        assert_eq!(
            seen[1],
            (RouteReason::Continuation, ThinkingLevel::High, Some("big".into()), Some(json!({"count": 1})))
        );
    }
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 2);
    assert!(bodies.iter().all(|b| b["model"] == "big"), "{bodies:?}");
    assert_eq!(
        h.server.headers.lock().unwrap()[0].iter().find(|(k, _)| k == "authorization").unwrap().1,
        "Bearer phys-key"
    );

    // The selection stays virtual; assistant messages name the physical model.
    assert_eq!(h.session.model().id, "auto");
    let branch = h.session.branch(None);
    let assistants: Vec<(String, String)> = branch
        .iter()
        .filter_map(|e| match e {
            SessionEntry::Message(m) => m.message.as_assistant().map(|a| (a.provider.clone(), a.model.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(assistants, vec![("phys".to_owned(), "big".to_owned()); 2]);
    let states: Vec<Value> = branch
        .iter()
        .filter_map(|e| match e {
            SessionEntry::Custom(c) if c.custom_type == VIRTUAL_MODEL_STATE_ENTRY => c.data.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(
        states,
        vec![
            json!({"provider": "router", "modelId": "auto", "state": {"count": 1}}),
            json!({"provider": "router", "modelId": "auto", "state": {"count": 2}})
        ]
    );

    // A new user turn at another level goes to the other model, with the stored state.
    h.session.set_thinking_level(ThinkingLevel::Low).unwrap();
    h.session.prompt("again").await.unwrap();
    assert_eq!(h.server.last()["model"], "small");
    let last = seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(last, (RouteReason::User, ThinkingLevel::Low, Some("big".into()), Some(json!({"count": 2}))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_routing_ends_the_run_with_an_error_naming_the_virtual_model() {
    let slot = Arc::new(Mutex::new(None));
    let seen: Seen = Arc::default();
    let h = Setup { extensions: vec![router(slot.clone(), seen.clone())], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let pi = slot.lock().unwrap().clone().unwrap();
    register_phys(&pi, &h.server.base_url);
    assert!(pi.set_model("router", "auto").await.unwrap());
    h.session.prompt("please fail").await.unwrap();
    assert_eq!(h.server.count(), 0, "nothing reaches a server");
    let last = h.session.branch(None).iter().rev().find_map(|e| match e {
        SessionEntry::Message(m) => m.message.as_assistant().cloned(),
        _ => None,
    });
    let last = last.expect("an error response");
    assert_eq!((last.provider.as_str(), last.model.as_str()), ("router", "auto"));
    assert_eq!(last.stop_reason, pi_ai::StopReason::Error);
    assert_eq!(
        last.error_message.as_deref(),
        Some("Virtual model router/auto routed to nowhere/x, which is not a physical model.")
    );

    // Unregistered, the selection can no longer be routed.
    pi.unregister_virtual_model("router", "auto");
    assert!(h.session.extension_runner().unwrap().virtual_models().is_empty());
    h.session.prompt("hello").await.unwrap();
    let last = h.session.branch(None).iter().rev().find_map(|e| match e {
        SessionEntry::Message(m) => m.message.as_assistant().cloned(),
        _ => None,
    });
    assert_eq!(last.unwrap().error_message.as_deref(), Some("Virtual model router/auto is not registered."));
    assert_eq!(h.server.count(), 0);
}
