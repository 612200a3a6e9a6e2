//! Scenarios, models and pi's captured requests for the APIs of issue 16.

use serde_json::{Value, json};

use pi_ai::ApiProvider;
use pi_ai::options::{StreamOptions, ToolChoice};
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{Context, Model, ThinkingLevel};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/http");

/// The five APIs.
pub const APIS: [&str; 5] = [
    "google-generative-ai",
    "google-vertex",
    "mistral-conversations",
    "azure-openai-responses",
    "openai-codex-responses",
];

fn read(path: &str) -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `apis/apis.json`: models, signatures, keys and extra scenarios.
pub fn spec() -> Value {
    read("apis/apis.json")
}

/// The implementation of `api`.
pub fn provider(api: &str) -> Box<dyn ApiProvider> {
    let all = pi_ai::providers::http_apis();
    let found = all.into_iter().find(|p| p.api() == api).unwrap_or_else(|| panic!("no provider for {api}"));
    Box::new(Registered(found))
}

struct Registered(std::sync::Arc<dyn ApiProvider>);

impl ApiProvider for Registered {
    fn api(&self) -> &str {
        self.0.api()
    }

    fn stream(
        &self,
        model: &Model,
        context: TranscriptContext,
        options: StreamOptions,
    ) -> pi_ai::AssistantMessageEventStream {
        self.0.stream(model, context, options)
    }
}

fn scenarios() -> Vec<Value> {
    let mut all = read("scenarios.json")["scenarios"].as_array().cloned().unwrap_or_default();
    all.extend(spec()["scenarios"].as_array().cloned().unwrap_or_default());
    all
}

/// Every scenario name (the shared ones, then ours).
pub fn scenario_names() -> Vec<String> {
    scenarios().iter().filter_map(|s| s["name"].as_str().map(str::to_owned)).collect()
}

/// The test model of `api` pointed at `base`.
pub fn model(api: &str, base: &str) -> Model {
    serde_json::from_str(&spec()["models"][api].to_string().replace("$BASE", base)).expect("model")
}

/// The key `api` is called with.
pub fn key(api: &str) -> String {
    spec()["keys"][api].as_str().unwrap_or("test-key").to_owned()
}

/// A scenario for `api` against `base`: model, normalized context and options.
pub fn scenario(api: &str, name: &str, base: &str) -> (Model, TranscriptContext, StreamOptions) {
    let s = scenarios().into_iter().find(|s| s["name"] == name).expect("scenario");
    let mut model = model(api, base);
    if s["reasoningModel"] == json!(true) {
        model.reasoning = true;
    }
    if let Some(extra) = s["modelCompat"].as_object() {
        let compat = model.compat.get_or_insert_with(Default::default);
        for (k, v) in extra {
            compat.insert(k.clone(), v.clone());
        }
    }
    let sig = spec()["signatures"][api].to_string();
    let mut context: Value =
        serde_json::from_str(&s["context"].to_string().replace("\"$sig\"", &sig)).expect("context");
    for m in context["messages"].as_array_mut().expect("messages") {
        if m["role"] == "assistant" && m["model"] == "$target" {
            m["api"] = json!(model.api);
            m["provider"] = json!(model.provider);
            m["model"] = json!(model.id);
        }
    }
    let context: Context = serde_json::from_value(context).expect("Context");
    let o = &s["options"];
    let api_key = match (o["apiKey"].as_str(), spec()["keys"][api].as_str()) {
        (_, Some(k)) => k.to_owned(),
        (Some(k), None) => k.to_owned(),
        (None, None) => "test-key".to_owned(),
    };
    let options = StreamOptions {
        api_key: Some(api_key),
        max_tokens: o["maxTokens"].as_u64(),
        temperature: o["temperature"].as_f64(),
        reasoning: o["reasoning"].as_str().and_then(ThinkingLevel::parse),
        tool_choice: o["toolChoice"].as_str().map(|c| if c == "auto" { ToolChoice::Auto } else { ToolChoice::None }),
        session_id: o["sessionId"].as_str().map(str::to_owned),
        ..Default::default()
    };
    (model, normalize_context(context), options)
}

/// What pi sent for a scenario: `{path, headers, body, result}`.
pub fn captured(api: &str, name: &str) -> Value {
    read(&format!("apis/{api}/{name}.json"))
}

/// A minimal valid answer of each API.
pub fn ok_reply(api: &str) -> String {
    match api {
        "google-generative-ai" | "google-vertex" => "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"ok\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1,\"candidatesTokenCount\":1,\"totalTokenCount\":2},\"responseId\":\"g1\"}\r\n\r\n".into(),
        "mistral-conversations" => "data: {\"id\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}\n\ndata: [DONE]\n\n".into(),
        _ => "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r1\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1,\"total_tokens\":2}}}\n\n".into(),
    }
}
