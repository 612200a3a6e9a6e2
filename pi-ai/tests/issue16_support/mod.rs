//! Scenarios for `bedrock-converse-stream` and `pi-messages`: the shared ones of
//! `fixtures/http/scenarios.json` plus `fixtures/http/issue16_scenarios.json`, and what the real
//! pi 1.6.0 sent for them (`scripts/fixtures/bedrock_requests.mjs`).
#![allow(dead_code)]

use serde_json::{Value, json};

use pi_ai::options::{CacheRetention, StreamOptions, ToolChoice};
use pi_ai::transcript::{TranscriptContext, normalize_context};
use pi_ai::{Context, Model, ThinkingLevel};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/http");

fn read(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/{name}")).expect("fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

fn all_scenarios() -> Vec<Value> {
    let shared = read("scenarios.json");
    let extra = read("issue16_scenarios.json");
    let mut out: Vec<Value> = shared["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter(|s| s["name"] != "subscription_token")
        .cloned()
        .collect();
    out.extend(extra["scenarios"].as_array().expect("scenarios").iter().cloned());
    out
}

/// Every scenario name.
pub fn scenario_names() -> Vec<String> {
    all_scenarios().iter().map(|s| s["name"].as_str().expect("name").to_owned()).collect()
}

/// The test model of `api` at `base`.
pub fn model(api: &str, base: &str) -> Model {
    let raw = read("issue16_scenarios.json")["models"][api].to_string().replace("$BASE", base);
    serde_json::from_str(&raw).expect("model")
}

/// `(model, context, options)` of a scenario.
pub fn scenario(api: &str, name: &str, base: &str) -> (Model, TranscriptContext, StreamOptions) {
    let s = all_scenarios().into_iter().find(|s| s["name"] == name).expect("scenario");
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
    if let Some(o) = s["modelOverride"].as_object() {
        let mut m = serde_json::to_value(&model).expect("model JSON");
        for (k, v) in o {
            m[k] = v.clone();
        }
        model = serde_json::from_value(m).expect("model");
    }
    let sig = read("issue16_scenarios.json")["signatures"][api].to_string();
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
        api_key: (api == "pi-messages").then(|| "test-key".to_owned()),
        max_tokens: o["maxTokens"].as_u64(),
        temperature: o["temperature"].as_f64(),
        reasoning: o["reasoning"].as_str().and_then(ThinkingLevel::parse),
        tool_choice: o["toolChoice"].as_str().map(|c| if c == "auto" { ToolChoice::Auto } else { ToolChoice::None }),
        session_id: o["sessionId"].as_str().map(str::to_owned),
        cache_retention: o["cacheRetention"].as_str().map(|r| match r {
            "long" => CacheRetention::Long,
            "none" => CacheRetention::None,
            _ => CacheRetention::Short,
        }),
        ..Default::default()
    };
    (model, normalize_context(context), options)
}

/// What pi sent: `{path, headers, body, result}`.
pub fn captured(api: &str, name: &str) -> Value {
    read(&format!("{api}/{name}.json"))
}
