//! The fault matrix, per HTTP API: each case asserts the event sequence's shape and the final
//! message (stop reason, error text, kept content). Where the outcome is deterministic it must
//! equal what real pi 1.6.0 produced for the same bytes (`tests/fixtures/http/faults.json`,
//! recorded by `scripts/fixtures/http_faults.mjs`).

mod support;

use std::time::Duration;

use pi_ai::options::StreamOptions;
use pi_ai::providers::anthropic::AnthropicMessages;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{ApiProvider, AssistantMessage, Context, Message, StopReason, UserMessage};
use serde_json::json;
use support::{MockServer, Part, Reply, data, event, run};
use tokio_util::sync::CancellationToken;

struct Api {
    name: &'static str,
    provider: Box<dyn ApiProvider>,
    /// Start of an answer: the response opened and the text "Hel" streamed.
    prefix: String,
    /// The rest of a successful answer ("lo", then the end).
    rest: String,
    /// A broken chunk in this API's framing.
    invalid: String,
    /// The 401 body and pi's text for it.
    unauthorized: (&'static str, &'static str),
    /// pi's text for a 500 with body `{"error":{"message":"Internal"}}`.
    internal: &'static str,
    /// pi's text when the body ends before the answer did.
    truncated: &'static str,
}

fn apis() -> Vec<Api> {
    let anthropic_ev = |name: &str, mut body: serde_json::Value| {
        body["type"] = json!(name);
        event(name, &body)
    };
    let responses_ev = |name: &str, mut body: serde_json::Value| {
        body["type"] = json!(name);
        event(name, &body)
    };
    vec![
        Api {
            name: "openai-completions",
            provider: Box::new(OpenAiCompletions),
            prefix: data(&json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": null}]})),
            rest: [
                data(&json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]})),
                "data: [DONE]\n\n".to_owned(),
            ]
            .concat(),
            invalid: "data: {\"id\": \"c1\", \"choices\": [\n\n".to_owned(),
            unauthorized: (
                r#"{"error":{"message":"Invalid API key","type":"authentication_error"}}"#,
                r#"401: {"message":"Invalid API key","type":"authentication_error"}"#,
            ),
            internal: r#"500: {"message":"Internal"}"#,
            truncated: "Stream ended without finish_reason",
        },
        Api {
            name: "anthropic-messages",
            provider: Box::new(AnthropicMessages),
            prefix: [
                anthropic_ev("message_start", json!({"message": {"id": "m1", "model": "claude-test", "usage": {"input_tokens": 3, "output_tokens": 1}}})),
                anthropic_ev("content_block_start", json!({"index": 0, "content_block": {"type": "text", "text": ""}})),
                anthropic_ev("content_block_delta", json!({"index": 0, "delta": {"type": "text_delta", "text": "Hel"}})),
            ]
            .concat(),
            rest: [
                anthropic_ev("content_block_delta", json!({"index": 0, "delta": {"type": "text_delta", "text": "lo"}})),
                anthropic_ev("content_block_stop", json!({"index": 0})),
                anthropic_ev("message_delta", json!({"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}})),
                anthropic_ev("message_stop", json!({})),
            ]
            .concat(),
            invalid: "event: content_block_delta\ndata: {\"index\": 0, \"delta\": \n\n".to_owned(),
            unauthorized: (
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
                r#"401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
            ),
            internal: r#"500 {"error":{"message":"Internal"}}"#,
            truncated: "Anthropic stream ended before message_stop",
        },
        Api {
            name: "openai-responses",
            provider: Box::new(OpenAiResponses),
            prefix: [
                responses_ev("response.created", json!({"response": {"id": "r1"}})),
                responses_ev("response.output_item.added", json!({"output_index": 0, "item": {"type": "message", "id": "msg_1", "content": []}})),
                responses_ev("response.output_text.delta", json!({"output_index": 0, "delta": "Hel"})),
            ]
            .concat(),
            rest: [
                responses_ev("response.output_text.delta", json!({"output_index": 0, "delta": "lo"})),
                responses_ev("response.output_item.done", json!({"output_index": 0, "item": {"type": "message", "id": "msg_1", "content": [{"type": "output_text", "text": "Hello"}]}})),
                responses_ev("response.completed", json!({"response": {"id": "r1", "status": "completed", "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}})),
            ]
            .concat(),
            invalid: "event: response.output_text.delta\ndata: {\"output_index\": 0,\n\n".to_owned(),
            unauthorized: (
                r#"{"error":{"message":"Invalid API key","type":"invalid_request_error"}}"#,
                r#"OpenAI API error (401): {"message":"Invalid API key","type":"invalid_request_error"}"#,
            ),
            internal: r#"OpenAI API error (500): {"message":"Internal"}"#,
            truncated: "OpenAI Responses stream ended before a terminal response event",
        },
    ]
}

fn context() -> TranscriptContext {
    normalize_context(Context { messages: vec![Message::User(UserMessage::new("hi").into())], ..Default::default() })
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("k".into()), ..Default::default() }
}

/// What pi 1.6.0 did for `case` on `api`: `{events, stopReason, errorMessage, text}`.
fn pi(api: &str, case: &str) -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/http/faults.json");
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("faults.json")).expect("JSON");
    all[api][case].clone()
}

/// Asserts our outcome equals pi's: event kinds, stop reason, error text, kept text.
fn assert_like_pi(api: &str, case: &str, events: &[String], message: &AssistantMessage) {
    let expected = pi(api, case);
    let kinds: Vec<&str> = events.iter().map(|e| e.split(['@', ':', ' ']).next().unwrap_or_default()).collect();
    let pi_kinds: Vec<&str> = expected["events"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(kinds, pi_kinds, "{api}/{case}: events");
    assert_eq!(message.stop_reason.as_str(), expected["stopReason"].as_str().unwrap(), "{api}/{case}: stopReason");
    assert_eq!(message.error_message.as_deref(), expected["errorMessage"].as_str(), "{api}/{case}: errorMessage");
    assert_eq!(message.text(), expected["text"].as_str().unwrap(), "{api}/{case}: text");
}

async fn go(api: &Api, replies: Vec<Reply>, options: StreamOptions) -> (Vec<String>, AssistantMessage, MockServer) {
    let server = MockServer::start(replies).await;
    let model = support::fixtures::model(api.name, &server.url());
    let (events, message) = run(api.provider.stream(&model, context(), options)).await;
    (events, message, server)
}

#[tokio::test]
async fn status_401_is_an_error_without_start() {
    for api in apis() {
        let (body, text) = api.unauthorized;
        let (events, message, _s) = go(&api, vec![Reply::error(401, body)], options()).await;
        assert_eq!(events, ["error:error"], "{}", api.name);
        assert_eq!(message.error_message.as_deref(), Some(text), "{}", api.name);
        assert!(message.content.is_empty());
        if api.name != "openai-responses" {
            assert_like_pi(api.name, "status_401", &events, &message);
        }
    }
}

#[tokio::test]
async fn status_500_is_not_retried_by_default() {
    for api in apis() {
        let replies = vec![
            Reply::error(500, r#"{"error":{"message":"Internal"}}"#),
            Reply::sse([api.prefix.clone(), api.rest.clone()].concat()),
        ];
        let (events, message, server) = go(&api, replies, options()).await;
        assert_eq!(events, ["error:error"], "{}", api.name);
        assert_eq!(message.error_message.as_deref(), Some(api.internal), "{}", api.name);
        assert_eq!(server.requests().len(), 1);
        assert_like_pi(api.name, "status_500", &events, &message);
    }
}

#[tokio::test]
async fn status_429_then_success_with_retries() {
    for api in apis() {
        let replies = vec![
            Reply::error(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after-ms", "20"),
            Reply::sse([api.prefix.clone(), api.rest.clone()].concat()),
        ];
        let opts = StreamOptions { max_retries: 2, ..options() };
        let (events, message, server) = go(&api, replies, opts).await;
        assert_eq!(events.first().map(String::as_str), Some("start"), "{}", api.name);
        assert_eq!(message.stop_reason, StopReason::Stop, "{}: {:?}", api.name, message.error_message);
        assert_eq!(message.text(), "Hello");
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn retry_delay_over_the_cap_fails_at_once() {
    for api in apis() {
        let replies = vec![Reply::error(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "120")];
        let opts = StreamOptions { max_retries: 3, ..options() };
        let (events, message, server) = go(&api, replies, opts).await;
        assert_eq!(events, ["error:error"]);
        let text = message.error_message.unwrap();
        assert!(text.contains("Server requested 120s retry delay (max: 60s)."), "{}: {text}", api.name);
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn invalid_json_chunk_keeps_the_partial() {
    for api in apis() {
        let (events, message, _s) =
            go(&api, vec![Reply::sse([api.prefix.clone(), api.invalid.clone()].concat())], options()).await;
        assert_eq!(events.first().map(String::as_str), Some("start"));
        assert_eq!(events.last().map(String::as_str), Some("error:error"), "{}", api.name);
        assert_eq!(message.text(), "Hel", "{}", api.name);
        assert_like_pi(api.name, "invalid_json", &events, &message);
    }
}

#[tokio::test]
async fn connection_reset_mid_stream() {
    for api in apis() {
        let reply = Reply::sse(api.prefix.clone()).then(Part::Delay(Duration::from_millis(20))).then(Part::Reset);
        let (events, message, _s) = go(&api, vec![reply], options()).await;
        assert_eq!(events.first().map(String::as_str), Some("start"));
        assert_eq!(events.last().map(String::as_str), Some("error:error"), "{}", api.name);
        assert_eq!(message.text(), "Hel");
        // pi (undici): "terminated: other side closed (UND_ERR_SOCKET)"; the cause is the client's.
        let text = message.error_message.unwrap();
        assert!(text.starts_with("terminated: "), "{}: {text}", api.name);
        let pi_kinds = pi(api.name, "reset")["events"].as_array().unwrap().len();
        assert_eq!(events.len(), pi_kinds, "{}: {events:?}", api.name);
    }
}

#[tokio::test]
async fn stream_ending_without_a_finish() {
    for api in apis() {
        let (events, message, _s) = go(&api, vec![Reply::sse(api.prefix.clone())], options()).await;
        assert_eq!(events.last().map(String::as_str), Some("error:error"), "{}", api.name);
        assert_eq!(message.error_message.as_deref(), Some(api.truncated), "{}", api.name);
        assert_eq!(message.text(), "Hel");
        assert_like_pi(api.name, "truncated", &events, &message);
    }
}

#[tokio::test]
async fn cancellation_mid_stream() {
    use futures::StreamExt;
    for api in apis() {
        let server = MockServer::start([Reply::sse(api.prefix.clone()).then(Part::Hang)]).await;
        let model = support::fixtures::model(api.name, &server.url());
        let cancel = CancellationToken::new();
        let opts = StreamOptions { cancel: Some(cancel.clone()), ..options() };
        let mut stream = api.provider.stream(&model, context(), opts);
        let mut kinds = Vec::new();
        while let Some(event) = stream.next().await {
            kinds.push(event.kind().to_owned());
            if event.kind() == "text_delta" {
                cancel.cancel();
            }
        }
        let message = stream.result().await;
        assert_eq!(message.stop_reason, StopReason::Aborted, "{}", api.name);
        assert_eq!(message.text(), "Hel");
        // Each API words a mid-stream abort as its SDK surfaces it (completions: "Request was
        // aborted"; Responses: the missing terminal event; Anthropic: the DOM abort error).
        assert_like_pi(api.name, "abort", &kinds, &message);
    }
}

#[tokio::test]
async fn cancellation_before_the_request() {
    for api in apis() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let (events, message, server) = go(&api, vec![], StreamOptions { cancel: Some(cancel), ..options() }).await;
        assert_eq!(events, ["error:aborted"], "{}", api.name);
        assert!(server.requests().is_empty());
        assert_like_pi(api.name, "pre_abort", &events, &message);
    }
}

#[tokio::test]
async fn cancellation_and_timeout_before_the_headers() {
    for api in apis() {
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            trigger.cancel();
        });
        let (events, message, _s) =
            go(&api, vec![Reply::stall()], StreamOptions { cancel: Some(cancel), ..options() }).await;
        assert_like_pi(api.name, "abort_before_headers", &events, &message);

        let opts = StreamOptions { timeout: Some(Duration::from_millis(100)), ..options() };
        let (events, message, _s) = go(&api, vec![Reply::stall()], opts).await;
        assert_like_pi(api.name, "timeout_before_headers", &events, &message);
    }
}

/// pi has no idle timeout on the body (its timeout ends when the headers arrive); ours keeps
/// the same wording.
#[tokio::test]
async fn idle_timeout() {
    for api in apis() {
        let reply = Reply::sse(api.prefix.clone()).then(Part::Hang);
        let opts = StreamOptions { timeout: Some(Duration::from_millis(150)), ..options() };
        let (events, message, _s) = go(&api, vec![reply], opts).await;
        assert_eq!(events.first().map(String::as_str), Some("start"));
        assert_eq!(events.last().map(String::as_str), Some("error:error"), "{}", api.name);
        assert_eq!(message.error_message.as_deref(), Some("Request timed out."));
        assert_eq!(message.text(), "Hel");
    }
}

#[tokio::test]
async fn connection_refused_names_the_cause() {
    for api in apis() {
        // Port 9 (discard) on 127.0.0.1 is closed here.
        let model = support::fixtures::model(api.name, "http://127.0.0.1:9");
        let (events, message) = run(api.provider.stream(&model, context(), options())).await;
        assert_eq!(events, ["error:error"]);
        let text = message.error_message.unwrap();
        assert!(
            text.starts_with("Connection error.: ") && text.to_lowercase().contains("refused"),
            "{}: {text}",
            api.name
        );
    }
}
