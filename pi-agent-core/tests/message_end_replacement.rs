//! A `message_end` listener may replace the finished message, and the run goes on with the
//! replacement (pi 1.6.0: its listeners change the one object the loop holds): a replaced
//! assistant message's tool calls are the ones executed, its stop reason is the one read, and the
//! transcript, `turn_end`, `agent_end` and the next request carry the replacements.

mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::FutureExt;
use pi_agent_core::{
    Agent, AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, BoxError, EventSink, run_agent_loop,
};
use pi_ai::{AssistantBlock, StopReason, TextContent, ToolCall, UserBlock, UserMessage};
use serde_json::{Map, Value, json};
use support::*;
use tokio_util::sync::CancellationToken;

fn record(agent: &Agent) -> Arc<Mutex<Vec<String>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    agent.subscribe(move |e: &AgentEvent| l.lock().unwrap().push(describe(e)));
    log
}

fn interesting(log: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    collapse(log.lock().unwrap().clone())
        .into_iter()
        .filter(|l| l.starts_with("tool_execution") || l.starts_with("turn_end") || l.starts_with("agent_end"))
        .collect()
}

fn call(id: &str, name: &str, text: &str) -> AssistantBlock {
    let mut args = Map::new();
    args.insert("text".into(), Value::String(text.into()));
    AssistantBlock::ToolCall(ToolCall::new(id, name, args))
}

fn echo_tools() -> Vec<Arc<dyn AgentTool>> {
    vec![Arc::new(Echo::new("a")), Arc::new(Echo::new("b"))]
}

#[tokio::test]
async fn a_replaced_assistant_message_runs_the_replacements_tool_calls() {
    let script = Script::new(vec![tool_calls(&[("call_1", "a", json!({"text": "one"}))]), text("done")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).system_prompt("S").tools(echo_tools()).build();
    agent.subscribe_replacing(|event| {
        async move {
            let AgentEvent::MessageEnd { message } = event else { return Ok(None) };
            Ok(match message {
                AgentMessage::Assistant(mut a) if a.tool_calls().any(|c| c.id == "call_1") => {
                    a.make_mut().content = vec![call("call_2", "b", "two")];
                    Some(AgentMessage::Assistant(a))
                }
                AgentMessage::ToolResult(mut r) => {
                    r.make_mut().content = vec![UserBlock::Text(TextContent::new("RESULT REPLACED"))];
                    Some(AgentMessage::ToolResult(r))
                }
                _ => None,
            })
        }
        .boxed()
    });
    let log = record(&agent);
    agent.prompt("go").await.unwrap();

    assert_eq!(
        interesting(&log),
        [
            r#"tool_execution_start call_2 {"text":"two"}"#,
            "tool_execution_update call_2",
            r#"tool_execution_end call_2 isError=false ["echo: two"]"#,
            "turn_end toolUse results=[call_2]",
            "turn_end stop results=[]",
            "agent_end [user, assistant toolUse, toolResult, assistant stop]",
        ]
    );
    let second = script.request_json(1);
    assert_eq!(
        second[2]["content"],
        json!([{"type": "toolCall", "id": "call_2", "name": "b", "arguments": {"text": "two"}}])
    );
    assert_eq!(second[3]["toolCallId"], "call_2");
    assert_eq!(second[3]["content"], json!([{"type": "text", "text": "RESULT REPLACED"}]));
    // The state's transcript holds the replacements too.
    let messages = agent.messages();
    let AgentMessage::ToolResult(r) = &messages[3] else { panic!("tool result expected") };
    assert_eq!(r.content[0].as_text(), Some("RESULT REPLACED"));
}

#[tokio::test]
async fn an_assistant_message_replaced_without_tool_calls_ends_the_run() {
    // The stop reason stays `toolUse`: pi looks at the calls, not the stop reason.
    let script = Script::new(vec![tool_calls(&[("call_1", "a", json!({"text": "one"}))]), text("unused")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).system_prompt("S").tools(echo_tools()).build();
    agent.subscribe_replacing(|event| {
        async move {
            Ok(match event {
                AgentEvent::MessageEnd { message: AgentMessage::Assistant(mut a) } => {
                    a.make_mut().content = vec![AssistantBlock::Text(TextContent::new("no tools after all"))];
                    Some(AgentMessage::Assistant(a))
                }
                _ => None,
            })
        }
        .boxed()
    });
    let log = record(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(interesting(&log), ["turn_end toolUse results=[]", "agent_end [user, assistant toolUse]"]);
    assert_eq!(script.requests().len(), 1);
}

#[tokio::test]
async fn an_assistant_message_replaced_with_an_error_stop_ends_the_turn_without_tools() {
    let script = Script::new(vec![tool_calls(&[("call_1", "a", json!({"text": "one"}))]), text("unused")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).system_prompt("S").tools(echo_tools()).build();
    agent.subscribe_replacing(|event| {
        async move {
            Ok(match event {
                AgentEvent::MessageEnd { message: AgentMessage::Assistant(mut a) } => {
                    let m = a.make_mut();
                    m.stop_reason = StopReason::Error;
                    m.error_message = Some("vetoed".into());
                    Some(AgentMessage::Assistant(a))
                }
                _ => None,
            })
        }
        .boxed()
    });
    let log = record(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(interesting(&log), ["turn_end error results=[]", "agent_end [user, assistant error]"]);
    assert_eq!(agent.with_state(|s| s.error_message.clone()), Some("vetoed".to_owned()));
}

#[tokio::test]
async fn a_replacement_of_another_role_takes_the_failure_path() {
    let script = Script::new(vec![text("hello")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    agent.subscribe_replacing(|event| {
        async move {
            Ok(match event {
                // Not the failure path's substitute message (it has no text).
                AgentEvent::MessageEnd { message: AgentMessage::Assistant(a) } if a.text() == "hello" => {
                    Some(AgentMessage::User(UserMessage::new("not an answer").into()))
                }
                _ => None,
            })
        }
        .boxed()
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(agent.messages().last().map(|m| m.role().to_owned()).as_deref(), Some("assistant"));
    assert_eq!(
        agent.with_state(|s| s.error_message.clone()).as_deref(),
        Some("A message_end replacement must keep the role: assistant became user")
    );
}

/// The seam without an [`Agent`]: a sink that answers `emit_message_end` with a replacement.
struct ReplacingSink {
    events: Vec<String>,
}

#[async_trait]
impl EventSink<pi_agent_core::UnknownMessage> for ReplacingSink {
    async fn emit(&mut self, event: AgentEvent) -> Result<(), BoxError> {
        self.events.push(describe(&event));
        Ok(())
    }

    async fn emit_message_end(&mut self, message: AgentMessage) -> Result<AgentMessage, BoxError> {
        self.events.push(describe(&AgentEvent::MessageEnd { message: message.clone() }));
        Ok(match message {
            AgentMessage::User(_) => AgentMessage::User(UserMessage::new("USER REPLACED").into()),
            AgentMessage::Assistant(mut a) if a.tool_calls().next().is_some() => {
                a.make_mut().content = vec![call("call_9", "b", "nine")];
                AgentMessage::Assistant(a)
            }
            other => other,
        })
    }
}

#[tokio::test]
async fn a_sink_replacing_messages_drives_the_low_level_loop() {
    let script = Script::new(vec![tool_calls(&[("call_1", "a", json!({"text": "one"}))]), text("done")]);
    let context = AgentContext { messages: Vec::new(), tools: echo_tools() };
    let config = AgentLoopConfig::new(model(), script.stream_fn());
    let mut sink = ReplacingSink { events: Vec::new() };
    let added = run_agent_loop(
        vec![AgentMessage::User(UserMessage::new("original").into())],
        context,
        config,
        &mut sink,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let first = script.request_json(0);
    assert_eq!(first[first.as_array().unwrap().len() - 1]["content"], "USER REPLACED");
    let user = added.iter().find(|m| m.role() == "user").unwrap();
    assert_eq!(serde_json::to_value(user).unwrap()["content"], "USER REPLACED");
    assert!(sink.events.iter().any(|l| l == r#"tool_execution_start call_9 {"text":"nine"}"#), "{:?}", sink.events);
    assert!(!sink.events.iter().any(|l| l.contains("call_1")), "{:?}", sink.events);
    assert_eq!(script.request_json(1)[3]["toolCallId"], "call_9");
}
