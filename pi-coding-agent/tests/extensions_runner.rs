//! The runner's composition and isolation rules for every emit method, loading, registration
//! and actions.

use std::sync::{Arc, Mutex};

use pi_ai::{Content, TextContent, UserBlock};
use pi_coding_agent::extensions::*;
use pi_coding_agent::messages::CodingAgentMessage;
use serde_json::{Map, Value, json};

type Errors = Arc<Mutex<Vec<ExtensionError>>>;

async fn load(exts: Vec<FnExtension>) -> (ExtensionRunner, Errors) {
    let exts: Vec<Arc<dyn Extension>> = exts.into_iter().map(|e| Arc::new(e) as Arc<dyn Extension>).collect();
    let runner = ExtensionRunner::load(exts, "/tmp").await;
    let errors: Errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    runner.on_error(move |e| sink.lock().unwrap().push(e.clone()));
    (runner, errors)
}

fn ext(path: &str, setup: impl Fn(&ExtensionApi) + Send + Sync + 'static) -> FnExtension {
    FnExtension::new(path, move |pi| {
        setup(pi);
        Ok(())
    })
}

fn text(t: &str) -> Vec<UserBlock> {
    vec![UserBlock::Text(TextContent::new(t))]
}

fn tool_result() -> ToolResultEvent {
    ToolResultEvent {
        tool_name: "read".into(),
        tool_call_id: "c1".into(),
        parent_tool_call_id: None,
        input: Map::new(),
        content: text("orig"),
        details: json!({}),
        structured_content: Some(json!({"s": 1})),
        is_error: false,
        usage: None,
    }
}

fn tool_call() -> ToolCallEvent {
    ToolCallEvent { tool_call_id: "c1".into(), tool_name: "bash".into(), input: Map::new(), parent_tool_call_id: None }
}

fn user(t: &str) -> CodingAgentMessage {
    serde_json::from_value(json!({"role": "user", "content": t, "timestamp": 1})).unwrap()
}

#[tokio::test]
async fn a_failing_setup_is_a_load_error_and_its_registrations_are_discarded() {
    let bad = FnExtension::new("/bad.ts", |pi| {
        pi.on_sync::<InputEvent>(|_, _| Ok(Some(InputOutcome::Handled)));
        Err("no config".into())
    });
    let panicking = FnExtension::new("/panic.ts", |_| panic!("setup panicked"));
    let good = ext("/good.ts", |pi| {
        pi.on_sync::<InputEvent>(|e, _| {
            Ok(Some(InputOutcome::Transform { text: format!("{}!", e.text), images: None }))
        });
    });
    let (r, _) = load(vec![bad, panicking, good]).await;
    assert_eq!(
        r.load_errors(),
        [
            ExtensionLoadError { path: "/bad.ts".into(), error: "Failed to load extension: no config".into() },
            ExtensionLoadError { path: "/panic.ts".into(), error: "Failed to load extension: setup panicked".into() },
        ]
    );
    assert_eq!(r.extension_paths(), ["/good.ts"]);
    let out = r.emit_input("hi", None, InputSource::Interactive).await;
    assert_eq!(out, InputOutcome::Transform { text: "hi!".into(), images: None });
}

#[tokio::test]
async fn actions_fail_before_binding_with_pis_text_and_work_after() {
    let captured: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
    let c = captured.clone();
    let setup_result: Arc<Mutex<Option<String>>> = Arc::default();
    let s = setup_result.clone();
    let (r, _) = load(vec![ext("/a.ts", move |pi| {
        *s.lock().unwrap() = pi.append_entry("x", None).err().map(|e| e.to_string());
        *c.lock().unwrap() = Some(pi.clone());
    })])
    .await;
    assert_eq!(
        setup_result.lock().unwrap().as_deref(),
        Some("Extension runtime not initialized. Action methods cannot be called during extension loading.")
    );
    let api = captured.lock().unwrap().clone().unwrap();
    for err in [
        api.send_message(ExtensionMessage::text("t", "x"), SendMessageOptions::default()).unwrap_err(),
        api.send_user_message("x", SendUserMessageOptions::default()).unwrap_err(),
        api.set_session_name("n").unwrap_err(),
        api.get_session_name().unwrap_err(),
        api.set_label("e", None).unwrap_err(),
        api.get_active_tools().unwrap_err(),
        api.get_all_tools().unwrap_err(),
        api.set_active_tools(&[]).unwrap_err(),
    ] {
        assert_eq!(err, ExtensionApiError::NotInitialized);
        assert_eq!(err.to_string(), RUNTIME_NOT_INITIALIZED);
    }
    let recorder = Arc::new(Recorder::default());
    r.bind(recorder.clone());
    api.append_entry("audit-note", json!({"a": 1})).unwrap();
    api.send_message(
        ExtensionMessage::text("note", "see this"),
        SendMessageOptions { trigger_turn: Some(true), deliver_as: Some(DeliverAs::FollowUp) },
    )
    .unwrap();
    assert_eq!(api.get_active_tools().unwrap(), ["read"]);
    assert_eq!(
        *recorder.log.lock().unwrap(),
        ["append_entry audit-note {\"a\":1}", "send_message note Some(FollowUp)"]
    );
}

#[derive(Default)]
struct Recorder {
    log: Mutex<Vec<String>>,
}

impl ExtensionActions for Recorder {
    fn send_message(&self, m: ExtensionMessage, o: SendMessageOptions) -> Result<(), BoxError> {
        self.log.lock().unwrap().push(format!("send_message {} {:?}", m.custom_type, o.deliver_as));
        Ok(())
    }
    fn send_user_message(&self, _: Content<UserBlock>, _: SendUserMessageOptions) -> Result<(), BoxError> {
        Ok(())
    }
    fn append_entry(&self, t: &str, d: Option<Value>) -> Result<(), BoxError> {
        self.log.lock().unwrap().push(format!("append_entry {t} {}", d.unwrap_or(Value::Null)));
        Ok(())
    }
    fn set_session_name(&self, _: &str) -> Result<(), BoxError> {
        Ok(())
    }
    fn get_session_name(&self) -> Option<String> {
        None
    }
    fn set_label(&self, _: &str, _: Option<&str>) -> Result<(), BoxError> {
        Ok(())
    }
    fn get_active_tools(&self) -> Vec<String> {
        vec!["read".into()]
    }
    fn get_all_tools(&self) -> Vec<ToolInfo> {
        Vec::new()
    }
    fn set_active_tools(&self, _: &[String]) -> Result<(), BoxError> {
        Ok(())
    }
}

#[tokio::test]
async fn handlers_run_in_load_then_registration_order_over_a_snapshot() {
    let order: Arc<Mutex<Vec<String>>> = Arc::default();
    let mk = |path: &'static str, order: Arc<Mutex<Vec<String>>>| {
        ext(path, move |pi| {
            for i in 0..2 {
                let o = order.clone();
                let api = pi.clone();
                pi.on_sync::<BeforeProviderRequestEvent>(move |_, _| {
                    o.lock().unwrap().push(format!("{path}#{i}"));
                    // Registering during an emit does not affect the running emit.
                    api.on_sync::<BeforeProviderRequestEvent>(|_, _| Ok(Some(json!("late"))));
                    Ok(None)
                });
            }
        })
    };
    let (r, _) = load(vec![mk("/a.ts", order.clone()), mk("/b.ts", order.clone())]).await;
    assert_eq!(r.emit_before_provider_request(json!({"p": 1})).await, json!({"p": 1}));
    assert_eq!(*order.lock().unwrap(), ["/a.ts#0", "/a.ts#1", "/b.ts#0", "/b.ts#1"]);
}

#[tokio::test]
async fn unsubscribe_removes_a_handler() {
    let handle: Arc<Mutex<Option<Unsubscribe>>> = Arc::default();
    let h = handle.clone();
    let (r, _) = load(vec![ext("/a.ts", move |pi| {
        *h.lock().unwrap() = Some(pi.on_sync::<BeforeProviderRequestEvent>(|_, _| Ok(Some(json!(2)))));
    })])
    .await;
    assert_eq!(r.emit_before_provider_request(json!(1)).await, json!(2));
    handle.lock().unwrap().as_ref().unwrap().unsubscribe();
    assert_eq!(r.emit_before_provider_request(json!(1)).await, json!(1));
    assert!(!r.has_handlers("before_provider_request"));
}

/// `has_handlers` (asked on every streamed delta) answers from a set it keeps: the set follows
/// handlers added after it was first asked, removed, and re-added.
#[tokio::test]
async fn has_handlers_follows_handlers_added_and_removed_after_it_was_asked() {
    let api: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
    let a = api.clone();
    let (r, _) = load(vec![ext("/a.ts", move |pi| *a.lock().unwrap() = Some(pi.clone()))]).await;
    assert!(!r.has_handlers("before_provider_request"));
    let pi = api.lock().unwrap().clone().unwrap();
    let off = pi.on_sync::<BeforeProviderRequestEvent>(|_, _| Ok(None));
    assert!(r.has_handlers("before_provider_request"));
    assert!(!r.has_handlers("message_update"));
    off.unsubscribe();
    assert!(!r.has_handlers("before_provider_request"));
    let again = pi.on_sync::<BeforeProviderRequestEvent>(|_, _| Ok(None));
    assert!(r.has_handlers("before_provider_request"));
    assert_eq!(r.handled_events(), ["before_provider_request"]);
    again.unsubscribe();
    assert!(r.handled_events().is_empty());
}

#[tokio::test]
async fn tool_call_first_block_wins_input_is_mutable_and_failures_fail_closed() {
    let calls: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let c1 = calls.clone();
    let c2 = calls.clone();
    let (r, errors) = load(vec![ext("/a.ts", move |pi| {
        let c = c1.clone();
        pi.on_sync::<ToolCallEvent>(move |e, _| {
            c.lock().unwrap().push("edit");
            e.input.insert("timeout".into(), json!(5));
            Ok(Some(ToolCallResult { terminate: true, ..Default::default() }))
        });
        let c = c2.clone();
        pi.on_sync::<ToolCallEvent>(move |e, _| {
            c.lock().unwrap().push("gate");
            Ok((e.tool_name == "bash").then(|| ToolCallResult::block("no bash")))
        });
        pi.on_sync::<ToolCallEvent>(|e, _| match e.tool_name.as_str() {
            "err" => Err("gate failed".into()),
            "panic" => panic!("gate panicked"),
            _ => Ok(Some(ToolCallResult::block("never reached for bash"))),
        });
    })])
    .await;
    let mut call = tool_call();
    let r1 = r.emit_tool_call(&mut call).await.unwrap().unwrap();
    assert_eq!(r1, ToolCallResult::block("no bash"));
    assert_eq!(call.input.get("timeout"), Some(&json!(5)));
    call.tool_name = "read".into();
    assert_eq!(r.emit_tool_call(&mut call).await.unwrap().unwrap().reason.as_deref(), Some("never reached for bash"));
    call.tool_name = "err".into();
    assert_eq!(
        r.emit_tool_call(&mut call).await.unwrap_err(),
        ExtensionError::new("/a.ts", "tool_call", "gate failed")
    );
    call.tool_name = "panic".into();
    assert_eq!(r.emit_tool_call(&mut call).await.unwrap_err().error, "gate panicked");
    assert!(errors.lock().unwrap().is_empty(), "tool_call errors are returned, not reported");
    // A non-blocking answer: the last one is returned.
    let (r, _) = load(vec![ext("/b.ts", |pi| {
        pi.on_sync::<ToolCallEvent>(|_, _| Ok(Some(ToolCallResult { terminate: true, ..Default::default() })));
        pi.on_sync::<ToolCallEvent>(|_, _| Ok(None));
    })])
    .await;
    assert_eq!(
        r.emit_tool_call(&mut tool_call()).await.unwrap(),
        Some(ToolCallResult { terminate: true, ..Default::default() })
    );
}

#[tokio::test]
async fn tool_result_patches_chain_and_failures_keep_the_previous_value() {
    let seen: Arc<Mutex<Vec<Vec<UserBlock>>>> = Arc::default();
    let s = seen.clone();
    let (r, errors) = load(vec![
        ext("/a.ts", |pi| {
            pi.on_sync::<ToolResultEvent>(|_, _| {
                Ok(Some(ToolResultPatch { content: Some(text("A")), ..Default::default() }))
            });
            pi.on_sync::<ToolResultEvent>(|e, _| {
                e.content = text("garbage");
                Err("broken".into())
            });
        }),
        ext("/b.ts", move |pi| {
            let s = s.clone();
            pi.on_sync::<ToolResultEvent>(move |e, _| {
                s.lock().unwrap().push(e.content.clone());
                Ok(Some(ToolResultPatch { details: Some(json!({"b": true})), ..Default::default() }))
            });
            pi.on_sync::<ToolResultEvent>(|_, _| panic!("patch panicked"));
        }),
    ])
    .await;
    let out = r.emit_tool_result(tool_result()).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![text("A")]);
    assert_eq!(out.content, Some(text("A")));
    assert_eq!(out.details, Some(json!({"b": true})));
    assert_eq!(out.structured_content, None, "replacing content without structuredContent drops it");
    assert_eq!(out.is_error, Some(false));
    assert_eq!(
        *errors.lock().unwrap(),
        vec![
            ExtensionError::new("/a.ts", "tool_result", "broken"),
            ExtensionError::new("/b.ts", "tool_result", "patch panicked")
        ]
    );
    let (r, _) = load(vec![ext("/c.ts", |pi| {
        pi.on_sync::<ToolResultEvent>(|_, _| Ok(None));
    })])
    .await;
    assert_eq!(r.emit_tool_result(tool_result()).await, None, "unmodified → None");
}

#[tokio::test]
async fn message_end_chains_keeps_the_role_and_isolates_failures() {
    let (r, errors) = load(vec![ext("/a.ts", |pi| {
        pi.on_sync::<MessageEndEvent>(|_, _| Ok(Some(user("first"))));
        pi.on_sync::<MessageEndEvent>(|_, _| Ok(Some(pi_ai::SystemMessage::new("x").into())));
        pi.on_sync::<MessageEndEvent>(|_, _| Err("bad".into()));
        pi.on_sync::<MessageEndEvent>(|_, _| panic!("worse"));
        pi.on_sync::<MessageEndEvent>(|e, _| {
            assert_eq!(e.message, user("first"));
            Ok(None)
        });
    })])
    .await;
    assert_eq!(r.emit_message_end(user("orig")).await, user("first"));
    let errs: Vec<String> = errors.lock().unwrap().iter().map(|e| e.error.clone()).collect();
    assert_eq!(errs, [MESSAGE_END_SAME_ROLE, "bad", "worse"]);
}

#[tokio::test]
async fn input_transforms_chain_and_handled_stops() {
    let (r, errors) = load(vec![ext("/a.ts", |pi| {
        pi.on_sync::<InputEvent>(|e, _| {
            Ok(Some(InputOutcome::Transform { text: format!("{}1", e.text), images: None }))
        });
        pi.on_sync::<InputEvent>(|_, _| Err("oops".into()));
        pi.on_sync::<InputEvent>(|e, _| {
            if e.text == "stop1" {
                return Ok(Some(InputOutcome::Handled));
            }
            Ok(Some(InputOutcome::Transform { text: format!("{}2", e.text), images: None }))
        });
    })])
    .await;
    assert_eq!(
        r.emit_input("a", None, InputSource::Rpc).await,
        InputOutcome::Transform { text: "a12".into(), images: None }
    );
    assert_eq!(r.emit_input("stop", None, InputSource::Rpc).await, InputOutcome::Handled);
    assert_eq!(errors.lock().unwrap().len(), 2);
    let (r, _) = load(vec![ext("/b.ts", |pi| {
        pi.on_sync::<InputEvent>(|_, _| Ok(Some(InputOutcome::Continue)));
    })])
    .await;
    assert_eq!(r.emit_input("a", None, InputSource::Interactive).await, InputOutcome::Continue);
}

#[tokio::test]
async fn before_agent_start_collects_messages_and_the_last_prompt_wins() {
    let prompts: Arc<Mutex<Vec<String>>> = Arc::default();
    let p = prompts.clone();
    let (r, errors) = load(vec![ext("/a.ts", move |pi| {
        pi.on_sync::<BeforeAgentStartEvent>(|_, _| {
            Ok(Some(BeforeAgentStartResult {
                message: Some(ExtensionMessage::text("m1", "one")),
                system_prompt: Some("P1".into()),
            }))
        });
        pi.on_sync::<BeforeAgentStartEvent>(|_, _| Err("x".into()));
        let p = p.clone();
        pi.on_sync::<BeforeAgentStartEvent>(move |e, _| {
            p.lock().unwrap().push(e.system_prompt.clone());
            Ok(Some(BeforeAgentStartResult {
                message: Some(ExtensionMessage::text("m2", "two")),
                system_prompt: Some("P2".into()),
            }))
        });
    })])
    .await;
    let trigger = AgentStartTrigger::User { prompt: "go".into(), images: None };
    let out = r.emit_before_agent_start(trigger, "BASE".into()).await;
    assert_eq!(out.messages.iter().map(|m| m.custom_type.as_str()).collect::<Vec<_>>(), ["m1", "m2"]);
    assert_eq!(out.system_prompt.as_deref(), Some("P2"));
    assert_eq!(*prompts.lock().unwrap(), ["P1"]);
    assert_eq!(errors.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn user_bash_first_result_wins_and_errors_are_reported_and_raised() {
    let (r, errors) = load(vec![ext("/a.ts", |pi| {
        pi.on_sync::<UserBashEvent>(|e, _| {
            if e.command == "fail" {
                return Err("remote down".into());
            }
            Ok(Some(UserBashResult::Result(BashResult {
                output: "remote".into(),
                exit_code: Some(0),
                ..Default::default()
            })))
        });
        pi.on_sync::<UserBashEvent>(|_, _| panic!("never reached"));
    })])
    .await;
    let ev = |c: &str| UserBashEvent { command: c.into(), exclude_from_context: false, cwd: "/tmp".into() };
    match r.emit_user_bash(ev("ls")).await.unwrap() {
        Some(UserBashResult::Result(b)) => assert_eq!(b.output, "remote"),
        other => panic!("{other:?}"),
    }
    let err = r.emit_user_bash(ev("fail")).await.unwrap_err();
    assert_eq!(err, ExtensionError::new("/a.ts", "user_bash", "remote down"));
    assert_eq!(*errors.lock().unwrap(), vec![err]);
}

#[tokio::test]
async fn before_provider_request_chains_and_isolates_failures() {
    let (r, errors) = load(vec![ext("/a.ts", |pi| {
        pi.on_sync::<BeforeProviderRequestEvent>(|e, _| {
            Ok(Some(json!({"n": e.payload["n"].as_i64().unwrap_or(0) + 1})))
        });
        pi.on_sync::<BeforeProviderRequestEvent>(|_, _| panic!("payload panic"));
        pi.on_sync::<BeforeProviderRequestEvent>(|e, _| {
            Ok(Some(json!({"n": e.payload["n"].as_i64().unwrap_or(0) * 10})))
        });
    })])
    .await;
    assert_eq!(r.emit_before_provider_request(json!({"n": 1})).await, json!({"n": 20}));
    assert_eq!(*errors.lock().unwrap(), vec![ExtensionError::new("/a.ts", "before_provider_request", "payload panic")]);
}

#[tokio::test]
async fn notify_events_and_session_before_cancel() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let s = seen.clone();
    let (r, errors) = load(vec![ext("/a.ts", move |pi| {
        let s = s.clone();
        pi.on_notify("agent_start", move |e, _| {
            let s = s.clone();
            let kind = e.kind().to_owned();
            Box::pin(async move {
                s.lock().unwrap().push(kind);
                Ok(None)
            })
        });
        pi.on_notify("agent_start", |_, _| Box::pin(async { Err("notify failed".into()) }));
        pi.on_notify("session_before_switch", |_, _| Box::pin(async { Ok(Some(json!({"note": 1}))) }));
        pi.on_notify("session_before_switch", |_, _| Box::pin(async { Ok(Some(json!({"cancel": true}))) }));
        pi.on_notify("session_before_switch", |_, _| Box::pin(async { panic!("not reached after cancel") }));
        pi.on_notify("session_before_fork", |_, _| {
            Box::pin(async { Ok(Some(json!({"skipConversationRestore": true}))) })
        });
    })])
    .await;
    assert_eq!(r.emit(NotifyEvent::AgentStart).await, None);
    assert_eq!(*seen.lock().unwrap(), ["agent_start"]);
    assert_eq!(*errors.lock().unwrap(), vec![ExtensionError::new("/a.ts", "agent_start", "notify failed")]);
    let switch = NotifyEvent::SessionBeforeSwitch { reason: "new".into(), target_session_file: None };
    assert_eq!(r.emit(switch).await, Some(json!({"cancel": true})));
    let fork = NotifyEvent::SessionBeforeFork { entry_id: "e".into(), position: "at".into() };
    assert_eq!(r.emit(fork).await, Some(json!({"skipConversationRestore": true})));
    assert_eq!(
        serde_json::to_value(NotifyEvent::TurnStart { turn_index: 2, timestamp: 5 }).unwrap(),
        json!({"type": "turn_start", "turnIndex": 2, "timestamp": 5})
    );
}

struct Noop(Value);

#[async_trait::async_trait]
impl pi_agent_core::AgentTool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn parameters(&self) -> &Value {
        &self.0
    }
    async fn execute(
        &self,
        _: &str,
        _: Map<String, Value>,
        _: pi_agent_core::ToolContext,
    ) -> Result<pi_agent_core::AgentToolResult, pi_agent_core::ToolError> {
        Ok(pi_agent_core::AgentToolResult::text("ok"))
    }
}

#[tokio::test]
async fn tools_commands_flags_and_renderers() {
    let flag_seen: Arc<Mutex<Option<FlagValue>>> = Arc::default();
    let f = flag_seen.clone();
    let (r, errors) = load(vec![
        ext("/a.ts", move |pi| {
            let bad = pi.register_tool(Arc::new(Noop(json!([]))) as Arc<dyn pi_agent_core::AgentTool>).unwrap_err();
            assert_eq!(
                bad.to_string(),
                "Tool \"noop\" registered by extension \"/a.ts\" must define an object parameter schema."
            );
            pi.register_tool(ToolDefinition {
                tool: Arc::new(Noop(json!({"type": "object"}))),
                prompt_snippet: Some("noop: nothing".into()),
                prompt_guidelines: Some(vec!["never".into()]),
            })
            .unwrap();
            pi.register_command("hi", Some("greet"), |_, _| Box::pin(async { Ok(()) })).unwrap();
            pi.register_command("boom", None, |_, _| Box::pin(async { Err("command failed".into()) })).unwrap();
            assert!(pi.register_command("", None, |_, _| Box::pin(async { Ok(()) })).is_err());
            let bad = pi.register_flag("v", FlagType::Boolean, Some(FlagValue::String("x".into())), None).unwrap_err();
            assert_eq!(bad.to_string(), "Invalid default for flag \"v\": expected boolean, got string");
            pi.register_flag("verbose", FlagType::Boolean, Some(FlagValue::Bool(false)), Some("more")).unwrap();
            *f.lock().unwrap() = pi.get_flag("verbose");
            assert_eq!(pi.get_flag("other"), None);
            pi.register_entry_renderer("audit-note", |entry, opts, _theme| {
                let label = format!("[audit] {} {}", entry.custom_type, opts.expanded);
                Some(Box::new(pi_tui::Text::new(label, 0, 0)) as Box<dyn pi_tui::Component>)
            })
            .unwrap();
        }),
        ext("/b.ts", |pi| {
            pi.register_command("hi", None, |_, _| Box::pin(async { Ok(()) })).unwrap();
        }),
    ])
    .await;
    assert_eq!(*flag_seen.lock().unwrap(), Some(FlagValue::Bool(false)));
    let tools = r.registered_tools();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].info().prompt_guidelines, Some(vec!["never".to_owned()]));
    let names: Vec<String> = r.commands().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["hi:1", "boom", "hi:2"]);
    assert!(r.run_command("hi:2", "").await);
    assert!(r.run_command("boom", "x").await);
    assert!(!r.run_command("hi", "").await);
    assert_eq!(*errors.lock().unwrap(), vec![ExtensionError::new("command:boom", "command", "command failed")]);
    assert_eq!(r.flags()[0].name, "verbose");
    r.set_flag_value("verbose", FlagValue::Bool(true));
    assert_eq!(r.flag_values().get("verbose"), Some(&FlagValue::Bool(true)));
    let entry: pi_coding_agent::session::CustomEntry = serde_json::from_value(json!({
        "type": "custom", "customType": "audit-note", "data": {"toolName": "read"}, "id": "e1", "parentId": null,
        "timestamp": "2025-01-01T00:00:00.000Z"
    }))
    .unwrap();
    let theme = pi_tui::Theme::dark(pi_tui::ColorMode::Truecolor).unwrap();
    let mut component = r.render_entry(&entry, true, &theme).expect("rendered");
    let lines = component.render(40);
    assert!(lines[0].contains("[audit] audit-note true"), "{lines:?}");
    let mut other = entry.clone();
    other.custom_type = "unknown".into();
    assert!(r.render_entry(&other, false, &theme).is_none());
}

#[tokio::test]
async fn exec_runs_a_real_process_with_timeout_and_output_cap() {
    let api: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
    let a = api.clone();
    let (_r, _) = load(vec![ext("/a.ts", move |pi| *a.lock().unwrap() = Some(pi.clone()))]).await;
    let api = api.lock().unwrap().clone().unwrap();
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let ok = api.exec("sh", &args(&["-c", "echo out; echo err >&2; exit 3"]), ExecOptions::default()).await.unwrap();
    assert_eq!(
        (ok.stdout.as_str(), ok.stderr.as_str(), ok.code, ok.killed, ok.truncated),
        ("out\n", "err\n", 3, false, false)
    );
    let slow =
        api.exec("sleep", &args(&["5"]), ExecOptions { timeout_ms: Some(200), ..Default::default() }).await.unwrap();
    assert!(slow.killed);
    assert_eq!(slow.code, 143);
    let big = api
        .exec(
            "sh",
            &args(&["-c", "yes | head -c 100000"]),
            ExecOptions { max_buffer: Some(1000), ..Default::default() },
        )
        .await
        .unwrap();
    assert!(big.truncated && big.killed);
    assert_eq!(big.stdout.len(), 1000);
    assert_ne!(big.code, 0);
    let missing = api.exec("/no/such/binary", &[], ExecOptions::default()).await.unwrap();
    assert_eq!(missing.code, 1);
    assert!(!missing.stderr.is_empty());
}
