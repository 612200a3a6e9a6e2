//! `pi.registerVirtualModel` and `pi.registerMarkdownTransformer` from a TypeScript extension in
//! the JavaScript host: the router runs in the host for every request (the server on 127.0.0.1
//! receives the physical model it picked; its state comes back on the next request), a router
//! that throws ends the run with an error response naming the virtual model, and the transformer
//! rewrites the transcript's assistant Markdown.

mod http_support;
mod js_support;

use std::rc::Rc;
use std::sync::{Arc, Mutex};

use http_support::{Setup, text_reply, tool_reply};
use js_support::{fixture, node_available};
use pi_ai::providers::faux::{faux_assistant_message, faux_text};
use pi_coding_agent::extensions::{Extension, ExtensionApi, FnExtension, MarkdownTransformContext, VIRTUAL_MODEL_API};
use pi_coding_agent::render::{RenderOptions, TranscriptRenderer, render_lines};
use pi_tui::{ColorMode, Theme};
use serde_json::{Value, json};

/// An in-process extension that hands out its API, to register the physical provider once the
/// server's URL is known.
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
async fn a_typescript_router_routes_every_request_and_its_transformer_rewrites_assistant_text() {
    if !node_available() {
        return;
    }
    let slot = Arc::new(Mutex::new(None));
    let h = Setup {
        replies: vec![tool_reply("call_1", "read", json!({"path": "missing.txt"})), text_reply("done")],
        extensions: vec![handle(slot.clone())],
        extension_paths: vec![fixture("virtual-router.ts")],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    let pi = slot.lock().unwrap().clone().unwrap();
    pi.register_provider(
        "phys",
        json!({"baseUrl": h.server.base_url, "api": "openai-completions", "apiKey": "phys-key",
               "models": [model("small"), model("big")]}),
    )
    .unwrap();
    let runner = h.session.extension_runner().unwrap().clone();
    let auto = runner.virtual_model("router", "auto");
    let auto = auto.unwrap_or_else(|| panic!("not registered: {:?} {:?}", runner.load_errors(), h.error_pairs()));
    assert_eq!(
        (auto.model.api.as_str(), auto.model.name.as_str(), auto.model.context_window),
        (VIRTUAL_MODEL_API, "Auto", 1000)
    );
    assert!(pi.set_model("router", "auto").await.unwrap());
    h.session.set_thinking_level(pi_ai::ThinkingLevel::High).unwrap();

    h.session.prompt("list").await.unwrap();
    let bodies = h.server.bodies();
    let models: Vec<Value> = bodies.iter().map(|b| b["model"].clone()).collect();
    assert_eq!(models, vec![json!("big"), json!("big")], "{:#?}", h.entries().last());
    assert_eq!(
        states(&h.entries()),
        vec![
            json!({"count": 1, "reason": "user", "previous": null}),
            json!({"count": 2, "reason": "continuation", "previous": "big"})
        ]
    );
    assert_eq!(h.session.model().id, "auto");
    // As the reference records it (`anchor.sh pi -e router.ts --model router/auto --thinking high`):
    // the state entry before each response, the response naming the physical model at its own
    // (clamped) level, and the body keys of the reference's request.
    let types: Vec<String> =
        h.entry_types().into_iter().filter(|t| t.starts_with("message:") || t.starts_with("custom:")).collect();
    assert_eq!(
        types,
        [
            "message:system",
            "message:user",
            "custom:pi.virtual-model-state",
            "message:assistant",
            "message:toolResult",
            "custom:pi.virtual-model-state",
            "message:assistant"
        ]
    );
    let first = h.entries().into_iter().find(|e| e["message"]["role"] == "assistant").unwrap();
    let named = ["provider", "model", "api", "thinkingLevel"].map(|k| first["message"][k].clone());
    assert_eq!(named, [json!("phys"), json!("big"), json!("openai-completions"), json!("off")]);
    let mut keys: Vec<&str> = bodies[0].as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["max_completion_tokens", "messages", "model", "store", "stream", "stream_options", "tools"]);
    assert_eq!(bodies[0]["max_completion_tokens"], 256);

    // The router throws: an error response naming the virtual model, nothing sent.
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

    // The transformer, for assistant text only, told whether the message streams.
    let context = |message_type: &str, is_streaming: bool| MarkdownTransformContext {
        message_type: message_type.into(),
        is_streaming,
        available_width: 40,
        ..Default::default()
    };
    let runner2 = runner.clone();
    let (done, streaming, user) = tokio::task::spawn_blocking(move || {
        (
            runner2.transform_markdown("hi", &context("assistant", false)),
            runner2.transform_markdown("hi", &context("assistant", true)),
            runner2.transform_markdown("hi", &context("user", false)),
        )
    })
    .await
    .unwrap();
    assert_eq!(
        (done.as_str(), streaming.as_str(), user.as_str()),
        ("hi [assistant]", "hi [assistant, streaming]", "hi")
    );

    // Drawn in the transcript.
    let lines = tokio::task::spawn_blocking(move || {
        let theme = Rc::new(Theme::dark(ColorMode::Truecolor).unwrap());
        let renderer = TranscriptRenderer::new(theme, Some(runner), RenderOptions::default());
        let message = faux_assistant_message(vec![faux_text("All done")], Default::default());
        let mut container = pi_tui::Container::new();
        for c in renderer.assistant_message(&message) {
            container.add_child(c);
        }
        render_lines(&mut container, 40)
    })
    .await
    .unwrap();
    let plain: Vec<String> = lines.iter().map(|l| pi_tui::ansi::strip_terminal_sequences(l)).collect();
    assert!(plain.iter().any(|l| l.contains("All done [assistant]")), "{plain:?}");
}
