//! GitHub Copilot models on the three APIs they use, against what the real pi-ai 1.6.0 sent for
//! the same requests (`scripts/fixtures/copilot_requests.mjs`): the bearer token, `X-Initiator`
//! (`user` for a user turn, `agent` after a tool result), `Openai-Intent` and
//! `Copilot-Vision-Request` for an image, and the body.

mod support;

use pi_ai::providers::anthropic::AnthropicMessages;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, Context, options::StreamOptions};
use serde_json::Value;
use support::fixtures::{model, ok_reply};
use support::{MockServer, Reply};

const HEADERS: [&str; 5] = ["authorization", "x-api-key", "x-initiator", "openai-intent", "copilot-vision-request"];
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn provider(api: &str) -> Box<dyn ApiProvider> {
    match api {
        "openai-completions" => Box::new(OpenAiCompletions),
        "openai-responses" => Box::new(OpenAiResponses),
        _ => Box::new(AnthropicMessages),
    }
}

fn messages(scenario: &str, api: &str, model_id: &str) -> Value {
    let usage = serde_json::json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    match scenario {
        "user" => serde_json::json!([{"role": "user", "content": "Hello", "timestamp": 1}]),
        _ => serde_json::json!([
            {"role": "user", "content": "Look", "timestamp": 1},
            {"role": "assistant", "content": [{"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.png"}}],
             "api": api, "provider": "github-copilot", "model": model_id, "stopReason": "toolUse", "timestamp": 2, "usage": usage},
            {"role": "toolResult", "toolCallId": "call_1", "toolName": "read",
             "content": [{"type": "image", "data": PNG, "mimeType": "image/png"}], "isError": false, "timestamp": 3}
        ]),
    }
}

#[tokio::test]
async fn copilot_requests_carry_pis_dynamic_headers() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/http/copilot.json");
    let recorded: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    assert_eq!(recorded.len(), 6);
    for pi in &recorded {
        let (api, scenario) = (pi["api"].as_str().expect("api"), pi["scenario"].as_str().expect("scenario"));
        let server = MockServer::start([Reply::sse(ok_reply(api))]).await;
        let mut model = model(api, &server.url());
        model.provider = "github-copilot".into();
        let context: Context =
            serde_json::from_value(serde_json::json!({"messages": messages(scenario, api, &model.id)}))
                .expect("context");
        // What pi's `streamSimple` takes from the model.
        let max_tokens = Some(model.max_tokens);
        let options =
            StreamOptions { api_key: Some("tid=1;proxy-ep=proxy.x".into()), max_tokens, ..Default::default() };
        let result = provider(api).stream(&model, normalize_context(context), options).result().await;
        assert_eq!(result.error_message, None, "{api}/{scenario}");
        let ours = &server.requests()[0];
        assert_eq!(ours.path, pi["path"].as_str().expect("path"), "{api}/{scenario}: path");
        for header in HEADERS {
            assert_eq!(ours.header(header), pi["headers"][header].as_str(), "{api}/{scenario}: {header}");
        }
        pretty_assertions::assert_eq!(
            serde_json::to_string_pretty(&ours.body).expect("JSON"),
            serde_json::to_string_pretty(&pi["body"]).expect("JSON"),
            "{api}/{scenario}: body"
        );
    }
}
