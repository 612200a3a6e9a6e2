//! Overhead of one agent turn on a long transcript: tool diff, transform_context, convert_to_llm,
//! normalize_context and serializing the request, with a stream function that answers at once.
//!
//! `cargo bench -p pi-agent-core --bench turn`

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use pi_agent_core::{
    AgentContext, AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult, BoxError, FnSink, StreamFn, ToolContext,
    ToolError, run_agent_loop,
};
use pi_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Model, StopReason,
    SystemMessage, TextContent, UserMessage,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

struct Noop(Value);

#[async_trait]
impl AgentTool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "Does nothing"
    }
    fn parameters(&self) -> &Value {
        &self.0
    }
    async fn execute(&self, _: &str, _: Map<String, Value>, _: ToolContext) -> Result<AgentToolResult, ToolError> {
        Ok(AgentToolResult::text("ok"))
    }
}

fn transcript(n: usize) -> Vec<AgentMessage> {
    let mut out: Vec<AgentMessage> = vec![AgentMessage::System(
        SystemMessage::new("You are a coding agent.")
            .with_tools_added(vec![pi_ai::Tool::new("noop", "Does nothing", json!({"type": "object"}))])
            .into(),
    )];
    for i in 1..n {
        out.push(if i % 2 == 1 {
            AgentMessage::User(UserMessage::new(format!("question {i} about the code base")).into())
        } else {
            AgentMessage::Assistant(
                AssistantMessage {
                    content: vec![AssistantBlock::Text(TextContent::new(format!("answer {i} with some text in it")))],
                    ..Default::default()
                }
                .into(),
            )
        });
        if i % 100 == 0 {
            // An application role the default converter drops.
            out.push(
                serde_json::from_value(json!({"role": "auditNote", "text": "x", "timestamp": i}))
                    .unwrap_or_else(|_| unreachable!()),
            );
        }
    }
    out
}

/// How the stream function serializes the request.
#[derive(Clone, Copy)]
enum Body {
    /// pi's own JSON of the whole normalized transcript (a stand-in for the wire body).
    PiJson,
    /// The real OpenAI chat-completions request a provider sends (pi-ai's body builder).
    OpenAiCompletions,
}

fn stream_fn(body: Body) -> StreamFn {
    Arc::new(move |model: &Model, ctx, opts| {
        let size = match body {
            Body::PiJson => serde_json::to_vec(ctx.messages()).map(|b| b.len()).unwrap_or(0),
            Body::OpenAiCompletions => {
                let compat = pi_ai::providers::openai_completions::resolve_compat(model);
                pi_ai::providers::openai_completions::build_request_ref(model, &ctx, &opts, &compat)
                    .map(|r| r.body.len())
                    .unwrap_or(0)
            }
        };
        black_box(size);
        let message = AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::new("ok"))],
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            stop_reason: StopReason::Stop,
            ..Default::default()
        };
        AssistantMessageEventStream::from_events(vec![
            AssistantMessageEvent::Start { partial: Box::new(AssistantMessage::default()) },
            AssistantMessageEvent::Done { reason: StopReason::Stop, message: Box::new(message) },
        ])
    })
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap_or_else(|_| unreachable!());
    let mut group = c.benchmark_group("agent_turn");
    group.sample_size(20);
    for n in [1_000usize, 10_000] {
        let messages = transcript(n);
        let tools: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Noop(json!({"type": "object"})))];
        let model: Model = Model {
            id: "m".into(),
            api: "openai-completions".into(),
            provider: "bench".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            ..Default::default()
        };
        let prune = |m: Vec<AgentMessage>, _c: CancellationToken| async move { Ok::<_, BoxError>(m) };
        // "prompt": with a (pass-through) transform_context, building the real chat-completions
        // request body; "prompt_default_hooks": the same without a transform. "prompt_pi_json":
        // with the transform, serializing pi's JSON of the whole transcript instead (usage, cost
        // and model of every assistant message included: about three times the bytes of the
        // request, what a JSONL snapshot of the transcript costs).
        let cases = [
            ("prompt", true, Body::OpenAiCompletions),
            ("prompt_default_hooks", false, Body::OpenAiCompletions),
            ("prompt_pi_json", true, Body::PiJson),
        ];
        for (name, with_transform, body) in cases {
            group.bench_with_input(BenchmarkId::new(name, n), &messages, |b, messages| {
                b.iter_batched(
                    || AgentContext { messages: messages.clone(), tools: tools.clone() },
                    |ctx| {
                        let mut config = AgentLoopConfig::new(model.clone(), stream_fn(body));
                        config.stream_options.api_key = Some("bench".into());
                        if with_transform {
                            config.transform_context = Some(Arc::new(prune));
                        }
                        let mut sink = FnSink(|e: pi_agent_core::AgentEvent| {
                            black_box(e);
                        });
                        let prompt = vec![AgentMessage::User(UserMessage::new("next").into())];
                        rt.block_on(run_agent_loop(prompt, ctx, config, &mut sink, CancellationToken::new()))
                            .map(|m| m.len())
                            .unwrap_or(0)
                    },
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
