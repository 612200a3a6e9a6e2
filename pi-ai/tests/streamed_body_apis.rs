//! A large request body is written into the connection as it is produced for every HTTP API, not
//! only `openai-completions` (issue 20): the server receives exactly the bytes the API's
//! `build_request_ref` builds whole, with their `Content-Length` (never chunked); a payload hook
//! still sees the whole body.

mod support;

#[allow(dead_code)]
#[path = "more_apis/common.rs"]
mod common;
mod issue16_support;

use pi_ai::options::{StreamOptions, sync_payload_hook};
use pi_ai::providers::{anthropic, azure_openai_responses, google, mistral, openai_responses, pi_messages};
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{Context, Message, Model, UserMessage};
use support::{MockServer, Reply};

/// About 1.6 MB of user messages: over the 1 MiB a body is built whole up to, under the test
/// server's limit.
fn large_context() -> TranscriptContext {
    let line = "fn main() { println!(\"hello, \\\"world\\\"\"); } // ünïcödé\n";
    let mut messages: Vec<Message> =
        (0..300).map(|i| Message::User(UserMessage::new(format!("message {i}\n{}", line.repeat(90))).into())).collect();
    // In the middle, a turn the handoff changes (its plan is made on the first writing).
    messages.splice(150..150, support::fixtures::handed_off_turn());
    normalize_context(Context { system_prompt: Some("Be brief.".into()), messages, tools: None })
}

fn options(key: &str) -> StreamOptions {
    StreamOptions { api_key: Some(key.to_owned()), ..Default::default() }
}

/// What an API's whole build and its provider take.
struct Api {
    model: Model,
    key: String,
    whole: fn(&Model, &TranscriptContext, &StreamOptions) -> Result<pi_ai::http::HttpRequest, String>,
}

fn api(name: &'static str, base: &str) -> Api {
    let (model, key) = match name {
        "anthropic-messages" | "openai-responses" => (support::fixtures::model(name, base), "k".to_owned()),
        "pi-messages" => (issue16_support::model(name, base), "k".to_owned()),
        _ => (common::model(name, base), common::key(name)),
    };
    let whole: fn(&Model, &TranscriptContext, &StreamOptions) -> Result<pi_ai::http::HttpRequest, String> = match name {
        "anthropic-messages" => anthropic::build_request_ref,
        "openai-responses" => openai_responses::build_request_ref,
        "azure-openai-responses" => azure_openai_responses::build_request_ref,
        "google-generative-ai" => google::build_request_ref,
        "google-vertex" => |m, c, o| google::build_vertex_request(m, c, o, None),
        "mistral-conversations" => mistral::build_request_ref,
        "pi-messages" => pi_messages::build_request_ref,
        other => panic!("no whole build for {other}"),
    };
    Api { model, key, whole }
}

/// The provider of `name`.
fn provider(name: &str) -> std::sync::Arc<dyn pi_ai::ApiProvider> {
    let all = pi_ai::providers::http_apis();
    all.into_iter().find(|p| p.api() == name).unwrap_or_else(|| panic!("no provider for {name}"))
}

/// Streams the large context through `name`'s provider and checks the bytes the server got.
async fn arrives_whole(name: &'static str) {
    let server = MockServer::start([Reply::error(400, "{\"error\":{\"message\":\"stop here\"}}")]).await;
    let api = api(name, &server.url());
    let opts = options(&api.key);
    // One transcript for both (pi-messages sends the messages' timestamps).
    let context = large_context();
    let whole = (api.whole)(&api.model, &context, &opts).expect("request");
    assert!(whole.source.is_none(), "{name}: build_request_ref builds the body whole");
    assert!(whole.body.len() > 1 << 20, "{name}: the body is large: {}", whole.body.len());
    let synthetic = b"No result provided";
    // pi-messages sends the transcript as it is (the server does the handoff).
    let handed_off = whole.body.windows(synthetic.len()).any(|w| w == synthetic);
    assert_eq!(handed_off, name != "pi-messages", "{name}: whether the handoff changed the transcript");
    let message = provider(name).stream(&api.model, context, opts).result().await;
    assert!(message.error_message.as_deref().unwrap_or_default().contains("stop here"), "{name}: {message:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{name}");
    assert!(requests[0].raw.as_bytes() == &whole.body[..], "{name}: the streamed body differs from the whole one");
    assert_eq!(requests[0].header("content-length"), Some(whole.body.len().to_string().as_str()), "{name}");
    assert_eq!(requests[0].header("transfer-encoding"), None, "{name}");
    assert_eq!(requests[0].header("content-encoding"), None, "{name}");
}

#[tokio::test]
async fn anthropic_messages_streams_a_large_body() {
    arrives_whole("anthropic-messages").await;
}

#[tokio::test]
async fn openai_responses_streams_a_large_body() {
    arrives_whole("openai-responses").await;
}

#[tokio::test]
async fn azure_openai_responses_streams_a_large_body() {
    arrives_whole("azure-openai-responses").await;
}

#[tokio::test]
async fn google_generative_ai_streams_a_large_body() {
    arrives_whole("google-generative-ai").await;
}

#[tokio::test]
async fn google_vertex_streams_a_large_body() {
    arrives_whole("google-vertex").await;
}

#[tokio::test]
async fn mistral_conversations_streams_a_large_body() {
    arrives_whole("mistral-conversations").await;
}

#[tokio::test]
async fn pi_messages_streams_a_large_body() {
    arrives_whole("pi-messages").await;
}

/// pi-messages runs its own request loop: a payload hook there still sees the whole body.
#[tokio::test]
async fn pi_messages_hook_sees_the_whole_large_body() {
    let server = MockServer::start([Reply::error(400, "{\"error\":{\"message\":\"stop here\"}}")]).await;
    let api = api("pi-messages", &server.url());
    let context = large_context();
    let whole = (api.whole)(&api.model, &context, &options(&api.key)).expect("request");
    let expected: serde_json::Value = serde_json::from_slice(&whole.body).expect("JSON");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let keep = seen.clone();
    let mut opts = options(&api.key);
    opts.on_payload = Some(sync_payload_hook(move |body, _| {
        *keep.lock().expect("lock") = Some(body.clone());
        None
    }));
    provider("pi-messages").stream(&api.model, context, opts).result().await;
    assert_eq!(seen.lock().expect("lock").as_ref(), Some(&expected));
    assert!(server.requests()[0].raw.as_bytes() == &whole.body[..]);
}

/// pi-messages' payload, written message by message, is what serializing pi's payload as one JSON
/// value gives (the form it had before it was streamed).
#[test]
fn pi_messages_body_is_the_json_of_pis_payload() {
    let context = large_context();
    let model = issue16_support::model("pi-messages", "http://127.0.0.1:9");
    let request = pi_messages::build_request_ref(&model, &context, &options("k")).expect("request");
    let value = serde_json::json!({
        "model": model.id,
        "context": {"messages": serde_json::to_value(context.messages()).expect("messages")},
        "options": {},
    });
    assert_eq!(&request.body[..], &serde_json::to_vec(&value).expect("bytes")[..]);
}
