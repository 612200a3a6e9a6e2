//! `AgentSession` as pi 1.6.0's prompt path: the extension events (`input`,
//! `before_agent_start`, `message_end`, `before_provider_request`, `user_bash`, lifecycle order),
//! `send_message` delivery, and model / thinking / name announcements. The model is pi-ai's faux
//! provider.

use std::sync::{Arc, Mutex, OnceLock};

use pi_ai::providers::faux::{FauxMessageOptions, FauxStep, faux_assistant_message, faux_text, faux_tool_call};
use pi_ai::{AssistantBlock, StopReason, TextContent};
use pi_coding_agent::extensions::*;
use pi_coding_agent::messages::{CodingAgentMessage, CodingMessage};
use pi_coding_agent::sdk::{AgentSession, SessionEvent};
use sdk_support::{Harness, Log, Seen, ext, harness, step, text, user_texts};
use serde_json::{Value, json};

#[path = "sdk_support/mod.rs"]
mod sdk_support;

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
                    CodingAgentMessage::User(_) => {
                        Some(CodingAgentMessage::System(pi_ai::SystemMessage::new("x").into()))
                    }
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
            let hooked = hook(&body, &req.model).await;
            sink.lock().unwrap().push(hooked.unwrap_or(body));
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
        .branch(None)
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

#[tokio::test]
async fn model_thinking_and_name_changes_are_announced_only_when_they_change() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let h = harness(
        vec![ext(move |pi| {
            for name in ["model_select", "thinking_level_select", "session_info_changed"] {
                let l = l.clone();
                pi.on_notify(name, move |e, _| {
                    if let NotifyEvent::Other { kind, payload } = e {
                        let detail = payload.get("level").or(payload.get("name")).or(payload.get("source"));
                        l.lock().unwrap().push(format!("{kind}:{}", detail.cloned().unwrap_or_default()));
                    }
                    Box::pin(async { Ok(None) })
                });
            }
        })],
        None,
        false,
    )
    .await;
    let before = h.entry_types().len();
    h.session.set_thinking_level(pi_ai::ThinkingLevel::Off).unwrap();
    assert_eq!(h.entry_types().len(), before, "the same level records nothing");
    h.session.set_thinking_level(pi_ai::ThinkingLevel::High).unwrap();
    assert_eq!(h.entry_types().last().unwrap(), "thinking_level_change");
    h.session.set_model(h.session.model()).unwrap();
    let mut other = h.session.model();
    other.id = "faux-2".into();
    h.session.set_model(other).unwrap();
    h.session.set_session_name("my work").unwrap();
    for _ in 0..1000 {
        if log.lock().unwrap().len() == 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let mut seen = log.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, ["model_select:\"set\"", "session_info_changed:\"my work\"", "thinking_level_select:\"high\""]);
    assert_eq!(
        *h.records.lock().unwrap(),
        [
            json!({"type": "thinking_level_changed", "level": "high"}),
            json!({"type": "session_info_changed", "name": "my work"})
        ]
    );
}

#[tokio::test]
async fn bash_results_recorded_while_streaming_wait_for_the_run_to_end() {
    let h = harness(vec![], None, false).await;
    let cell: Arc<OnceLock<AgentSession>> = Arc::new(OnceLock::new());
    let c = cell.clone();
    h.reply(vec![FauxStep::factory(move |_req| {
        let c = c.clone();
        async move {
            let session = c.get().unwrap().clone();
            let r = session.execute_bash("echo mid-run", false).await.unwrap();
            assert_eq!(r.output, "mid-run\n");
            Ok(faux_assistant_message(vec![faux_text("answer")], Default::default()))
        }
    })]);
    cell.set(h.session.clone()).ok();
    h.session.prompt("go").await.unwrap();
    assert_eq!(h.entry_types()[2..], ["message:system", "message:user", "message:assistant", "message:bashExecution"]);
}

/// Prompts once with an extension whose first `agent_settled` handler call runs `send`; returns
/// the order of the session's events, the handler's marks and where `prompt` and
/// `wait_for_idle` returned, as `scripts/fixtures/pi_settled_deferral.mjs` records it from pi.
async fn settled_order(send: impl Fn(&ExtensionApi) + Send + Sync + 'static) -> Vec<String> {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let send = Arc::new(send);
    let h = harness(
        vec![ext(move |pi| {
            let (l, api, send) = (l.clone(), pi.clone(), send.clone());
            let count = Arc::new(Mutex::new(0));
            pi.on_notify("agent_settled", move |_, _| {
                let n = {
                    let mut c = count.lock().unwrap();
                    *c += 1;
                    *c
                };
                l.lock().unwrap().push(format!("handler:agent_settled#{n}"));
                if n == 1 {
                    send(&api);
                    l.lock().unwrap().push("handler:sent".to_owned());
                }
                Box::pin(async { Ok(None) })
            });
        })],
        None,
        false,
    )
    .await;
    let l = log.clone();
    let _sub = h.session.subscribe(move |e| {
        let entry = match e {
            SessionEvent::Agent(pi_agent_core::AgentEvent::MessageUpdate { .. })
            | SessionEvent::EntryPersisted { .. } => {
                return;
            }
            SessionEvent::Agent(pi_agent_core::AgentEvent::MessageStart { message }) => match message {
                CodingAgentMessage::User(u) => {
                    format!("message_start:user:{}", pi_ai::transcript::content_text(&u.content))
                }
                CodingAgentMessage::Custom(CodingMessage::Custom(c)) => {
                    format!("message_start:custom:{}", pi_ai::transcript::content_text(&c.content))
                }
                _ => "message_start".to_owned(),
            },
            SessionEvent::Agent(e) => e.kind().to_owned(),
            SessionEvent::AgentEnd { .. } => "agent_end".to_owned(),
            other => other.kind().to_owned(),
        };
        l.lock().unwrap().push(entry);
    });
    h.reply(vec![step(&h.seen, text("ok")), step(&h.seen, text("ok"))]);
    h.session.prompt("first").await.unwrap();
    log.lock().unwrap().push("prompt:returned".to_owned());
    h.session.wait_for_idle().await;
    log.lock().unwrap().push("idle".to_owned());
    assert_eq!(h.seen.lock().unwrap().len(), 2, "the deferred call made a second request");
    log.lock().unwrap().clone()
}

fn recorded_order(key: &str) -> Vec<String> {
    let fixture: Value = serde_json::from_str(include_str!("fixtures/sdk/settled_deferral_order.json")).unwrap();
    fixture[key].as_array().unwrap().iter().map(|e| e.as_str().unwrap().to_owned()).collect()
}

/// As pi 1.6.0: a `sendUserMessage` or a triggered `sendMessage` made from an `agent_settled`
/// handler is deferred until the event has reached every handler and listener; the prompt that
/// settled returns after the run it started (pi's `_deferredSettledActions`).
#[tokio::test]
async fn messages_sent_from_agent_settled_run_after_the_event() {
    let order = settled_order(|api| api.send_user_message("again", SendUserMessageOptions::default()).unwrap()).await;
    assert_eq!(order, recorded_order("order"));
    let order = settled_order(|api| {
        let options = SendMessageOptions { trigger_turn: Some(true), deliver_as: None };
        api.send_message(ExtensionMessage::text("note", "later"), options).unwrap();
    })
    .await;
    assert_eq!(order, recorded_order("sendMessageOrder"));
}
