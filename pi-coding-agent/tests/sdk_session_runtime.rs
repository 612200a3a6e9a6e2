//! `AgentSession` as pi 1.6.0's: the prompt path's extension events (`input`,
//! `before_agent_start`, `message_end`, `before_provider_request`, `user_bash`, lifecycle order),
//! `send_message` delivery, compaction, auto-retry, tree navigation, session switching and stats.
//! The model is pi-ai's faux provider; sessions are real files in a temp dir.

use std::sync::{Arc, Mutex, OnceLock};

use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text, faux_tool_call,
};
use pi_ai::{AssistantBlock, StopReason, TextContent};
use pi_coding_agent::compaction::CompactionSettings;
use pi_coding_agent::extensions::*;
use pi_coding_agent::messages::CodingAgentMessage;
use pi_coding_agent::sdk::{
    AgentSession, CreateAgentSessionOptions, DefaultResourceLoader, NavigateTreeOptions, RetrySettings, SessionEvent,
    SessionSettings, create_agent_session,
};
use pi_coding_agent::session::{NewSessionOptions, SessionManager};
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<String>>>;
type Seen = Arc<Mutex<Vec<Value>>>;

/// A reply step that records the request's messages and answers with `reply`.
fn step(seen: &Seen, reply: impl Fn() -> pi_ai::AssistantMessage + Send + Sync + 'static) -> FauxStep {
    let seen = seen.clone();
    let reply = Arc::new(reply);
    FauxStep::factory(move |req| {
        let seen = seen.clone();
        let reply = reply.clone();
        async move {
            seen.lock().unwrap().push(serde_json::to_value(req.context.messages()).unwrap());
            Ok(reply())
        }
    })
}

fn text(t: &'static str) -> impl Fn() -> pi_ai::AssistantMessage + Send + Sync + 'static {
    move || faux_assistant_message(vec![faux_text(t)], Default::default())
}

fn ext(setup: impl Fn(&ExtensionApi) + Send + Sync + 'static) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:test>", move |pi| {
        setup(pi);
        Ok(())
    }))
}

struct Harness {
    session: AgentSession,
    faux: FauxProvider,
    seen: Seen,
    records: Seen,
    _dir: tempfile::TempDir,
}

async fn harness(extensions: Vec<Arc<dyn Extension>>, settings: Option<SessionSettings>, persisted: bool) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.reload().await.unwrap();
    let sm = if persisted {
        SessionManager::create(dir.path(), Some(&dir.path().join("sessions")), NewSessionOptions::default()).unwrap()
    } else {
        SessionManager::in_memory(dir.path())
    };
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(sm),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux.clone()))),
        extensions,
        settings,
        ..Default::default()
    })
    .await
    .unwrap();
    let session = created.session;
    session.bind_extensions().await;
    let records: Seen = Arc::new(Mutex::new(Vec::new()));
    let sink = records.clone();
    std::mem::forget(session.subscribe(move |e| {
        if let SessionEvent::Session(v) = e {
            sink.lock().unwrap().push(v.clone());
        }
    }));
    Harness { session, faux, seen: Arc::new(Mutex::new(Vec::new())), records, _dir: dir }
}

impl Harness {
    fn reply(&self, replies: Vec<FauxStep>) {
        self.faux.set_responses(replies);
    }
    fn entry_types(&self) -> Vec<String> {
        self.session
            .session_manager()
            .get_branch(None)
            .iter()
            .map(|e| {
                let v = serde_json::to_value(e).unwrap();
                match v["type"].as_str().unwrap() {
                    "message" => format!("message:{}", v["message"]["role"].as_str().unwrap()),
                    other => other.to_owned(),
                }
            })
            .collect()
    }
    fn record_types(&self) -> Vec<String> {
        self.records.lock().unwrap().iter().map(|r| r["type"].as_str().unwrap().to_owned()).collect()
    }
}

/// The text of the last user-role message of a recorded request (custom messages reach the
/// model as user messages).
fn user_texts(request: &Value) -> Vec<String> {
    request
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(a) => a.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""),
            _ => String::new(),
        })
        .collect()
}

#[tokio::test]
async fn input_handlers_handle_or_transform_the_prompt() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let h = harness(
        vec![ext(move |pi| {
            let l = l.clone();
            pi.on_sync::<InputEvent>(move |e, _| {
                l.lock().unwrap().push(format!("{}:{:?}", e.text, e.source));
                Ok(Some(match e.text.as_str() {
                    "skip" => InputOutcome::Handled,
                    t => InputOutcome::Transform { text: t.to_uppercase(), images: None },
                }))
            });
        })],
        None,
        false,
    )
    .await;
    h.reply(vec![step(&h.seen, text("ok"))]);
    h.session.prompt("skip").await.unwrap();
    assert!(h.seen.lock().unwrap().is_empty(), "a handled input makes no request");
    assert!(!h.entry_types().contains(&"message:user".to_owned()));
    h.session.prompt("hello").await.unwrap();
    let seen = h.seen.lock().unwrap();
    assert_eq!(user_texts(&seen[0]), ["HELLO"]);
    assert_eq!(*log.lock().unwrap(), ["skip:Interactive", "hello:Interactive"]);
}

#[tokio::test]
async fn before_agent_start_adds_messages_and_forces_the_prompt_for_the_run_only() {
    let h = harness(
        vec![ext(|pi| {
            pi.on_sync::<BeforeAgentStartEvent>(|e, _| {
                let prompt = match &e.trigger {
                    AgentStartTrigger::User { prompt, .. } => prompt.clone(),
                    AgentStartTrigger::Custom { .. } => "custom".into(),
                };
                Ok(Some(BeforeAgentStartResult {
                    message: Some(ExtensionMessage::text("ctx", format!("context for {prompt}"))),
                    system_prompt: Some("FORCED PROMPT".into()),
                }))
            });
        })],
        None,
        false,
    )
    .await;
    h.reply(vec![step(&h.seen, text("ok"))]);
    h.session.prompt("task").await.unwrap();
    let request = h.seen.lock().unwrap()[0].clone();
    assert_eq!(user_texts(&request), ["task", "context for task"]);
    let systems: Vec<&Value> = request.as_array().unwrap().iter().filter(|m| m["role"] == "system").collect();
    assert_eq!(systems.len(), 1);
    assert_eq!(systems[0]["content"], "FORCED PROMPT");
    // The forced prompt is projected, never recorded.
    assert!(!h.session.system_prompt().contains("FORCED PROMPT"));
    assert_eq!(
        h.entry_types(),
        [
            "model_change",
            "thinking_level_change",
            "message:system",
            "message:user",
            "custom_message",
            "message:assistant"
        ]
    );
}

#[tokio::test]
async fn message_end_handlers_replace_what_listeners_see_and_the_session_stores() {
    let h = harness(
        vec![ext(|pi| {
            pi.on_sync::<MessageEndEvent>(|e, _| {
                Ok(match &e.message {
                    CodingAgentMessage::Assistant(a) => {
                        let mut a = a.clone();
                        a.content = vec![AssistantBlock::Text(TextContent::new("[redacted]"))];
                        Some(CodingAgentMessage::Assistant(a))
                    }
                    CodingAgentMessage::User(_) => Some(CodingAgentMessage::System(pi_ai::SystemMessage::new("x"))),
                    _ => None,
                })
            });
        })],
        None,
        false,
    )
    .await;
    let ends: Log = Arc::new(Mutex::new(Vec::new()));
    let sink = ends.clone();
    let _sub = h.session.subscribe(move |e| {
        if let SessionEvent::Agent(pi_agent_core::AgentEvent::MessageEnd { message }) = e
            && let Some(a) = message.as_assistant()
        {
            sink.lock().unwrap().push(a.text());
        }
    });
    h.reply(vec![step(&h.seen, text("secret"))]);
    h.session.prompt("hi").await.unwrap();
    assert_eq!(*ends.lock().unwrap(), ["[redacted]"]);
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("[redacted]"));
    // A replacement of another role is refused: the user message stays.
    assert!(h.entry_types().contains(&"message:user".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_provider_request_handlers_replace_the_payload() {
    let h = harness(
        vec![ext(|pi| {
            pi.on_sync::<BeforeProviderRequestEvent>(|e, _| {
                let mut p = e.payload.clone();
                p["temperature"] = json!(0.25);
                Ok(Some(p))
            });
        })],
        None,
        false,
    )
    .await;
    let sent: Seen = Arc::new(Mutex::new(Vec::new()));
    let sink = sent.clone();
    h.reply(vec![FauxStep::factory(move |req| {
        let sink = sink.clone();
        async move {
            let hook = req.options.on_payload.clone().expect("the session installs a payload hook");
            let body = json!({"model": "faux-1", "messages": []});
            sink.lock().unwrap().push(hook(&body, &req.model).unwrap_or(body));
            Ok(faux_assistant_message(vec![faux_text("ok")], Default::default()))
        }
    })]);
    h.session.prompt("hi").await.unwrap();
    assert_eq!(sent.lock().unwrap()[0], json!({"model": "faux-1", "messages": [], "temperature": 0.25}));
}

#[tokio::test]
async fn user_bash_handlers_supply_results_or_fail_the_command() {
    let h = harness(
        vec![ext(|pi| {
            pi.on_sync::<UserBashEvent>(|e, _| match e.command.as_str() {
                "remote" => Ok(Some(UserBashResult::Result(BashResult {
                    output: "from extension".into(),
                    exit_code: Some(0),
                    ..Default::default()
                }))),
                "forbidden" => Err("not allowed here".into()),
                _ => Ok(None),
            });
        })],
        None,
        false,
    )
    .await;
    let r = h.session.execute_bash("remote", false).await.unwrap();
    assert_eq!(r.output, "from extension");
    let local = h.session.execute_bash("echo local", false).await.unwrap();
    assert_eq!(local.output, "local\n");
    let before = h.entry_types().len();
    let err = h.session.execute_bash("forbidden", false).await.unwrap_err();
    assert_eq!(err.to_string(), "not allowed here");
    assert_eq!(h.entry_types().len(), before, "a failed user_bash records nothing");
    let outputs: Vec<Value> = h
        .session
        .session_manager()
        .get_branch(None)
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["message"]["role"] == "bashExecution")
        .map(|v| v["message"]["output"].clone())
        .collect();
    assert_eq!(outputs, [json!("from extension"), json!("local\n")]);
}

#[tokio::test]
async fn lifecycle_events_reach_extensions_in_order() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let h = harness(
        vec![ext(move |pi| {
            for name in [
                "agent_start",
                "agent_end",
                "agent_settled",
                "turn_start",
                "turn_end",
                "message_start",
                "tool_execution_start",
                "tool_execution_end",
            ] {
                let l = l.clone();
                pi.on_notify(name, move |e, _| {
                    let kind = e.kind().to_owned();
                    let entry = match &*e {
                        NotifyEvent::TurnStart { turn_index, .. } | NotifyEvent::TurnEnd { turn_index, .. } => {
                            format!("{kind}:{turn_index}")
                        }
                        NotifyEvent::MessageStart { message } => format!("message_start:{}", message.role()),
                        NotifyEvent::ToolExecutionEnd { tool_name, is_error, .. } => {
                            format!("tool_execution_end:{tool_name}:{is_error}")
                        }
                        NotifyEvent::AgentSettled { aborted } => format!("agent_settled:{aborted}"),
                        _ => kind,
                    };
                    l.lock().unwrap().push(entry);
                    Box::pin(async { Ok(None) })
                });
            }
            let l = l.clone();
            pi.on_sync::<MessageEndEvent>(move |e, _| {
                l.lock().unwrap().push(format!("message_end:{}", e.message.role()));
                Ok(None)
            });
        })],
        None,
        false,
    )
    .await;
    h.reply(vec![
        step(&h.seen, || {
            faux_assistant_message(
                vec![faux_tool_call("bash", json!({"command": "echo hi"}), Some("call-1"))],
                FauxMessageOptions { stop_reason: Some(StopReason::ToolUse), ..Default::default() },
            )
        }),
        step(&h.seen, text("done")),
    ]);
    h.session.prompt("run it").await.unwrap();
    // The order pi 1.6.0 emits for the same exchange (its log names turn_end's message role).
    let fixture: Value = serde_json::from_str(include_str!("fixtures/sdk/lifecycle_order.json")).unwrap();
    let expected: Vec<String> = fixture["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let e = e.as_str().unwrap();
            if e.starts_with("turn_end") { e.trim_end_matches(":assistant") } else { e }.to_owned()
        })
        .collect();
    assert_eq!(expected.len(), 19);
    assert_eq!(*log.lock().unwrap(), expected);
}

#[tokio::test]
async fn send_message_while_idle_appends_triggers_or_waits_for_the_next_turn() {
    let h = harness(vec![], None, false).await;
    let settled = Arc::new(Mutex::new(0));
    let count = settled.clone();
    let _sub = h.session.subscribe(move |e| {
        if let SessionEvent::AgentSettled { aborted: false } = e {
            *count.lock().unwrap() += 1;
        }
    });
    h.reply(vec![step(&h.seen, text("one")), step(&h.seen, text("two"))]);
    let msg = |t: &str| ExtensionMessage::text("note", t.to_owned());
    // No trigger: appended, no request.
    h.session.send_message(msg("appended"), SendMessageOptions::default()).await.unwrap();
    assert!(h.seen.lock().unwrap().is_empty());
    assert_eq!(h.entry_types().last().unwrap(), "custom_message");
    // next_turn: held until the next prompt, after its user message.
    let next = SendMessageOptions { deliver_as: Some(DeliverAs::NextTurn), trigger_turn: None };
    h.session.send_message(msg("held"), next).await.unwrap();
    assert_eq!(h.entry_types().iter().filter(|t| *t == "custom_message").count(), 1);
    h.session.prompt("go").await.unwrap();
    assert_eq!(user_texts(&h.seen.lock().unwrap()[0]), ["appended", "go", "held"]);
    // trigger_turn: starts a run with the message.
    let trigger = SendMessageOptions { trigger_turn: Some(true), deliver_as: None };
    h.session.send_message(msg("triggered"), trigger).await.unwrap();
    assert_eq!(user_texts(&h.seen.lock().unwrap()[1]), ["appended", "go", "held", "triggered"]);
    assert_eq!(*settled.lock().unwrap(), 2, "every run settles, also one a message triggered");
    assert_eq!(
        h.entry_types()[2..],
        [
            "custom_message",
            "message:system",
            "message:user",
            "custom_message",
            "message:assistant",
            "custom_message",
            "message:assistant"
        ]
    );
}

/// Sends `options` from inside the first request (the session is streaming then).
async fn send_while_streaming(options: SendMessageOptions) -> (Harness, usize) {
    let h = harness(vec![], None, false).await;
    let cell: Arc<OnceLock<AgentSession>> = Arc::new(OnceLock::new());
    let c = cell.clone();
    let seen = h.seen.clone();
    let first = FauxStep::factory(move |req| {
        let c = c.clone();
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push(serde_json::to_value(req.context.messages()).unwrap());
            let session = c.get().unwrap().clone();
            session.send_message(ExtensionMessage::text("note", "late"), options).await.unwrap();
            Ok(faux_assistant_message(vec![faux_text("first")], Default::default()))
        }
    });
    h.reply(vec![first, step(&h.seen, text("second"))]);
    cell.set(h.session.clone()).ok();
    h.session.prompt("go").await.unwrap();
    let requests = h.seen.lock().unwrap().len();
    (h, requests)
}

#[tokio::test]
async fn send_message_while_streaming_steers_follows_up_or_waits_for_the_turn_end() {
    let (h, requests) = send_while_streaming(SendMessageOptions::default()).await;
    assert_eq!(requests, 2, "steering starts another turn");
    assert_eq!(user_texts(&h.seen.lock().unwrap()[1]), ["go", "late"]);

    let follow = SendMessageOptions { deliver_as: Some(DeliverAs::FollowUp), trigger_turn: None };
    let (h, requests) = send_while_streaming(follow).await;
    assert_eq!(requests, 2);
    assert_eq!(user_texts(&h.seen.lock().unwrap()[1]), ["go", "late"]);

    let quiet = SendMessageOptions { deliver_as: None, trigger_turn: Some(false) };
    let (h, requests) = send_while_streaming(quiet).await;
    assert_eq!(requests, 1, "trigger_turn false never starts a turn");
    assert_eq!(h.entry_types()[2..], ["message:system", "message:user", "message:assistant", "custom_message"]);
}

fn small_settings() -> SessionSettings {
    SessionSettings {
        compaction: CompactionSettings { enabled: false, reserve_tokens: 16384, keep_recent_tokens: 1 },
        retry: RetrySettings { enabled: true, max_retries: 2, base_delay_ms: 1 },
    }
}

#[tokio::test]
async fn manual_compaction_summarizes_with_the_model_and_reports_pi_errors() {
    let h = harness(vec![], Some(small_settings()), false).await;
    h.reply(vec![
        step(&h.seen, text("a")),
        step(&h.seen, text("b")),
        step(&h.seen, text("THE SUMMARY")),
        step(&h.seen, text("THE TURN PREFIX")),
    ]);
    let err = h.session.compact(None).await.unwrap_err();
    assert_eq!(err.to_string(), "Nothing to compact (session too small)");
    assert_eq!(
        h.records.lock().unwrap()[1]["errorMessage"],
        "Compaction failed: Nothing to compact (session too small)"
    );
    h.session.prompt("first").await.unwrap();
    h.session.prompt("second").await.unwrap();
    let result = h.session.compact(Some("keep names")).await.unwrap();
    // Keeping 1 token cuts inside the last turn: a history summary and a turn-prefix summary.
    assert!(result.summary.starts_with("THE SUMMARY"), "{}", result.summary);
    assert!(result.summary.contains("THE TURN PREFIX"), "{}", result.summary);
    assert!(result.tokens_before > 0);
    let prompt = user_texts(&h.seen.lock().unwrap()[2]).join("\n");
    assert!(prompt.contains("keep names"), "custom instructions reach the summary prompt");
    assert_eq!(h.entry_types().last().unwrap(), "compaction");
    let context = h.session.messages();
    assert!(context.iter().any(|m| m.role() == "compactionSummary"));
    assert_eq!(h.record_types()[2..], ["compaction_start", "compaction_end"]);
    assert_eq!(h.records.lock().unwrap()[3]["result"]["summary"], json!(result.summary));
    let err = h.session.compact(None).await.unwrap_err();
    assert_eq!(err.to_string(), "Already compacted");
}

#[tokio::test]
async fn session_before_compact_handlers_cancel_or_supply_the_summary() {
    let cancel = Arc::new(Mutex::new(true));
    let c = cancel.clone();
    let compacted: Log = Arc::new(Mutex::new(Vec::new()));
    let done = compacted.clone();
    let h = harness(
        vec![ext(move |pi| {
            let c = c.clone();
            pi.on_notify("session_before_compact", move |e, _| {
                let cancel = *c.lock().unwrap();
                let first_kept = match e {
                    NotifyEvent::Other { payload, .. } => payload["preparation"]["firstKeptEntryId"].clone(),
                    _ => Value::Null,
                };
                Box::pin(async move {
                    Ok(Some(if cancel {
                        json!({"cancel": true})
                    } else {
                        json!({"compaction": {"summary": "from extension", "firstKeptEntryId": first_kept, "tokensBefore": 7}})
                    }))
                })
            });
            let done = done.clone();
            pi.on_notify("session_compact", move |e, _| {
                if let NotifyEvent::Other { payload, .. } = e {
                    done.lock().unwrap().push(format!("{}:{}", payload["compactionEntry"]["summary"], payload["fromExtension"]));
                }
                Box::pin(async { Ok(None) })
            });
        })],
        Some(small_settings()),
        false,
    )
    .await;
    h.reply(vec![step(&h.seen, text("a")), step(&h.seen, text("b"))]);
    h.session.prompt("first").await.unwrap();
    h.session.prompt("second").await.unwrap();
    let err = h.session.compact(None).await.unwrap_err();
    assert_eq!(err.to_string(), "Compaction cancelled");
    let end = h.records.lock().unwrap().last().unwrap().clone();
    assert_eq!(end["aborted"], true);
    assert!(end.get("errorMessage").is_none());
    *cancel.lock().unwrap() = false;
    let result = h.session.compact(None).await.unwrap();
    assert_eq!(result.summary, "from extension");
    assert_eq!(result.tokens_before, 7);
    assert_eq!(h.seen.lock().unwrap().len(), 2, "no summary request");
    assert_eq!(*compacted.lock().unwrap(), ["\"from extension\":true"]);
    let entry = serde_json::to_value(h.session.session_manager().leaf_entry().unwrap()).unwrap();
    assert_eq!(entry["fromHook"], true);
}

#[tokio::test]
async fn retryable_errors_are_retried_and_hidden_from_the_model() {
    let h = harness(vec![], Some(small_settings()), false).await;
    h.reply(vec![
        step(&h.seen, || {
            faux_assistant_message(
                vec![],
                FauxMessageOptions {
                    stop_reason: Some(StopReason::Error),
                    error_message: Some("503 Service Unavailable".into()),
                    ..Default::default()
                },
            )
        }),
        step(&h.seen, text("recovered")),
    ]);
    h.session.prompt("hi").await.unwrap();
    let records = h.records.lock().unwrap().clone();
    assert_eq!(
        records,
        [
            json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 2, "delayMs": 1,
                   "errorMessage": "503 Service Unavailable"}),
            json!({"type": "auto_retry_end", "success": true, "attempt": 1}),
        ]
    );
    let second = h.seen.lock().unwrap()[1].clone();
    assert!(!second.as_array().unwrap().iter().any(|m| m["role"] == "assistant"), "the failed attempt is omitted");
    assert!(h.entry_types().contains(&"context_edit".to_owned()));
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("recovered"));
}

#[tokio::test]
async fn non_retryable_errors_and_disabled_retry_stop_at_once() {
    let mut settings = small_settings();
    settings.retry.enabled = false;
    let h = harness(vec![], Some(settings), false).await;
    let failing = || {
        faux_assistant_message(
            vec![],
            FauxMessageOptions {
                stop_reason: Some(StopReason::Error),
                error_message: Some("503 Service Unavailable".into()),
                ..Default::default()
            },
        )
    };
    h.reply(vec![step(&h.seen, failing)]);
    h.session.prompt("hi").await.unwrap();
    assert_eq!(h.seen.lock().unwrap().len(), 1);
    assert!(h.records.lock().unwrap().is_empty());
}

#[tokio::test]
async fn navigate_tree_moves_the_leaf_and_summarizes_the_abandoned_branch() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let h = harness(
        vec![ext(move |pi| {
            let l = l.clone();
            pi.on_notify("session_tree", move |e, _| {
                if let NotifyEvent::Other { payload, .. } = e {
                    l.lock().unwrap().push(format!("tree:{}", payload.contains_key("summaryEntry")));
                }
                Box::pin(async { Ok(None) })
            });
        })],
        None,
        false,
    )
    .await;
    h.reply(vec![step(&h.seen, text("a")), step(&h.seen, text("b")), step(&h.seen, text("BRANCH SUMMARY"))]);
    h.session.prompt("first").await.unwrap();
    h.session.prompt("second").await.unwrap();
    let second_user = {
        let sm = h.session.session_manager();
        let branch = sm.get_branch(None);
        branch
            .iter()
            .filter(|e| serde_json::to_value(e).unwrap()["message"]["role"] == "user")
            .nth(1)
            .unwrap()
            .id()
            .to_owned()
    };
    let err = h.session.navigate_tree("nope", NavigateTreeOptions::default()).await.unwrap_err();
    assert_eq!(err.to_string(), "Entry nope not found");
    let out = h
        .session
        .navigate_tree(&second_user, NavigateTreeOptions { summarize: true, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(out.editor_text.as_deref(), Some("second"));
    assert!(!out.cancelled);
    let summary_id = out.summary_entry_id.unwrap();
    assert_eq!(h.session.session_manager().leaf_id(), Some(summary_id.as_str()));
    assert_eq!(h.entry_types().last().unwrap(), "branch_summary");
    let texts: Vec<String> = h.session.messages().iter().filter_map(|m| m.as_assistant().map(|a| a.text())).collect();
    assert_eq!(texts, ["a"]);
    // Only the entries after the common ancestor (the target) are summarized.
    let summary_prompt = user_texts(&h.seen.lock().unwrap()[2]).join("");
    assert!(summary_prompt.contains("<conversation>") && !summary_prompt.contains("first"), "{summary_prompt}");
    assert_eq!(*log.lock().unwrap(), ["tree:true"]);
}

#[tokio::test]
async fn sessions_can_be_replaced_forked_and_counted() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let block = Arc::new(Mutex::new(true));
    let b = block.clone();
    let h = harness(
        vec![ext(move |pi| {
            let b = b.clone();
            pi.on_notify("session_before_switch", move |_, _| {
                let cancel = *b.lock().unwrap();
                Box::pin(async move { Ok(cancel.then(|| json!({"cancel": true}))) })
            });
            let l = l.clone();
            pi.on_notify("session_start", move |e, _| {
                if let NotifyEvent::SessionStart { reason, previous_session_file } = e {
                    l.lock().unwrap().push(format!("{reason}:{}", previous_session_file.is_some()));
                }
                Box::pin(async { Ok(None) })
            });
        })],
        None,
        true,
    )
    .await;
    h.reply(vec![step(&h.seen, text("a")), step(&h.seen, text("b"))]);
    h.session.prompt("one").await.unwrap();
    h.session.prompt("two").await.unwrap();
    let stats = h.session.get_session_stats();
    assert_eq!((stats.user_messages, stats.assistant_messages, stats.tool_calls), (2, 2, 0));
    let json = stats.to_json();
    assert_eq!(json["sessionId"], json!(h.session.session_id()));
    assert!(json["tokens"]["total"].is_u64());
    let forkable = h.session.get_fork_messages();
    assert_eq!(forkable.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(), ["one", "two"]);
    let original = h.session.session_file().unwrap();

    assert!(h.session.new_session(None).await.unwrap().cancelled);
    assert_eq!(h.session.session_file().unwrap(), original);
    *block.lock().unwrap() = false;

    let fork = h.session.fork(&forkable[1].entry_id).await.unwrap();
    assert_eq!(fork.selected_text.as_deref(), Some("two"));
    let forked = h.session.session_file().unwrap();
    assert_ne!(forked, original);
    assert_eq!(h.session.get_fork_messages().iter().map(|m| m.text.clone()).collect::<Vec<_>>(), ["one"]);
    let header = std::fs::read_to_string(&forked).unwrap();
    assert!(header.lines().next().unwrap().contains("parentSession"));
    let err = h.session.fork("missing").await.unwrap_err();
    assert_eq!(err.to_string(), "Invalid entry ID for forking");

    h.session.new_session(None).await.unwrap();
    assert_eq!(h.entry_types(), ["model_change", "thinking_level_change"]);
    assert!(h.session.messages().is_empty());

    h.session.switch_session(&original).await.unwrap();
    assert_eq!(h.session.session_file().unwrap(), original);
    assert_eq!(h.session.get_fork_messages().len(), 2);
    assert_eq!(*log.lock().unwrap(), ["startup:false", "fork:true", "new:true", "resume:true"]);
}

/// A model that writes `SUMMARY` for summary requests and plays `replies` for the others.
fn summarizing_model(h: &Harness, replies: Vec<pi_ai::AssistantMessage>) {
    let queue = Arc::new(Mutex::new(std::collections::VecDeque::from(replies)));
    let steps = (0..12)
        .map(|_| {
            let queue = queue.clone();
            let seen = h.seen.clone();
            FauxStep::factory(move |req| {
                let queue = queue.clone();
                let seen = seen.clone();
                async move {
                    let request = serde_json::to_value(req.context.messages()).unwrap();
                    seen.lock().unwrap().push(request.clone());
                    let summary = |t: &String| t.contains("<conversation>") || t.starts_with("# Conversation\n");
                    if user_texts(&request).iter().any(summary) {
                        return Ok(faux_assistant_message(vec![faux_text("SUMMARY")], Default::default()));
                    }
                    queue.lock().unwrap().pop_front().ok_or_else(|| "no reply left".to_owned())
                }
            })
        })
        .collect();
    h.reply(steps);
}

#[tokio::test]
async fn context_overflow_compacts_and_retries_the_turn_once() {
    let mut settings = small_settings();
    settings.compaction.enabled = true;
    let h = harness(vec![], Some(settings), false).await;
    let overflow = faux_assistant_message(
        vec![],
        FauxMessageOptions {
            stop_reason: Some(StopReason::Error),
            error_message: Some("prompt is too long: 200000 tokens > 100000 maximum".into()),
            ..Default::default()
        },
    );
    let ok = |t: &str| faux_assistant_message(vec![faux_text(t.to_owned())], Default::default());
    summarizing_model(&h, vec![ok("a"), overflow, ok("recovered")]);
    h.session.prompt("one").await.unwrap();
    h.session.prompt("two").await.unwrap();
    let records = h.records.lock().unwrap().clone();
    let kinds: Vec<(String, String)> =
        records.iter().map(|r| (r["type"].as_str().unwrap().to_owned(), r["reason"].to_string())).collect();
    assert!(kinds.contains(&("compaction_start".into(), "\"overflow\"".into())), "{records:?}");
    let end = records.iter().rfind(|r| r["type"] == "compaction_end").unwrap();
    assert_eq!(end["willRetry"], true);
    assert!(end["result"]["summary"].as_str().unwrap().starts_with("SUMMARY"));
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("recovered"));
    let types = h.entry_types();
    assert!(types.contains(&"compaction".to_owned()) && types.contains(&"context_edit".to_owned()), "{types:?}");
}

#[tokio::test]
async fn crossing_the_threshold_compacts_after_the_run_without_retrying() {
    let mut settings = small_settings();
    settings.compaction = CompactionSettings { enabled: true, reserve_tokens: 127_999, keep_recent_tokens: 1 };
    let h = harness(vec![], Some(settings), false).await;
    let ok = |t: &str| faux_assistant_message(vec![faux_text(t.to_owned())], Default::default());
    summarizing_model(&h, vec![ok("a"), ok("b")]);
    h.session.prompt("one").await.unwrap();
    let records = h.records.lock().unwrap().clone();
    assert_eq!(records[0], json!({"type": "compaction_start", "reason": "threshold"}));
    assert_eq!(records[1]["willRetry"], false);
    assert_eq!(records[1]["aborted"], false);
    assert_eq!(h.entry_types().last().unwrap(), "compaction");
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("a"), "the response is kept");
    // Disabled: nothing happens.
    h.session.set_auto_compaction_enabled(false);
    h.session.prompt("two").await.unwrap();
    assert_eq!(h.records.lock().unwrap().len(), 2);
}
