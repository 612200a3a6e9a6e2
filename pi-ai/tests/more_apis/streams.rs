//! Streams replayed over HTTP, chunked at every size, into events and the final message.

use pi_ai::options::StreamOptions;
use pi_ai::transcript::normalize_context;
use pi_ai::{AssistantBlock, Context, Message, StopReason, UserMessage};
use serde_json::json;

use super::common::{key, model, provider};
use super::support::{MockServer, Reply, run};

fn context() -> pi_ai::transcript::TranscriptContext {
    normalize_context(Context { messages: vec![Message::User(UserMessage::new("hi").into())], ..Default::default() })
}

async fn replay(api: &str, body: &str, chunk: usize) -> (Vec<String>, pi_ai::AssistantMessage) {
    let server = MockServer::start([Reply::sse(body).chunked(chunk)]).await;
    let mut m = model(api, &server.url());
    m.reasoning = true;
    let options = StreamOptions { api_key: Some(key(api)), ..Default::default() };
    run(provider(api).stream(&m, context(), options)).await
}

fn gemini_stream() -> String {
    let chunks = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Plan", "thought": true, "thoughtSignature": "c2ln"}]}}], "responseId": "resp-1"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": " more", "thought": true}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Héllo"}, {"text": " 👋"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"id": "fc1", "name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "dG9vbA=="}]}, "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 40, "candidatesTokenCount": 20, "thoughtsTokenCount": 5, "totalTokenCount": 125}}),
    ];
    chunks.iter().map(|c| format!("data: {c}\r\n\r\n")).collect()
}

#[tokio::test]
async fn gemini_and_vertex_streams() {
    for api in ["google-generative-ai", "google-vertex"] {
        for chunk in [1, 7, 4096] {
            let (events, message) = replay(api, &gemini_stream(), chunk).await;
            assert_eq!(
                events,
                [
                    "start",
                    "thinking_start@0",
                    "thinking_delta@0 \"Plan\"",
                    "thinking_delta@0 \" more\"",
                    "thinking_end@0",
                    "text_start@1",
                    "text_delta@1 \"Héllo\"",
                    "text_delta@1 \" 👋\"",
                    "text_end@1",
                    "toolcall_start@2",
                    "toolcall_delta@2 \"{\\\"city\\\":\\\"Paris\\\"}\"",
                    "toolcall_end@2",
                    "done:toolUse"
                ],
                "{api}/{chunk}"
            );
            assert_eq!(message.stop_reason, StopReason::ToolUse);
            assert_eq!(message.response_id.as_deref(), Some("resp-1"));
            assert_eq!(message.raw_stop_reason.as_deref(), Some("STOP"));
            let AssistantBlock::Thinking(t) = &message.content[0] else { panic!("thinking") };
            assert_eq!((t.thinking.as_str(), t.thinking_signature.as_deref()), ("Plan more", Some("c2ln")));
            let AssistantBlock::ToolCall(call) = &message.content[2] else { panic!("tool call") };
            assert_eq!((call.id.as_str(), call.thought_signature.as_deref()), ("fc1", Some("dG9vbA==")));
            assert_eq!(call.arguments["city"], "Paris");
            let u = &message.usage;
            assert_eq!((u.input, u.output, u.cache_read, u.reasoning, u.total_tokens), (60, 25, 40, Some(5), 125));
            // cost: 60·1 + 25·2 + 40·0.5 per million
            assert!((u.cost.total - 130.0 / 1e6).abs() < 1e-12, "{}", u.cost.total);
        }
    }
}

#[tokio::test]
async fn gemini_safety_stop_is_an_error() {
    let chunk =
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "no"}]}, "finishReason": "SAFETY"}]});
    let (events, message) = replay("google-generative-ai", &format!("data: {chunk}\r\n\r\n"), 4096).await;
    assert_eq!(events.last().map(String::as_str), Some("error:error"));
    assert_eq!(message.error_message.as_deref(), Some("Provider stopped with: SAFETY"));
}
