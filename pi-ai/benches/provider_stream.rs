//! Per-delta cost of the HTTP providers' stream parsers, measured at the start of a message and
//! after 1 MB of it has streamed: it must not grow with the message.
//!
//! `cargo bench -p pi-ai --bench provider_stream`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pi_ai::http::{ProviderOutput, SseHandler, StreamContext};
use pi_ai::options::StreamOptions;
use pi_ai::providers::anthropic::AnthropicStream;
use pi_ai::providers::openai_completions::{CompletionsStream, resolve_compat};
use pi_ai::providers::openai_responses::ResponsesStream;
use pi_ai::sse::{SseEvent, SseParser};
use pi_ai::{Model, ModelCost};
use serde_json::json;

const DELTA: &str = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ";

fn model(api: &str) -> Model {
    Model {
        id: "m".into(),
        api: api.into(),
        provider: "local".into(),
        base_url: "http://127.0.0.1:1".into(),
        cost: ModelCost::default(),
        ..Default::default()
    }
}

/// One API: how to open a text block, and one text delta, as raw SSE bytes.
struct Api {
    name: &'static str,
    open: String,
    delta: String,
    handler: fn() -> Box<dyn SseHandler>,
}

fn apis() -> Vec<Api> {
    let ev = |name: &str, body: serde_json::Value| format!("event: {name}\ndata: {body}\n\n");
    vec![
        Api {
            name: "openai-completions",
            open: String::new(),
            delta: format!("data: {}\n\n", json!({"id": "c", "choices": [{"index": 0, "delta": {"content": DELTA}, "finish_reason": null}]})),
            handler: || Box::new(CompletionsStream::new(resolve_compat(&model("openai-completions")))),
        },
        Api {
            name: "anthropic-messages",
            open: [
                ev("message_start", json!({"type": "message_start", "message": {"id": "m", "model": "m", "usage": {"input_tokens": 1, "output_tokens": 1}}})),
                ev("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            ]
            .concat(),
            delta: ev("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": DELTA}})),
            handler: || Box::new(AnthropicStream::new()),
        },
        Api {
            name: "openai-responses",
            open: ev("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg", "content": []}})),
            delta: ev("response.output_text.delta", json!({"type": "response.output_text.delta", "output_index": 0, "delta": DELTA})),
            handler: || Box::new(ResponsesStream::new()),
        },
        Api {
            name: "google-generative-ai",
            open: String::new(),
            delta: format!("data: {}\r\n\r\n", json!({"candidates": [{"content": {"role": "model", "parts": [{"text": DELTA}]}}]})),
            handler: || Box::new(pi_ai::providers::google::GoogleStream::new("Google")),
        },
        Api {
            name: "mistral-conversations",
            open: String::new(),
            delta: format!("data: {}\n\n", json!({"id": "c", "choices": [{"index": 0, "delta": {"content": DELTA}, "finish_reason": null}]})),
            handler: || Box::new(pi_ai::providers::mistral::MistralStream::new()),
        },
        Api {
            name: "azure-openai-responses",
            open: ev("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg", "content": []}})),
            delta: ev("response.output_text.delta", json!({"type": "response.output_text.delta", "output_index": 0, "delta": DELTA})),
            handler: || Box::new(ResponsesStream::new()),
        },
        Api {
            name: "openai-codex-responses",
            open: ev("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg", "content": []}})),
            delta: ev("response.output_text.delta", json!({"type": "response.output_text.delta", "output_index": 0, "delta": DELTA})),
            handler: || Box::new(pi_ai::providers::openai_codex_responses::CodexStream::new()),
        },
    ]
}

fn parse(bytes: &str) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    parser.push(bytes.as_bytes(), &mut events);
    parser.finish(&mut events);
    events
}

/// A handler and output that have already streamed `bytes` of text.
fn prefilled(api: &Api, bytes: usize) -> (Box<dyn SseHandler>, ProviderOutput, StreamContext) {
    let ctx = StreamContext { model: model(api.name), options: StreamOptions::default() };
    let mut out = ProviderOutput::new(&ctx.model);
    let mut handler = (api.handler)();
    out.start();
    for event in parse(&api.open) {
        handler.on_event(event, &ctx, &mut out).expect("open");
    }
    let delta = parse(&api.delta).remove(0);
    for _ in 0..bytes / DELTA.len() {
        handler.on_event(delta.clone(), &ctx, &mut out).expect("delta");
        out.take_events();
    }
    (handler, out, ctx)
}

fn per_delta(c: &mut Criterion) {
    let mut group = c.benchmark_group("provider_delta");
    group.throughput(Throughput::Elements(1));
    for api in apis() {
        // SSE bytes → event → handler → emitted event, for one delta.
        for (label, size) in [("at_0MB", 0usize), ("at_1MB", 1 << 20)] {
            let (mut handler, mut out, ctx) = prefilled(&api, size);
            let bytes = api.delta.clone();
            group.bench_function(BenchmarkId::new(api.name, label), |b| {
                let mut parser = SseParser::new();
                let mut events = Vec::with_capacity(1);
                b.iter(|| {
                    parser.push(bytes.as_bytes(), &mut events);
                    for event in events.drain(..) {
                        handler.on_event(event, &ctx, &mut out).expect("delta");
                    }
                    std::hint::black_box(out.take_events());
                })
            });
        }
    }
    group.finish();
}

fn whole_message(c: &mut Criterion) {
    let mut group = c.benchmark_group("provider_1MB_message");
    group.sample_size(10);
    for api in apis() {
        let count = (1 << 20) / DELTA.len();
        let body = [api.open.clone(), api.delta.repeat(count)].concat();
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(api.name, |b| {
            b.iter(|| {
                let ctx = StreamContext { model: model(api.name), options: StreamOptions::default() };
                let mut out = ProviderOutput::new(&ctx.model);
                let mut handler = (api.handler)();
                let mut parser = SseParser::new();
                let mut events = Vec::new();
                for chunk in body.as_bytes().chunks(4096) {
                    parser.push(chunk, &mut events);
                    for event in events.drain(..) {
                        handler.on_event(event, &ctx, &mut out).expect("event");
                    }
                    std::hint::black_box(out.take_events());
                }
                std::hint::black_box(out.message().content.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, per_delta, whole_message);
criterion_main!(benches);
