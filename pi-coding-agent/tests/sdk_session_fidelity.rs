//! `AgentSession` against pi 1.6.0 where the run's lifecycle is subtle: an abort while a run is
//! being prepared, prompts during automatic compaction, abort tokens installed before their start
//! events, `message_end` replacements in later events, the model and thinking level a switched
//! session restores, and `_checkCompaction`'s branches. Expected values were recorded from pi
//! 1.6.0 on the same scripted replies.

use std::sync::{Arc, Mutex};

use http_support::Setup;
use pi_agent_core::{AgentEvent, AgentMessage};
use pi_coding_agent::compaction::CompactionSettings;
use pi_coding_agent::extensions::*;
use pi_coding_agent::sdk::{AgentSession, RetrySettings, SessionEvent, SessionSettings};
use sdk_support::ext;
use serde_json::json;

#[path = "http_support/mod.rs"]
mod http_support;
#[path = "sdk_support/mod.rs"]
mod sdk_support;

type Lines = Arc<Mutex<Vec<String>>>;

/// One line per event, as the reference probe printed them: agent events with the message's role,
/// stop reason and error; session records with their reason and `aborted`.
fn event_line(e: &SessionEvent) -> Option<String> {
    match e {
        SessionEvent::Agent(AgentEvent::MessageUpdate { .. }) => None,
        SessionEvent::Agent(event) => {
            let mut line = event.kind().to_owned();
            let message = match event {
                AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => Some(message.clone()),
                AgentEvent::TurnEnd { message, .. } => Some(AgentMessage::Assistant(message.clone())),
                _ => None,
            };
            if let Some(m) = message {
                line += &format!(":{}", m.role());
                if let AgentMessage::Assistant(a) = &m {
                    line += &format!("/{}", json!(a.stop_reason).as_str().unwrap_or_default());
                    if let Some(err) = &a.error_message {
                        line += &format!("({err})");
                    }
                }
            }
            Some(line)
        }
        SessionEvent::AgentSettled { aborted } => Some(format!("agent_settled:{aborted}")),
        SessionEvent::EntryAppended { entry_type, .. } => Some(format!("entry_appended:{entry_type}")),
        SessionEvent::Session(v) => {
            let kind = v["type"].as_str().unwrap_or_default();
            Some(match kind {
                "compaction_start" | "compaction_end" => {
                    let mut line = format!("{kind}:{}", v["reason"].as_str().unwrap_or_default());
                    if v["aborted"] == true {
                        line += " aborted";
                    }
                    if let Some(err) = v["errorMessage"].as_str() {
                        line += &format!(" {err}");
                    }
                    if v["willRetry"] == true {
                        line += " willRetry";
                    }
                    line
                }
                other => other.to_owned(),
            })
        }
    }
}

fn record(session: &AgentSession) -> Lines {
    let lines: Lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    std::mem::forget(session.subscribe(move |e| {
        if let Some(line) = event_line(e) {
            sink.lock().unwrap().push(line);
        }
    }));
    lines
}

fn lines(l: &Lines) -> Vec<String> {
    l.lock().unwrap().iter().filter(|s| !s.starts_with("entry_appended")).cloned().collect()
}

/// Settings with automatic compaction off (tests turn it on) and a threshold of 2 tokens on the
/// 8192-token scripted model.
fn settings() -> SessionSettings {
    SessionSettings {
        compaction: CompactionSettings { enabled: false, reserve_tokens: 8190, keep_recent_tokens: 1 },
        retry: RetrySettings { enabled: false, max_retries: 2, base_delay_ms: 1 },
    }
}

fn aborted_turn() -> Vec<String> {
    [
        "message_start:user",
        "message_end:user",
        "message_start:assistant/aborted(This operation was aborted)",
        "message_end:assistant/aborted(This operation was aborted)",
        "turn_end:assistant/aborted(This operation was aborted)",
        "agent_end",
        "agent_settled:true",
    ]
    .map(str::to_owned)
    .to_vec()
}

// ---- 1. abort during run preparation ----

#[tokio::test]
async fn an_abort_in_before_agent_start_stops_the_run_before_its_request() {
    let abort = ext(|pi| {
        pi.on::<BeforeAgentStartEvent>(|_, ctx| {
            ctx.abort();
            Box::pin(async { Ok(None) })
        });
    });
    let h = Setup { extensions: vec![abort], settings: Some(settings()), ..Default::default() }.start().await;
    h.session.bind_extensions().await;
    let events = record(&h.session);
    h.session.prompt("hello").await.expect("prompt");
    assert_eq!(h.server.count(), 0, "the model is not called");
    let mut expected: Vec<String> =
        ["agent_start", "turn_start", "message_start:system", "message_end:system"].map(str::to_owned).to_vec();
    expected.extend(aborted_turn());
    assert_eq!(lines(&events), expected);
    assert_eq!(
        h.entry_types(),
        ["model_change", "thinking_level_change", "message:system", "message:user", "message:assistant"]
    );
    let entries = h.entries();
    assert_eq!(entries[3]["message"]["content"], json!([{"type": "text", "text": "hello"}]));
    let assistant = &entries[4]["message"];
    assert_eq!(assistant["stopReason"], "aborted");
    assert_eq!(assistant["errorMessage"], "This operation was aborted");
    assert_eq!(assistant["content"], json!([]));
    assert!(!h.session.is_streaming());
}

#[tokio::test]
async fn an_abort_during_the_compaction_before_a_prompt_stops_the_run_too() {
    let abort = ext(|pi| {
        pi.on_notify("session_before_compact", |_, ctx| {
            ctx.abort();
            Box::pin(async { Ok(None) })
        });
    });
    let h = Setup { extensions: vec![abort], settings: Some(settings()), ..Default::default() }.start().await;
    h.session.bind_extensions().await;
    h.session.prompt("one").await.expect("first prompt");
    h.session.set_auto_compaction_enabled(true);
    let events = record(&h.session);
    h.session.prompt("two").await.expect("second prompt");
    assert_eq!(h.server.count(), 1, "neither a summary nor the turn is requested");
    let mut expected: Vec<String> =
        ["compaction_start:threshold", "compaction_end:threshold aborted", "agent_start", "turn_start"]
            .map(str::to_owned)
            .to_vec();
    expected.extend(aborted_turn());
    assert_eq!(lines(&events), expected);
    let types = h.entry_types();
    assert_eq!(types[types.len() - 2..], ["message:user", "message:assistant"]);
    assert_eq!(h.entries()[types.len() - 2]["message"]["content"], json!([{"type": "text", "text": "two"}]));
}
