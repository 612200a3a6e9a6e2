//! The request scenarios of `tests/fixtures/http/scenarios.json` and the bodies real pi 1.6.0
//! sent for them (captured by `scripts/fixtures/http_requests.mjs`).

use serde_json::{Value, json};

use pi_ai::options::{StreamOptions, ToolChoice};
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{Context, Model, ThinkingLevel};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/http");

/// The three HTTP APIs.
pub const APIS: [&str; 3] = ["openai-completions", "openai-responses", "anthropic-messages"];

fn spec() -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/scenarios.json")).expect("scenarios.json");
    serde_json::from_str(&text).expect("scenarios.json is JSON")
}

/// The scenario names, in file order.
pub fn scenario_names() -> Vec<String> {
    spec()["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| s["name"].as_str().expect("name").to_owned())
        .collect()
}

/// The test model of `api`, pointed at `base` (a server root).
pub fn model(api: &str, base: &str) -> Model {
    let raw = spec()["models"][api].to_string().replace("$BASE", base);
    serde_json::from_str(&raw).expect("model")
}

/// A scenario for `api` against `base`: model, normalized context and options.
pub fn scenario(api: &str, name: &str, base: &str) -> (Model, TranscriptContext, StreamOptions) {
    let spec = spec();
    let s =
        spec["scenarios"].as_array().expect("scenarios").iter().find(|s| s["name"] == name).expect("scenario").clone();
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
    let sig = spec["signatures"][api].to_string();
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
    let options = StreamOptions {
        api_key: Some(o["apiKey"].as_str().unwrap_or("test-key").to_owned()),
        max_tokens: o["maxTokens"].as_u64(),
        temperature: o["temperature"].as_f64(),
        reasoning: o["reasoning"].as_str().and_then(ThinkingLevel::parse),
        tool_choice: o["toolChoice"].as_str().map(|c| if c == "auto" { ToolChoice::Auto } else { ToolChoice::None }),
        session_id: o["sessionId"].as_str().map(str::to_owned),
        ..Default::default()
    };
    (model, normalize_context(context), options)
}

/// What pi sent for a scenario: `{path, headers, body}`.
pub fn captured(api: &str, name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/{api}/{name}.json")).expect("fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

/// A minimal valid answer of each API.
pub fn ok_reply(api: &str) -> String {
    match api {
        "openai-completions" => {
            "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".into()
        }
        "openai-responses" => "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r1\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1,\"total_tokens\":2}}}\n\n".into(),
        _ => concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"model\":\"claude-test\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
        )
        .into(),
    }
}

/// Messages the cross-provider handoff changes: another model's assistant message with thinking
/// and a tool call whose id needs normalising, left without a result (a synthetic one follows it),
/// then the user going on. Put inside a large transcript, its body is written twice from one plan.
#[allow(dead_code)]
pub fn handed_off_turn() -> Vec<pi_ai::Message> {
    use pi_ai::{AssistantBlock, AssistantMessage, Message, StopReason, ThinkingContent, ToolCall, UserMessage};
    let assistant = AssistantMessage {
        content: vec![
            AssistantBlock::Thinking(ThinkingContent::new("weighing it")),
            AssistantBlock::ToolCall(ToolCall::new("call|abc+/=", "read", serde_json::Map::new())),
        ],
        api: "elsewhere-api".into(),
        provider: "elsewhere".into(),
        model: "other-model".into(),
        stop_reason: StopReason::ToolUse,
        ..Default::default()
    };
    vec![Message::Assistant(assistant.into()), Message::User(UserMessage::new("go on").into())]
}
