//! Grammar constrained sampling on `openai-responses`, `openai-completions` and `openai-codex-responses` against the real pi 1.6.0
//! (`scripts/fixtures/grammar_requests.mjs`): the `custom` tool and the replayed custom tool call and
//! output in the request body, byte for byte, and the message rebuilt from a streamed
//! `custom_tool_call` (events and final message) over real HTTP on 127.0.0.1.

mod support;

use pi_ai::options::StreamOptions;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::transcript::normalize_context;
use pi_ai::{ApiProvider, Context, Model};
use serde_json::Value;
use support::{MockServer, Reply, run};

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/http/grammar/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

fn provider(name: &str) -> Box<dyn ApiProvider> {
    match name {
        "responses" => Box::new(OpenAiResponses),
        "codex" => Box::new(pi_ai::providers::openai_codex_responses::OpenAiCodexResponses),
        _ => Box::new(OpenAiCompletions),
    }
}

/// A ChatGPT token (account id `acc-test-1`), as the Codex recording used.
const CODEX_TOKEN: &str = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYWNjLXRlc3QtMSJ9LCJleHAiOjQxMDI0NDQ4MDB9.sig";

#[tokio::test]
async fn grammar_tools_match_pi() {
    for name in ["responses", "completions"] {
        check(name).await;
    }
}

/// Codex (over SSE, zstd body): the `custom` tool declaration, the replayed `custom_tool_call`
/// and its output, byte for byte as pi sent them, and a streamed `custom_tool_call` rebuilt under
/// the declared input property.
#[tokio::test]
async fn codex_grammar_tools_match_pi() {
    check("codex").await;
}

async fn check(name: &str) {
    let pi = fixture(name);
    let server = MockServer::start([Reply::sse(pi["stream"].as_str().unwrap())]).await;
    let model: Model = serde_json::from_str(&pi["model"].to_string().replace("$BASE", &server.url())).unwrap();
    let context: Context = serde_json::from_value(pi["context"].clone()).unwrap();
    let key = if name == "codex" { CODEX_TOKEN } else { "k" };
    let options = StreamOptions { api_key: Some(key.into()), max_tokens: Some(4096), ..Default::default() };
    let (events, message) = run(provider(name).stream(&model, normalize_context(context), options)).await;
    pretty_assertions::assert_eq!(
        serde_json::to_string_pretty(&server.body()).unwrap(),
        serde_json::to_string_pretty(&pi["body"]).unwrap(),
        "{name}"
    );
    let ours: Vec<String> = events
        .iter()
        .map(|e| match e.split_once(' ') {
            Some((kind, delta)) if kind.starts_with("toolcall_delta") => {
                let delta: String = serde_json::from_str(delta).unwrap_or_default();
                format!("toolcall_delta {}", Value::String(delta))
            }
            _ => e.split(['@', ':']).next().unwrap().to_owned(),
        })
        .collect();
    let theirs: Vec<String> = pi["events"].as_array().unwrap().iter().map(|e| e.as_str().unwrap().to_owned()).collect();
    assert_eq!(ours, theirs, "{name}");
    let json = serde_json::to_value(&message).unwrap();
    assert_eq!(json["content"], pi["message"]["content"], "{name}");
    assert_eq!(json["stopReason"], pi["message"]["stopReason"], "{name}");
}

#[tokio::test]
async fn a_grammar_call_without_its_input_is_refused() {
    let pi = fixture("responses");
    let server = MockServer::start([]).await;
    let model: Model = serde_json::from_str(&pi["model"].to_string().replace("$BASE", &server.url())).unwrap();
    let mut context = pi["context"].clone();
    context["messages"][1]["content"][0]["arguments"] = serde_json::json!({"code": 5});
    let context: Context = serde_json::from_value(context).unwrap();
    let options = StreamOptions { api_key: Some("k".into()), ..Default::default() };
    let message = OpenAiResponses.stream(&model, normalize_context(context), options).result().await;
    assert_eq!(
        message.error_message.as_deref(),
        Some("Grammar tool call \"exec\" requires argument \"code\" to be a string.")
    );
    assert!(server.requests().is_empty());
}

/// Azure's Responses API shares the grammar tools: a streamed `custom_tool_call` comes back with
/// its input under the tool's declared property (`code`), not the default `input`.
#[tokio::test]
async fn azure_rebuilds_grammar_calls_under_their_property() {
    let pi = fixture("responses");
    let server = MockServer::start([Reply::sse(pi["stream"].as_str().unwrap())]).await;
    let mut model = pi["model"].clone();
    model["api"] = Value::from("azure-openai-responses");
    model["provider"] = Value::from("azure");
    let model: Model = serde_json::from_str(&model.to_string().replace("$BASE", &server.url())).unwrap();
    let context: Context = serde_json::from_value(pi["context"].clone()).unwrap();
    let options = StreamOptions { api_key: Some("k".into()), max_tokens: Some(4096), ..Default::default() };
    let provider = pi_ai::providers::azure_openai_responses::AzureOpenAiResponses;
    let (_, message) = run(provider.stream(&model, normalize_context(context), options)).await;
    let json = serde_json::to_value(&message).unwrap();
    assert_eq!(json["stopReason"], pi["message"]["stopReason"], "{json}");
    assert_eq!(json["content"][0]["arguments"], pi["message"]["content"][0]["arguments"], "{json}");
}
