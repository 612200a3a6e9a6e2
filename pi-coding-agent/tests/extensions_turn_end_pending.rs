//! `turn_end`'s `context.pendingMessages` holds the agent's queued steering and follow-up
//! messages (pi's `_getPendingBoundaryMessages`: `agent.peekQueuedMessages()` then the pending
//! custom messages), over real HTTP on 127.0.0.1.

mod http_support;

use std::sync::{Arc, Mutex};

use http_support::{Setup, text_reply, tool_reply};
use pi_coding_agent::extensions::{
    DeliverAs, Extension, ExtensionApi, FnExtension, NotifyEvent, SendUserMessageOptions, ToolCallEvent,
};
use serde_json::{Value, json};

fn ext(name: &str, setup: impl Fn(&ExtensionApi) + Send + Sync + 'static) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new(name, move |pi| {
        setup(pi);
        Ok(())
    }))
}

/// A `tool_call` handler steers a user message into the run; the first `turn_end` (after the
/// tool result) sees it pending, the second (after the steered message was delivered) does not.
#[tokio::test]
async fn turn_end_lists_queued_steering() {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = seen.clone();
    let pending_at_call: Arc<Mutex<Vec<bool>>> = Arc::default();
    let at_call = pending_at_call.clone();
    let recorder = ext("<inline:pending>", move |pi| {
        let api = pi.clone();
        let at_call = at_call.clone();
        pi.on::<ToolCallEvent>(move |_event, ctx| {
            let (api, at_call) = (api.clone(), at_call.clone());
            let ctx = ctx.clone();
            Box::pin(async move {
                let steer = SendUserMessageOptions { deliver_as: Some(DeliverAs::Steer), ..Default::default() };
                api.send_user_message("steered in", steer)?;
                // Queued within the call (pi queues before its first real suspension), not by a
                // task the scheduler may run after this turn has ended.
                at_call.lock().expect("lock").push(ctx.has_pending_messages());
                Ok(None)
            })
        });
        let sink = sink.clone();
        pi.on_notify("turn_end", move |event, _ctx| {
            let sink = sink.clone();
            Box::pin(async move {
                if let NotifyEvent::TurnEnd { boundary: Some(state), .. } = event {
                    let pending = serde_json::to_value(&state.context.pending_messages)?;
                    sink.lock().expect("lock").push(pending);
                }
                Ok(None)
            })
        });
    });
    let h = Setup {
        replies: vec![tool_reply("call_1", "read", json!({"path": "notes.txt"})), text_reply("after steer")],
        files: vec![("notes.txt", "alpha\n")],
        extensions: vec![recorder],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("go").await.expect("prompt");
    assert_eq!(*pending_at_call.lock().expect("lock"), vec![true], "pending as soon as sent");
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 2, "two turns: {seen:?}");
    let first = seen[0].as_array().expect("array");
    assert_eq!(first.len(), 1, "the steered message is pending at the first turn_end: {first:?}");
    assert_eq!(first[0]["role"], "user");
    assert_eq!(first[0]["content"][0]["text"], "steered in");
    assert_eq!(seen[1], json!([]), "delivered by the second turn");
}
