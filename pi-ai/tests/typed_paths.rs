//! Every API reads its common streamed delta typed and borrowing (issue 20) and every other
//! shape as a `serde_json::Value`; both paths must give the same events, message and outcome. A
//! raw-event hook forces the `Value` path, so each recorded stream is run through the handler with
//! and without one (whole, and split into small chunks so events span chunks) and compared.

use pi_ai::http::{ProviderOutput, SseHandler, StreamContext};
use pi_ai::options::StreamOptions;
use pi_ai::providers::anthropic::AnthropicStream;
use pi_ai::providers::google::GoogleStream;
use pi_ai::providers::mistral::MistralStream;
use pi_ai::providers::openai_codex_responses::CodexStream;
use pi_ai::providers::openai_completions::{CompletionsStream, resolve_compat};
use pi_ai::providers::openai_responses::ResponsesStream;
use pi_ai::sse::SseParser;
use pi_ai::{AssistantMessage, AssistantMessageEvent, Model};
use serde_json::{Value, json};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn model(api: &str) -> Model {
    Model { id: "m".into(), api: api.into(), provider: "local".into(), ..Default::default() }
}

/// The outcome of one run: events, final message, the handler's end result, raw events seen.
type Outcome = (Vec<AssistantMessageEvent>, AssistantMessage, Result<(), String>, usize);

fn handler(api: &str) -> Box<dyn SseHandler> {
    match api {
        "openai-completions" => Box::new(CompletionsStream::new(resolve_compat(&model(api)))),
        "anthropic-messages" => Box::new(AnthropicStream::new()),
        "openai-responses" | "azure-openai-responses" => Box::new(ResponsesStream::new()),
        "openai-codex-responses" => Box::new(CodexStream::new()),
        "google-generative-ai" | "google-vertex" => Box::new(GoogleStream::new("Google")),
        "mistral-conversations" => Box::new(MistralStream::new()),
        other => panic!("no handler for {other}"),
    }
}

/// Runs `body` through `api`'s handler in chunks of `chunk` bytes, with or without a raw hook.
fn run(api: &str, body: &str, chunk: usize, hooked: bool) -> Outcome {
    let seen = Arc::new(AtomicUsize::new(0));
    let mut options = StreamOptions::default();
    if hooked {
        let count = seen.clone();
        options.on_provider_stream_event = Some(Arc::new(move |_: &Value, _: &Model| {
            count.fetch_add(1, Ordering::SeqCst);
        }));
    }
    let ctx = StreamContext { model: model(api), options };
    let mut out = ProviderOutput::new(&ctx.model);
    out.start();
    let mut handler = handler(api);
    let mut parser = SseParser::new();
    let mut result = Ok(());
    let mut feed = |event: pi_ai::sse::SseEventRef<'_>, out: &mut ProviderOutput| {
        if let Err(e) = handler.on_event(event, &ctx, out) {
            result = Err(e);
            return ControlFlow::Break(());
        }
        if handler.finished() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    };
    let mut stopped = false;
    for piece in body.as_bytes().chunks(chunk) {
        if parser.push_with(piece, |e| feed(e, &mut out)).is_break() {
            stopped = true;
            break;
        }
    }
    if !stopped {
        parser.finish_with(|e| feed(e, &mut out));
    }
    let end = match result {
        Ok(()) => handler.on_end(&ctx, &mut out),
        Err(e) => Err(e),
    };
    let mut message = out.message().clone();
    message.timestamp = 0;
    (untimed(out.take_events()), message, end, seen.load(Ordering::SeqCst))
}

/// The events with the start's timestamp (the clock when the output was made) zeroed.
fn untimed(mut events: Vec<AssistantMessageEvent>) -> Vec<AssistantMessageEvent> {
    for event in &mut events {
        if let AssistantMessageEvent::Start { partial } = event {
            partial.timestamp = 0;
        }
    }
    events
}

/// Asserts both paths agree on `body`; the raw events the hooked run saw.
fn paths_agree(api: &str, name: &str, body: &str) -> usize {
    let (values, value_message, value_end, raw) = run(api, body, body.len().max(1), true);
    for chunk in [body.len().max(1), 1, 7, 64] {
        let (typed, typed_message, typed_end, none) = run(api, body, chunk, false);
        assert_eq!(none, 0);
        assert_eq!(typed, values, "{api} {name} (chunks of {chunk}): events");
        assert_eq!(typed_message, value_message, "{api} {name} (chunks of {chunk}): message");
        assert_eq!(typed_end, value_end, "{api} {name} (chunks of {chunk}): outcome");
    }
    raw
}

fn assert_paths_agree(api: &str, name: &str, body: &str) {
    assert!(paths_agree(api, name, body) > 0, "{api} {name}: the hooked run saw raw events");
}

fn data(chunks: &[Value]) -> String {
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect()
}

fn named(events: &[Value]) -> String {
    events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("x"))).collect()
}

#[test]
fn recorded_streams_of_five_apis() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/http/apis/streams.json"))
        .expect("streams.json");
    let streams: serde_json::Map<String, Value> = serde_json::from_str(&text).expect("JSON");
    assert!(streams.len() >= 10);
    let mut raw = 0;
    for (name, stream) in &streams {
        let api = stream["api"].as_str().expect("api");
        // (Codex's error events are not raw events: only the sum is checked.)
        raw += paths_agree(api, name, stream["body"].as_str().expect("body"));
    }
    assert!(raw > 20, "the hooked runs saw the raw events");
}

#[test]
fn openai_completions_reasoning_and_tool_arguments() {
    let choice = |delta: Value, finish: Value| json!({"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let body = data(&[
        choice(json!({"role": "assistant", "content": ""}), Value::Null),
        choice(json!({"reasoning_content": "think "}), Value::Null),
        choice(json!({"reasoning": "", "reasoning_text": "more"}), Value::Null),
        choice(json!({"content": "x"}), Value::Null),
        choice(
            json!({"tool_calls": [{"index": 0, "id": "t1", "type": "function", "function": {"name": "f", "arguments": ""}}]}),
            Value::Null,
        ),
        choice(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\":"}}]}), Value::Null),
        choice(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}, {"index": 1, "id": "t2", "function": {"name": "g", "arguments": "{}"}}]}),
            Value::Null,
        ),
        // Odd shapes: a null function, a fragment that is no object, a custom tool, a string index.
        choice(json!({"tool_calls": [{"index": 2, "id": "t3", "function": null}]}), Value::Null),
        choice(json!({"tool_calls": [null]}), Value::Null),
        choice(json!({"tool_calls": [{"index": 3, "id": "t4", "custom": {"name": "c", "input": "raw"}}]}), Value::Null),
        choice(json!({"tool_calls": [{"index": "0", "function": {"arguments": "x"}}]}), Value::Null),
        choice(json!({"reasoning_content": 5, "content": "y"}), Value::Null),
        choice(json!({}), json!("tool_calls")),
    ]) + "data: [DONE]\n\n";
    assert_paths_agree("openai-completions", "reasoning+tools", &body);
}

#[test]
fn anthropic_text_thinking_and_arguments() {
    let delta = |index: Value, delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
    let body = named(&[
        json!({"type": "message_start", "message": {"id": "m1", "model": "other", "usage": {"input_tokens": 3, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        delta(json!(0), json!({"type": "thinking_delta", "thinking": "hm"})),
        delta(json!(0), json!({"type": "signature_delta", "signature": "sig"})),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        delta(json!(1), json!({"type": "text_delta", "text": "Hé \"q\"\n"})),
        // Odd shapes: a float index, a missing text, a number text, a mismatched delta type, a
        // duplicate key, an unknown index.
        delta(json!(1.0), json!({"type": "text_delta", "text": "float"})),
        delta(json!(1), json!({"type": "text_delta"})),
        delta(json!(1), json!({"type": "text_delta", "text": 5})),
        delta(json!(1), json!({"type": "thinking_delta", "thinking": "wrong block"})),
        delta(json!(9), json!({"type": "text_delta", "text": "nowhere"})),
    ]);
    let duplicate = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\",\"text\":\"b\"}}\n\n";
    let rest = named(&[
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}}}),
        delta(json!(2), json!({"type": "input_json_delta", "partial_json": "{\"a\""})),
        delta(json!(2), json!({"type": "input_json_delta", "partial_json": ":1}"})),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]);
    let body = format!("{body}{duplicate}{rest}");
    assert_paths_agree("anthropic-messages", "thinking+text+tool", &body);
}

#[test]
fn anthropic_deltas_that_differ_only_in_their_text() {
    // Runs of deltas read in the first one's frame, and deltas that share its start and end but
    // are something else: a string that closes early, another block, a stopped block.
    let delta = |index: u64, delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
    let thinking = |t: &str| delta(0, json!({"type": "thinking_delta", "thinking": t}));
    let text = |t: &str| delta(1, json!({"type": "text_delta", "text": t}));
    let body = named(&[
        json!({"type": "message_start", "message": {"id": "m1", "model": "m", "usage": {"input_tokens": 3}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        thinking("a"),
        thinking("b \"c\"\n"),
        thinking(""),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        text("x"),
        text("y\u{e9}"),
        thinking("late"),
        text("z"),
        delta(1, json!({"text": "first", "type": "text_delta"})),
        delta(1, json!({"text": "second", "type": "text_delta"})),
        json!({"type": "content_block_stop", "index": 0}),
        thinking("after its stop"),
        text("w"),
    ]);
    let attack = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\",\"text\":\"b\"}}\n\n";
    let rest = named(&[
        text("v"),
        json!({"type": "content_block_stop", "index": 1}),
        text("after its stop"),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]);
    assert_paths_agree("anthropic-messages", "framed deltas", &format!("{body}{attack}{rest}"));
}

#[test]
fn openai_responses_deltas() {
    let body = named(&[
        json!({"type": "response.created", "response": {"id": "r1"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "th"}),
        json!({"type": "response.reasoning_text.delta", "output_index": 0, "delta": "ink"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "think"}]}}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 1, "item_id": "msg", "content_index": 0, "delta": "Hi", "logprobs": []}),
        json!({"type": "response.refusal.delta", "output_index": 1, "delta": " no"}),
        // Odd shapes: a null delta, a wrong slot, a missing index, a falsy error member, a string
        // index.
        json!({"type": "response.output_text.delta", "output_index": 1, "delta": null}),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "wrong slot"}),
        json!({"type": "response.output_text.delta", "delta": "no index"}),
        json!({"type": "response.output_text.delta", "output_index": 1, "delta": "!", "error": false}),
        json!({"type": "response.output_text.delta", "output_index": "1", "delta": "?"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "message", "id": "msg", "content": [{"type": "output_text", "text": "Hi no!"}]}}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{\"a\":"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "2}"}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": {"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": "{\"a\":2}"}}),
        json!({"type": "response.completed", "response": {"id": "r1", "status": "completed", "usage": {"input_tokens": 4, "output_tokens": 5, "total_tokens": 9}}}),
    ]);
    assert_paths_agree("openai-responses", "reasoning+text+tool", &body);
    assert_paths_agree(
        "openai-codex-responses",
        "reasoning+text+tool",
        &body.replace("response.completed", "response.done"),
    );
    // An `error` event name turns any data into an error, typed shape or not.
    let error = format!(
        "{}event: error\ndata: {}\n\n",
        named(&[json!({"type": "response.created", "response": {"id": "r1"}})]),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "x"})
    );
    assert_paths_agree("openai-responses", "error event", &error);
}

#[test]
fn google_and_mistral_odd_shapes() {
    let part = |p: Value| json!({"candidates": [{"content": {"role": "model", "parts": [p]}}], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}, "modelVersion": "g", "responseId": "r"});
    let body = data(&[
        part(json!({"text": "think", "thought": true, "thoughtSignature": "s1"})),
        part(json!({"text": "Hi"})),
        part(json!({"text": 5})),
        part(json!({"text": "x", "thought": "yes"})),
        part(json!({"text": "y", "functionCall": null})),
        json!({"candidates": [{"content": {"parts": [{"text": " there"}]}}], "usageMetadata": {"promptTokenCount": 5.5}}),
        json!({"candidates": [{"content": null, "finishReason": "STOP"}], "usageMetadata": null}),
    ]);
    assert_paths_agree("google-generative-ai", "text+thought", &body);
    let choice = |delta: Value, finish: Value| json!({"id": "m1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let body = data(&[
        choice(json!({"role": "assistant", "content": ""}), Value::Null),
        choice(json!({"content": "Bon"}), Value::Null),
        choice(json!({"content": ["jour", {"type": "text", "text": "!"}]}), Value::Null),
        choice(json!({"content": null, "tool_calls": null}), Value::Null),
        choice(json!({"content": 7}), Value::Null),
        choice(json!({"content": " fin"}), json!("stop")),
        json!({"id": "m1", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}),
    ]) + "data: [DONE]\n\n";
    assert_paths_agree("mistral-conversations", "text+parts", &body);
}

#[test]
fn mistral_deltas_that_differ_only_in_their_text() {
    let text = |t: &str| json!({"id": "m1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]});
    let attack = "data: {\"id\":\"m1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\",\"content\":\"b\"},\"finish_reason\":null}]}\n\n";
    let body = data(&[text("Bon"), text("jour \"x\"\n"), text("")])
        + attack
        + &data(&[
            text("c"),
            json!({"id": "m1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": ["d"]}, "finish_reason": null}]}),
            text("e"),
            json!({"id": "m1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "f"}, "finish_reason": "stop"}]}),
            text("g"),
        ])
        + "data:   "
        + &text("h").to_string()
        + "  \n\ndata: [DONE]\n\n";
    assert_paths_agree("mistral-conversations", "framed deltas", &body);
}

#[test]
fn bedrock_frames() {
    use pi_ai::providers::bedrock::BedrockStream;
    use pi_ai::providers::bedrock::eventstream::{Decoder, encode_event};
    let frames: Vec<(&str, Value)> = vec![
        ("messageStart", json!({"role": "assistant"})),
        ("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "hm"}}})),
        ("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}})),
        ("contentBlockStop", json!({"contentBlockIndex": 0})),
        ("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": "Hello"}})),
        ("contentBlockDelta", json!({"delta": {"text": " world"}})),
        ("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": null, "toolUse": null}})),
        ("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": 3}})),
        ("contentBlockStop", json!({"contentBlockIndex": 1})),
        ("contentBlockStart", json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}})),
        ("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"a\":"}}})),
        ("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "1}"}}})),
        ("contentBlockStop", json!({"contentBlockIndex": 2})),
        ("messageStop", json!({"stopReason": "tool_use"})),
        ("metadata", json!({"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}})),
    ];
    let bytes: Vec<u8> = frames.iter().flat_map(|(kind, p)| encode_event(kind, p.to_string().as_bytes())).collect();
    let run = |hooked: bool, chunk: usize| {
        let seen = Arc::new(AtomicUsize::new(0));
        let mut options = StreamOptions::default();
        if hooked {
            let count = seen.clone();
            options.on_provider_stream_event = Some(Arc::new(move |_: &Value, _: &Model| {
                count.fetch_add(1, Ordering::SeqCst);
            }));
        }
        let ctx = StreamContext { model: model("bedrock-converse-stream"), options };
        let mut out = ProviderOutput::new(&ctx.model);
        out.start();
        let mut handler = BedrockStream::new();
        let mut decoder = Decoder::default();
        for piece in bytes.chunks(chunk) {
            decoder.push(piece);
            while let Some(frame) = decoder.next_message().expect("frame") {
                handler.on_frame(&frame, &ctx, &mut out).expect("event");
            }
        }
        let mut message = out.message().clone();
        message.timestamp = 0;
        (untimed(out.take_events()), message, seen.load(Ordering::SeqCst))
    };
    let (values, value_message, raw) = run(true, bytes.len());
    assert_eq!(raw, frames.len());
    for chunk in [bytes.len(), 1, 13] {
        let (typed, typed_message, none) = run(false, chunk);
        assert_eq!(none, 0);
        assert_eq!(typed, values, "chunks of {chunk}");
        assert_eq!(typed_message, value_message, "chunks of {chunk}");
    }
    assert_eq!(value_message.text(), "Hello world");
}

#[test]
fn pi_messages_deltas() {
    use pi_ai::providers::pi_messages::{Step, on_event, on_typed_delta, parse_data};
    let events = [
        json!({"type": "start"}),
        json!({"type": "text_start", "contentIndex": 0}),
        json!({"type": "text_delta", "contentIndex": 0, "delta": "Hi"}),
        json!({"type": "text_delta", "contentIndex": 0, "delta": null}),
        json!({"type": "thinking_start", "contentIndex": 1}),
        json!({"type": "thinking_delta", "contentIndex": 1, "delta": "hm"}),
        json!({"type": "toolcall_start", "contentIndex": 2, "id": "t", "toolName": "f"}),
        json!({"type": "toolcall_delta", "contentIndex": 2, "delta": "{}"}),
        // Bad indices: the Value path reports them.
        json!({"type": "text_delta", "contentIndex": 7, "delta": "x"}),
    ];
    let run = |typed: bool| {
        let mut out = ProviderOutput::new(&model("pi-messages"));
        let mut outcome = Ok(Step::Continue);
        for event in &events {
            let data = event.to_string();
            if typed && on_typed_delta(&data, &mut out) {
                continue;
            }
            let value = parse_data(&data).expect("JSON").expect("event");
            outcome = on_event(&value, &mut out);
            if outcome.is_err() {
                break;
            }
        }
        (untimed(out.take_events()), outcome)
    };
    let (typed, typed_outcome) = run(true);
    let (values, value_outcome) = run(false);
    assert_eq!(typed, values);
    assert_eq!(typed_outcome, value_outcome);
    assert!(value_outcome.is_err(), "the bad index is an error");
}

/// A delta event is small: the variants carrying a whole message or tool call hold it boxed, so
/// every layer moves a few words per delta, not a message (issue 20).
#[test]
fn a_delta_event_is_a_few_words() {
    let event = std::mem::size_of::<pi_ai::AssistantMessageEvent>();
    let message = std::mem::size_of::<pi_ai::AssistantMessage>();
    // The largest inline payload left is a thinking block's three strings and flag.
    assert!(event <= 96, "AssistantMessageEvent is {event} bytes");
    assert!(event * 3 <= message, "AssistantMessageEvent ({event} bytes) vs AssistantMessage ({message} bytes)");
}
