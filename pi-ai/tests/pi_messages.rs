//! `pi-messages` over real HTTP on 127.0.0.1: request bodies against what the real pi 1.6.0 sent
//! for the same contexts (`scripts/fixtures/bedrock_requests.mjs`), replayed event streams and the
//! fault matrix with pi's texts (recorded from the reference against the same bytes).

mod issue16_support;
mod support;

use std::time::Duration;

use pi_ai::options::StreamOptions;
use pi_ai::providers::pi_messages::PiMessages;
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{ApiProvider, Context, Message, StopReason, UserMessage};
use serde_json::{Value, json};
use support::{MockServer, Part, Reply, data, run};

fn hi() -> TranscriptContext {
    normalize_context(Context { messages: vec![Message::User(UserMessage::new("hi").into())], ..Default::default() })
}

fn usage() -> Value {
    json!({"input": 3, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 5,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

fn prefix() -> String {
    [
        data(&json!({"type": "start"})),
        data(&json!({"type": "text_start", "contentIndex": 0})),
        data(&json!({"type": "text_delta", "contentIndex": 0, "delta": "Hel"})),
    ]
    .concat()
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("k".into()), ..Default::default() }
}

#[tokio::test]
async fn bodies_match_pi() {
    for name in issue16_support::scenario_names() {
        let ok = [data(&json!({"type": "start"})), data(&json!({"type": "done", "reason": "stop", "usage": usage()}))]
            .concat();
        let server = MockServer::start([Reply::sse(ok)]).await;
        let (model, context, options) = issue16_support::scenario("pi-messages", &name, &server.url());
        let result = PiMessages.stream(&model, context, options).result().await;
        assert_eq!(result.error_message, None, "{name}");
        let ours = &server.requests()[0];
        let pi = issue16_support::captured("pi-messages", &name);
        assert_eq!(ours.path, pi["path"].as_str().unwrap(), "{name}: path");
        // The transcript is echoed: same messages (our canonical key order); the rest byte for byte.
        assert_eq!(ours.body["context"], pi["body"]["context"], "{name}: context");
        let strip = |v: &Value| {
            let mut v = v.clone();
            v["context"] = Value::Null;
            serde_json::to_string(&v).unwrap()
        };
        assert_eq!(strip(&ours.body), strip(&pi["body"]), "{name}: body");
        for header in ["authorization", "accept", "content-type"] {
            assert_eq!(ours.header(header), pi["headers"][header].as_str(), "{name}: {header}");
        }
    }
}

#[tokio::test]
async fn a_full_answer_as_pi_rebuilds_it() {
    let body = [
        prefix(),
        data(&json!({"type": "text_delta", "contentIndex": 0, "delta": "lo"})),
        data(&json!({"type": "text_end", "contentIndex": 0, "content": "Hello"})),
        data(&json!({"type": "toolcall_start", "contentIndex": 1, "id": "t1", "toolName": "read"})),
        data(&json!({"type": "toolcall_delta", "contentIndex": 1, "delta": "{\"path\":\"a"})),
        data(&json!({"type": "toolcall_end", "contentIndex": 1, "toolCall": {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a"}}})),
        data(&json!({"type": "done", "reason": "toolUse", "usage": usage(), "responseId": "r1", "responseModel": "m2", "rewrite": {"from": "a", "to": "b"}})),
    ]
    .concat();
    let server = MockServer::start([Reply::sse(body).chunked(5)]).await;
    let model = issue16_support::model("pi-messages", &server.url());
    let (events, message) = run(PiMessages.stream(&model, hi(), options())).await;
    let kinds: Vec<&str> = events.iter().map(|e| e.split(['@', ' ', ':']).next().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "start",
            "text_start",
            "text_delta",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    let mut json = serde_json::to_value(&message).unwrap();
    json.as_object_mut().unwrap().remove("timestamp");
    json.as_object_mut().unwrap().remove("durationMs");
    json["diagnostics"][0].as_object_mut().unwrap().remove("timestamp");
    assert_eq!(
        json,
        json!({"role": "assistant", "content": [{"type": "text", "text": "Hello"}, {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a"}}],
            "api": "pi-messages", "provider": "radius", "model": "pi-test", "usage": usage(), "stopReason": "toolUse", "responseId": "r1",
            "responseModel": "m2", "diagnostics": [{"type": "pi_messages_rewrite", "details": {"from": "a", "to": "b"}}]})
    );
}

/// `(reply, event kinds, error text, kept text)` as pi 1.6.0 produced them.
#[tokio::test]
async fn fault_matrix_matches_pi() {
    let cases: Vec<(&str, Reply, Vec<&str>, &str, &str)> = vec![
        (
            "401",
            Reply::error(401, r#"{"error":{"message":"Invalid API key","code":"invalid_api_key"}}"#),
            vec!["error"],
            "401 Unauthorized: Invalid API key (invalid_api_key)",
            "",
        ),
        ("500", Reply::error(500, "oops"), vec!["error"], "500 Internal Server Error: oops", ""),
        (
            "invalid json",
            Reply::sse(prefix() + "data: {\"type\": \n\n"),
            vec!["start", "text_start", "text_delta", "error"],
            "Unexpected end of JSON input",
            "",
        ),
        (
            "truncated",
            Reply::sse(prefix()),
            vec!["start", "text_start", "text_delta", "error"],
            "radius stream ended without a terminal event",
            "",
        ),
        (
            "bad index",
            Reply::sse(prefix() + &data(&json!({"type": "text_delta", "contentIndex": 5, "delta": "x"}))),
            vec!["start", "text_start", "text_delta", "error"],
            "Invalid contentIndex 5 in pi-messages text_delta event",
            "",
        ),
        (
            "error event",
            Reply::sse(
                prefix()
                    + &data(
                        &json!({"type": "error", "reason": "error", "usage": usage(), "errorMessage": "upstream failed", "responseId": "r1"}),
                    ),
            ),
            vec!["start", "text_start", "text_delta", "error"],
            "upstream failed",
            "Hel",
        ),
        (
            "reset",
            Reply::sse(prefix()).then(Part::Delay(Duration::from_millis(20))).then(Part::Reset),
            vec!["start", "text_start", "text_delta", "error"],
            "",
            "",
        ),
    ];
    for (name, reply, kinds, text, kept) in cases {
        let server = MockServer::start([reply]).await;
        let model = issue16_support::model("pi-messages", &server.url());
        let (events, message) = run(PiMessages.stream(&model, hi(), options())).await;
        let ours: Vec<&str> = events.iter().map(|e| e.split(['@', ' ', ':']).next().unwrap()).collect();
        assert_eq!(ours, kinds, "{name}");
        assert_eq!(message.stop_reason, StopReason::Error, "{name}");
        if name == "reset" {
            assert!(message.error_message.as_deref().unwrap().starts_with("terminated"), "{name}");
        } else {
            assert_eq!(message.error_message.as_deref(), Some(text), "{name}");
        }
        assert_eq!(message.text(), kept, "{name}");
        assert_eq!(server.requests().len(), 1, "{name}: no retries");
    }
    // No key: refused before any request.
    let server = MockServer::start([]).await;
    let model = issue16_support::model("pi-messages", &server.url());
    let (events, message) = run(PiMessages.stream(&model, hi(), StreamOptions::default())).await;
    assert_eq!(events, ["error:error"]);
    assert_eq!(message.error_message.as_deref(), Some("No API key provided for provider \"radius\""));
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn cancellation_mid_stream() {
    use futures::StreamExt;
    let server = MockServer::start([Reply::sse(prefix()).then(Part::Hang)]).await;
    let model = issue16_support::model("pi-messages", &server.url());
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut stream = PiMessages.stream(&model, hi(), StreamOptions { cancel: Some(cancel.clone()), ..options() });
    let mut kinds = Vec::new();
    while let Some(event) = stream.next().await {
        kinds.push(event.kind().to_owned());
        if event.kind() == "text_delta" {
            cancel.cancel();
        }
    }
    let message = stream.result().await;
    assert_eq!(kinds, ["start", "text_start", "text_delta", "error"]);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some("This operation was aborted"));
}

/// The rest of the fault matrix, with pi 1.6.0's outcomes (recorded against the same replies):
/// pi-messages sends once (no retry on 429, `retry-after` or not), and a cancellation before the
/// request or before the answer's headers ends as aborted without `start`.
#[tokio::test]
async fn rate_limits_and_early_cancellation_match_pi() {
    let cases = [
        (
            Reply::error(429, r#"{"error":{"message":"Slow down","code":"rate_limited"}}"#)
                .header("retry-after", "120"),
            "429 Too Many Requests: Slow down (rate_limited)",
        ),
        (
            Reply::error(429, r#"{"error":{"message":"Slow down"}}"#).header("retry-after", "0"),
            "429 Too Many Requests: Slow down",
        ),
    ];
    for (reply, text) in cases {
        let server = MockServer::start([reply, Reply::sse(prefix())]).await;
        let model = issue16_support::model("pi-messages", &server.url());
        let o = StreamOptions { max_retries: 1, ..options() };
        let (events, message) = run(PiMessages.stream(&model, hi(), o)).await;
        assert_eq!(events, ["error:error"], "{text}");
        assert_eq!(message.error_message.as_deref(), Some(text));
        assert_eq!(server.requests().len(), 1, "{text}");
    }

    let server = MockServer::start([Reply::stall()]).await;
    let model = issue16_support::model("pi-messages", &server.url());
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let (events, message) =
        run(PiMessages.stream(&model, hi(), StreamOptions { cancel: Some(cancel), ..options() })).await;
    assert_eq!(events, ["error:aborted"]);
    assert_eq!(message.error_message.as_deref(), Some("This operation was aborted"));
    assert!(server.requests().is_empty());

    let server = std::sync::Arc::new(MockServer::start([Reply::stall()]).await);
    let model = issue16_support::model("pi-messages", &server.url());
    let cancel = tokio_util::sync::CancellationToken::new();
    let stream = PiMessages.stream(&model, hi(), StreamOptions { cancel: Some(cancel.clone()), ..options() });
    let watcher = server.clone();
    tokio::spawn(async move {
        while watcher.requests().is_empty() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        cancel.cancel();
    });
    let (events, message) = run(stream).await;
    assert_eq!(events, ["error:aborted"]);
    assert_eq!(message.error_message.as_deref(), Some("This operation was aborted"));
}
