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
    for key in
        ["model", "apiKey", "headers", "timeoutMs", "signal", "onPayload", "onResponse", "onProviderStreamEvent", "payload"]
    {
        assert_eq!(ours[key], theirs[key], "options.{key}: {ours:#}");
    }
    assert!(ours["sessionId"].is_string(), "{ours:#}");
    assert_eq!(*events.lock().unwrap(), recorded["events"].as_array().unwrap().clone());
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}
