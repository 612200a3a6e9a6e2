//! `AgentSession` against pi 1.6.0 where the run's lifecycle is subtle: an abort while a run is
//! being prepared, prompts during automatic compaction, abort tokens installed before their start
//! events, `message_end` replacements in later events and in the tool calls that run, the model and thinking level a switched
//! session restores, and `_checkCompaction`'s branches. Expected values were recorded from pi
//! 1.6.0 on the same scripted replies.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use http_support::{Setup, error_reply, text_reply, text_reply_with, tool_reply};
use pi_agent_core::{AgentEvent, AgentMessage};
use pi_coding_agent::compaction::CompactionSettings;
use pi_coding_agent::extensions::*;
use pi_coding_agent::sdk::wire::session_record;
use pi_coding_agent::sdk::{AgentSession, PromptOptions, RetrySettings, SessionEvent, SessionSettings};
use sdk_support::ext;
use serde_json::{Value, json};

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
        SessionEvent::AgentEnd { .. } => Some("agent_end".to_owned()),
        SessionEvent::AgentSettled { aborted } => Some(format!("agent_settled:{aborted}")),
        SessionEvent::EntryPersisted { entry_type, .. } => Some(format!("entry_appended:{entry_type}")),
        other => {
            let v = session_record(other)?;
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
        retry: RetrySettings { enabled: false, max_retries: 2, base_delay_ms: 1, max_delay_ms: 60_000 },
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
    h.session.bind_extensions(|_| {}).await;
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
    h.session.bind_extensions(|_| {}).await;
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

// ---- 2. automatic compaction has its own flag ----

#[tokio::test]
async fn a_prompt_during_automatic_compaction_is_queued_as_while_streaming() {
    let slot: Arc<OnceLock<AgentSession>> = Arc::new(OnceLock::new());
    let outcomes: Lines = Arc::new(Mutex::new(Vec::new()));
    let (s, o) = (slot.clone(), outcomes.clone());
    let prompter = ext(move |pi| {
        let (s, o) = (s.clone(), o.clone());
        pi.on_notify("session_before_compact", move |_, _| {
            let (s, o) = (s.clone(), o.clone());
            Box::pin(async move {
                let session = s.get().expect("session set").clone();
                session.set_auto_compaction_enabled(false);
                let refused = session.prompt("no behavior").await.expect_err("refused without a behavior");
                o.lock().unwrap().push(refused.to_string());
                let options =
                    PromptOptions { streaming_behavior: Some(StreamingBehavior::FollowUp), ..Default::default() };
                session.prompt_with("later", options).await.expect("queued");
                o.lock().unwrap().push(format!(
                    "streaming={} compacting={}",
                    session.is_streaming(),
                    session.is_compacting()
                ));
                Ok(None)
            })
        });
    });
    let mut settings = settings();
    settings.compaction.enabled = true;
    let h = Setup { extensions: vec![prompter], settings: Some(settings), ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    slot.set(h.session.clone()).ok();
    let events = record(&h.session);
    h.session.prompt("one").await.expect("prompt");
    assert_eq!(
        *outcomes.lock().unwrap(),
        [
            "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.",
            "streaming=true compacting=true"
        ]
    );
    let all = lines(&events);
    let from = all.iter().position(|l| l == "compaction_start:threshold").expect("compacted");
    let expected = [
        "compaction_start:threshold",
        "queue_update",
        "compaction_end:threshold",
        "agent_start",
        "turn_start",
        "queue_update",
        "message_start:user",
        "message_end:user",
    ];
    assert_eq!(all[from..from + expected.len()], expected);
    assert_eq!(all.last().map(String::as_str), Some("agent_settled:false"));
    assert_eq!(h.server.count(), 3, "turn, summary, the queued prompt's turn");
    let third = &h.server.bodies()[2]["messages"];
    let last = third.as_array().and_then(|m| m.last()).expect("messages");
    assert_eq!(last["content"], json!([{"type": "text", "text": "later"}]));
    let types = h.entry_types();
    assert_eq!(types[types.len() - 3..], ["compaction", "message:user", "message:assistant"]);
}

// ---- 3. abort tokens are installed before their start events ----

#[tokio::test]
async fn an_abort_from_a_compaction_start_listener_cancels_before_the_extensions_run() {
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    let watcher = ext(move |pi| {
        let r = r.clone();
        pi.on_notify("session_before_compact", move |_, _| {
            r.store(true, Ordering::SeqCst);
            Box::pin(async { Ok(None) })
        });
    });
    let mut settings = settings();
    settings.compaction.enabled = true;
    let h = Setup { extensions: vec![watcher], settings: Some(settings), ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let events = record(&h.session);
    let session = h.session.clone();
    std::mem::forget(h.session.subscribe(move |e| {
        if matches!(e, SessionEvent::CompactionStart { .. }) {
            assert!(session.is_compacting());
            session.request_abort();
        }
    }));
    h.session.prompt("one").await.expect("prompt");
    assert!(!ran.load(Ordering::SeqCst), "session_before_compact does not run after the abort");
    assert_eq!(h.server.count(), 1, "no summary request");
    let all = lines(&events);
    assert_eq!(
        all[all.len() - 3..],
        ["compaction_start:threshold", "compaction_end:threshold aborted", "agent_settled:true"]
    );
    assert_eq!(h.entry_types().last().map(String::as_str), Some("message:assistant"));
}

#[tokio::test]
async fn an_abort_from_an_auto_retry_start_listener_ends_the_run_after_the_back_off() {
    // pi 1.6.0 installs the retry's abort controller after `auto_retry_start`, so this abort
    // does not cut the back-off short: the run ends once it elapsed, without retrying.
    let replies = vec![error_reply(500, "server overloaded")];
    let mut settings = settings();
    settings.retry = RetrySettings { enabled: true, max_retries: 3, base_delay_ms: 1, max_delay_ms: 60_000 };
    let h = Setup { replies, settings: Some(settings), ..Default::default() }.start().await;
    let events = record(&h.session);
    let records: Lines = Arc::new(Mutex::new(Vec::new()));
    let (session, sink) = (h.session.clone(), records.clone());
    std::mem::forget(h.session.subscribe(move |e| {
        if let Some(v) = session_record(e) {
            if v["type"] == "auto_retry_start" {
                session.request_abort();
            }
            if v["type"] == "auto_retry_end" {
                sink.lock().unwrap().push(v.to_string());
            }
        }
    }));
    h.session.prompt("one").await.expect("prompt");
    assert_eq!(h.server.count(), 1, "no retry request");
    let all = lines(&events);
    assert_eq!(all[all.len() - 4..], ["agent_end", "auto_retry_start", "auto_retry_end", "agent_settled:true"]);
    assert_eq!(
        *records.lock().unwrap(),
        [json!({"type": "auto_retry_end", "success": false, "attempt": 1, "finalError": "Retry cancelled"})
            .to_string()]
    );
}

// ---- 4. message_end replacements reach turn_end and agent_end ----

fn brief(m: &Value) -> String {
    let content = match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| {
                b["text"].as_str().map(str::to_owned).unwrap_or_else(|| b["type"].as_str().unwrap_or("?").to_owned())
            })
            .collect::<Vec<_>>()
            .join(","),
        _ => String::new(),
    };
    format!("{}:{content}", m["role"].as_str().unwrap_or("?"))
}

fn briefs<'a>(ms: impl IntoIterator<Item = &'a Value>) -> String {
    ms.into_iter().map(brief).collect::<Vec<_>>().join(" | ")
}

#[tokio::test]
async fn a_message_end_replacement_is_what_turn_end_and_agent_end_carry() {
    let seen: Lines = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let replacer = ext(move |pi| {
        pi.on_sync::<MessageEndEvent>(|event, _| {
            let mut v = serde_json::to_value(&event.message)?;
            let text = match v["role"].as_str() {
                Some("assistant") if brief(&v) == "assistant:final" => "REPLACED",
                Some("toolResult") => "TOOL REPLACED",
                Some("user") => "USER REPLACED",
                _ => return Ok(None),
            };
            v["content"] = json!([{"type": "text", "text": text}]);
            Ok(Some(serde_json::from_value(v)?))
        });
        let t = s.clone();
        pi.on_notify("turn_end", move |e, _| {
            if let NotifyEvent::TurnEnd { message, tool_results, .. } = e {
                let results: Vec<Value> = tool_results.iter().map(|r| json!(r)).collect();
                t.lock().unwrap().push(format!("ext turn_end {} results={}", brief(&json!(message)), briefs(&results)));
            }
            Box::pin(async { Ok(None) })
        });
        let s = s.clone();
        pi.on_notify("agent_end", move |e, _| {
            if let NotifyEvent::AgentEnd { messages } = e {
                let all: Vec<Value> = messages.iter().map(|m| json!(m)).collect();
                s.lock().unwrap().push(format!("ext agent_end {}", briefs(&all)));
            }
            Box::pin(async { Ok(None) })
        });
    });
    let h = Setup {
        extensions: vec![replacer],
        files: vec![("a.txt", "hello file\n")],
        replies: vec![tool_reply("call_1", "read", json!({"path": "a.txt"})), text_reply("final")],
        settings: Some(settings()),
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    let sink = seen.clone();
    std::mem::forget(h.session.subscribe(move |e| {
        let line = match e {
            SessionEvent::Agent(AgentEvent::TurnEnd { message, tool_results }) => {
                let results: Vec<Value> = tool_results.iter().map(|r| json!(r)).collect();
                format!("turn_end {} results={}", brief(&json!(message)), briefs(&results))
            }
            SessionEvent::AgentEnd { messages, .. } => {
                let all: Vec<Value> = messages.iter().map(|m| json!(m)).collect();
                format!("agent_end {}", briefs(&all))
            }
            _ => return,
        };
        sink.lock().unwrap().push(line);
    }));
    h.session.prompt("one").await.expect("prompt");
    assert_eq!(h.error_pairs(), []);
    let all = "system: | user:USER REPLACED | assistant:toolCall | toolResult:TOOL REPLACED | assistant:REPLACED";
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "ext turn_end assistant:toolCall results=toolResult:TOOL REPLACED".to_owned(),
            "turn_end assistant:toolCall results=toolResult:TOOL REPLACED".to_owned(),
            "ext turn_end assistant:REPLACED results=".to_owned(),
            "turn_end assistant:REPLACED results=".to_owned(),
            format!("ext agent_end {all}"),
            format!("agent_end {all}"),
        ]
    );
    let second = &h.server.bodies()[1]["messages"];
    assert_eq!(second[1]["content"], json!([{"type": "text", "text": "USER REPLACED"}]));
    assert_eq!(second[3]["content"], "TOOL REPLACED");
}

/// An extension replacing an assistant message's tool call: the agent loop runs the replacement's
/// call, and `turn_end` and the next request carry it. Recorded from pi 1.6.0 (`pi -p` with the
/// same extension and scripted replies): `read` ran on `b.txt` as `call_2`, and the second request
/// was `user, assistant(call_2 read b.txt), tool(call_2 "bee file\n")`.
#[tokio::test]
async fn a_message_end_replacement_decides_which_tool_calls_run() {
    let seen: Lines = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let replacer = ext(move |pi| {
        pi.on_sync::<MessageEndEvent>(|event, _| {
            let mut v = serde_json::to_value(&event.message)?;
            if v["role"] != "assistant" || brief(&v) != "assistant:toolCall" {
                return Ok(None);
            }
            v["content"] =
                json!([{"type": "toolCall", "id": "call_2", "name": "read", "arguments": {"path": "b.txt"}}]);
            Ok(Some(serde_json::from_value(v)?))
        });
        let t = s.clone();
        pi.on_notify("tool_execution_start", move |e, _| {
            if let NotifyEvent::ToolExecutionStart { tool_call_id, tool_name, args, .. } = e {
                t.lock().unwrap().push(format!("tool_execution_start {tool_call_id} {tool_name} {}", json!(args)));
            }
            Box::pin(async { Ok(None) })
        });
        let t = s.clone();
        pi.on_notify("turn_end", move |e, _| {
            if let NotifyEvent::TurnEnd { message, tool_results, .. } = e {
                let calls: Vec<Value> = json!(message)["content"].as_array().cloned().unwrap_or_default();
                let results: Vec<String> =
                    tool_results.iter().map(|r| format!("{}={}", r.tool_call_id, json!(r)["content"])).collect();
                t.lock().unwrap().push(format!("turn_end {} results={}", json!(calls), results.join(",")));
            }
            Box::pin(async { Ok(None) })
        });
    });
    let h = Setup {
        extensions: vec![replacer],
        files: vec![("a.txt", "hello file\n"), ("b.txt", "bee file\n")],
        replies: vec![tool_reply("call_1", "read", json!({"path": "a.txt"})), text_reply("final")],
        settings: Some(settings()),
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("one").await.expect("prompt");
    assert_eq!(h.error_pairs(), []);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            r#"tool_execution_start call_2 read {"path":"b.txt"}"#,
            r#"turn_end [{"type":"toolCall","id":"call_2","name":"read","arguments":{"path":"b.txt"}}] results=call_2=[{"type":"text","text":"bee file\n"}]"#,
            r#"turn_end [{"type":"text","text":"final"}] results="#,
        ]
    );
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 2);
    let second = &bodies[1]["messages"];
    assert_eq!(second[2]["tool_calls"][0]["id"], "call_2");
    assert_eq!(second[2]["tool_calls"][0]["function"]["arguments"], r#"{"path":"b.txt"}"#);
    assert_eq!(second[3], json!({"role": "tool", "content": "bee file\n", "tool_call_id": "call_2"}));
}

/// Replaced with a message without tool calls, the run ends after that response (pi 1.6.0: one
/// request, no tool ran).
#[tokio::test]
async fn an_assistant_message_replaced_without_tool_calls_runs_no_tool() {
    let replacer = ext(|pi| {
        pi.on_sync::<MessageEndEvent>(|event, _| {
            let mut v = serde_json::to_value(&event.message)?;
            if v["role"] != "assistant" {
                return Ok(None);
            }
            v["content"] = json!([{"type": "text", "text": "no tools"}]);
            Ok(Some(serde_json::from_value(v)?))
        });
    });
    let h = Setup {
        extensions: vec![replacer],
        files: vec![("a.txt", "hello file\n")],
        replies: vec![tool_reply("call_1", "read", json!({"path": "a.txt"})), text_reply("unused")],
        settings: Some(settings()),
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    let events = record(&h.session);
    h.session.prompt("one").await.expect("prompt");
    assert_eq!(h.error_pairs(), []);
    assert_eq!(h.server.bodies().len(), 1);
    assert!(!lines(&events).iter().any(|l| l.starts_with("tool_execution")), "{:?}", lines(&events));
    let roles: Vec<String> = h.session.agent().messages().iter().map(|m| m.role().to_owned()).collect();
    assert_eq!(roles.last().map(String::as_str), Some("assistant"));
    assert!(!roles.iter().any(|r| r == "toolResult"), "{roles:?}");
}

// ---- 5. a switched or forked session restores its model and thinking level ----

#[tokio::test]
async fn switching_and_forking_restore_the_recorded_model_and_thinking_level() {
    use pi_ai::ThinkingLevel;
    use pi_ai::providers::faux::{FauxOptions, FauxProvider, faux_assistant_message, faux_text};
    use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
    use pi_coding_agent::session::{NewSessionOptions, SessionManager};

    let dir = tempfile::tempdir().expect("tempdir");
    let faux = FauxProvider::new(FauxOptions::default());
    let model = |id: &str| {
        let mut m = faux.model();
        m.id = id.to_owned();
        m.reasoning = true;
        m
    };
    let (m1, m2, ghost) = (model("faux-1"), model("faux-2"), model("ghost"));
    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.home_dir = Some(dir.path().join("home"));
    loader.reload().await.expect("reload");
    let sm = SessionManager::create(dir.path(), Some(&dir.path().join("sessions")), NewSessionOptions::default())
        .expect("session manager");
    let session = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(m1.clone()),
        thinking_level: Some(ThinkingLevel::High),
        resource_loader: Some(loader),
        session_manager: Some(sm),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux.clone()))),
        models: vec![m1.clone(), m2.clone()],
        settings: Some(settings()),
        ..Default::default()
    })
    .await
    .expect("session")
    .session;
    let reply = || faux.set_responses(vec![faux_assistant_message(vec![faux_text("ok")], Default::default()).into()]);
    let selection = |s: &AgentSession| (s.model().id, s.thinking_level());

    reply();
    session.prompt("one").await.expect("one");
    reply();
    session.prompt("one-b").await.expect("one-b");
    let a = session.session_file().expect("file a");

    session.new_session(None).await.expect("new");
    session.set_model(m2.clone()).expect("set model");
    session.set_thinking_level(ThinkingLevel::Low).expect("set level");
    reply();
    session.prompt("two").await.expect("two");
    let b = session.session_file().expect("file b");

    session.new_session(None).await.expect("new");
    session.set_model(ghost.clone()).expect("set ghost");
    session.set_thinking_level(ThinkingLevel::Minimal).expect("set level");
    reply();
    session.prompt("three").await.expect("three");
    let c = session.session_file().expect("file c");

    session.switch_session(&a).await.expect("switch a");
    assert_eq!(selection(&session), ("faux-1".to_owned(), ThinkingLevel::High));
    assert_eq!(session.model_fallback_message(), None);
    session.switch_session(&b).await.expect("switch b");
    assert_eq!(selection(&session), ("faux-2".to_owned(), ThinkingLevel::Low));

    // A recorded model that is not available keeps the current one; the level is restored.
    session.switch_session(&c).await.expect("switch c");
    assert_eq!(selection(&session), ("faux-2".to_owned(), ThinkingLevel::Minimal));
    assert_eq!(
        session.model_fallback_message().as_deref(),
        Some("Could not restore model faux/ghost. Using faux/faux-2")
    );

    // Forking restores what the kept path recorded, not what the session used last.
    session.switch_session(&a).await.expect("switch a again");
    session.set_model(m2.clone()).expect("set model");
    session.set_thinking_level(ThinkingLevel::Low).expect("set level");
    let second = session.get_fork_messages()[1].entry_id.clone();
    session.fork(&second).await.expect("fork");
    assert_eq!(selection(&session), ("faux-1".to_owned(), ThinkingLevel::High));
    assert_eq!(session.model_fallback_message(), None);
}

// ---- 6. _checkCompaction: recoverable length, projected estimate, stale usage ----

fn compaction_settings(reserve_tokens: u64, keep_recent_tokens: u64, retries: u32) -> SessionSettings {
    SessionSettings {
        compaction: CompactionSettings { enabled: true, reserve_tokens, keep_recent_tokens },
        retry: RetrySettings { enabled: retries > 0, max_retries: retries, base_delay_ms: 1, max_delay_ms: 60_000 },
    }
}

#[tokio::test]
async fn a_length_stop_below_the_output_limit_is_compacted_and_retried_once() {
    let replies = vec![
        text_reply("first"),
        text_reply_with("cut", "length"),
        text_reply("SUMMARY"),
        text_reply("PREFIX"),
        text_reply_with("cut again", "length"),
    ];
    let settings = compaction_settings(100, 1, 0);
    let h = Setup { replies, settings: Some(settings), ..Default::default() }.start().await;
    h.session.prompt("one").await.expect("one");
    let events = record(&h.session);
    h.session.prompt("two").await.expect("two");
    assert_eq!(h.server.count(), 5);
    let turn = |first: &[&str]| {
        let mut t: Vec<String> = first.iter().map(|s| (*s).to_owned()).collect();
        t.extend(
            [
                "message_start:assistant/pending",
                "message_end:assistant/length",
                "turn_end:assistant/length",
                "agent_end",
            ]
            .map(str::to_owned),
        );
        t
    };
    let mut expected = turn(&["agent_start", "turn_start", "message_start:user", "message_end:user"]);
    expected.extend(["compaction_start:overflow".to_owned(), "compaction_end:overflow willRetry".to_owned()]);
    expected.extend(turn(&["agent_start", "turn_start"]));
    expected.extend([
        "compaction_end:overflow Truncated response recovery failed after one compact-and-retry attempt.".to_owned(),
        "agent_settled:false".to_owned(),
    ]);
    assert_eq!(lines(&events), expected);
    let types = h.entry_types();
    assert_eq!(
        types[types.len() - 5..],
        ["message:user", "message:assistant", "context_edit", "compaction", "message:assistant"]
    );
}

#[tokio::test]
async fn after_context_edits_the_threshold_uses_the_projected_estimate() {
    // Both attempts fail; the usage of "first" predates the edit that omits the first attempt,
    // so pi estimates the whole projected context (the system prompt included) and compacts.
    let replies = vec![
        text_reply("first"),
        error_reply(500, "server overloaded"),
        error_reply(500, "server overloaded"),
        text_reply("SUMMARY"),
        text_reply("PREFIX"),
    ];
    let settings = compaction_settings(7692, 1, 1);
    let h = Setup { replies, settings: Some(settings), ..Default::default() }.start().await;
    h.session.prompt("one").await.expect("one");
    let events = record(&h.session);
    h.session.prompt("two").await.expect("two");
    let all = lines(&events);
    assert_eq!(
        all[all.len() - 4..],
        ["auto_retry_end", "compaction_start:threshold", "compaction_end:threshold", "agent_settled:false"]
    );
    assert_eq!(h.entry_types().last().map(String::as_str), Some("compaction"));
    assert_eq!(h.server.count(), 4, "one, two, its retry, one summary");
}

#[tokio::test]
async fn usage_from_before_the_latest_compaction_does_not_trigger_another() {
    let replies = vec![
        text_reply("zero answer that is a good deal longer than the others so that it is summarized"),
        text_reply("first"),
        text_reply("SUMMARY"),
        error_reply(400, "bad request"),
    ];
    let settings = compaction_settings(8190, 4, 0);
    let h = Setup { replies, settings: Some(settings), ..Default::default() }.start().await;
    h.session.set_auto_compaction_enabled(false);
    h.session.prompt("zero").await.expect("zero");
    h.session.prompt("one").await.expect("one");
    h.session.compact(None).await.expect("compact");
    let roles: Vec<String> = h.session.messages().iter().map(|m| m.role().to_owned()).collect();
    assert_eq!(roles, ["system", "compactionSummary", "assistant", "user", "assistant"]);
    h.session.set_auto_compaction_enabled(true);
    let events = record(&h.session);
    h.session.prompt("two").await.expect("two");
    assert_eq!(h.server.count(), 4, "no second compaction");
    let all = lines(&events);
    assert_eq!(
        all[all.len() - 3..],
        ["turn_end:assistant/error(400: {\"message\":\"bad request\"})", "agent_end", "agent_settled:false"]
    );
    assert_eq!(h.entry_types().last().map(String::as_str), Some("message:assistant"));
}
