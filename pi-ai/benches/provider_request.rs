//! Request-body build (transform, convert, serialize) for a 1 000- and a 10 000-message
//! transcript, per HTTP API. Target: under 5 ms at 10 000, growing linearly.
//!
//! The transcript clone that `build_request` consumes is made in the untimed setup; its own cost
//! is measured separately as `context_clone`.
//!
//! `cargo bench -p pi-ai --bench provider_request`

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use pi_ai::options::StreamOptions;
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{
    AssistantBlock, AssistantMessage, Context, Message, Model, StopReason, TextContent, Tool, ToolCall,
    ToolResultMessage, UserBlock, UserMessage,
};
use serde_json::json;

fn model(api: &str) -> Model {
    serde_json::from_value(json!({
        "id": "m", "name": "m", "api": api, "provider": "local", "baseUrl": "http://127.0.0.1:1",
        "reasoning": false, "input": ["text", "image"], "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 10000000, "maxTokens": 8192
    }))
    .expect("model")
}

/// `count` messages: turns of user → assistant (text + tool call) → tool result.
fn transcript(api: &str, count: usize) -> TranscriptContext {
    let mut messages = Vec::with_capacity(count);
    let mut i = 0;
    while messages.len() < count {
        messages.push(Message::User(UserMessage::new(format!("Please read file number {i} and summarise it."))));
        let mut args = serde_json::Map::new();
        args.insert("path".into(), json!(format!("src/file_{i}.rs")));
        messages.push(Message::Assistant(AssistantMessage {
            content: vec![
                AssistantBlock::Text(TextContent::new("Reading it now.")),
                AssistantBlock::ToolCall(ToolCall::new(format!("call_{i}"), "read", args)),
            ],
            api: api.into(),
            provider: "local".into(),
            model: "m".into(),
            stop_reason: StopReason::ToolUse,
            ..Default::default()
        }));
        messages.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: format!("call_{i}"),
            tool_name: "read".into(),
            content: vec![UserBlock::Text(TextContent::new("fn main() { println!(\"hello\"); }\n".repeat(4)))],
            ..Default::default()
        }));
        i += 1;
    }
    messages.truncate(count);
    let tools = vec![Tool::new(
        "read",
        "Read a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    )];
    normalize_context(Context { system_prompt: Some("You are a coding agent.".into()), messages, tools: Some(tools) })
}

fn bench(c: &mut Criterion) {
    let options = StreamOptions { api_key: Some("k".into()), max_tokens: Some(1000), ..Default::default() };
    let mut group = c.benchmark_group("request_body");
    group.sample_size(20);
    for count in [1_000, 10_000] {
        {
            let model = model("openai-completions");
            let context = transcript("openai-completions", count);
            let compat = pi_ai::providers::openai_completions::resolve_compat(&model);
            group.bench_function(BenchmarkId::new("openai-completions", count), |b| {
                b.iter_batched(
                    || context.clone(),
                    |context| {
                        pi_ai::providers::openai_completions::build_request(&model, context, &options, &compat)
                            .expect("request")
                    },
                    BatchSize::LargeInput,
                )
            });
        }
        {
            let model = model("anthropic-messages");
            let context = transcript("anthropic-messages", count);
            group.bench_function(BenchmarkId::new("anthropic-messages", count), |b| {
                b.iter_batched(
                    || context.clone(),
                    |context| pi_ai::providers::anthropic::build_request(&model, context, &options).expect("request"),
                    BatchSize::LargeInput,
                )
            });
        }
        {
            let model = model("openai-responses");
            let context = transcript("openai-responses", count);
            group.bench_function(BenchmarkId::new("openai-responses", count), |b| {
                b.iter_batched(
                    || context.clone(),
                    |context| {
                        pi_ai::providers::openai_responses::build_request(&model, context, &options).expect("request")
                    },
                    BatchSize::LargeInput,
                )
            });
        }
        {
            let context = transcript("openai-completions", count);
            group.bench_function(BenchmarkId::new("context_clone", count), |b| b.iter(|| context.clone()));
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
