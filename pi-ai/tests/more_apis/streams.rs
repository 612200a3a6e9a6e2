//! Streams replayed over HTTP (chunked at several sizes, also inside UTF-8 characters) into events
//! and the final message, compared with what pi 1.6.0 made of the same bytes
//! (`tests/fixtures/http/apis/streams.json`, recorded by `scripts/fixtures/http_streams_apis.mjs`).

use pi_ai::options::StreamOptions;
use pi_ai::transcript::normalize_context;
use pi_ai::{Context, Message, UserMessage};
use serde_json::{Value, json};

use super::common::{key, model, provider};
use super::support::{MockServer, Reply, run};

fn context() -> pi_ai::transcript::TranscriptContext {
    normalize_context(Context { messages: vec![Message::User(UserMessage::new("hi").into())], ..Default::default() })
}

fn cases() -> serde_json::Map<String, Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/http/apis/streams.json");
    let text = std::fs::read_to_string(path).expect("streams.json");
    serde_json::from_str(&text).expect("streams.json is JSON")
}

/// Our final message in the shape the fixture records.
fn summary(message: &pi_ai::AssistantMessage) -> Value {
    let mut m = serde_json::to_value(message).unwrap_or_default();
    let mut content = m["content"].take();
    for block in content.as_array_mut().into_iter().flatten() {
        let generated = block["id"].as_str().is_some_and(|id| {
            let mut parts = id.rsplitn(3, '_');
            let counter = parts.next().unwrap_or_default();
            let stamp = parts.next().unwrap_or_default();
            stamp.len() == 13
                && stamp.chars().all(|c| c.is_ascii_digit())
                && counter.chars().all(|c| c.is_ascii_digit())
        });
        if generated {
            block["id"] = json!("<generated>");
        }
    }
    let mut usage = m["usage"].take();
    if let Some(u) = usage.as_object_mut() {
        u.remove("cost");
    }
    let mut out = json!({"content": content, "usage": usage, "stopReason": m["stopReason"]});
    for key in ["errorMessage", "responseId", "rawStopReason", "endTurn"] {
        if !m[key].is_null() {
            out[key] = m[key].take();
        }
    }
    out
}

#[tokio::test]
async fn streams_like_pi() {
    for (name, case) in cases() {
        let api = case["api"].as_str().unwrap_or_default();
        let body = case["body"].as_str().unwrap_or_default();
        for chunk in [1, 7, 4096] {
            let server = MockServer::start([Reply::sse(body).chunked(chunk)]).await;
            let mut m = model(api, &server.url());
            m.reasoning = true;
            let options = StreamOptions { api_key: Some(key(api)), ..Default::default() };
            let (events, message) = run(provider(api).stream(&m, context(), options)).await;
            let expected: Vec<&str> =
                case["events"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            assert_eq!(events, expected, "{name}/{chunk}: events");
            pretty_assertions::assert_eq!(summary(&message), case["message"], "{name}/{chunk}: message");
        }
    }
}

#[tokio::test]
async fn usage_is_priced_with_the_model_rates() {
    let case = &cases()["gemini_full"];
    let server = MockServer::start([Reply::sse(case["body"].as_str().unwrap_or_default())]).await;
    let m = model("google-generative-ai", &server.url());
    let options = StreamOptions { api_key: Some("k".into()), ..Default::default() };
    let (_, message) = run(provider("google-generative-ai").stream(&m, context(), options)).await;
    // 60 input · 1 + 25 output · 2 + 40 cache reads · 0.5, per million tokens.
    assert!((message.usage.cost.total - 130.0 / 1e6).abs() < 1e-12, "{}", message.usage.cost.total);
}
