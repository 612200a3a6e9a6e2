//! Request-body build (transform, convert, serialize) for a 1 000- and a 10 000-message
//! transcript, per HTTP API. Target: under 5 ms at 10 000, growing linearly.
//!
//! `<api>/<n>` builds from a borrowed transcript (`build_request_ref`); `openai-completions-by-value`
//! goes through `build_request`, which consumes (and so drops) a clone made in the untimed setup.
//!
//! `cargo bench -p pi-ai --bench provider_request`
//!
//! On a loaded machine wall time overstates the work; `PI_BENCH_CPU=1 cargo bench -p pi-ai --bench
//! provider_request` instead prints the CPU time of the building thread per body (Linux: read from
//! `/proc/thread-self/schedstat`).

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group};
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
        messages.push(Message::User(UserMessage::new(format!("Please read file number {i} and summarise it.")).into()));
        let mut args = serde_json::Map::new();
        args.insert("path".into(), json!(format!("src/file_{i}.rs")));
        messages.push(Message::Assistant(
            AssistantMessage {
                content: vec![
                    AssistantBlock::Text(TextContent::new("Reading it now.")),
                    AssistantBlock::ToolCall(ToolCall::new(format!("call_{i}"), "read", args)),
                ],
                api: api.into(),
                provider: "local".into(),
                model: "m".into(),
                stop_reason: StopReason::ToolUse,
                ..Default::default()
            }
            .into(),
        ));
        messages.push(Message::ToolResult(
            ToolResultMessage {
                tool_call_id: format!("call_{i}"),
                tool_name: "read".into(),
                content: vec![UserBlock::Text(TextContent::new("fn main() { println!(\"hello\"); }\n".repeat(4)))],
                ..Default::default()
            }
            .into(),
        ));
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
        for &(api, build) in BUILDS.iter().chain(NEW_BUILDS.iter()) {
            let model = model(api);
            let context = transcript(api, count);
            group.bench_function(BenchmarkId::new(api, count), |b| b.iter(|| build(&model, &context, &options)));
        }
        {
            let model = model("openai-completions");
            let context = transcript("openai-completions", count);
            let compat = pi_ai::providers::openai_completions::resolve_compat(&model);
            group.bench_function(BenchmarkId::new("openai-completions-by-value", count), |b| {
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
    }
    group.finish();
}

/// CPU nanoseconds this thread has run (Linux), tick-granular: read around a long run only.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

type Build = fn(&Model, &TranscriptContext, &StreamOptions) -> pi_ai::http::HttpRequest;

fn build_completions(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    let compat = pi_ai::providers::openai_completions::resolve_compat(model);
    pi_ai::providers::openai_completions::build_request_ref(model, context, options, &compat).expect("request")
}

fn build_anthropic(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    pi_ai::providers::anthropic::build_request_ref(model, context, options).expect("request")
}

fn build_responses(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    pi_ai::providers::openai_responses::build_request_ref(model, context, options).expect("request")
}

fn build_bedrock(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    pi_ai::providers::bedrock::build_request_ref(model, context, options, false).expect("request").0
}

fn build_pi_messages(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    pi_ai::providers::pi_messages::build_request_ref(model, context, options).expect("request")
}

const BUILDS: [(&str, Build); 5] = [
    ("openai-completions", build_completions),
    ("anthropic-messages", build_anthropic),
    ("openai-responses", build_responses),
    ("bedrock-converse-stream", build_bedrock),
    ("pi-messages", build_pi_messages),
];

fn build_gemini(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    pi_ai::providers::google::build_request_ref(model, context, options).expect("request")
}

fn build_vertex(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    pi_ai::providers::google::build_vertex_request_ref(model, context, options).expect("request")
}

fn build_mistral(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    pi_ai::providers::mistral::build_request_ref(model, context, options).expect("request")
}

fn build_azure(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    pi_ai::providers::azure_openai_responses::build_request_with_env(model, context, options, &|_| None)
        .expect("request")
}

/// A Codex token: `{"https://api.openai.com/auth":{"chatgpt_account_id":"acc"}}` as a JWT payload.
const CODEX_TOKEN: &str = "e30.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYWNjIn19.sig";

fn build_codex(model: &Model, context: &TranscriptContext, options: &StreamOptions) -> pi_ai::http::HttpRequest {
    let options = StreamOptions { api_key: Some(CODEX_TOKEN.into()), ..options.clone() };
    pi_ai::providers::openai_codex_responses::build_request_ref(model, context, &options).expect("request")
}

/// The APIs of issue 16.
const NEW_BUILDS: [(&str, Build); 5] = [
    ("google-generative-ai", build_gemini),
    ("google-vertex", build_vertex),
    ("mistral-conversations", build_mistral),
    ("azure-openai-responses", build_azure),
    ("openai-codex-responses", build_codex),
];

/// CPU time per body on this thread: building from a borrowed transcript (one reading around the
/// whole run), and building from an owned clone made just before, which the build then drops
/// (readings around each build: tick-granular, so unbiased only over many runs).
fn cpu_report() {
    let options = StreamOptions { api_key: Some("k".into()), max_tokens: Some(1000), ..Default::default() };
    for count in [1_000usize, 10_000] {
        let runs = if count == 1_000 { 1000 } else { 100 };
        for &(api, build) in BUILDS.iter().chain(NEW_BUILDS.iter()) {
            let model = model(api);
            let context = transcript(api, count);
            let bytes = build(&model, &context, &options).body.len();
            let start = thread_cpu_ns().unwrap_or(0);
            for _ in 0..runs {
                std::hint::black_box(build(&model, &context, &options));
            }
            let by_ref = thread_cpu_ns().unwrap_or(0).saturating_sub(start);
            let mut by_value = 0u64;
            for _ in 0..runs {
                let input = context.clone();
                let start = thread_cpu_ns().unwrap_or(0);
                std::hint::black_box(build(&model, &input, &options));
                drop(input);
                by_value += thread_cpu_ns().unwrap_or(0).saturating_sub(start);
            }
            let per = |ns: u64| ns as f64 / 1e6 / runs as f64;
            println!(
                "{api}/{count}: {:.2} ms CPU per body; {:.2} ms with dropping the consumed transcript ({bytes} bytes)",
                per(by_ref),
                per(by_value)
            );
        }
    }
}

criterion_group!(benches, bench);

fn main() {
    if std::env::var_os("PI_BENCH_CPU").is_some() {
        cpu_report();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
