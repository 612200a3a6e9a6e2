//! Streamed deltas (`MessageUpdate`) take the sink's path without a future per event
//! (`EventSink::emit_update`): listeners still run in registration order, one delta after the
//! other, an async listener that is not ready at once is awaited before the listeners after it
//! and before the next delta, and a failing or panicking one takes the failure path.

mod support;

use std::sync::{Arc, Mutex};

use futures::FutureExt;
use pi_agent_core::{Agent, AgentEvent, AgentMessage};
use pi_ai::StopReason;
use support::*;

fn delta_text(e: &AgentEvent) -> Option<String> {
    match e {
        AgentEvent::MessageUpdate {
            assistant_message_event: pi_ai::AssistantMessageEvent::TextDelta { delta, .. },
        } => Some(delta.clone()),
        _ => None,
    }
}

#[tokio::test]
async fn updates_reach_every_listener_in_order_even_when_one_must_be_awaited() {
    let script = Script::new(vec![text("alpha beta gamma delta epsilon")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let first = log.clone();
    agent.subscribe(move |e: &AgentEvent| {
        if let Some(d) = delta_text(e) {
            first.lock().unwrap().push(format!("sync1 {d}"));
        }
    });
    // Not ready at once: it yields to the runtime before recording the delta.
    let slow = log.clone();
    agent.subscribe_async(move |e: AgentEvent| {
        let slow = slow.clone();
        async move {
            if let Some(d) = delta_text(&e) {
                tokio::task::yield_now().await;
                tokio::task::yield_now().await;
                slow.lock().unwrap().push(format!("async {d}"));
            }
            Ok(())
        }
        .boxed()
    });
    // A replacing listener after it, ready at once.
    let replacing = log.clone();
    agent.subscribe_replacing(move |e: AgentEvent| {
        if let Some(d) = delta_text(&e) {
            replacing.lock().unwrap().push(format!("replacing {d}"));
        }
        futures::future::ready(Ok(None)).boxed()
    });
    let last = log.clone();
    agent.subscribe(move |e: &AgentEvent| {
        if let Some(d) = delta_text(e) {
            last.lock().unwrap().push(format!("sync2 {d}"));
        }
    });
    agent.prompt("go").await.unwrap();

    let log = log.lock().unwrap().clone();
    assert!(log.len() >= 8, "several deltas expected: {log:?}");
    // Every delta goes through the four listeners in order before the next delta starts.
    let mut text = String::new();
    for group in log.chunks(4) {
        let delta = group[0].strip_prefix("sync1 ").expect("a delta starts at the first listener");
        assert_eq!(
            group,
            [
                format!("sync1 {delta}"),
                format!("async {delta}"),
                format!("replacing {delta}"),
                format!("sync2 {delta}")
            ]
        );
        text.push_str(delta);
    }
    assert_eq!(text, "alpha beta gamma delta epsilon");
    let messages = agent.messages();
    assert_eq!(messages.last().and_then(AgentMessage::as_assistant).map(|a| a.stop_reason), Some(StopReason::Stop));
}

#[tokio::test]
async fn an_awaited_update_listener_that_fails_takes_the_failure_path() {
    let script = Script::new(vec![text("one two three")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    agent.subscribe_async(|e: AgentEvent| {
        async move {
            if delta_text(&e).is_some() {
                tokio::task::yield_now().await;
                return Err("update refused".into());
            }
            Ok(())
        }
        .boxed()
    });
    agent.prompt("go").await.unwrap();
    let last = agent.messages().pop().unwrap();
    let a = last.as_assistant().unwrap();
    assert_eq!(a.stop_reason, StopReason::Error);
    assert_eq!(a.error_message.as_deref(), Some("update refused"));
}

#[tokio::test]
async fn an_update_listener_panicking_at_once_takes_the_failure_path() {
    let script = Script::new(vec![text("one two three")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    agent.subscribe_async(|e: AgentEvent| {
        async move {
            if delta_text(&e).is_some() {
                panic!("delta kaboom");
            }
            Ok(())
        }
        .boxed()
    });
    agent.prompt("go").await.unwrap();
    let last = agent.messages().pop().unwrap();
    let a = last.as_assistant().unwrap();
    assert_eq!(a.stop_reason, StopReason::Error);
    assert_eq!(a.error_message.as_deref(), Some("listener panicked: delta kaboom"));
}
