//! A provider registered by a TypeScript extension with a JavaScript `streamSimple`
//! (`fixtures/js_extensions/echo-provider.ts`): requests to its model stream through the
//! JavaScript host, as in the reference: the text arrives as deltas, the usage and stop reason
//! of its `done` event are the message's, its error events and a function that throws end the
//! run with the error, and aborting the run aborts the function's `signal`. Nothing reaches an
//! HTTP server.

mod http_support;
mod js_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http_support::{HttpSession, Setup};
use js_support::{fixture, node_available};
use pi_agent_core::AgentEvent;
use pi_coding_agent::extensions::{Extension, ExtensionApi, FnExtension};
use pi_coding_agent::sdk::SessionEvent;
use serde_json::{Value, json};

fn handle(slot: Arc<Mutex<Option<ExtensionApi>>>) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:handle>", move |pi| {
        *slot.lock().unwrap() = Some(pi.clone());
        Ok(())
    }))
}

fn last_assistant(h: &HttpSession) -> Value {
    h.entries().into_iter().rev().find(|e| e["message"]["role"] == "assistant").expect("an assistant message")["message"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_javascript_stream_simple_answers_fails_and_aborts_as_the_reference() {
    if !node_available() {
        return;
    }
    let slot = Arc::new(Mutex::new(None));
    let h = Setup {
        extensions: vec![handle(slot.clone())],
        extension_paths: vec![fixture("echo-provider.ts")],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    let updates = Arc::new(AtomicUsize::new(0));
    let seen = updates.clone();
    let _sub = h.session.subscribe(move |e| {
        if let SessionEvent::Agent(AgentEvent::MessageUpdate { .. }) = e {
            seen.fetch_add(1, Ordering::SeqCst);
        }
    });
    let pi = slot.lock().unwrap().clone().unwrap();
    let registered = h.session.extension_runner().unwrap().registered_providers();
    assert!(
        pi.set_model("jsprov", "echo").await.unwrap(),
        "{registered:?} {:?} {:?}",
        h.error_pairs(),
        h.session.extension_runner().unwrap().load_errors()
    );

    h.session.prompt("hello there").await.unwrap();
    let message = last_assistant(&h);
    assert_eq!(message["content"], json!([{"type": "text", "text": "Echo: hello there"}]), "{message:#}");
    assert_eq!(
        (message["provider"].clone(), message["model"].clone(), message["api"].clone()),
        (json!("jsprov"), json!("echo"), json!("js-echo-api"))
    );
    assert_eq!(message["stopReason"], "stop");
    assert_eq!((message["usage"]["input"].clone(), message["usage"]["output"].clone()), (json!(7), json!(2)));
    // text_start, two deltas, text_end: each a message update (start is the message start).
    assert_eq!(updates.load(Ordering::SeqCst), 4);

    h.session.prompt("please refuse").await.unwrap();
    let message = last_assistant(&h);
    assert_eq!(
        (message["stopReason"].clone(), message["errorMessage"].clone()),
        (json!("error"), json!("echo refused"))
    );

    h.session.prompt("throw it").await.unwrap();
    let message = last_assistant(&h);
    assert_eq!(
        (message["stopReason"].clone(), message["errorMessage"].clone()),
        (json!("error"), json!("echo provider threw"))
    );

    // Aborted while the function waits on its signal.
    let before = updates.load(Ordering::SeqCst);
    let session = h.session.clone();
    let run = tokio::spawn(async move { session.prompt("hang on").await });
    h.wait_until("the first word", |_| updates.load(Ordering::SeqCst) >= before + 2).await;
    h.session.abort().await;
    run.await.unwrap().unwrap();
    let message = last_assistant(&h);
    assert_eq!(message["stopReason"], "aborted");
    assert_eq!(message["content"], json!([{"type": "text", "text": "Echo: "}]));
    assert_eq!(h.server.count(), 0);
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}

/// The options pi passes to a provider's `streamSimple` (`fixtures/js_extensions/options-provider.ts`,
/// recorded from pi 1.6.0 in `options-provider.pi.json`): the model, the resolved `apiKey`, the
/// provider's and the transformed (`before_provider_headers`) `headers`, `timeoutMs`, `signal`,
/// and `onPayload` / `onResponse` / `onProviderStreamEvent`, which run `before_provider_request`
/// (its replacement returned), `after_provider_response` and `provider_stream_event` as pi's do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_javascript_stream_simple_gets_the_options_and_callbacks_pi_passes() {
    use pi_coding_agent::extensions::{BeforeProviderHeadersEvent, BeforeProviderRequestEvent};
    if !node_available() {
        return;
    }
    let recorded: Value =
        serde_json::from_str(include_str!("fixtures/js_extensions/options-provider.pi.json")).expect("fixture");
    let slot = Arc::new(Mutex::new(None));
    let events = Arc::new(Mutex::new(Vec::<Value>::new()));
    let log = events.clone();
    let recorder: Arc<dyn Extension> = Arc::new(FnExtension::new("<recorder>", move |pi| {
        pi.on_sync::<BeforeProviderRequestEvent>(|e, _| {
            let mut payload = e.payload.clone();
            payload["injected"] = json!(1);
            Ok(Some(payload))
        });
        pi.on_sync::<BeforeProviderHeadersEvent>(|e, _| {
            e.headers.insert("x-trace".into(), Some("t".into()));
            Ok(None)
        });
        for name in ["after_provider_response", "provider_stream_event"] {
            let log = log.clone();
            pi.on_notify(name, move |e, _| {
                log.lock().unwrap().push(serde_json::to_value(&*e).unwrap_or_default());
                Box::pin(std::future::ready(Ok(None)))
            });
        }
        Ok(())
    }));
    let h = Setup {
        extensions: vec![handle(slot.clone()), recorder],
        extension_paths: vec![fixture("options-provider.ts")],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    let pi = slot.lock().unwrap().clone().unwrap();
    assert!(pi.set_model("optprov", "probe").await.unwrap(), "{:?}", h.error_pairs());
    h.session.prompt("hi").await.unwrap();
    let message = last_assistant(&h);
    let text = message["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{message:#}"));
    let ours: Value = serde_json::from_str(text).expect("the options as JSON");
    let theirs = &recorded["options"];
    for key in [
        "model",
        "apiKey",
        "headers",
        "timeoutMs",
        "signal",
        "onPayload",
        "onResponse",
        "onProviderStreamEvent",
        "payload",
    ] {
        assert_eq!(ours[key], theirs[key], "options.{key}: {ours:#}");
    }
    assert!(ours["sessionId"].is_string(), "{ours:#}");
    assert_eq!(*events.lock().unwrap(), recorded["events"].as_array().unwrap().clone());
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}

fn entry_data(h: &HttpSession, custom_type: &str) -> Value {
    let entries = h.entries();
    let entry = entries.iter().rev().find(|e| e["customType"] == custom_type);
    entry.unwrap_or_else(|| panic!("no {custom_type} entry: {:?}", h.error_pairs()))["data"].clone()
}

/// `ctx.modelRegistry.streamSimple` / `stream` / `complete` in the JavaScript host run the request
/// in pi-rs (the session's provider, its key, the extension's options: the body has
/// `max_completion_tokens` 50 and the system prompt), the events stream back in pi-ai's order, aborting the
/// `signal` aborts the request, and the auth members answer as pi's (`ok` with the models.json key;
/// `getProviderAuth`'s `{auth: {apiKey}}`; nothing for an unknown provider).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_registry_requests_run_in_pi_rs_and_stream_back() {
    if !node_available() {
        return;
    }
    let h = Setup {
        replies: vec![http_support::text_reply("Hello there"), http_support::text_reply("Again")],
        extension_paths: vec![fixture("echo-provider.ts"), fixture("registry-stream.ts")],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("/registry-stream").await.unwrap();
    let data = entry_data(&h, "registry-stream");
    assert_eq!(data["text"], "Hello there", "{data:#}");
    assert_eq!(data["stop"], "stop");
    assert_eq!(data["content"], json!([{"type": "text", "text": "Hello there"}]));
    assert_eq!(data["completed"], json!([{"type": "text", "text": "Again"}]));
    let types: Vec<String> = serde_json::from_value(data["types"].clone()).unwrap();
    assert_eq!(types.first().map(String::as_str), Some("start"));
    assert_eq!(types.last().map(String::as_str), Some("done"));
    assert!(types.contains(&"text_start".to_owned()) && types.contains(&"text_end".to_owned()), "{types:?}");
    let body = h.server.bodies()[0].clone();
    assert_eq!(body["max_completion_tokens"], 50, "{body:#}");
    assert_eq!(body["messages"][0]["content"], "Be brief.", "{body:#}");

    h.session.prompt("/registry-abort").await.unwrap();
    let data = entry_data(&h, "registry-abort");
    assert_eq!(data["stop"], "aborted", "{data:#}");
    assert_eq!(data["types"], json!(["start", "text_start", "text_delta", "error"]));

    h.session.prompt("/registry-auth").await.unwrap();
    let data = entry_data(&h, "registry-auth");
    assert_eq!(data["keyAndHeaders"]["ok"], true, "{data:#}");
    assert_eq!(data["keyAndHeaders"]["apiKey"], "none", "{data:#}");
    assert_eq!(data["keyForProvider"], "none");
    assert_eq!(data["providerAuth"]["auth"], json!({"apiKey": "none"}));
    assert_eq!(data["unknown"], Value::Null);
    assert_eq!(data["ofTypeImage"], Value::Null);
    assert_eq!(h.server.count(), 2);
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());

    // The same registry in Rust.
    let registry = h.session.extension_runner().unwrap().create_context().model_registry();
    let model = registry.find("local", "smollm2-135m").expect("the local model");
    assert_eq!(
        registry.get_api_key_and_headers(&model).await,
        pi_coding_agent::extensions::RequestAuth::Ok { api_key: Some("none".into()), headers: vec![] }
    );
    assert_eq!(registry.get_api_key_for_provider("local").await.as_deref(), Some("none"));
    let context = pi_ai::Context {
        messages: vec![pi_ai::Message::User(pi_ai::UserMessage::new("from rust").into())],
        ..Default::default()
    };
    let message = registry.complete(&model, context, Default::default()).await;
    assert_eq!(serde_json::to_value(&message.content).unwrap(), json!([{"type": "text", "text": "ok"}]));
    assert_eq!(h.server.count(), 3);
}

/// A native pi-ai Provider (`fixtures/js_extensions/native-provider.ts`): the agent's requests use
/// its `streamSimple`, `ctx.modelRegistry.stream` and `complete` its API-specific `stream`, as the
/// reference answers (`pi -e native-provider.ts -p /native-requests`:
/// `{"stream":"via stream","complete":"via stream","streamSimple":"via streamSimple"}`; and
/// `--model nativeprov/m -p hello`: "via streamSimple"). So do the Rust registry's members.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_provider_stream_is_used_where_pi_uses_it() {
    if !node_available() {
        return;
    }
    let slot = Arc::new(Mutex::new(None));
    let h = Setup {
        extensions: vec![handle(slot.clone())],
        extension_paths: vec![fixture("native-provider.ts")],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("/native-requests").await.unwrap();
    assert_eq!(
        entry_data(&h, "native-requests"),
        json!({"stream": "via stream", "complete": "via stream", "streamSimple": "via streamSimple"})
    );
    let pi = slot.lock().unwrap().clone().unwrap();
    assert!(pi.set_model("nativeprov", "m").await.unwrap(), "{:?}", h.error_pairs());
    h.session.prompt("hello").await.unwrap();
    assert_eq!(last_assistant(&h)["content"], json!([{"type": "text", "text": "via streamSimple"}]));

    let registry = h.session.extension_runner().unwrap().create_context().model_registry();
    let model = registry.find("nativeprov", "m").expect("the native model");
    let context = || pi_ai::Context {
        messages: vec![pi_ai::Message::User(pi_ai::UserMessage::new("hi").into())],
        ..Default::default()
    };
    let text = |m: pi_ai::AssistantMessage| serde_json::to_value(&m.content).unwrap()[0]["text"].clone();
    assert_eq!(text(registry.complete(&model, context(), Default::default()).await), "via stream");
    assert_eq!(text(registry.complete_simple(&model, context(), Default::default()).await), "via streamSimple");
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}
