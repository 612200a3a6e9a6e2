//! Event sequences (a)–(e) of the spec, plus abort, errors, queues and the failure path.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::{Agent, AgentEvent, AgentMessage, AgentTool, QueueMode, ToolExecution};
use pi_ai::{StopReason, UserMessage};
use serde_json::json;
use support::*;

fn record(agent: &Agent) -> Arc<Mutex<Vec<String>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    agent.subscribe(move |e: &AgentEvent| l.lock().unwrap().push(describe(e)));
    log
}

fn lines(log: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    collapse(log.lock().unwrap().clone())
}

fn roles(agent: &Agent) -> Vec<String> {
    agent
        .messages()
        .iter()
        .map(|m| match m {
            AgentMessage::Assistant(a) => format!("assistant {}", a.stop_reason.as_str()),
            other => other.role().to_owned(),
        })
        .collect()
}

#[tokio::test]
async fn a_one_text_reply() {
    let script = Script::new(vec![text("Hello world")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).system_prompt("Be brief.").build();
    let log = record(&agent);
    agent.prompt("hi").await.unwrap();
    insta::assert_snapshot!(lines(&log).join("\n"));
    assert_eq!(roles(&agent), ["system", "user", "assistant stop"]);
    assert!(!agent.with_state(|s| s.is_streaming));
}

#[tokio::test]
async fn b_one_tool_call_round_trip() {
    let script = Script::new(vec![tool_calls(&[("call_1", "echo", json!({"text": "hi"}))]), text("done")]);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Echo::new("echo"))];
    let agent: Agent = Agent::builder(model(), script.stream_fn()).system_prompt("S").tools(tools).build();
    let log = record(&agent);
    agent.prompt("go").await.unwrap();
    insta::assert_snapshot!(lines(&log).join("\n"));
    let messages = agent.messages();
    let AgentMessage::ToolResult(r) = &messages[3] else { panic!("tool result expected") };
    assert_eq!(r.content[0].as_text(), Some("echo: hi"));
    assert_eq!(r.details, Some(json!({"length": 2})));
    assert!(r.duration_ms.is_some());
    // The second request saw the tool result.
    assert_eq!(script.request_json(1)[3]["role"], "toolResult");
}

#[tokio::test]
async fn c_parallel_tools_end_in_completion_order_and_report_in_source_order() {
    let script = Script::new(vec![
        tool_calls(&[("A", "slow", json!({"text": "a"})), ("B", "fast", json!({"text": "b"}))]),
        text("ok"),
    ]);
    let mut slow = Echo::new("slow");
    slow.delay = Duration::from_millis(60);
    let mut fast = Echo::new("fast");
    fast.delay = Duration::from_millis(5);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(slow), Arc::new(fast)];
    let agent: Agent = Agent::builder(model(), script.stream_fn()).tools(tools).build();
    let log = record(&agent);
    agent.prompt("go").await.unwrap();
    insta::assert_snapshot!(lines(&log).join("\n"));
}

#[tokio::test]
async fn c_sequential_mode_runs_one_call_at_a_time() {
    for per_tool in [false, true] {
        let script = Script::new(vec![
            tool_calls(&[("A", "slow", json!({"text": "a"})), ("B", "fast", json!({"text": "b"}))]),
            text("ok"),
        ]);
        let mut slow = Echo::new("slow");
        slow.delay = Duration::from_millis(30);
        slow.sequential = per_tool;
        let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(slow), Arc::new(Echo::new("fast"))];
        let mut builder = Agent::builder(model(), script.stream_fn()).tools(tools);
        if !per_tool {
            builder = builder.tool_execution(ToolExecution::Sequential);
        }
        let agent: Agent = builder.build();
        let log = record(&agent);
        agent.prompt("go").await.unwrap();
        let l = lines(&log);
        let tool_lines: Vec<&String> =
            l.iter().filter(|s| s.starts_with("tool_") || s.starts_with("message_end toolResult")).collect();
        insta::assert_snapshot!(
            format!("sequential_per_tool_{per_tool}"),
            tool_lines.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
        );
    }
}

#[tokio::test]
async fn mixed_failures_in_a_parallel_batch() {
    let script = Script::new(vec![
        tool_calls(&[
            ("U", "nope", json!({})),
            ("T", "echo", json!({"text": "boom"})),
            ("S", "echo", json!({"text": "fine"})),
        ]),
        text("ok"),
    ]);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Echo::new("echo"))];
    let agent: Agent = Agent::builder(model(), script.stream_fn()).tools(tools).build();
    let log = record(&agent);
    agent.prompt("go").await.unwrap();
    insta::assert_snapshot!(lines(&log).join("\n"));
    let results: Vec<(String, bool, String)> = agent
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::ToolResult(r) => {
                Some((r.tool_call_id.clone(), r.is_error, r.content[0].as_text().unwrap().to_owned()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("U".to_owned(), true, "Tool nope not found".to_owned()),
            ("T".to_owned(), true, "boom failed".to_owned()),
            ("S".to_owned(), false, "echo: fine".to_owned()),
        ]
    );
}

#[tokio::test]
async fn d_abort_mid_stream() {
    let script = Script::new(vec![text("This is a long response that will be cut short")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).system_prompt("S").build();
    let log = record(&agent);
    let handle = agent.clone();
    agent.subscribe(move |e: &AgentEvent| {
        if matches!(e, AgentEvent::MessageUpdate { assistant_message_event } if assistant_message_event.kind() == "text_delta") {
            handle.abort();
        }
    });
    agent.prompt("go").await.unwrap();
    insta::assert_snapshot!(lines(&log).join("\n"));
    let last = agent.messages().pop().unwrap();
    let a = last.as_assistant().unwrap();
    assert_eq!(a.stop_reason, StopReason::Aborted);
    assert_eq!(a.error_message.as_deref(), Some("Request was aborted"));
    assert_eq!(a.text(), "This");
    assert_eq!(agent.with_state(|s| s.error_message.clone()).as_deref(), Some("Request was aborted"));
    assert!(!agent.with_state(|s| s.is_streaming));
}

#[tokio::test]
async fn abort_mid_tool_gives_every_call_a_result_and_ends_with_an_aborted_assistant() {
    let script =
        Script::new(vec![tool_calls(&[("A", "slow", json!({"text": "a"})), ("B", "slow", json!({"text": "b"}))])]);
    let mut slow = Echo::new("slow");
    slow.delay = Duration::from_secs(30);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(slow)];
    let agent: Agent = Agent::builder(model(), script.stream_fn()).tools(tools).build();
    let handle = agent.clone();
    agent.subscribe(move |e: &AgentEvent| {
        if matches!(e, AgentEvent::ToolExecutionStart { tool_call_id, .. } if tool_call_id == "B") {
            handle.abort();
        }
    });
    agent.prompt("go").await.unwrap();
    let roles = roles(&agent);
    assert_eq!(roles, ["system", "user", "assistant toolUse", "toolResult", "toolResult", "assistant aborted"]);
    for m in agent.messages() {
        if let AgentMessage::ToolResult(r) = m {
            assert!(r.is_error);
            assert_eq!(r.content[0].as_text(), Some("Operation aborted"));
        }
    }
}

#[tokio::test]
async fn e_provider_error_before_and_after_start_keeps_the_queues() {
    let script = Script::new(vec![Step::FailBeforeStart("HTTP 500 upstream".into())]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    let log = record(&agent);
    agent.follow_up(UserMessage::new("later"));
    agent.prompt("go").await.unwrap();
    insta::assert_snapshot!(lines(&log).join("\n"));
    assert_eq!(agent.with_state(|s| s.error_message.clone()).as_deref(), Some("HTTP 500 upstream"));
    assert!(agent.has_queued_messages(), "queues are not drained after an error");

    let mut failing =
        support::reply(vec![pi_ai::AssistantBlock::Text(pi_ai::TextContent::new("partial"))], StopReason::Error);
    if let Step::Reply(m) = &mut failing {
        m.error_message = Some("stream broke".into());
    }
    let script = Script::new(vec![failing]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    agent.prompt("go").await.unwrap();
    let last = agent.messages().pop().unwrap();
    assert_eq!(last.as_assistant().unwrap().text(), "partial");
    assert_eq!(last.as_assistant().unwrap().error_message.as_deref(), Some("stream broke"));
}

#[tokio::test]
async fn steering_and_follow_ups_one_at_a_time_and_all() {
    for mode in [QueueMode::OneAtATime, QueueMode::All] {
        let script = Script::new(vec![
            tool_calls(&[("call_1", "slow", json!({"text": "x"}))]),
            text("r2"),
            text("r3"),
            text("r4"),
            text("r5"),
        ]);
        let mut slow = Echo::new("slow");
        slow.delay = Duration::from_millis(20);
        let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(slow)];
        let agent: Agent =
            Agent::builder(model(), script.stream_fn()).tools(tools).steering_mode(mode).follow_up_mode(mode).build();
        let handle = agent.clone();
        agent.subscribe(move |e: &AgentEvent| {
            if matches!(e, AgentEvent::ToolExecutionStart { .. }) {
                handle.steer(UserMessage::new("steer1"));
                handle.steer(UserMessage::new("steer2"));
                handle.follow_up(UserMessage::new("fu1"));
                handle.follow_up(UserMessage::new("fu2"));
            }
        });
        let log = record(&agent);
        agent.prompt("go").await.unwrap();
        let turns: Vec<String> = lines(&log)
            .into_iter()
            .filter(|l| l.starts_with("turn_") || l.starts_with("message_end user") || l.starts_with("agent_end"))
            .collect();
        insta::assert_snapshot!(format!("queues_{mode:?}"), turns.join("\n"));
        assert!(!agent.has_queued_messages());
    }
}

#[tokio::test]
async fn steering_queued_before_prompt_joins_the_first_request() {
    let script = Script::new(vec![text("ok")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    agent.steer(UserMessage::new("pre-steer").at(5));
    agent.prompt("go").await.unwrap();
    assert_eq!(script.requests().len(), 1);
    let req = script.request_json(0);
    assert_eq!(req[0]["content"][0]["text"], "go");
    assert_eq!(req[1]["content"], "pre-steer");
}

#[tokio::test]
async fn prompt_while_running_and_continue_rules() {
    let mut script = Script::new(vec![text("slow reply that takes a while")]);
    script.chunk_delay = Some(Duration::from_millis(5));
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    let a2 = agent.clone();
    let run = tokio::spawn(async move { a2.prompt("first").await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    let err = agent.prompt("second").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    );
    assert_eq!(
        agent.reset().unwrap_err().to_string(),
        "Agent is already processing. Wait for completion before resetting."
    );
    run.await.unwrap().unwrap();
    agent.wait_for_idle().await;
    assert_eq!(agent.continue_run().await.unwrap_err().to_string(), "Cannot continue from message role: assistant");
    let empty: Agent = Agent::builder(model(), script.stream_fn()).system_prompt("only a prompt").build();
    assert_eq!(empty.continue_run().await.unwrap_err().to_string(), "No messages to continue from");
}

#[tokio::test]
async fn continue_from_an_assistant_tail_runs_queued_messages() {
    let script = Script::new(vec![text("one"), text("S-reply"), text("A-reply"), text("B-reply")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    agent.prompt("go").await.unwrap();
    agent.steer(UserMessage::new("S"));
    agent.follow_up(UserMessage::new("A"));
    agent.follow_up(UserMessage::new("B"));
    agent.continue_run().await.unwrap();
    assert_eq!(script.requests().len(), 4);
    assert!(!agent.has_queued_messages());
    let users: Vec<String> = agent
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::User(u) => Some(pi_ai::transcript::content_text(&u.content)),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["go", "S", "A", "B"]);
}

#[tokio::test]
async fn a_panicking_listener_takes_the_failure_path() {
    let script = Script::new(vec![text("never")]);
    let agent: Agent = Agent::builder(model(), script.stream_fn()).build();
    let log = record(&agent);
    agent.subscribe(|e: &AgentEvent| {
        if matches!(e, AgentEvent::MessageEnd { message: AgentMessage::User(_) }) {
            panic!("kaboom");
        }
    });
    // The second listener panics on every user message_end; the failure path emits only
    // assistant events, so it completes.
    agent.prompt("go").await.unwrap();
    let l = lines(&log);
    insta::assert_snapshot!(l.join("\n"));
    let last = agent.messages().pop().unwrap();
    let a = last.as_assistant().unwrap();
    assert_eq!(a.stop_reason, StopReason::Error);
    assert_eq!(a.error_message.as_deref(), Some("listener panicked: kaboom"));
    assert!(script.requests().is_empty());
}

#[tokio::test]
async fn length_stop_never_executes_truncated_calls() {
    let mut step = tool_calls(&[("c1", "echo", json!({"text": "cut"}))]);
    if let Step::Reply(m) = &mut step {
        m.stop_reason = StopReason::Length;
    }
    let script = Script::new(vec![step, text("retry")]);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Echo::new("echo"))];
    let agent: Agent = Agent::builder(model(), script.stream_fn()).tools(tools).build();
    agent.prompt("go").await.unwrap();
    let AgentMessage::ToolResult(r) = &agent.messages()[3] else { panic!() };
    assert!(r.is_error);
    assert_eq!(
        r.content[0].as_text().unwrap(),
        "Tool call \"echo\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    );
    assert_eq!(script.requests().len(), 2, "length never terminates: another request follows");
}

#[tokio::test]
async fn arguments_are_validated_and_coerced_with_pis_texts() {
    let script =
        Script::new(vec![tool_calls(&[("c1", "echo", json!({"text": 42})), ("c2", "echo", json!({}))]), text("ok")]);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Echo::new("echo"))];
    let agent: Agent = Agent::builder(model(), script.stream_fn()).tools(tools).build();
    let log = record(&agent);
    agent.prompt("go").await.unwrap();
    let results: Vec<(bool, String)> = agent
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::ToolResult(r) => Some((r.is_error, r.content[0].as_text().unwrap().to_owned())),
            _ => None,
        })
        .collect();
    // 42 is coerced to "42"; a missing required field fails with pi's text and the raw arguments.
    assert_eq!(results[0], (false, "echo: 42".to_owned()));
    assert_eq!(
        results[1],
        (true, "Validation failed for tool \"echo\":\n  - text: missing\n\nReceived arguments:\n{}".to_owned())
    );
    // tool_execution_start carries the raw (uncoerced) arguments.
    assert!(lines(&log).contains(&"tool_execution_start c1 {\"text\":42}".to_owned()));
}

#[tokio::test]
async fn a_typed_tool_gets_a_derived_schema_and_coerced_typed_arguments() {
    use pi_agent_core::{AgentToolResult, ToolContext, ToolError, Typed, TypedTool};

    /// Arguments.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct AddArgs {
        a: f64,
        b: f64,
    }
    struct Add;
    #[async_trait::async_trait]
    impl TypedTool for Add {
        type Args = AddArgs;
        fn name(&self) -> &str {
            "add"
        }
        fn description(&self) -> &str {
            "Add two numbers"
        }
        async fn run(&self, _id: &str, args: AddArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
            Ok(AgentToolResult::text(format!("{}", args.a + args.b)))
        }
    }
    let script = Script::new(vec![tool_calls(&[("c1", "add", json!({"a": "2", "b": 40}))]), text("42")]);
    let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Typed::new(Add))];
    let agent: Agent = Agent::builder(model(), script.stream_fn()).tools(tools).build();
    agent.prompt("add").await.unwrap();
    let AgentMessage::ToolResult(r) = &agent.messages()[3] else { panic!("tool result") };
    assert_eq!(r.content[0].as_text(), Some("42"), "\"2\" was coerced to 2 by the schema");
    let declared = serde_json::to_value(&agent.messages()[0]).unwrap();
    assert_eq!(declared["toolsAdded"][0]["parameters"]["properties"]["a"]["type"], "number");
}
