//! `openai-codex-responses` request bodies for the compat flags no catalog model sets yet,
//! compared byte for byte with what real pi 1.6.0 sent for the same `Context`
//! (`scripts/fixtures/codex_tool_changes.mjs`, fixtures in `tests/fixtures/http/codex_tools/`):
//! `additional_tools` items and their notices (`supportsMidConvoSystemMessages` +
//! `supportsAdditionalTools`), synthetic tool search items (`supportsToolSearch`), and
//! `configuration_update` effort items with `reasoning.effort: "medium"` (`supportsMidConvoEffort`).

mod support;

use pi_ai::options::{StreamOptions, Transport};
use pi_ai::providers::openai_codex_responses::OpenAiCodexResponses;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, Context, Model, ThinkingLevel};
use serde_json::Value;
use support::{MockServer, Reply};

const TOKEN: &str = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYWNjLXRlc3QtMSJ9LCJleHAiOjQxMDI0NDQ4MDB9.sig";
const REPLY: &str = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r9\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1,\"total_tokens\":2}}}\n\n";

async fn check(name: &str) {
    let path = format!("{}/tests/fixtures/http/codex_tools/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let pi: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    let server = MockServer::start([Reply::sse(REPLY)]).await;
    let model: Model = serde_json::from_str(&pi["model"].to_string().replace("$BASE", &server.url())).expect("model");
    let context: Context = serde_json::from_value(pi["context"].clone()).expect("context");
    let options = StreamOptions {
        api_key: Some(TOKEN.into()),
        transport: Some(Transport::Sse),
        max_tokens: Some(8192),
        reasoning: pi["options"]["reasoning"].as_str().and_then(ThinkingLevel::parse),
        ..Default::default()
    };
    let message = OpenAiCodexResponses.stream(&model, normalize_context(context), options).result().await;
    assert_eq!(message.error_message, None, "{name}");
    pretty_assertions::assert_eq!(
        serde_json::to_string_pretty(&server.body()).expect("JSON"),
        serde_json::to_string_pretty(&pi["body"]).expect("JSON"),
        "{name}: body differs from pi 1.6.0's"
    );
    assert_eq!(
        message.provider_thinking_level.as_deref(),
        pi["message"]["providerThinkingLevel"].as_str(),
        "{name}: providerThinkingLevel"
    );
}

#[tokio::test]
async fn additional_tools_items_and_notices() {
    check("additional_tools").await;
}

#[tokio::test]
async fn tool_search_items_for_additions() {
    check("tool_search").await;
}

#[tokio::test]
async fn tool_search_after_a_removal_folds_it_into_the_top_level_list() {
    check("tool_search_after_a_removal").await;
}

#[tokio::test]
async fn configuration_update_items_carry_the_effort() {
    check("configuration_update").await;
}

#[tokio::test]
async fn configuration_update_when_thinking_is_off() {
    check("configuration_update_off").await;
}
