//! The seed's 验收清单 (acceptance checklist) and 排障速查 (troubleshooting table), one test per
//! row, through the SDK with in-process extensions. Each assertion is on what the model was really
//! sent: the faux provider records every request's transcript.

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text, faux_tool_call,
};
use pi_ai::{StopReason, SystemMessage, UserMessage};
use pi_coding_agent::extensions::{
    ContextEvent, ContextWithSystemEvent, Extension, ExtensionError, FnExtension, REMOVED_LEADING_SYSTEM_MESSAGE,
    ToolResultEvent,
};
use pi_coding_agent::messages::{CodingAgentMessage, CodingMessage, CustomRoleMessage};
use pi_coding_agent::sdk::{AgentSession, CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;
use serde_json::{Value, json};

struct Harness {
    session: AgentSession,
    requests: Arc<Mutex<Vec<Value>>>,
    errors: Arc<Mutex<Vec<ExtensionError>>>,
    _dir: tempfile::TempDir,
}

impl Harness {
    fn request(&self, i: usize) -> Value {
        self.requests.lock().unwrap()[i].clone()
    }
    fn last_request(&self) -> Value {
        self.requests.lock().unwrap().last().cloned().unwrap()
    }
    fn entry_types(&self) -> Vec<String> {
        self.session
            .session_manager()
            .get_branch(None)
            .iter()
            .map(|e| serde_json::to_value(e).unwrap()["type"].as_str().unwrap().to_owned())
            .collect()
    }
}

fn roles(request: &Value) -> Vec<String> {
    request.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect()
}

/// A session on a faux model that answers each request with the next scripted reply (default "ok").
async fn harness(extensions: Vec<Arc<dyn Extension>>, replies: Vec<pi_ai::AssistantMessage>) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let mut replies = replies.into_iter();
    let steps: Vec<FauxStep> = (0..12)
        .map(|_| {
            let requests = requests.clone();
            let reply =
                replies.next().unwrap_or_else(|| faux_assistant_message(vec![faux_text("ok")], Default::default()));
            FauxStep::factory(move |req| {
                let requests = requests.clone();
                let reply = reply.clone();
                async move {
                    requests.lock().unwrap().push(serde_json::to_value(req.context.messages()).unwrap());
                    Ok(reply)
                }
            })
        })
        .collect();
    faux.set_responses(steps);
    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.reload().await.unwrap();
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir.path())),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux))),
        extensions,
        ..Default::default()
    })
    .await
    .unwrap();
    let errors = Arc::new(Mutex::new(Vec::new()));
    if let Some(runner) = created.session.extension_runner() {
        let e = errors.clone();
        std::mem::forget(runner.on_error(move |err| e.lock().unwrap().push(err.clone())));
    }
    Harness { session: created.session, requests, errors, _dir: dir }
}

fn audit_extension() -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:audit>", |pi| {
        let api = pi.clone();
        pi.on::<ToolResultEvent>(move |event, _ctx| {
            let api = api.clone();
            let data = json!({"toolName": event.tool_name, "toolCallId": event.tool_call_id, "at": 1});
            Box::pin(async move {
                api.append_entry("audit-note", data)?;
                Ok(None)
            })
        });
        Ok(())
    }))
}

fn bash_call_reply() -> pi_ai::AssistantMessage {
    faux_assistant_message(
        vec![faux_tool_call("bash", json!({"command": "echo checked"}), Some("call_1"))],
        FauxMessageOptions { stop_reason: Some(StopReason::ToolUse), ..Default::default() },
    )
}

// ---- 验收清单 ----

#[tokio::test]
async fn checklist_1_an_appended_entry_never_reaches_the_model() {
    let h = harness(vec![audit_extension()], vec![bash_call_reply()]).await;
    h.session.bind_extensions().await;
    h.session.prompt("跑一下检查").await.unwrap();
    h.session.prompt("again").await.unwrap();
    assert!(h.entry_types().contains(&"custom".to_owned()), "the audit-note entry is in the session");
    let count = h.requests.lock().unwrap().len();
    assert!(count >= 3, "tool call, answer, second prompt");
    for i in 0..count {
        assert!(!h.request(i).to_string().contains("audit-note"), "request {i} must not contain the entry");
    }
    assert!(h.errors.lock().unwrap().is_empty(), "{:?}", h.errors.lock().unwrap());
}

#[tokio::test]
async fn checklist_1b_without_bind_extensions_actions_fail_and_nothing_is_written() {
    let h = harness(vec![audit_extension()], vec![bash_call_reply()]).await;
    h.session.prompt("跑一下检查").await.unwrap();
    assert!(!h.entry_types().contains(&"custom".to_owned()));
    let errors = h.errors.lock().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].event, "tool_result");
    assert!(
        errors[0]
            .error
            .contains("Extension runtime not initialized. Action methods cannot be called during extension loading.")
    );
}

#[tokio::test]
async fn checklist_2_a_custom_role_without_a_converter_is_filtered() {
    let h = harness(vec![], vec![]).await;
    let note: CodingAgentMessage = serde_json::from_value(
        json!({"role": "auditNote", "text": "跳过了 3 个生成文件", "level": "info", "timestamp": 1}),
    )
    .unwrap();
    h.session.prompt_messages(vec![note, AgentMessage::User(UserMessage::new("go"))]).await.unwrap();
    assert!(!h.last_request().to_string().contains("跳过了"));
    assert_eq!(roles(&h.last_request()), ["system", "user"]);
}

#[tokio::test]
async fn checklist_3_a_sections_patch_replaces_only_that_section() {
    let h = harness(vec![], vec![]).await;
    h.session.prompt("first").await.unwrap();
    let before = pi_ai::transcript::current_system_message(&h.session.messages()).unwrap().sections.unwrap();
    let patch =
        SystemMessage::new("").with_sections([("skills", Some("<skills>...</skills>".to_owned()))]).at(pi_ai::now_ms());
    h.session
        .prompt_messages(vec![AgentMessage::System(patch), AgentMessage::User(UserMessage::new("继续"))])
        .await
        .unwrap();
    let head = pi_ai::transcript::current_system_message(&h.session.messages()).unwrap();
    let after = head.sections.unwrap();
    assert_eq!(after.get("skills"), Some(Some("<skills>...</skills>")));
    for (name, value) in before.iter() {
        assert_eq!(after.get(name), Some(value), "section {name} unchanged");
    }
}

#[tokio::test]
async fn checklist_4_changing_tools_records_a_tool_diff_system_message() {
    let h = harness(vec![], vec![]).await;
    h.session.prompt("first").await.unwrap();
    h.session.set_active_tools_by_name(&["read", "grep"]);
    h.session.prompt("second").await.unwrap();
    let diff = h
        .session
        .messages()
        .into_iter()
        .filter_map(|m| match m {
            AgentMessage::System(s) if s.tools_removed.is_some() => Some(s),
            _ => None,
        })
        .next()
        .expect("a system message with the tool diff");
    let added: Vec<String> = diff.tools_added.unwrap().into_iter().map(|t| t.name).collect();
    let removed: Vec<String> = diff.tools_removed.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(added, ["grep"]);
    assert_eq!(removed, ["bash", "edit", "write"]);
}

#[tokio::test]
async fn checklist_5_a_custom_role_can_never_reach_the_provider() {
    // pi: an unfiltered custom role makes the provider reject the request. Here convert_to_llm
    // returns pi_ai::Message, so the failure cannot be written; the role is dropped instead.
    let h = harness(vec![], vec![]).await;
    let odd: CodingAgentMessage =
        serde_json::from_value(json!({"role": "hookMessage", "content": "x", "timestamp": 1})).unwrap();
    h.session.prompt_messages(vec![odd, AgentMessage::User(UserMessage::new("go"))]).await.unwrap();
    for m in h.last_request().as_array().unwrap() {
        assert!(["system", "user", "assistant", "toolResult"].contains(&m["role"].as_str().unwrap()));
    }
}

#[tokio::test]
async fn checklist_6_context_with_system_dropping_the_head_reports_and_still_applies() {
    let drop_head = Arc::new(FnExtension::new("/ext0.ts", |pi| {
        pi.on_sync::<ContextWithSystemEvent>(|event, _ctx| {
            event.messages.retain(|m| !matches!(m, AgentMessage::System(_)));
            Ok(None)
        });
        Ok(())
    }));
    let h = harness(vec![drop_head], vec![]).await;
    h.session.prompt("go").await.unwrap();
    assert_eq!(roles(&h.last_request()), ["user"], "the handler's output is used");
    let errors = h.errors.lock().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].event, "context_with_system");
    assert_eq!(errors[0].error, REMOVED_LEADING_SYSTEM_MESSAGE);
    assert_eq!(
        errors[0].error,
        "Handler removed the leading system message; the request has no prompt or initial tool declarations. Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage()."
    );
}

// ---- 排障速查 ----

#[tokio::test]
async fn troubleshooting_custom_message_invisible_until_converted_send_message_content_is_seen() {
    let h = harness(vec![], vec![]).await;
    let message = CustomRoleMessage {
        custom_type: "reminder".into(),
        content: "Remember the deadline.".into(),
        display: true,
        details: Some(json!({"ui": "only"})),
        timestamp: 5,
        ..Default::default()
    };
    h.session.send_custom_message(message, true).await.unwrap();
    let request = h.last_request().to_string();
    assert!(request.contains("Remember the deadline."));
    assert!(!request.contains("\"ui\""));
}

#[tokio::test]
async fn troubleshooting_audit_record_in_model_context_means_wrong_carrier() {
    let h = harness(vec![], vec![]).await;
    h.session.append_entry("audit-note", Some(json!({"x": "entry-data"}))).unwrap();
    h.session.prompt("go").await.unwrap();
    assert!(!h.last_request().to_string().contains("entry-data"));
}

#[tokio::test]
async fn troubleshooting_pruning_belongs_to_the_context_event() {
    let prune = Arc::new(FnExtension::new("<inline:prune>", |pi| {
        pi.on_sync::<ContextEvent>(|event, _ctx| {
            let cut = event.messages.len().saturating_sub(1);
            event.messages.drain(..cut);
            Ok(None)
        });
        Ok(())
    }));
    let h = harness(vec![prune], vec![]).await;
    h.session.prompt("first").await.unwrap();
    h.session.prompt("second").await.unwrap();
    // Only the last visible message is sent, behind the restored (merged) head.
    assert_eq!(roles(&h.last_request()), ["system", "user"]);
    assert!(h.last_request()[1].to_string().contains("second"));
}

#[tokio::test]
async fn troubleshooting_a_message_injected_by_context_still_passes_convert_to_llm() {
    let inject = Arc::new(FnExtension::new("<inline:inject>", |pi| {
        pi.on_sync::<ContextEvent>(|event, _ctx| {
            event.messages.push(serde_json::from_value(
                json!({"role": "internalNote", "text": "not for the model", "timestamp": 1}),
            )?);
            event.messages.push(AgentMessage::User(UserMessage::new("<context>injected</context>")));
            Ok(None)
        });
        Ok(())
    }));
    let h = harness(vec![inject], vec![]).await;
    h.session.prompt("go").await.unwrap();
    let request = h.last_request().to_string();
    assert!(request.contains("<context>injected</context>"));
    assert!(!request.contains("not for the model"));
}

#[tokio::test]
async fn troubleshooting_the_system_prompt_changes_by_appending_a_system_message() {
    let h = harness(vec![], vec![]).await;
    h.session.prompt("first").await.unwrap();
    let before = h.session.system_prompt();
    h.session
        .prompt_messages(vec![
            AgentMessage::System(SystemMessage::new("Extra instruction.").at(pi_ai::now_ms())),
            AgentMessage::User(UserMessage::new("go")),
        ])
        .await
        .unwrap();
    // content appends: nothing of the old prompt is lost.
    let after = h.session.system_prompt();
    assert!(after.contains("Extra instruction."));
    assert!(after.contains("You are a coding assistant running inside pi"));
    assert!(after.len() > before.len());
}

#[tokio::test]
async fn troubleshooting_context_handlers_cannot_see_system_messages_context_with_system_can() {
    let seen = Arc::new(Mutex::new((Vec::<String>::new(), Vec::<String>::new())));
    let s = seen.clone();
    let observer = Arc::new(FnExtension::new("<inline:observer>", move |pi| {
        let a = s.clone();
        pi.on_sync::<ContextEvent>(move |event, _ctx| {
            a.lock().unwrap().0 = event.messages.iter().map(|m| m.role().to_owned()).collect();
            Ok(None)
        });
        let b = s.clone();
        pi.on_sync::<ContextWithSystemEvent>(move |event, _ctx| {
            b.lock().unwrap().1 = event.messages.iter().map(|m| m.role().to_owned()).collect();
            Ok(None)
        });
        Ok(())
    }));
    let h = harness(vec![observer], vec![]).await;
    h.session.prompt("go").await.unwrap();
    let (context, with_system) = seen.lock().unwrap().clone();
    assert_eq!(context, ["user"]);
    assert_eq!(with_system, ["system", "user"]);
    assert_eq!(roles(&h.last_request()), ["system", "user"], "the head was restored after `context`");
    let _ = CodingMessage::Other(Default::default());
}

/// The seed's "在 SDK 里跑起来": a loader with `additional_extension_paths` naming the Python audit
/// extension, an explicit `reload()`, `bind_extensions`, one prompt; the audit entry is in the
/// session and in no request.
#[tokio::test]
async fn sdk_runs_the_python_audit_extension_from_additional_extension_paths() {
    if std::process::Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIP: python3 is not installed");
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/extensions/audit_extension.py");
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxProvider::new(FauxOptions::default());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let mut steps =
        vec![bash_call_reply(), faux_assistant_message(vec![faux_text("done")], Default::default())].into_iter();
    faux.set_responses(
        (0..2)
            .map(|_| {
                let requests = requests.clone();
                let reply = steps.next().unwrap();
                FauxStep::factory(move |req| {
                    let requests = requests.clone();
                    let reply = reply.clone();
                    async move {
                        requests.lock().unwrap().push(serde_json::to_value(req.context.messages()).unwrap());
                        Ok(reply)
                    }
                })
            })
            .collect(),
    );
    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.additional_extension_paths.push(script);
    loader.reload().await.unwrap();
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir.path())),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux))),
        ..Default::default()
    })
    .await
    .unwrap();
    let session = created.session;
    session.bind_extensions().await;
    session.prompt("跑一下检查").await.unwrap();
    let entries: Vec<Value> =
        session.session_manager().get_branch(None).iter().map(|e| serde_json::to_value(e).unwrap()).collect();
    let audit: Vec<&Value> =
        entries.iter().filter(|e| e["type"] == "custom" && e["customType"] == "audit-note").collect();
    assert_eq!(audit.len(), 1, "{entries:#?}");
    assert_eq!(audit[0]["data"]["toolName"], "bash");
    for request in requests.lock().unwrap().iter() {
        assert!(!request.to_string().contains("audit-note"));
    }
    session.dispose().await;
}
