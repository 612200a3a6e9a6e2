//! An agent with two tools on the faux provider, printing its events as they happen.
//!
//! Run: `cargo run -p pi-examples --example agent_tools`

use std::sync::Arc;

use anyhow::Result;
use async_trait::async_trait;
use pi_agent_core::{Agent, AgentEvent, AgentTool, AgentToolResult, ToolContext, ToolError, provider_stream_fn};
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, faux_assistant_message, faux_text, faux_tool_call,
};
use pi_ai::{AssistantMessageEvent, StopReason};
use serde_json::{Map, Value, json};

struct Add(Value);

#[async_trait]
impl AgentTool for Add {
    fn name(&self) -> &str {
        "add"
    }
    fn description(&self) -> &str {
        "Add two numbers"
    }
    fn parameters(&self) -> &Value {
        &self.0
    }
    async fn execute(
        &self,
        _id: &str,
        args: Map<String, Value>,
        _ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let a = args.get("a").and_then(Value::as_f64).ok_or("a must be a number")?;
        let b = args.get("b").and_then(Value::as_f64).ok_or("b must be a number")?;
        Ok(AgentToolResult::text(format!("{}", a + b)).with_details(json!({"a": a, "b": b})))
    }
}

struct Clock(Value);

#[async_trait]
impl AgentTool for Clock {
    fn name(&self) -> &str {
        "clock"
    }
    fn description(&self) -> &str {
        "Tell the time in a city"
    }
    fn parameters(&self) -> &Value {
        &self.0
    }
    async fn execute(
        &self,
        _id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let city = args.get("city").and_then(Value::as_str).unwrap_or("Berlin").to_owned();
        ctx.update(AgentToolResult::text(format!("looking up {city}…")));
        Ok(AgentToolResult::text(format!("It is 12:00 in {city}.")))
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let faux = FauxProvider::new(FauxOptions::default());
    let tool_use = FauxMessageOptions { stop_reason: Some(StopReason::ToolUse), ..Default::default() };
    faux.set_responses(vec![
        faux_assistant_message(
            vec![
                faux_text("Let me compute and check the time."),
                faux_tool_call("add", json!({"a": 2, "b": 40}), Some("call_add")),
                faux_tool_call("clock", json!({"city": "Paris"}), Some("call_clock")),
            ],
            tool_use,
        )
        .into(),
        faux_assistant_message(vec![faux_text("2 + 40 = 42, and it is noon in Paris.")], Default::default()).into(),
    ]);
    let tools: Vec<Arc<dyn AgentTool>> = vec![
        Arc::new(Add(
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
        )),
        Arc::new(Clock(json!({"type": "object", "properties": {"city": {"type": "string"}}}))),
    ];
    let agent: Agent = Agent::builder(faux.model(), provider_stream_fn(Arc::new(faux.clone())))
        .system_prompt("You are a helpful assistant with tools.")
        .tools(tools)
        .build();
    agent.subscribe(|event: &AgentEvent| match event {
        AgentEvent::MessageUpdate { assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. } } => {
            print!("{delta}");
        }
        AgentEvent::MessageUpdate { .. } => {}
        AgentEvent::MessageEnd { message: m @ pi_agent_core::AgentMessage::Assistant(_) } => {
            println!("\n[message_end {}]", m.role())
        }
        AgentEvent::MessageEnd { message } => println!("[message_end {}]", message.role()),
        AgentEvent::MessageStart { message } => println!("[message_start {}]", message.role()),
        AgentEvent::ToolExecutionStart { tool_name, args, .. } => {
            println!("[tool {tool_name} {}]", Value::Object(args.clone()))
        }
        AgentEvent::ToolExecutionUpdate { partial_result, .. } => {
            println!("  … {}", partial_result.content.first().and_then(|b| b.as_text()).unwrap_or_default())
        }
        AgentEvent::ToolExecutionEnd { tool_name, result, is_error, .. } => println!(
            "[tool {tool_name} done, error={is_error}: {}]",
            result.content.first().and_then(|b| b.as_text()).unwrap_or_default()
        ),
        other => println!("[{}]", other.kind()),
    });
    agent.prompt("What is 2 + 40, and what time is it in Paris?").await?;
    println!("\nsystem prompt (replayed from the transcript): {:?}", agent.system_prompt());
    println!("transcript: {} messages", agent.messages().len());
    Ok(())
}
