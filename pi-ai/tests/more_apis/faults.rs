//! The fault matrix of the issue-16 APIs against what pi 1.6.0 did for the same bytes
//! (`tests/fixtures/http/apis/faults.json`).

use pi_ai::options::StreamOptions;
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{AssistantMessage, Context, Message, UserMessage};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::common::{APIS, key, model, provider};
use super::support::{MockServer, Part, Reply, data, event, run};

fn responses_prefix() -> String {
    let ev = |name: &str, mut body: Value| {
        body["type"] = json!(name);
        event(name, &body)
    };
    [
        ev("response.created", json!({"response": {"id": "r1"}})),
        ev(
            "response.output_item.added",
            json!({"output_index": 0, "item": {"type": "message", "id": "msg_1", "content": []}}),
        ),
        ev("response.output_text.delta", json!({"output_index": 0, "delta": "Hel"})),
    ]
    .concat()
}

/// The start of an answer that streamed "Hel".
fn prefix(api: &str) -> String {
    match api {
        "google-generative-ai" | "google-vertex" => {
            let chunk =
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}], "responseId": "g1"});
            format!("data: {chunk}\r\n\r\n")
        }
        "mistral-conversations" => {
            data(&json!({"id": "m1", "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": null}]}))
        }
        _ => responses_prefix(),
    }
}

fn invalid(api: &str) -> &'static str {
    match api {
        "google-generative-ai" | "google-vertex" => "data: {\"candidates\": [\r\n\r\n",
        "mistral-conversations" => "data: {\"id\": \"m1\", \"choices\": [\n\n",
        _ => "event: response.output_text.delta\ndata: {\"output_index\": 0,\n\n",
    }
}

fn context() -> TranscriptContext {
    normalize_context(Context { messages: vec![Message::User(UserMessage::new("hi").into())], ..Default::default() })
}

fn pi(api: &str, case: &str) -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/http/apis/faults.json");
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("faults.json")).expect("JSON");
    all[api][case].clone()
}

fn assert_like_pi(api: &str, case: &str, events: &[String], message: &AssistantMessage, requests: usize) {
    let expected = pi(api, case);
    let kinds: Vec<&str> = events.iter().map(|e| e.split(['@', ':', ' ']).next().unwrap_or_default()).collect();
    let pi_kinds: Vec<&str> = expected["events"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert_eq!(kinds, pi_kinds, "{api}/{case}: events");
    assert_eq!(message.stop_reason.as_str(), expected["stopReason"].as_str().unwrap_or_default(), "{api}/{case}");
    let text = message.error_message.clone().unwrap_or_default();
    let pi_text = expected["errorMessage"].as_str().unwrap_or_default();
    if case == "reset" {
        // The cause after "terminated" names the HTTP stack's error (undici's vs hyper's).
        assert!(text.starts_with(pi_text.split(':').next().unwrap_or_default()), "{api}/{case}: {text}");
    } else if case == "invalid_json" && api == "openai-codex-responses" {
        // The detail is V8's JSON.parse message.
        assert!(text.starts_with("Invalid Codex SSE JSON: "), "{api}/{case}: {text}");
    } else {
        assert_eq!(text, pi_text, "{api}/{case}: errorMessage");
    }
    assert_eq!(message.text(), expected["text"].as_str().unwrap_or_default(), "{api}/{case}: text");
    assert_eq!(requests as u64, expected["requests"].as_u64().unwrap_or_default(), "{api}/{case}: requests");
}

async fn case(api: &str, name: &str, reply: Reply, options: impl FnOnce(&mut StreamOptions)) {
    let server = MockServer::start([reply.clone(), reply]).await;
    let mut o = StreamOptions { api_key: Some(key(api)), ..Default::default() };
    options(&mut o);
    let (events, message) = run(provider(api).stream(&model(api, &server.url()), context(), o)).await;
    assert_like_pi(api, name, &events, &message, server.requests().len());
}

fn google_error(code: u16, message: &str, status: &str) -> String {
    json!({"error": {"code": code, "message": message, "status": status}}).to_string()
}

#[tokio::test]
async fn status_errors_like_pi() {
    for api in APIS {
        let unauthorized = google_error(401, "API key not valid. Please pass a valid API key.", "UNAUTHENTICATED");
        case(api, "status_401", Reply::error(401, unauthorized), |_| {}).await;
        case(api, "status_500", Reply::error(500, r#"{"error":{"message":"Internal"}}"#), |_| {}).await;
        let exhausted = Reply::error(429, google_error(429, "Resource exhausted", "RESOURCE_EXHAUSTED"))
            .header("retry-after", "120");
        case(api, "status_429", exhausted, |o| o.max_retries = 1).await;
    }
}

#[tokio::test]
async fn broken_streams_like_pi() {
    for api in APIS {
        case(api, "invalid_json", Reply::sse(format!("{}{}", prefix(api), invalid(api))), |_| {}).await;
        case(api, "truncated", Reply::sse(prefix(api)), |_| {}).await;
        let reset = Reply::sse(prefix(api)).then(Part::Delay(std::time::Duration::from_millis(20))).then(Part::Reset);
        case(api, "reset", reset, |_| {}).await;
    }
}

#[tokio::test]
async fn cancellation_like_pi() {
    for api in APIS {
        let cancel = CancellationToken::new();
        cancel.cancel();
        case(api, "pre_abort", Reply::sse(prefix(api)), |o| o.cancel = Some(cancel)).await;

        let server = MockServer::start([Reply::sse(prefix(api)).then(Part::Hang)]).await;
        let cancel = CancellationToken::new();
        let o = StreamOptions { api_key: Some(key(api)), cancel: Some(cancel.clone()), ..Default::default() };
        let mut stream = provider(api).stream(&model(api, &server.url()), context(), o);
        let mut events = Vec::new();
        while let Some(e) = futures::StreamExt::next(&mut stream).await {
            events.push(e.kind().to_owned());
            if e.kind() == "text_delta" {
                cancel.cancel();
            }
        }
        let message = stream.result().await;
        assert_like_pi(api, "abort", &events, &message, 1);
    }
}

#[tokio::test]
async fn status_429_then_success_with_one_retry() {
    for api in APIS {
        let slow_down =
            Reply::error(429, google_error(429, "Resource exhausted", "RESOURCE_EXHAUSTED")).header("retry-after", "0");
        let server = MockServer::start([slow_down, Reply::sse(super::common::ok_reply(api))]).await;
        let o = StreamOptions { api_key: Some(key(api)), max_retries: 1, ..Default::default() };
        let (_, message) = run(provider(api).stream(&model(api, &server.url()), context(), o)).await;
        if api == "mistral-conversations" {
            // pi sends Mistral requests once.
            assert_eq!(server.requests().len(), 1, "{api}");
            assert!(message.error_message.unwrap_or_default().starts_with("Mistral API error (429): "), "{api}");
        } else {
            assert_eq!(server.requests().len(), 2, "{api}");
            assert_eq!(message.error_message, None, "{api}");
            assert_eq!(message.stop_reason, pi_ai::StopReason::Stop, "{api}");
        }
    }
}

/// Cancelled while the server has the request but has not answered: aborted, no `start` (the
/// cancellation fires once the server recorded the request, not after a delay).
#[tokio::test]
async fn cancellation_before_the_headers_like_pi() {
    for api in APIS {
        let server = std::sync::Arc::new(MockServer::start([Reply::stall()]).await);
        let cancel = CancellationToken::new();
        let o = StreamOptions { api_key: Some(key(api)), cancel: Some(cancel.clone()), ..Default::default() };
        let stream = provider(api).stream(&model(api, &server.url()), context(), o);
        let watcher = server.clone();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            while watcher.requests().is_empty() {
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            trigger.cancel();
        });
        let (events, message) = run(stream).await;
        assert_like_pi(api, "abort_before_headers", &events, &message, server.requests().len());
    }
}
