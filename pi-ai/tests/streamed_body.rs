//! A large request body is written into the connection as it is produced (issue 20): the server
//! receives exactly the bytes `build_request` builds whole, with their `Content-Length` (never
//! chunked), on every retry; a payload hook still sees (and may replace) the whole body.

mod support;

use pi_ai::options::{StreamOptions, sync_payload_hook};
use pi_ai::providers::openai_completions::{OpenAiCompletions, build_request, resolve_compat};
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{ApiProvider, Context, Message, StopReason, UserMessage};
use serde_json::json;
use support::{MockServer, Reply, data, run};

/// About 1.5 MB of user messages: over the 1 MiB a body is built whole up to, under the test
/// server's 2 MB limit.
fn large_context() -> TranscriptContext {
    let line = "fn main() { println!(\"hello, \\\"world\\\"\"); } // ünïcödé\n";
    let mut messages: Vec<Message> =
        (0..300).map(|i| Message::User(UserMessage::new(format!("message {i}\n{}", line.repeat(90))).into())).collect();
    // In the middle, a turn the handoff changes (its plan is made on the first writing).
    messages.splice(150..150, support::fixtures::handed_off_turn());
    normalize_context(Context { system_prompt: Some("Be brief.".into()), messages, tools: None })
}

fn ok_reply() -> Reply {
    Reply::sse(
        [
            data(&json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": null}]})),
            data(&json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
            "data: [DONE]\n\n".to_owned(),
        ]
        .concat(),
    )
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("k".into()), ..Default::default() }
}

/// The bytes `build_request` builds whole for the same request.
fn whole_body(model: &pi_ai::Model, options: &StreamOptions) -> bytes::Bytes {
    let request = build_request(model, large_context(), options, &resolve_compat(model)).expect("request");
    assert!(request.source.is_none(), "build_request builds the body whole");
    let synthetic = b"No result provided";
    assert!(request.body.windows(synthetic.len()).any(|w| w == synthetic), "the handoff changed the transcript");
    request.body
}

#[tokio::test]
async fn a_large_body_arrives_byte_for_byte_with_its_length() {
    let server = MockServer::start([ok_reply()]).await;
    let model = support::fixtures::model("openai-completions", &server.url());
    let whole = whole_body(&model, &options());
    assert!(whole.len() > 1 << 20, "the body is large: {}", whole.len());
    let (_, message) = run(OpenAiCompletions.stream(&model, large_context(), options())).await;
    assert_eq!(message.stop_reason, StopReason::Stop, "{:?}", message.error_message);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].raw.as_bytes(), &whole[..]);
    assert_eq!(requests[0].header("content-length"), Some(whole.len().to_string().as_str()));
    assert_eq!(requests[0].header("transfer-encoding"), None);
}

#[tokio::test]
async fn every_retry_sends_the_same_large_body() {
    let server = MockServer::start([Reply::error(500, "busy"), ok_reply()]).await;
    let model = support::fixtures::model("openai-completions", &server.url());
    let mut opts = options();
    opts.max_retries = 1;
    opts.max_retry_delay = Some(std::time::Duration::ZERO);
    let whole = whole_body(&model, &opts);
    let (_, message) = run(OpenAiCompletions.stream(&model, large_context(), opts)).await;
    assert_eq!(message.stop_reason, StopReason::Stop, "{:?}", message.error_message);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.raw.as_bytes(), &whole[..]);
    }
}

#[tokio::test]
async fn a_payload_hook_sees_the_whole_large_body_and_may_replace_it() {
    let server = MockServer::start([ok_reply(), ok_reply()]).await;
    let model = support::fixtures::model("openai-completions", &server.url());
    let whole = whole_body(&model, &options());
    let expected: serde_json::Value = serde_json::from_slice(&whole).expect("JSON");
    // A hook that keeps the body: it saw every message, and the same bytes are sent.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let keep = seen.clone();
    let mut opts = options();
    opts.on_payload = Some(sync_payload_hook(move |body, _| {
        *keep.lock().expect("lock") = Some(body.clone());
        None
    }));
    let (_, message) = run(OpenAiCompletions.stream(&model, large_context(), opts)).await;
    assert_eq!(message.stop_reason, StopReason::Stop, "{:?}", message.error_message);
    assert_eq!(seen.lock().expect("lock").as_ref(), Some(&expected));
    assert_eq!(server.requests()[0].raw.as_bytes(), &whole[..]);
    // A hook that replaces it: the replacement is sent.
    let mut opts = options();
    opts.on_payload = Some(sync_payload_hook(|body, _| {
        let mut body = body.clone();
        body["messages"] = json!([body["messages"][0].clone()]);
        Some(body)
    }));
    run(OpenAiCompletions.stream(&model, large_context(), opts)).await;
    let sent = &server.requests()[1].body;
    assert_eq!(sent["messages"], json!([expected["messages"][0].clone()]));
    assert_eq!(sent["model"], expected["model"]);
}
