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
    /// A raw-event hook is set (openai-completions then reads every chunk as a `Value`).
    hooked: bool,
}

fn apis() -> Vec<Api> {
    let ev = |name: &str, body: serde_json::Value| format!("event: {name}\ndata: {body}\n\n");
    vec![
        Api {
            name: "openai-completions",
            open: String::new(),
            delta: format!("data: {}\n\n", json!({"id": "c", "choices": [{"index": 0, "delta": {"content": DELTA}, "finish_reason": null}]})),
            handler: || Box::new(CompletionsStream::new(resolve_compat(&model("openai-completions")))),
            hooked: false,
        },
        Api {
            name: "openai-completions-value-path",
            open: String::new(),
            delta: format!("data: {}\n\n", json!({"id": "c", "choices": [{"index": 0, "delta": {"content": DELTA}, "finish_reason": null}]})),
            handler: || Box::new(CompletionsStream::new(resolve_compat(&model("openai-completions")))),
            hooked: true,
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
            hooked: false,
        },
        Api {
            name: "openai-responses",
            open: ev("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg", "content": []}})),
            delta: ev("response.output_text.delta", json!({"type": "response.output_text.delta", "output_index": 0, "delta": DELTA})),
            handler: || Box::new(ResponsesStream::new()),
            hooked: false,
        },
        Api {
            name: "google-generative-ai",
            open: String::new(),
            delta: format!("data: {}\r\n\r\n", json!({"candidates": [{"content": {"role": "model", "parts": [{"text": DELTA}]}}]})),
            handler: || Box::new(pi_ai::providers::google::GoogleStream::new("Google")),
            hooked: false,
        },
        Api {
            name: "mistral-conversations",
            open: String::new(),
            delta: format!("data: {}\n\n", json!({"id": "c", "choices": [{"index": 0, "delta": {"content": DELTA}, "finish_reason": null}]})),
            handler: || Box::new(pi_ai::providers::mistral::MistralStream::new()),
            hooked: false,
        },
        Api {
            name: "azure-openai-responses",
            open: ev("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg", "content": []}})),
            delta: ev("response.output_text.delta", json!({"type": "response.output_text.delta", "output_index": 0, "delta": DELTA})),
            handler: || Box::new(ResponsesStream::new()),
            hooked: false,
        },
        Api {
            name: "openai-codex-responses",
            open: ev("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg", "content": []}})),
            delta: ev("response.output_text.delta", json!({"type": "response.output_text.delta", "output_index": 0, "delta": DELTA})),
            handler: || Box::new(pi_ai::providers::openai_codex_responses::CodexStream::new()),
            hooked: false,
        },
    ]
}

/// The options of `api`'s requests: with a raw-event hook when it is `hooked`.
fn options(api: &Api) -> StreamOptions {
    let mut options = StreamOptions::default();
    if api.hooked {
        options.on_provider_stream_event = Some(std::sync::Arc::new(|raw, _| {
            std::hint::black_box(raw);
        }));
    }
    options
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
    let ctx = StreamContext { model: model(api.name), options: options(api) };
    let mut out = ProviderOutput::new(&ctx.model);
    let mut handler = (api.handler)();
    out.start();
    for event in parse(&api.open) {
        handler.on_event(event.view(), &ctx, &mut out).expect("open");
    }
    let delta = parse(&api.delta).remove(0);
    for _ in 0..bytes / DELTA.len() {
        handler.on_event(delta.view(), &ctx, &mut out).expect("delta");
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
                b.iter(|| {
                    let _ = parser.push_with(bytes.as_bytes(), |event| {
                        handler.on_event(event, &ctx, &mut out).expect("delta");
                        std::ops::ControlFlow::Continue(())
                    });
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
                let ctx = StreamContext { model: model(api.name), options: options(&api) };
                let mut out = ProviderOutput::new(&ctx.model);
                let mut handler = (api.handler)();
                let mut parser = SseParser::new();
                for chunk in body.as_bytes().chunks(4096) {
                    let _ = parser.push_with(chunk, |event| {
                        handler.on_event(event, &ctx, &mut out).expect("event");
                        std::ops::ControlFlow::Continue(())
                    });
                    std::hint::black_box(out.take_events());
                }
                std::hint::black_box(out.message().content.len())
            })
        });
    }
    group.finish();
}

/// Event-stream bytes → frame → handler → emitted event, for one Bedrock text delta, at the start
/// of a message and after 1 MB of it.
fn bedrock_per_delta(c: &mut Criterion) {
    use pi_ai::providers::bedrock::BedrockStream;
    use pi_ai::providers::bedrock::eventstream::{Decoder, encode_event};
    let frame = |kind: &str, payload: serde_json::Value| encode_event(kind, payload.to_string().as_bytes());
    let delta = frame("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": DELTA}}));
    let mut group = c.benchmark_group("provider_delta");
    group.throughput(Throughput::Elements(1));
    for (label, size) in [("at_0MB", 0usize), ("at_1MB", 1 << 20)] {
        let ctx = StreamContext { model: model("bedrock-converse-stream"), options: StreamOptions::default() };
        let mut out = ProviderOutput::new(&ctx.model);
        let mut handler = BedrockStream::new();
        let mut decoder = Decoder::default();
        out.start();
        let mut feed = |bytes: &[u8], handler: &mut BedrockStream, out: &mut ProviderOutput| {
            decoder.push(bytes);
            while let Some(message) = decoder.next_message().expect("frame") {
                handler.on_frame(&message, &ctx, out).expect("event");
            }
            std::hint::black_box(out.take_events());
        };
        feed(&frame("messageStart", json!({"role": "assistant"})), &mut handler, &mut out);
        for _ in 0..size / DELTA.len() {
            feed(&delta, &mut handler, &mut out);
        }
        group.bench_function(BenchmarkId::new("bedrock-converse-stream", label), |b| {
            b.iter(|| feed(&delta, &mut handler, &mut out))
        });
    }
    group.finish();
}

/// SSE bytes → pi event → emitted event, for one pi-messages text delta.
fn pi_messages_per_delta(c: &mut Criterion) {
    use pi_ai::providers::pi_messages::{on_event, on_typed_delta, parse_data};
    let delta = format!("data: {}\n\n", json!({"type": "text_delta", "contentIndex": 0, "delta": DELTA}));
    let mut group = c.benchmark_group("provider_delta");
    group.throughput(Throughput::Elements(1));
    for (label, size) in [("at_0MB", 0usize), ("at_1MB", 1 << 20)] {
        let mut out = ProviderOutput::new(&model("pi-messages"));
        let mut parser = SseParser::new();
        let mut feed = |bytes: &str, out: &mut ProviderOutput| {
            let _ = parser.push_with(bytes.as_bytes(), |event| {
                if !on_typed_delta(event.data, out)
                    && let Some(value) = parse_data(event.data).expect("json")
                {
                    on_event(&value, out).expect("event");
                }
                std::ops::ControlFlow::Continue(())
            });
            std::hint::black_box(out.take_events());
        };
        feed(
            &format!(
                "data: {}\n\ndata: {}\n\n",
                json!({"type": "start"}),
                json!({"type": "text_start", "contentIndex": 0})
            ),
            &mut out,
        );
        for _ in 0..size / DELTA.len() {
            feed(&delta, &mut out);
        }
        group.bench_function(BenchmarkId::new("pi-messages", label), |b| b.iter(|| feed(&delta, &mut out)));
    }
    group.finish();
}

criterion_group!(benches, per_delta, whole_message, bedrock_per_delta, pi_messages_per_delta);
criterion_main!(benches);
