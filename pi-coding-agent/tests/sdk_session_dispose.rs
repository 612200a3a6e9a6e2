//! `AgentSession::dispose` releases what the providers keep for the session, as pi's
//! `cleanupSessionResources(sessionId)`: every registered cleanup runs once with the session's
//! id (the Codex WebSocket cache is closed the same way; `pi-ai/tests/codex_websocket.rs` checks
//! the close frame).

use std::sync::{Arc, Mutex};

use http_support::{Setup, text_reply};

#[path = "http_support/mod.rs"]
mod http_support;

#[tokio::test]
async fn dispose_runs_the_session_resource_cleanups_with_the_session_id() {
    let h = Setup { replies: vec![text_reply("ok")], ..Default::default() }.start().await;
    h.session.prompt("hi").await.unwrap();
    let id = h.session.session_id();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    let mine = id.clone();
    // Other tests in this binary may dispose sessions at the same time: keep only this one's.
    let registration = pi_ai::session_resources::register_session_resource_cleanup(Box::new(move |s| {
        if s == mine {
            sink.lock().unwrap().push(s.to_owned());
        }
    }));
    assert!(seen.lock().unwrap().is_empty(), "nothing runs before dispose");
    h.session.dispose().await;
    registration.unregister();
    assert_eq!(seen.lock().unwrap().clone(), vec![id]);
}
