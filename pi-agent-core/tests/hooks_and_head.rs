//! The seed's two hooks (写法一 and checklist rows), system-prompt replay, reset and the
//! per-request tool diff (spec §5).

mod support;

use std::sync::{Arc, Mutex};

use pi_agent_core::{Agent, AgentMessage, AgentTool, BoxError, CustomMessage, UnknownMessage};
use pi_ai::{Message, SystemMessage, UserMessage};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::*;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
enum Roles {
    #[serde(rename_all = "camelCase")]
    AuditNote { text: String, level: String, timestamp: u64 },
    #[serde(untagged)]
    Other(UnknownMessage),
}

impl CustomMessage for Roles {
    fn role(&self) -> &str {
        match self {
            Roles::AuditNote { .. } => "auditNote",
            Roles::Other(u) => u.role(),
        }
    }
}

fn note(text: &str) -> AgentMessage<Roles> {
    AgentMessage::Custom(Roles::AuditNote { text: text.into(), level: "info".into(), timestamp: 7 })
}

fn roles_sent(script: &Script, i: usize) -> Vec<String> {
    script.request_json(i).as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_custom_role_is_silently_dropped_by_the_default_converter() {
    let script = Script::new(vec![text("ok")]);
    let agent: Agent<Roles> = Agent::builder(model(), script.stream_fn()).system_prompt("S").build();
    agent
        .prompt(vec![note("skipped 3 generated files"), AgentMessage::User(UserMessage::new("go").into())])
        .await
        .unwrap();
    // No error, no trace in the request: the auditNote simply did not reach the model…
    assert_eq!(roles_sent(&script, 0), ["system", "user"]);
    assert!(!script.request_json(0).to_string().contains("skipped 3"));
    // …but it is in the transcript.
    assert!(agent.messages().iter().any(|m| m.role() == "auditNote"));
    assert!(agent.with_state(|s| s.error_message.is_none()));
}

#[tokio::test]
async fn with_a_converter_the_custom_role_is_kept_or_filtered_as_written() {
    let convert = |messages: Vec<AgentMessage<Roles>>| -> Result<Vec<Message>, BoxError> {
        Ok(messages
            .into_iter()
            .flat_map(|m| match m.into_llm() {
                Ok(llm) => vec![llm],
                Err(Roles::AuditNote { text, level, timestamp }) if level == "warning" => {
                    vec![Message::User(UserMessage::new(format!("[audit] {text}")).at(timestamp).into())]
                }
                Err(_) => vec![],
            })
            .collect())
    };
    let script = Script::new(vec![text("ok")]);
    let agent: Agent<Roles> = Agent::builder(model(), script.stream_fn()).convert_to_llm(convert).build();
    let warning =
        AgentMessage::Custom(Roles::AuditNote { text: "disk full".into(), level: "warning".into(), timestamp: 9 });
    agent
        .prompt(vec![note("info only"), warning, AgentMessage::User(UserMessage::new("go").at(1).into())])
        .await
        .unwrap();
    let req = script.request_json(0);
    assert_eq!(
        req,
        json!([
            {"role": "user", "content": "[audit] disk full", "timestamp": 9},
            {"role": "user", "content": "go", "timestamp": 1}
        ])
    );
}

#[tokio::test]
async fn a_message_injected_by_transform_context_still_passes_convert_to_llm() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let (o1, o2) = (order.clone(), order.clone());
    let transform = move |mut messages: Vec<AgentMessage<Roles>>, _c: CancellationToken| {
        let o = o1.clone();
        async move {
            o.lock().unwrap().push("transform_context");
            // Inject a note only pi knows about, and external context the model should see.
            messages.push(note("injected, internal only"));
            messages.push(AgentMessage::User(UserMessage::new("<context>today is Monday</context>").at(3).into()));
            Ok::<_, BoxError>(messages)
        }
    };
    let convert = move |messages: Vec<AgentMessage<Roles>>| -> Result<Vec<Message>, BoxError> {
        o2.lock().unwrap().push("convert_to_llm");
        // If transform ran after convert, the note could not be here to filter.
        assert!(messages.iter().any(|m| m.role() == "auditNote"), "convert sees transform's output");
        Ok(pi_agent_core::default_convert_to_llm(messages))
    };
    let script = Script::new(vec![text("ok")]);
    let agent: Agent<Roles> =
        Agent::builder(model(), script.stream_fn()).transform_context(transform).convert_to_llm(convert).build();
    agent.prompt("go").await.unwrap();
    assert_eq!(*order.lock().unwrap(), ["transform_context", "convert_to_llm"]);
    let req = script.request_json(0).to_string();
    assert!(req.contains("today is Monday"));
    assert!(!req.contains("internal only"));
    // The transform's output is for this request only: the transcript is not changed.
    assert!(agent.messages().iter().all(|m| m.role() != "auditNote"));
}

#[tokio::test]
async fn pruning_belongs_to_transform_context() {
    let prune = |messages: Vec<AgentMessage>, _c: CancellationToken| async move {
        let keep_from = messages.len().saturating_sub(1);
        Ok::<_, BoxError>(messages.into_iter().skip(keep_from).collect())
    };
    let script = Script::new(vec![text("one"), text("two")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).transform_context(prune).build();
    agent.prompt("first").await.unwrap();
    agent.prompt("second").await.unwrap();
    assert_eq!(roles_sent(&script, 1), ["user"]);
    assert_eq!(agent.messages().len(), 4, "the transcript keeps everything");
}

#[tokio::test]
async fn system_prompt_replays_after_a_sections_patch() {
    let script = Script::new(vec![text("a"), text("b")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).system_prompt("Base prompt.").build();
    agent
        .prompt(vec![
            AgentMessage::System(
                SystemMessage::new("Extra instruction.")
                    .with_sections([("skills", Some("<skills>x</skills>".into()))])
                    .into(),
            ),
            AgentMessage::User(UserMessage::new("go").into()),
        ])
        .await
        .unwrap();
    assert_eq!(agent.system_prompt(), "Base prompt.\n\nExtra instruction.\n\n<skills>x</skills>");
    agent
        .prompt(vec![
            AgentMessage::System(
                SystemMessage::new("").with_sections([("skills", Some("<skills>y</skills>".into()))]).into(),
            ),
            AgentMessage::User(UserMessage::new("again").into()),
        ])
        .await
        .unwrap();
    assert_eq!(agent.system_prompt(), "Base prompt.\n\nExtra instruction.\n\n<skills>y</skills>");
    // The provider got the system messages in place (it decides how to express them).
    assert_eq!(roles_sent(&script, 1), ["system", "system", "user", "assistant", "system", "user"]);
}

#[tokio::test]
async fn reset_keeps_the_replayed_head() {
    let script = Script::new(vec![text("a")]);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Echo::new("echo"))];
    let agent: Agent = Agent::builder(model(), script.stream_fn()).system_prompt("P").tools(tools).build();
    agent
        .prompt(vec![
            AgentMessage::System(SystemMessage::new("more").at(99).with_sections([("a", Some("A".into()))]).into()),
            AgentMessage::User(UserMessage::new("go").into()),
        ])
        .await
        .unwrap();
    agent.steer(UserMessage::new("queued"));
    agent.reset().unwrap();
    let messages = agent.messages();
    assert_eq!(messages.len(), 1);
    let head = serde_json::to_value(&messages[0]).unwrap();
    assert_eq!(head["content"], "P\n\nmore");
    assert_eq!(head["sections"], json!({"a": "A"}));
    assert_eq!(head["toolsAdded"][0]["name"], "echo");
    assert_eq!(head["timestamp"], 0);
    assert!(!agent.has_queued_messages());
    assert_eq!(agent.system_prompt(), "P\n\nmore\n\nA");
}

fn echo_named(name: &'static str, description: &'static str) -> Arc<dyn AgentTool> {
    struct Named(Echo, &'static str);
    #[async_trait::async_trait]
    impl AgentTool for Named {
        fn name(&self) -> &str {
            self.0.name
        }
        fn description(&self) -> &str {
            self.1
        }
        fn parameters(&self) -> &Value {
            &self.0.schema
        }
        async fn execute(
            &self,
            id: &str,
            args: serde_json::Map<String, Value>,
            ctx: pi_agent_core::ToolContext,
        ) -> Result<pi_agent_core::AgentToolResult, pi_agent_core::ToolError> {
            self.0.execute(id, args, ctx).await
        }
    }
    Arc::new(Named(Echo::new(name), description))
}

fn system_events(agent: &Agent) -> Vec<Value> {
    agent
        .messages()
        .iter()
        .filter(|m| m.role() == "system")
        .map(|m| {
            let mut v = serde_json::to_value(m).unwrap();
            v.as_object_mut().unwrap().remove("timestamp");
            for key in ["toolsAdded"] {
                if let Some(tools) = v.get_mut(key) {
                    *tools = Value::Array(
                        tools
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|t| {
                                json!(format!("{}:{}", t["name"].as_str().unwrap(), t["description"].as_str().unwrap()))
                            })
                            .collect(),
                    );
                }
            }
            v
        })
        .collect()
}

#[tokio::test]
async fn changed_tools_are_declared_before_the_next_prompt() {
    let script = Script::new(vec![text("1"), text("2"), text("3")]);
    let agent: Agent =
        Agent::builder(model(), script.stream_fn()).tools(vec![echo_named("a", "A"), echo_named("b", "B")]).build();
    agent.prompt("one").await.unwrap();
    agent.set_tools(vec![echo_named("b", "B2"), echo_named("c", "C")]);
    agent.prompt("two").await.unwrap();
    let systems = system_events(&agent);
    assert_eq!(
        systems[1],
        json!({"role": "system", "content": "", "toolsAdded": ["b:B2", "c:C"], "toolsRemoved": [{"name": "a"}, {"name": "b"}]})
    );
    // It was emitted before the user message.
    let roles: Vec<String> = agent.messages().iter().map(|m| m.role().to_owned()).collect();
    assert_eq!(roles[3..5], ["system".to_owned(), "user".to_owned()]);

    // A pending system message's own tool fields are intent; the executable set wins.
    agent.set_tools(vec![echo_named("b", "B2"), echo_named("c", "C"), echo_named("d", "D")]);
    let zzz = pi_ai::Tool::new("zzz", "Z", json!({}));
    agent
        .prompt(vec![
            AgentMessage::System(
                SystemMessage::new("Extra instruction.")
                    .with_sections([("s", Some("S".into()))])
                    .with_tools_added(vec![zzz])
                    .into(),
            ),
            AgentMessage::User(UserMessage::new("three").into()),
        ])
        .await
        .unwrap();
    let systems = system_events(&agent);
    assert_eq!(
        systems[2],
        json!({"role": "system", "content": "Extra instruction.", "sections": {"s": "S"}, "toolsAdded": ["d:D"]})
    );
    let head = agent.with_state(|s| s.system_message()).unwrap();
    let names: Vec<String> = head.tools_added.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["b", "c", "d"]);
}

#[tokio::test]
async fn a_transcript_starting_with_a_system_message_declares_initial_tools_on_the_first_prompt() {
    let script = Script::new(vec![text("1")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn())
        .messages(vec![AgentMessage::System(SystemMessage::new("own prompt").into())])
        .system_prompt("ignored")
        .tools(vec![echo_named("a", "A")])
        .build();
    assert_eq!(agent.system_prompt(), "own prompt");
    agent.prompt("go").await.unwrap();
    let systems = system_events(&agent);
    assert_eq!(systems[1], json!({"role": "system", "content": "", "toolsAdded": ["a:A"]}));
}

#[tokio::test]
async fn continue_after_removing_every_tool_declares_the_removal() {
    let script = Script::new(vec![text("1")]);
    let agent: Agent =
        Agent::builder(model(), script.stream_fn()).tools(vec![echo_named("a", "A")]).messages(vec![]).build();
    agent.set_messages(vec![
        AgentMessage::System(
            SystemMessage::new("")
                .with_tools_added(vec![pi_ai::transcript::to_tool_declaration(&echo_named("a", "A").declaration())])
                .into(),
        ),
        AgentMessage::User(UserMessage::new("pending").into()),
    ]);
    agent.set_tools(vec![]);
    agent.continue_run().await.unwrap();
    let systems = system_events(&agent);
    assert_eq!(systems[1], json!({"role": "system", "content": "", "toolsRemoved": [{"name": "a"}]}));
    assert_eq!(roles_sent(&script, 0), ["system", "user", "system"]);
}

#[tokio::test]
async fn construction_rules() {
    let script = Script::new(vec![]);
    let a: Agent = Agent::builder(model(), script.stream_fn())
        .system_prompt("Base prompt.")
        .tools(vec![echo_named("a", "A"), echo_named("b", "B")])
        .build();
    assert_eq!(system_events(&a), [json!({"role": "system", "content": "Base prompt.", "toolsAdded": ["a:A", "b:B"]})]);
    assert_eq!(a.messages()[0].timestamp(), 0);
    let b: Agent = Agent::builder(model(), script.stream_fn()).build();
    assert!(b.messages().is_empty());
    assert_eq!(b.system_prompt(), "");
    let c: Agent = Agent::builder(model(), script.stream_fn()).tools(vec![echo_named("a", "A")]).build();
    assert_eq!(system_events(&c), [json!({"role": "system", "content": "", "toolsAdded": ["a:A"]})]);
}
