//! `anthropic-messages` over real HTTP: event sequences, signatures, usage, stop reasons.

mod support;

use pi_ai::options::StreamOptions;
use pi_ai::providers::anthropic::AnthropicMessages;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, AssistantBlock, Context, Message, StopReason, UserMessage};
use serde_json::{Value, json};
use support::{MockServer, Reply, event, run};

fn context() -> pi_ai::transcript::TranscriptContext {
    normalize_context(Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::User(UserMessage::new("Weather in Paris?").into())],
        tools: None,
    })
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("k".into()), ..Default::default() }
}

fn ev(name: &str, mut body: Value) -> String {
    body["type"] = json!(name);
    event(name, &body)
}

fn message_start() -> String {
    ev(
        "message_start",
        json!({"message": {"id": "msg_1", "model": "claude-test", "usage": {"input_tokens": 30, "output_tokens": 1, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 7}}}),
    )
}

fn tail(stop: &str) -> String {
    [
        ev("message_delta", json!({"delta": {"stop_reason": stop}, "usage": {"output_tokens": 42}})),
        ev("message_stop", json!({})),
    ]
    .concat()
}

#[tokio::test]
async fn thinking_text_and_tool_call_sequence() {
    let body = [
        message_start(),
        "event: ping\ndata: {\"type\": \"ping\"}\n\n".to_owned(),
        ev("content_block_start", json!({"index": 0, "content_block": {"type": "thinking", "thinking": ""}})),
        ev("content_block_delta", json!({"index": 0, "delta": {"type": "thinking_delta", "thinking": "Hmm."}})),
        ev("content_block_delta", json!({"index": 0, "delta": {"type": "signature_delta", "signature": "sig-"}})),
        ev("content_block_delta", json!({"index": 0, "delta": {"type": "signature_delta", "signature": "1"}})),
        ev("content_block_stop", json!({"index": 0})),
        ev("content_block_start", json!({"index": 1, "content_block": {"type": "text", "text": ""}})),
        ev("content_block_delta", json!({"index": 1, "delta": {"type": "text_delta", "text": "Checking."}})),
        ev("content_block_stop", json!({"index": 1})),
        ev("content_block_start", json!({"index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}})),
        ev("content_block_delta", json!({"index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}})),
        ev("content_block_delta", json!({"index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Par"}})),
        ev("content_block_delta", json!({"index": 2, "delta": {"type": "input_json_delta", "partial_json": "is\"}"}})),
        ev("content_block_stop", json!({"index": 2})),
        tail("tool_use"),
    ]
    .concat();
    for (size, crlf) in [(usize::MAX, false), (5, true), (1, false)] {
        let body = if crlf { body.replace('\n', "\r\n") } else { body.clone() };
        let server = MockServer::start([Reply::sse(body).chunked(size)]).await;
        let model = support::fixtures::model("anthropic-messages", &server.url());
        let (events, message) = run(AnthropicMessages.stream(&model, context(), options())).await;
        assert_eq!(
            events,
            [
                "start",
                "thinking_start@0",
                "thinking_delta@0 \"Hmm.\"",
                "thinking_end@0",
                "text_start@1",
                "text_delta@1 \"Checking.\"",
                "text_end@1",
                "toolcall_start@2",
                "toolcall_delta@2 \"\"",
                "toolcall_delta@2 \"{\\\"city\\\": \\\"Par\"",
                "toolcall_delta@2 \"is\\\"}\"",
                "toolcall_end@2",
                "done:toolUse",
            ],
            "chunk size {size}"
        );
        let AssistantBlock::Thinking(t) = &message.content[0] else { panic!("thinking") };
        assert_eq!(t.thinking_signature.as_deref(), Some("sig-1"));
        let call = message.tool_calls().next().unwrap();
        assert_eq!(Value::Object(call.arguments.clone()), json!({"city": "Paris"}));
        assert_eq!(message.response_id.as_deref(), Some("msg_1"));
        assert_eq!(message.raw_stop_reason.as_deref(), Some("tool_use"));
        let u = &message.usage;
        assert_eq!((u.input, u.output, u.cache_read, u.cache_write, u.total_tokens), (30, 42, 5, 7, 84));
        assert_eq!(u.cache_write_1h, Some(0));
        assert!((u.cost.total - (30.0 + 42.0 * 2.0 + 5.0 * 0.5 + 7.0 * 1.25) / 1e6).abs() < 1e-12);
    }
}

/// llama.cpp starts block 1 before block 0 stops when the model makes two calls.
#[tokio::test]
async fn interleaved_blocks_are_keyed_by_index() {
    let body = [
        message_start(),
        ev(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "tool_use", "id": "a", "name": "x", "input": {}}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"n\":1}"}}),
        ),
        ev(
            "content_block_start",
            json!({"index": 1, "content_block": {"type": "tool_use", "id": "b", "name": "y", "input": {}}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"n\":2}"}}),
        ),
        ev("content_block_stop", json!({"index": 0})),
        ev("content_block_stop", json!({"index": 1})),
        tail("tool_use"),
    ]
    .concat();
    let server = MockServer::start([Reply::sse(body)]).await;
    let model = support::fixtures::model("anthropic-messages", &server.url());
    let (events, message) = run(AnthropicMessages.stream(&model, context(), options())).await;
    assert_eq!(
        events,
        [
            "start",
            "toolcall_start@0",
            "toolcall_delta@0 \"{\\\"n\\\":1}\"",
            "toolcall_start@1",
            "toolcall_delta@1 \"{\\\"n\\\":2}\"",
            "toolcall_end@0",
            "toolcall_end@1",
            "done:toolUse"
        ]
    );
    let args: Vec<Value> = message.tool_calls().map(|c| Value::Object(c.arguments.clone())).collect();
    assert_eq!(args, [json!({"n": 1}), json!({"n": 2})]);
}

#[tokio::test]
async fn redacted_thinking_keeps_its_payload() {
    let body = [
        message_start(),
        ev(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "redacted_thinking", "data": "opaque=="}}),
        ),
        ev("content_block_stop", json!({"index": 0})),
        ev("content_block_start", json!({"index": 1, "content_block": {"type": "text", "text": ""}})),
        ev("content_block_delta", json!({"index": 1, "delta": {"type": "text_delta", "text": "ok"}})),
        ev("content_block_stop", json!({"index": 1})),
        tail("end_turn"),
    ]
    .concat();
    let server = MockServer::start([Reply::sse(body)]).await;
    let model = support::fixtures::model("anthropic-messages", &server.url());
    let message = AnthropicMessages.stream(&model, context(), options()).result().await;
    assert_eq!(message.stop_reason, StopReason::Stop);
    let AssistantBlock::Thinking(t) = &message.content[0] else { panic!("thinking") };
    assert_eq!(
        (t.thinking.as_str(), t.thinking_signature.as_deref(), t.redacted),
        ("[Reasoning redacted]", Some("opaque=="), Some(true))
    );
}

#[tokio::test]
async fn stop_reasons_and_stream_errors() {
    let cases = [
        ([message_start(), tail("max_tokens")].concat(), Ok(StopReason::Length)),
        ([message_start(), tail("pause_turn")].concat(), Ok(StopReason::Stop)),
        ([message_start(), tail("refusal")].concat(), Err("The model refused to complete the request")),
        ([message_start(), tail("sensitive")].concat(), Err("Provider stopped with: sensitive")),
        ([message_start(), tail("weird")].concat(), Err("Unhandled stop reason: weird")),
        (message_start(), Err("Anthropic stream ended before message_stop")),
        (ev("message_stop", json!({})), Err("Anthropic stream ended without a stop reason")),
        (
            [message_start(), "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".to_owned()].concat(),
            Err("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"),
        ),
    ];
    for (body, expected) in cases {
        let server = MockServer::start([Reply::sse(body)]).await;
        let model = support::fixtures::model("anthropic-messages", &server.url());
        let message = AnthropicMessages.stream(&model, context(), options()).result().await;
        match expected {
            Ok(stop) => assert_eq!(message.stop_reason, stop),
            Err(text) => {
                assert_eq!(message.stop_reason, StopReason::Error);
                assert_eq!(message.error_message.as_deref(), Some(text));
            }
        }
    }
}

#[tokio::test]
async fn a_subscription_token_gets_tool_names_back_in_the_callers_casing() {
    let body = [
        message_start(),
        ev(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}}),
        ),
        ev(
            "content_block_delta",
            json!({"index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a\"}"}}),
        ),
        ev("content_block_stop", json!({"index": 0})),
        tail("tool_use"),
    ]
    .concat();
    let tools = vec![pi_ai::Tool::new("read", "Read a file", json!({"type": "object"}))];
    let ctx = || {
        normalize_context(Context {
            system_prompt: Some("Be brief.".into()),
            messages: vec![Message::User(UserMessage::new("Read a").into())],
            tools: Some(tools.clone()),
        })
    };
    for (key, expected) in [("sk-ant-oat01-x", "read"), ("sk-ant-api03-x", "Read")] {
        let server = MockServer::start([Reply::sse(body.clone())]).await;
        let model = support::fixtures::model("anthropic-messages", &server.url());
        let options = StreamOptions { api_key: Some(key.into()), ..Default::default() };
        let (_, message) = run(AnthropicMessages.stream(&model, ctx(), options)).await;
        let call = message.tool_calls().next().expect("a tool call");
        assert_eq!(call.name, expected, "{key}");
        let request = &server.requests()[0];
        let oauth = key.contains("oat");
        assert_eq!(request.header("x-api-key").is_some(), !oauth, "{key}");
        assert_eq!(request.body["tools"][0]["name"], if oauth { "Read" } else { "read" });
    }
}

/// The payload hook is async (pi's `onPayload` may return a promise): on a single-threaded
/// runtime its future waits for another task of the same runtime, and the body it returns is
/// what the server receives, with the Anthropic SDK's `stream: true` forced back on. A hook that
/// blocked the worker (the old synchronous shape) could never see that task run.
#[tokio::test(flavor = "current_thread")]
async fn an_async_payload_hook_replaces_the_body_on_the_requests_task() {
    let body = [message_start(), tail("end_turn")].concat();
    let server = MockServer::start([Reply::sse(body)]).await;
    let model = support::fixtures::model("anthropic-messages", &server.url());
    let hook: pi_ai::options::PayloadHook = std::sync::Arc::new(|payload: &Value, _: &pi_ai::Model| {
        let mut replaced = payload.clone();
        Box::pin(async move {
            let (tx, rx) = tokio::sync::oneshot::channel();
            tokio::spawn(async move { tx.send(0.5).ok() });
            replaced["temperature"] = json!(rx.await.ok());
            replaced["stream"] = json!(false);
            Some(replaced)
        })
    });
    let options = StreamOptions { on_payload: Some(hook), ..options() };
    let (_, message) = run(AnthropicMessages.stream(&model, context(), options)).await;
    assert_eq!(message.stop_reason, StopReason::Stop, "{:?}", message.error_message);
    let sent = server.body();
    assert_eq!(sent["temperature"], json!(0.5));
    assert_eq!(sent["stream"], json!(true));
}

/// A request cancelled while its payload hook is still pending ends as aborted at once.
#[tokio::test(flavor = "current_thread")]
async fn cancelling_during_a_pending_payload_hook_aborts_the_request() {
    let server = MockServer::start([]).await;
    let model = support::fixtures::model("anthropic-messages", &server.url());
    let cancel = tokio_util::sync::CancellationToken::new();
    let fire = cancel.clone();
    let hook: pi_ai::options::PayloadHook = std::sync::Arc::new(move |_: &Value, _: &pi_ai::Model| {
        let fire = fire.clone();
        Box::pin(async move {
            fire.cancel();
            futures::future::pending::<()>().await;
            None
        })
    });
    let options = StreamOptions { on_payload: Some(hook), cancel: Some(cancel), ..options() };
    let (_, message) = run(AnthropicMessages.stream(&model, context(), options)).await;
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert!(server.requests().is_empty());
}
