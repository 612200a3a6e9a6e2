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
