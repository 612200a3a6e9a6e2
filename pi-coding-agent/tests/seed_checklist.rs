//! The seed's 验收清单 (acceptance checklist) and 排障速查 (troubleshooting table), one test per
//! row, plus its "在 SDK 里跑起来" flow with the Python audit extension. Every session talks to a
//! scripted OpenAI chat-completions server on 127.0.0.1 (tests/http_support), and every assertion
//! about the model's view is on the JSON body that server really received: the messages, where
//! the system prompt sits (chat-completions: one leading `system` message) and the declared tools.

mod http_support;

use std::sync::{Arc, Mutex};

use http_support::{HttpSession, Setup, roles, system_text, text_reply, tool_names, tool_reply};
use pi_agent_core::AgentMessage;
use pi_ai::{SystemMessage, UserMessage};
use pi_coding_agent::extensions::{
    ContextEvent, ContextWithSystemEvent, Extension, ExtensionApi, FnExtension, REMOVED_LEADING_SYSTEM_MESSAGE,
    ToolResultEvent,
};
use pi_coding_agent::messages::{CodingAgentMessage, CustomRoleMessage};
use serde_json::{Value, json};

fn ext(name: &str, setup: impl Fn(&ExtensionApi) + Send + Sync + 'static) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new(name, move |pi| {
        setup(pi);
        Ok(())
    }))
}

fn user(text: &str) -> CodingAgentMessage {
    AgentMessage::User(UserMessage::new(text).into())
}

fn custom_role(value: Value) -> CodingAgentMessage {
    serde_json::from_value(value).expect("an unknown role parses as a custom message")
}

/// The seed's audit extension: every `tool_result` appends an `audit-note` entry.
fn audit_extension() -> Arc<dyn Extension> {
    ext("<inline:audit>", |pi| {
        let api = pi.clone();
        pi.on::<ToolResultEvent>(move |event, _ctx| {
            let api = api.clone();
            let data = json!({"toolName": event.tool_name, "toolCallId": event.tool_call_id, "at": 1});
            Box::pin(async move {
                api.append_entry("audit-note", data)?;
                Ok(None)
            })
        });
    })
}

fn bash_call() -> String {
    tool_reply("call_1", "bash", json!({"command": "echo checked"}))
}

fn audit_entries(h: &HttpSession) -> Vec<Value> {
    h.entries().into_iter().filter(|e| e["type"] == "custom" && e["customType"] == "audit-note").collect()
}

// ---- 验收清单 ----

/// 成功（条目不进模型）: a `tool_result` adds an `audit-note` entry; the next request lacks it.
#[tokio::test]
async fn checklist_1_an_appended_entry_never_reaches_the_model() {
    let h =
        Setup { replies: vec![bash_call()], extensions: vec![audit_extension()], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("跑一下检查").await.expect("prompt");
    h.session.prompt("again").await.expect("second prompt");
    let audit = audit_entries(&h);
    assert_eq!(audit.len(), 1, "{:#?}", h.entries());
    assert_eq!(audit[0]["data"], json!({"toolName": "bash", "toolCallId": "call_1", "at": 1}));
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 3, "tool call, answer, second prompt");
    // The request after the tool ran carries the tool result, and nothing of the entry.
    assert_eq!(roles(&bodies[1]), ["system", "user", "assistant", "tool"]);
    assert_eq!(bodies[1]["messages"][3]["tool_call_id"], "call_1");
    assert!(bodies[1]["messages"][3]["content"].as_str().expect("tool content").contains("checked"));
    assert_eq!(roles(&bodies[2]), ["system", "user", "assistant", "tool", "assistant", "user"]);
    for (i, body) in bodies.iter().enumerate() {
        let text = body.to_string();
        assert!(!text.contains("audit-note") && !text.contains("\"at\""), "request {i} carries the entry: {text}");
    }
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}

/// The seed's warning beside the SDK flow: without `bindExtensions` the handler's action fails
/// ("Extension runtime not initialized…"), nothing is written, and the run still completes.
#[tokio::test]
async fn checklist_1b_without_bind_extensions_actions_fail_and_nothing_is_written() {
    let h =
        Setup { replies: vec![bash_call()], extensions: vec![audit_extension()], ..Default::default() }.start().await;
    h.session.prompt("跑一下检查").await.expect("prompt");
    assert!(audit_entries(&h).is_empty());
    assert_eq!(h.server.count(), 2, "the tool ran and the run went on to the answer");
    assert_eq!(
        h.error_pairs(),
        [(
            "tool_result".to_owned(),
            "Extension runtime not initialized. Action methods cannot be called during extension loading.".to_owned()
        )]
    );
}

/// 成功（自定义类型被过滤）: a custom role, converter untouched: the model never sees it.
#[tokio::test]
async fn checklist_2_a_custom_role_without_a_converter_is_filtered() {
    let h = Setup::default().start().await;
    let note =
        custom_role(json!({"role": "auditNote", "text": "跳过了 3 个生成文件", "level": "info", "timestamp": 1}));
    h.session.prompt_messages(vec![note, user("go")]).await.expect("prompt");
    let body = h.server.last();
    assert_eq!(roles(&body), ["system", "user"]);
    assert_eq!(body["messages"][1], json!({"role": "user", "content": "go"}));
    assert!(!body.to_string().contains("跳过了"));
}

/// 成功（系统提示按段 patch）: a system message with `sections` replaces that section of the head
/// `current_system_message` replays, and of the prompt the model receives; other sections stay.
#[tokio::test]
async fn checklist_3_a_sections_patch_replaces_only_that_section() {
    let h = Setup::default().start().await;
    h.session.prompt("first").await.expect("first");
    let before = pi_ai::transcript::current_system_message(&h.session.messages()).expect("head").sections;
    let before = before.expect("the prompt is sectioned");
    let patch = |text: &str| {
        AgentMessage::System(
            SystemMessage::new("").with_sections([("skills", Some(text.to_owned()))]).at(pi_ai::now_ms()).into(),
        )
    };
    h.session.prompt_messages(vec![patch("<skills>...</skills>"), user("继续")]).await.expect("patch");
    h.session.prompt_messages(vec![patch("<skills>v2</skills>"), user("again")]).await.expect("second patch");
    let head = pi_ai::transcript::current_system_message(&h.session.messages()).expect("head");
    let after = head.sections.expect("sections");
    assert_eq!(after.get("skills"), Some(Some("<skills>v2</skills>")));
    for (name, value) in before.iter() {
        assert_eq!(after.get(name), Some(value), "section {name} unchanged");
    }
    // On the wire: the first prompt, then the same prompt plus the section, then the section replaced.
    let bodies = h.server.bodies();
    let original = system_text(&bodies[0]);
    assert_eq!(system_text(&bodies[1]), format!("{original}\n\n<skills>...</skills>"));
    assert_eq!(system_text(&bodies[2]), format!("{original}\n\n<skills>v2</skills>"));
    assert_eq!(roles(&bodies[2]), ["system", "user", "assistant", "user", "assistant", "user"], "one head");
}

/// 成功（工具差量生效）: changing the active tools records a system message with
/// `toolsAdded` / `toolsRemoved`, and the next request declares the new set.
#[tokio::test]
async fn checklist_4_changing_tools_records_a_tool_diff_system_message() {
    let h = Setup::default().start().await;
    h.session.prompt("first").await.expect("first");
    h.session.set_active_tools_by_name(&["read", "grep"]);
    h.session.prompt("second").await.expect("second");
    let diffs: Vec<SystemMessage> = h
        .session
        .messages()
        .into_iter()
        .filter_map(|m| match m {
            AgentMessage::System(s) if s.tools_removed.is_some() => Some(s.into_inner()),
            _ => None,
        })
        .collect();
    assert_eq!(diffs.len(), 1, "one system message with the tool diff");
    let added: Vec<String> = diffs[0].tools_added.clone().unwrap_or_default().into_iter().map(|t| t.name).collect();
    let removed: Vec<String> = diffs[0].tools_removed.clone().unwrap_or_default().into_iter().map(|t| t.name).collect();
    assert_eq!(added, ["grep"]);
    assert_eq!(removed, ["bash", "edit", "write"]);
    let bodies = h.server.bodies();
    assert_eq!(tool_names(&bodies[0]), ["read", "bash", "edit", "write"]);
    assert_eq!(tool_names(&bodies[1]), ["read", "grep"]);
}

/// Row 4 as the seed writes it: change the agent's tools themselves (`agent.state.tools`), not the
/// session's active set. pi 1.6.0 keeps the change, records the diff and declares the new set (see
/// tests/fixtures/reference_bodies/agent_state_tools_changed.json).
#[tokio::test]
async fn checklist_4b_changing_the_agents_tools_directly_is_declared_too() {
    let h = Setup::default().start().await;
    h.session.prompt("first").await.expect("first");
    let tools = h.session.agent().with_state(|s| s.tools.clone());
    h.session.agent().set_tools(tools.into_iter().filter(|t| ["read", "bash"].contains(&t.name())).collect());
    h.session.prompt("second").await.expect("second");
    let diff = h.session.messages().into_iter().find_map(|m| match m {
        AgentMessage::System(s) if s.tools_removed.is_some() => Some(s.into_inner()),
        _ => None,
    });
    let removed: Vec<String> =
        diff.and_then(|d| d.tools_removed).unwrap_or_default().into_iter().map(|t| t.name).collect();
    assert_eq!(removed, ["edit", "write"], "a system message records the removal");
    assert_eq!(tool_names(&h.server.last()), ["read", "bash"]);
}

/// 失败（provider 拒绝请求）: in pi an unfiltered custom role makes the provider reject the
/// request. Here `convert_to_llm` returns `pi_ai::Message`, so that failure cannot be written:
/// the role is dropped and the request the provider receives is well-formed.
#[tokio::test]
async fn checklist_5_a_custom_role_can_never_reach_the_provider() {
    let h = Setup::default().start().await;
    let odd = custom_role(json!({"role": "hookMessage", "content": "x-hook", "timestamp": 1}));
    h.session.prompt_messages(vec![odd, user("go")]).await.expect("prompt");
    let body = h.server.last();
    for m in body["messages"].as_array().expect("messages") {
        assert!(["system", "user", "assistant", "tool"].contains(&m["role"].as_str().expect("role")), "{m}");
    }
    assert!(!body.to_string().contains("x-hook"));
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("ok"), "the provider accepted the request");
}

/// 失败（`context` 处理器丢了提示）: a `context_with_system` handler dropping the leading system
/// message: pi's error is reported, and the handler's output is still what is sent.
#[tokio::test]
async fn checklist_6_context_with_system_dropping_the_head_reports_and_still_applies() {
    let drop_head = ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextWithSystemEvent>(|event, _ctx| {
            event.messages.retain(|m| !matches!(m, AgentMessage::System(_)));
            Ok(None)
        });
    });
    let h = Setup { extensions: vec![drop_head], ..Default::default() }.start().await;
    h.session.prompt("go").await.expect("prompt");
    let body = h.server.last();
    assert_eq!(roles(&body), ["user"], "the handler's output is sent");
    assert!(body.get("tools").is_none(), "no system message, no tool declarations: {body}");
    assert_eq!(h.error_pairs(), [("context_with_system".to_owned(), REMOVED_LEADING_SYSTEM_MESSAGE.to_owned())]);
    assert_eq!(
        REMOVED_LEADING_SYSTEM_MESSAGE,
        "Handler removed the leading system message; the request has no prompt or initial tool declarations. Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage()."
    );
}

// ---- 排障速查 ----

/// 自定义消息模型看不到: `sendMessage`'s `content` is converted to a user message; `details`,
/// `display` and `customType` are not sent.
#[tokio::test]
async fn troubleshooting_custom_message_invisible_until_converted_send_message_content_is_seen() {
    let h = Setup::default().start().await;
    let message = CustomRoleMessage {
        custom_type: "reminder".into(),
        content: "Remember the deadline.".into(),
        display: true,
        details: Some(json!({"ui": "only-for-the-terminal"})),
        timestamp: 5,
        ..Default::default()
    };
    h.session.send_custom_message(message, true).await.expect("send");
    let body = h.server.last();
    assert_eq!(roles(&body), ["system", "user"]);
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": [{"type": "text", "text": "Remember the deadline."}]})
    );
    let text = body.to_string();
    assert!(!text.contains("only-for-the-terminal") && !text.contains("reminder") && !text.contains("display"));
}

/// 审计记录进了模型上下文: the carrier decides. An entry (`appendEntry`) never reaches the model;
/// a custom message's `content` does.
#[tokio::test]
async fn troubleshooting_audit_record_in_model_context_means_wrong_carrier() {
    let h = Setup::default().start().await;
    h.session.append_entry("audit-note", Some(json!({"x": "entry-data"}))).expect("append");
    let wrong = CustomRoleMessage {
        custom_type: "audit-note".into(),
        content: "message-data".into(),
        display: false,
        timestamp: 6,
        ..Default::default()
    };
    h.session.send_custom_message(wrong, false).await.expect("send");
    h.session.prompt("go").await.expect("prompt");
    let text = h.server.last().to_string();
    assert!(!text.contains("entry-data"), "an entry never reaches the model");
    assert!(text.contains("message-data"), "a custom message's content does");
}

/// provider 报消息格式错误: an unfiltered custom type. Ours drops every role the converter does not
/// know, so the body is exactly the body of the same session without that message.
#[tokio::test]
async fn troubleshooting_provider_format_error_an_unknown_role_leaves_no_trace_on_the_wire() {
    let with = Setup::default().start().await;
    let odd = custom_role(json!({"role": "notification", "content": "ping", "level": 3, "timestamp": 1}));
    with.session.prompt_messages(vec![odd, user("go")]).await.expect("with the custom role");
    let without = Setup::default().start().await;
    without.session.prompt_messages(vec![user("go")]).await.expect("without it");
    assert_eq!(with.mask(&with.server.last()), without.mask(&without.server.last()));
}

/// 裁剪没生效: pruning belongs to the `context` event (pi's `transformContext`); pi restores the
/// prompt and tool head in front of what the handler keeps.
#[tokio::test]
async fn troubleshooting_pruning_belongs_to_the_context_event() {
    let prune = ext("<inline:prune>", |pi| {
        pi.on_sync::<ContextEvent>(|event, _ctx| {
            let cut = event.messages.len().saturating_sub(1);
            event.messages.drain(..cut);
            Ok(None)
        });
    });
    let h = Setup { extensions: vec![prune], ..Default::default() }.start().await;
    h.session.prompt("first").await.expect("first");
    h.session.prompt("second").await.expect("second");
    let bodies = h.server.bodies();
    assert_eq!(roles(&bodies[1]), ["system", "user"]);
    assert_eq!(bodies[1]["messages"][1]["content"], json!([{"type": "text", "text": "second"}]));
    assert_eq!(system_text(&bodies[1]), system_text(&bodies[0]), "the head was restored whole");
    assert_eq!(tool_names(&bodies[1]), ["read", "bash", "edit", "write"]);
    assert_eq!(h.session.messages().len(), 5, "pruning is per request: the session keeps everything");
}

/// `transformContext` 注入的消息丢了: what a `context` handler injects still passes the converter:
/// a user message is sent, a custom role is not.
#[tokio::test]
async fn troubleshooting_a_message_injected_by_context_still_passes_convert_to_llm() {
    let inject = ext("<inline:inject>", |pi| {
        pi.on_sync::<ContextEvent>(|event, _ctx| {
            event
                .messages
                .push(custom_role(json!({"role": "internalNote", "text": "not for the model", "timestamp": 1})));
            event.messages.push(user("<context>injected</context>"));
            Ok(None)
        });
    });
    let h = Setup { extensions: vec![inject], ..Default::default() }.start().await;
    h.session.prompt("go").await.expect("prompt");
    let body = h.server.last();
    assert_eq!(roles(&body), ["system", "user", "user"]);
    assert_eq!(body["messages"][2], json!({"role": "user", "content": "<context>injected</context>"}));
    assert!(!body.to_string().contains("not for the model"));
}

/// 改了系统提示没生效: the prompt has no setter (`transcript_system_prompt()` is a replay of the transcript);
/// appending a system message is what changes what the model receives.
#[tokio::test]
async fn troubleshooting_the_system_prompt_changes_by_appending_a_system_message() {
    let h = Setup::default().start().await;
    h.session.prompt("first").await.expect("first");
    let before = h.session.transcript_system_prompt();
    let extra = AgentMessage::System(SystemMessage::new("Extra instruction.").at(pi_ai::now_ms()).into());
    h.session.prompt_messages(vec![extra, user("go")]).await.expect("prompt");
    let after = h.session.transcript_system_prompt();
    assert!(after.contains("Extra instruction.") && after.contains(&before));
    let sent = system_text(&h.server.last());
    assert!(sent.contains("Extra instruction."), "the model receives the change: {sent}");
}

/// 系统提示被整段覆盖: `content` appends (nothing of the old prompt is lost); replacing one part is
/// a `sections` patch by name, and `null` deletes it.
#[tokio::test]
async fn troubleshooting_content_appends_sections_replace_by_name() {
    let h = Setup::default().start().await;
    h.session.prompt("first").await.expect("first");
    let original = system_text(&h.server.last());
    let content = AgentMessage::System(SystemMessage::new("Extra instruction.").at(pi_ai::now_ms()).into());
    h.session.prompt_messages(vec![content, user("a")]).await.expect("content");
    // chat-completions folds the mid-conversation message into the head: the appended content
    // leads (the first head's own content is empty; its text lives in sections), all of it kept.
    assert_eq!(system_text(&h.server.last()), format!("Extra instruction.\n\n{original}"));
    let set = SystemMessage::new("").with_sections([("style", Some("<style>terse</style>".to_owned()))]);
    h.session
        .prompt_messages(vec![AgentMessage::System(set.at(pi_ai::now_ms()).into()), user("b")])
        .await
        .expect("set");
    assert_eq!(system_text(&h.server.last()), format!("Extra instruction.\n\n{original}\n\n<style>terse</style>"));
    let delete = SystemMessage::new("").with_sections([("style", None::<String>)]);
    h.session
        .prompt_messages(vec![AgentMessage::System(delete.at(pi_ai::now_ms()).into()), user("c")])
        .await
        .expect("del");
    assert_eq!(system_text(&h.server.last()), format!("Extra instruction.\n\n{original}"));
}

/// 工具变更没告诉模型: after changing the active tools, the next request declares the new set and
/// the prompt's tools section describes it.
#[tokio::test]
async fn troubleshooting_a_tool_change_is_declared_before_the_next_request() {
    let h = Setup::default().start().await;
    h.session.prompt("first").await.expect("first");
    h.session.set_active_tools_by_name(&["read", "ls"]);
    h.session.prompt("second").await.expect("second");
    let body = h.server.last();
    assert_eq!(tool_names(&body), ["read", "ls"]);
    let prompt = system_text(&body);
    assert!(prompt.contains("- ls: List directory contents") && !prompt.contains("- bash:"), "{prompt}");
}

/// `context` 里改不动系统消息: `context` handlers see no system message; `context_with_system`
/// handlers see the whole transcript and what they change is sent.
#[tokio::test]
async fn troubleshooting_context_handlers_cannot_see_system_messages_context_with_system_can() {
    let seen = Arc::new(Mutex::new((Vec::<String>::new(), Vec::<String>::new())));
    let s = seen.clone();
    let observer = ext("<inline:observer>", move |pi| {
        let a = s.clone();
        pi.on_sync::<ContextEvent>(move |event, _ctx| {
            a.lock().expect("seen").0 = event.messages.iter().map(|m| m.role().to_owned()).collect();
            Ok(None)
        });
        let b = s.clone();
        pi.on_sync::<ContextWithSystemEvent>(move |event, _ctx| {
            b.lock().expect("seen").1 = event.messages.iter().map(|m| m.role().to_owned()).collect();
            if let Some(AgentMessage::System(head)) = event.messages.first_mut() {
                head.sections.get_or_insert_with(Default::default).insert("note", Some("<note>edited</note>".into()));
            }
            Ok(None)
        });
    });
    let h = Setup { extensions: vec![observer], ..Default::default() }.start().await;
    h.session.prompt("go").await.expect("prompt");
    let (context, with_system) = seen.lock().expect("seen").clone();
    assert_eq!(context, ["user"]);
    assert_eq!(with_system, ["system", "user"]);
    let body = h.server.last();
    assert_eq!(roles(&body), ["system", "user"]);
    assert!(system_text(&body).ends_with("<note>edited</note>"), "the context_with_system edit is sent");
    assert!(!h.session.transcript_system_prompt().contains("<note>"), "for this request only");
}

/// The seed's "在 SDK 里跑起来": a loader with `additional_extension_paths` naming the Python audit
/// extension, an explicit `reload()`, `bind_extensions`, one prompt; the audit entry is in the
/// session and in no request body.
#[tokio::test]
async fn sdk_runs_the_python_audit_extension_from_additional_extension_paths() {
    if std::process::Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIP: python3 is not installed");
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/extensions/audit_extension.py");
    let h =
        Setup { replies: vec![bash_call(), text_reply("done")], extension_paths: vec![script], ..Default::default() }
            .start()
            .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("跑一下检查").await.expect("prompt");
    let audit = audit_entries(&h);
    assert_eq!(audit.len(), 1, "{:#?}", h.entries());
    assert_eq!(audit[0]["data"]["toolName"], "bash");
    assert_eq!(audit[0]["data"]["toolCallId"], "call_1");
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(roles(&bodies[1]), ["system", "user", "assistant", "tool"]);
    for body in &bodies {
        assert!(!body.to_string().contains("audit-note"));
    }
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("done"));
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
    h.session.dispose().await;
}
