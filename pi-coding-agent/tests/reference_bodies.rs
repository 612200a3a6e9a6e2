//! Our SDK against the reference pi 1.6.0 SDK, request body by request body.
//!
//! `scripts/fixtures/sdk_request_bodies.mjs` ran each scenario through the reference
//! `createAgentSession` against a scripted chat-completions server and recorded every body it
//! received (tests/fixtures/reference_bodies/<scenario>.json). Each test here runs the same
//! scenario through our `create_agent_session` against our scripted server (tests/http_support)
//! and asserts the masked bodies, the reported extension errors and the session's entry types
//! are equal. Masked: the temp cwd (`<CWD>`), the pi package dir of the `<docs>` section
//! (`<PI_PACKAGE>`) and the session id (`<SESSION_ID>`); see `http_support::mask`.
//! `PI_DUMP_BODIES=1` prints our masked bodies and entry types for a failing scenario.

mod http_support;

use std::sync::{Arc, Mutex};

use http_support::{HttpSession, Setup, roles, text_reply, tool_names, tool_reply};
use pi_agent_core::AgentMessage;
use pi_ai::{Content, SystemMessage, TextContent, UserBlock, UserMessage};
use pi_coding_agent::extensions::{
    ContextEvent, ContextWithSystemEvent, Extension, ExtensionApi, ExtensionMessage, FnExtension, SendMessageOptions,
    ToolResultEvent,
};
use pi_coding_agent::messages::CodingAgentMessage;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn reference(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/reference_bodies/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Asserts our run equals the reference's: bodies first (one assertion per request, so a diff
/// names the request), then the request count, extension errors and entry types.
fn assert_matches_reference(name: &str, h: &HttpSession) {
    let expected = reference(name);
    let ours: Vec<Value> = h.server.bodies().iter().map(|b| h.mask(b)).collect();
    let theirs = expected["requests"].as_array().expect("requests").clone();
    if std::env::var_os("PI_DUMP_BODIES").is_some() {
        // For investigating a difference: our masked bodies and entry types, as the fixture holds them.
        let dump = json!({"requests": ours, "entryTypes": h.entry_types()});
        eprintln!("{name}: {}", serde_json::to_string_pretty(&dump).unwrap_or_default());
    }
    for (i, (o, t)) in ours.iter().zip(theirs.iter()).enumerate() {
        if let Some(diff) = first_difference(o, t, String::new()) {
            let summary = |b: &Value| format!("roles {:?}, tools {:?}", roles(b), tool_names(b));
            panic!(
                "{name}: request {i} differs from the reference at {diff}\n  ours:      {}\n  reference: {}",
                summary(o),
                summary(t)
            );
        }
    }
    assert_eq!(ours.len(), theirs.len(), "{name}: request count");
    assert_eq!(json!(*h.server.paths.lock().expect("paths")), expected["paths"], "{name}: request paths");
    let errors: Vec<Value> =
        h.error_pairs().into_iter().map(|(event, error)| h.mask(&json!({"event": event, "error": error}))).collect();
    assert_eq!(Value::Array(errors), expected["extensionErrors"], "{name}: extension errors");
    assert_eq!(json!(h.entry_types()), expected["entryTypes"], "{name}: session entry types");
}

/// The first place two JSON values differ: `path: ours <> reference`.
fn first_difference(ours: &Value, theirs: &Value, path: String) -> Option<String> {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let (ka, kb): (Vec<&String>, Vec<&String>) = (a.keys().collect(), b.keys().collect());
            if ka != kb {
                return Some(format!("{path}: keys {ka:?} <> reference {kb:?}"));
            }
            a.iter().find_map(|(k, v)| first_difference(v, &b[k], format!("{path}.{k}")))
        }
        (Value::Array(a), Value::Array(b)) => {
            if let Some(d) =
                a.iter().zip(b).enumerate().find_map(|(i, (x, y))| first_difference(x, y, format!("{path}[{i}]")))
            {
                return Some(d);
            }
            (a.len() != b.len()).then(|| format!("{path}: {} items <> reference {}", a.len(), b.len()))
        }
        (a, b) if a == b => None,
        (a, b) => Some(format!("{path}:\n  ours:      {a}\n  reference: {b}")),
    }
}

fn user(text: &str) -> CodingAgentMessage {
    AgentMessage::User(UserMessage::new(text).into())
}

fn ext(name: &str, setup: impl Fn(&ExtensionApi) + Send + Sync + 'static) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new(name, move |pi| {
        setup(pi);
        Ok(())
    }))
}

#[tokio::test]
async fn plain_prompt() {
    let h = Setup::default().start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("hello").await.expect("prompt");
    assert_matches_reference("plain_prompt", &h);
}

#[tokio::test]
async fn tool_round_trip_with_audit() {
    let audit = ext("<inline:audit>", |pi| {
        let api = pi.clone();
        pi.on::<ToolResultEvent>(move |event, _ctx| {
            let api = api.clone();
            let data = json!({"toolName": event.tool_name, "toolCallId": event.tool_call_id, "at": 1});
            Box::pin(async move {
                api.append_entry("audit-note", data)?;
                Ok(None)
            })
        });
    });
    let h = Setup {
        files: vec![("notes.txt", "alpha\nbeta\n")],
        replies: vec![tool_reply("call_1", "read", json!({"path": "notes.txt"})), text_reply("done")],
        extensions: vec![audit],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("跑一下检查").await.expect("prompt");
    assert_matches_reference("tool_round_trip_with_audit", &h);
}

#[tokio::test]
async fn sections_patch() {
    let h = Setup::default().start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first");
    let patch = SystemMessage::new("").with_sections([("skills", Some("<skills>...</skills>".to_owned()))]);
    h.session
        .agent()
        .prompt(vec![AgentMessage::System(patch.at(pi_ai::now_ms()).into()), user("继续")])
        .await
        .expect("sections patch");
    h.session
        .agent()
        .prompt(vec![
            AgentMessage::System(SystemMessage::new("Extra instruction.").at(pi_ai::now_ms()).into()),
            user("go"),
        ])
        .await
        .expect("content patch");
    assert_matches_reference("sections_patch", &h);
}

#[tokio::test]
async fn active_tools_diff() {
    let h = Setup::default().start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first");
    h.session.set_active_tools_by_name(&["read", "grep"]);
    h.session.prompt("second").await.expect("second");
    assert_matches_reference("active_tools_diff", &h);
}

#[tokio::test]
async fn send_message_and_append_entry() {
    let slot: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
    let s = slot.clone();
    let keeper = ext("<inline:keeper>", move |pi| *s.lock().expect("slot") = Some(pi.clone()));
    let h = Setup { extensions: vec![keeper], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let api = slot.lock().expect("slot").clone().expect("the extension ran");
    h.session.prompt("first").await.expect("first");
    let reminder = ExtensionMessage {
        custom_type: "reminder".into(),
        content: Content::Text("Remember the deadline.".into()),
        display: true,
        details: Some(json!({"ui": "only"})),
    };
    api.send_message(reminder, SendMessageOptions::default()).expect("send_message");
    api.append_entry("audit-note", json!({"x": "entry-data"})).expect("append_entry");
    h.wait_until("the custom message entry", |h| h.entry_types().iter().any(|t| t == "custom_message")).await;
    h.session.prompt("go").await.expect("go");
    let nudge = ExtensionMessage {
        custom_type: "nudge".into(),
        content: Content::Blocks(vec![UserBlock::Text(TextContent::new("Nudge from the extension."))]),
        display: false,
        details: Some(json!({"secret": 42})),
    };
    api.send_message(nudge, SendMessageOptions { trigger_turn: Some(true), ..Default::default() })
        .expect("send_message with triggerTurn");
    h.wait_until("the triggered request", |h| h.server.count() == 3).await;
    h.wait_until("the triggered run to end", |h| h.entry_types().len() == 11).await;
    h.session.wait_for_idle().await;
    assert_matches_reference("send_message_and_append_entry", &h);
}

#[tokio::test]
async fn custom_role_filtered() {
    let h = Setup::default().start().await;
    h.session.bind_extensions(|_| {}).await;
    let note: CodingAgentMessage = serde_json::from_value(
        json!({"role": "auditNote", "text": "跳过了 3 个生成文件", "level": "info", "timestamp": 1}),
    )
    .expect("a custom role parses");
    h.session.agent().prompt(vec![note, user("go")]).await.expect("prompt");
    assert_matches_reference("custom_role_filtered", &h);
}

#[tokio::test]
async fn context_prune() {
    let prune = ext("<inline:prune>", |pi| {
        pi.on_sync::<ContextEvent>(|event, _ctx| {
            let cut = event.messages.len().saturating_sub(1);
            event.messages.drain(..cut);
            Ok(None)
        });
    });
    let h = Setup { extensions: vec![prune], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first");
    h.session.prompt("second").await.expect("second");
    assert_matches_reference("context_prune", &h);
}

#[tokio::test]
async fn context_inject() {
    let inject = ext("<inline:inject>", |pi| {
        pi.on_sync::<ContextEvent>(|event, _ctx| {
            event.messages.push(serde_json::from_value(
                json!({"role": "internalNote", "text": "not for the model", "timestamp": 1}),
            )?);
            event.messages.push(user("<context>injected</context>"));
            Ok(None)
        });
    });
    let h = Setup { extensions: vec![inject], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("go").await.expect("go");
    assert_matches_reference("context_inject", &h);
}

#[tokio::test]
async fn context_with_system_drops_head() {
    let drop_head = ext("<inline:drop-head>", |pi| {
        pi.on_sync::<ContextWithSystemEvent>(|event, _ctx| {
            event.messages.retain(|m| !matches!(m, AgentMessage::System(_)));
            Ok(None)
        });
    });
    let h = Setup { extensions: vec![drop_head], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("go").await.expect("go");
    assert_matches_reference("context_with_system_drops_head", &h);
}

#[tokio::test]
async fn context_with_system_folds_head() {
    let fold = ext("<inline:fold>", |pi| {
        pi.on_sync::<ContextWithSystemEvent>(|event, _ctx| {
            let cut = event.messages.len().saturating_sub(1);
            let head = pi_ai::transcript::current_system_message(&event.messages[..cut]);
            let tail = event.messages.split_off(cut);
            event.messages = head.map(AgentMessage::from).into_iter().chain(tail).collect();
            Ok(None)
        });
    });
    let h = Setup { extensions: vec![fold], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first");
    h.session.set_active_tools_by_name(&["read", "ls"]);
    h.session.prompt("second").await.expect("second");
    assert_matches_reference("context_with_system_folds_head", &h);
}

#[tokio::test]
async fn tool_error_and_bash() {
    let h = Setup {
        replies: vec![
            tool_reply("call_1", "read", json!({"path": "missing.txt"})),
            tool_reply("call_2", "bash", json!({"command": "echo checked; echo oops >&2; exit 3"})),
            text_reply("done"),
        ],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("check").await.expect("prompt");
    assert_matches_reference("tool_error_and_bash", &h);
}

#[tokio::test]
async fn bash_execution_context() {
    let h = Setup::default().start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.execute_bash("echo visible-output", false).await.expect("visible bash");
    h.session.execute_bash("echo hidden-output", true).await.expect("hidden bash");
    h.session.prompt("go").await.expect("prompt");
    assert_matches_reference("bash_execution_context", &h);
}

#[tokio::test]
async fn tool_diff_with_sections_patch() {
    let h = Setup::default().start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first");
    h.session.set_active_tools_by_name(&["read"]);
    let patch = SystemMessage::new("").with_sections([("skills", Some("<skills>one</skills>".to_owned()))]);
    h.session
        .agent()
        .prompt(vec![AgentMessage::System(patch.at(pi_ai::now_ms()).into()), user("继续")])
        .await
        .expect("patch");
    assert_matches_reference("tool_diff_with_sections_patch", &h);
}

#[tokio::test]
async fn context_adds_system_message() {
    let add = ext("<inline:add-system>", |pi| {
        pi.on_sync::<ContextEvent>(|event, _ctx| {
            event.messages.push(AgentMessage::System(SystemMessage::new("Added by the context handler.").at(1).into()));
            Ok(None)
        });
    });
    let h = Setup { extensions: vec![add], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("go").await.expect("prompt");
    assert_matches_reference("context_adds_system_message", &h);
}

#[tokio::test]
async fn send_user_message() {
    let slot: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
    let s = slot.clone();
    let keeper = ext("<inline:keeper>", move |pi| *s.lock().expect("slot") = Some(pi.clone()));
    let h = Setup { extensions: vec![keeper], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let api = slot.lock().expect("slot").clone().expect("the extension ran");
    h.session.prompt("first").await.expect("first");
    api.send_user_message("from the extension", Default::default()).expect("send_user_message");
    h.wait_until("the extension's turn", |h| h.entry_types().len() == 7).await;
    h.session.wait_for_idle().await;
    let parts = vec![UserBlock::Text(TextContent::new("part one")), UserBlock::Text(TextContent::new("part two"))];
    api.send_user_message(Content::Blocks(parts), Default::default()).expect("send_user_message with parts");
    h.wait_until("the second extension turn", |h| h.entry_types().len() == 9).await;
    h.session.wait_for_idle().await;
    assert_matches_reference("send_user_message", &h);
}

/// The seed's SDK flow: the reference loads its `audit-extension.ts` from
/// `additionalExtensionPaths`; ours loads the same extension written in Python
/// (examples/extensions/audit_extension.py) through `additional_extension_paths`.
#[tokio::test]
async fn sdk_flow_audit_extension_file() {
    if std::process::Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIP: python3 is not installed");
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/extensions/audit_extension.py");
    let h = Setup {
        replies: vec![tool_reply("call_1", "bash", json!({"command": "echo checked"})), text_reply("done")],
        extension_paths: vec![script],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("跑一下检查").await.expect("prompt");
    assert_matches_reference("sdk_flow_audit_extension_file", &h);
}

/// The seed's 验收清单 row 4 as written: change the agent's tools directly (`agent.state.tools`),
/// not through `set_active_tools_by_name`.
#[tokio::test]
async fn agent_state_tools_changed() {
    let h = Setup::default().start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first");
    let kept = h.session.agent().with_state(|s| s.tools.clone());
    h.session.agent().set_tools(kept.into_iter().filter(|t| ["read", "bash"].contains(&t.name())).collect());
    h.session.prompt("second").await.expect("second");
    assert_matches_reference("agent_state_tools_changed", &h);
}

/// A compaction entry appended directly (no summarization request): the summary reaches the
/// model as user text in its summary tags, and the prompt head survives the cut.
#[tokio::test]
async fn compaction_summary() {
    let h = Setup::default().start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first");
    h.session.prompt("second").await.expect("second");
    let kept = h
        .entries()
        .into_iter()
        .find(|e| {
            e["type"] == "message" && e["message"]["role"] == "user" && e["message"].to_string().contains("second")
        })
        .expect("the second prompt's entry");
    let kept = kept["id"].as_str().expect("entry id").to_owned();
    h.session
        .with_session_manager(|sm| {
            sm.append_compaction("The user said first; the assistant said ok.", Some(&kept), 1234.0, None, None, None)
        })
        .expect("append compaction");
    h.session.prompt("third").await.expect("third");
    assert_matches_reference("compaction_summary", &h);
}

/// The same transitions against anthropic-messages: the prompt goes to the top-level `system`
/// field, a sections patch and a tool change re-render it.
#[tokio::test]
async fn anthropic_sections_and_tools() {
    let h = Setup { api: Some("anthropic-messages"), ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first");
    let patch = SystemMessage::new("").with_sections([("skills", Some("<skills>...</skills>".to_owned()))]);
    h.session
        .agent()
        .prompt(vec![AgentMessage::System(patch.at(pi_ai::now_ms()).into()), user("继续")])
        .await
        .expect("patch");
    h.session.set_active_tools_by_name(&["read", "grep"]);
    h.session.prompt("third").await.expect("third");
    assert_matches_reference("anthropic_sections_and_tools", &h);
}

/// The same transitions against openai-responses (the session id is its `prompt_cache_key`).
#[tokio::test]
async fn responses_sections_and_tools() {
    let h = Setup { api: Some("openai-responses"), ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first");
    let patch = SystemMessage::new("").with_sections([("skills", Some("<skills>...</skills>".to_owned()))]);
    h.session
        .agent()
        .prompt(vec![AgentMessage::System(patch.at(pi_ai::now_ms()).into()), user("继续")])
        .await
        .expect("patch");
    h.session.set_active_tools_by_name(&["read", "grep"]);
    h.session.prompt("third").await.expect("third");
    assert_matches_reference("responses_sections_and_tools", &h);
}

/// `sendMessage` while a run streams (from a `tool_result` handler): by default it steers into the
/// run; with `triggerTurn: false` it is appended after the turn's tool results; with
/// `deliverAs: "nextTurn"` it waits for the next prompt.
#[tokio::test]
async fn send_message_while_streaming() {
    use pi_coding_agent::extensions::DeliverAs;
    let sender = ext("<inline:sender>", |pi| {
        let api = pi.clone();
        pi.on::<ToolResultEvent>(move |_event, _ctx| {
            let api = api.clone();
            Box::pin(async move {
                let message = |kind: &str, text: &str| ExtensionMessage::text(kind, text);
                api.send_message(message("steer", "steered in"), SendMessageOptions::default())?;
                let quiet = SendMessageOptions { trigger_turn: Some(false), ..Default::default() };
                api.send_message(message("quiet", "appended quietly"), quiet)?;
                let later = SendMessageOptions { deliver_as: Some(DeliverAs::NextTurn), ..Default::default() };
                api.send_message(message("later", "for the next turn"), later)?;
                Ok(None)
            })
        });
    });
    let h = Setup {
        replies: vec![tool_reply("call_1", "bash", json!({"command": "echo checked"})), text_reply("done")],
        extensions: vec![sender],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("run it").await.expect("run it");
    h.session.prompt("go").await.expect("go");
    assert_matches_reference("send_message_while_streaming", &h);
}
