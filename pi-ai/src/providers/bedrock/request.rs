//! The `ConverseStream` input (pi's `commandInput`): `messages`, `system`, `inferenceConfig`,
//! `toolConfig`, `additionalModelRequestFields`, in the order the AWS SDK serializes them; and
//! where it goes (region, endpoint, path).

use serde_json::{Map, Value, json};

use super::credentials::{env, profile_region};
use super::models::{
    is_anthropic_claude, match_candidates, supports_adaptive_thinking, supports_block_binding, supports_native_xhigh,
    supports_prompt_caching,
};
use super::wire::{self, CachePoint, WireMessage};
use crate::handoff::HandedOff;
use crate::http::shared::{thinking_budget_for_level, transform_for_model_borrowed};
use crate::options::{CacheRetention, StreamOptions, ToolChoice};
use crate::providers::constrained;
use crate::transcript::{current_tools, initial_system_message, system_message_text};
use crate::types::{Message, Model, ThinkingLevel, Tool};

const THINKING_BINDING_CONTROLS_BETA: &str = "thinking-binding-controls-2026-08-01";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

/// `inferenceConfig.maxTokens` and the Claude thinking budget of a request (pi's `streamSimple`).
pub fn plan_tokens(model: &Model, messages: &[Message], options: &StreamOptions) -> (Option<u64>, Option<u64>) {
    let clamp = |n: u64| crate::models::clamp_max_tokens_to_context(model, messages, n);
    let base = clamp(options.max_tokens.unwrap_or(model.max_tokens));
    let Some(level) = options.reasoning.filter(|l| *l != ThinkingLevel::Off) else { return (Some(base), None) };
    if !is_anthropic_claude(model) || supports_adaptive_thinking(model) {
        return (Some(base), None);
    }
    // adjustMaxTokensForThinking, then the context clamp, then the answer's 1024 tokens.
    let mut budget = thinking_budget_for_level(level, options.thinking_budgets.as_ref());
    let adjusted = (base + budget).min(model.max_tokens);
    if adjusted <= budget {
        budget = budget.min(adjusted.saturating_sub(1024));
    }
    let max_tokens = clamp(adjusted);
    (Some(max_tokens), Some(budget.min(max_tokens.saturating_sub(1024))))
}

/// The cache retention pi resolves: the option, else `PI_CACHE_RETENTION`, else short.
pub fn cache_retention(options: &StreamOptions) -> CacheRetention {
    options.cache_retention.unwrap_or_else(CacheRetention::from_env)
}

fn cache_point(model: &Model, options: &StreamOptions) -> Option<CachePoint> {
    let retention = cache_retention(options);
    (retention != CacheRetention::None && supports_prompt_caching(model))
        .then(|| CachePoint::new(retention == CacheRetention::Long))
}

/// Whether the model compat allows strict tools (`compat.supportsStrictMode`).
pub fn supports_strict(model: &Model) -> bool {
    model.compat.as_ref().and_then(|c| c.get("supportsStrictMode")).and_then(Value::as_bool).unwrap_or(false)
}

/// `toolConfig` (absent without tools or with tool choice `none`), and whether a `"prefer"` tool
/// was sent strict (the strict-tool-limit retry only helps then).
pub fn tool_config(tools: &[Tool], options: &StreamOptions, strict_ok: bool, no_prefer: bool) -> (Option<Value>, bool) {
    if tools.is_empty() || options.tool_choice == Some(ToolChoice::None) {
        return (None, false);
    }
    let mut has_preferred = false;
    let specs: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let preferred = constrained::prefers_strict(tool);
            let allowed = strict_ok && !(no_prefer && preferred);
            let (strict, schema) = constrained::tool_parameters(tool, allowed, None);
            has_preferred |= strict && preferred;
            let mut spec = Map::new();
            spec.insert("name".into(), json!(tool.name));
            spec.insert("inputSchema".into(), json!({"json": schema}));
            spec.insert("description".into(), json!(tool.description));
            if strict {
                spec.insert("strict".into(), json!(true));
            }
            json!({"toolSpec": spec})
        })
        .collect();
    let mut config = Map::new();
    config.insert("tools".into(), Value::Array(specs));
    if options.tool_choice == Some(ToolChoice::Auto) {
        config.insert("toolChoice".into(), json!({"auto": {}}));
    }
    (Some(Value::Object(config)), has_preferred)
}

fn govcloud(model: &Model) -> bool {
    let region = configured_region();
    let id = model.id.to_lowercase();
    region.is_some_and(|r| r.to_lowercase().starts_with("us-gov-"))
        || id.starts_with("us-gov.")
        || id.starts_with("arn:aws-us-gov:")
}

fn effort(model: &Model, level: ThinkingLevel) -> String {
    if level == ThinkingLevel::Xhigh && supports_native_xhigh(model) {
        return "xhigh".to_owned();
    }
    if let Some(mapped) = model.thinking_level_map.as_ref().and_then(|m| m.get(level.as_str())).and_then(Value::as_str)
    {
        return mapped.to_owned();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_owned()
}

/// `additionalModelRequestFields`: Claude thinking (adaptive or budget), GPT reasoning effort.
pub fn additional_fields(model: &Model, options: &StreamOptions, budget: Option<u64>) -> Option<Value> {
    let level = options.reasoning.filter(|l| *l != ThinkingLevel::Off)?;
    if !model.reasoning {
        return None;
    }
    if is_anthropic_claude(model) {
        let gov = govcloud(model);
        let mut thinking = Map::new();
        let mut fields = Map::new();
        if supports_adaptive_thinking(model) {
            let binding = !gov && supports_block_binding(model);
            thinking.insert("type".into(), json!("adaptive"));
            if !gov {
                thinking.insert("display".into(), json!("summarized"));
            }
            if binding {
                thinking.insert("block_binding".into(), json!({"prefix_mismatch_behavior": "drop_block"}));
            }
            fields.insert("thinking".into(), Value::Object(thinking));
            fields.insert("output_config".into(), json!({"effort": effort(model, level)}));
            if binding {
                fields.insert("anthropic_beta".into(), json!([THINKING_BINDING_CONTROLS_BETA]));
            }
        } else {
            let budget = budget.unwrap_or_else(|| thinking_budget_for_level(level, options.thinking_budgets.as_ref()));
            thinking.insert("type".into(), json!("enabled"));
            thinking.insert("budget_tokens".into(), json!(budget));
            if !gov {
                thinking.insert("display".into(), json!("summarized"));
            }
            fields.insert("thinking".into(), Value::Object(thinking));
            fields.insert("anthropic_beta".into(), json!([INTERLEAVED_THINKING_BETA]));
        }
        return Some(Value::Object(fields));
    }
    let candidates = match_candidates(model);
    if candidates.iter().any(|s| s.contains("gpt-oss")) {
        let e = match level {
            ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            _ => "high",
        };
        return Some(json!({"reasoning_effort": e}));
    }
    if candidates.iter().any(|s| s.contains("gpt-")) {
        let mapped = model.thinking_level_map.as_ref().and_then(|m| m.get(level.as_str())).and_then(Value::as_str);
        let e = mapped.unwrap_or(match level {
            ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High | ThinkingLevel::Off => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        });
        return Some(json!({"reasoning": {"effort": e}}));
    }
    None
}

/// The conversation after the handoff, with Bedrock's tool-call ids (`[^a-zA-Z0-9_-]` → `_`, 64 max).
pub(super) fn handoff<'a>(model: &Model, view: &'a [&'a Message]) -> Vec<HandedOff<'a>> {
    transform_for_model_borrowed(view, model, &|id: &str, _: &crate::types::AssistantMessage| {
        crate::handoff::normalize_anthropic_tool_call_id(id)
    })
}

/// The top-level fields (`messages: null` in place), the typed messages, whether a `"prefer"` tool
/// went strict.
pub(super) type BodyParts<'a> = (Map<String, Value>, Vec<WireMessage<'a>>, bool);

/// Everything but the messages, in the SDK's order (`messages: null` in place), plus the typed
/// messages and whether a `"prefer"` tool went strict.
pub(super) fn build_parts<'a>(
    model: &Model,
    transcript: &[Message],
    view: &[&Message],
    handed_off: &'a [HandedOff<'a>],
    options: &StreamOptions,
    no_prefer: bool,
) -> Result<BodyParts<'a>, String> {
    let cache = cache_point(model, options);
    let initial = initial_system_message(view);
    let conversation = if initial.is_some() && !handed_off.is_empty() { &handed_off[1..] } else { handed_off };
    let messages = wire::convert(conversation, model, cache.as_ref())?;
    let mut body = Map::new();
    body.insert("messages".into(), Value::Null);
    let prompt = initial.map(system_message_text).filter(|t| !t.is_empty());
    if let Some(prompt) = prompt {
        let mut system = vec![json!({"text": prompt})];
        if let Some(c) = &cache {
            system.push(json!({"cachePoint": c.clone()}));
        }
        body.insert("system".into(), Value::Array(system));
    }
    let (max_tokens, budget) = plan_tokens(model, transcript, options);
    let mut inference = Map::new();
    if let Some(n) = max_tokens {
        inference.insert("maxTokens".into(), json!(n));
    }
    if let Some(t) = options.temperature {
        inference.insert("temperature".into(), json!(t));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    let tools = current_tools(view);
    constrained::check_tools(&tools, supports_strict(model), None)?;
    let (config, has_preferred) = tool_config(&tools, options, supports_strict(model), no_prefer);
    if let Some(config) = config {
        body.insert("toolConfig".into(), config);
    }
    if let Some(fields) = additional_fields(model, options, budget) {
        body.insert("additionalModelRequestFields".into(), fields);
    }
    Ok((body, messages, has_preferred))
}

/// `AWS_REGION`, else `AWS_DEFAULT_REGION`.
pub fn configured_region() -> Option<String> {
    env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION"))
}

/// The region of a standard `bedrock-runtime[-fips].<region>.amazonaws.com[.cn]` URL.
pub fn standard_endpoint_region(base_url: &str) -> Option<String> {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    let host = rest.split(['/', '?', '#']).next()?.split(':').next()?.to_lowercase();
    let host = host.strip_suffix(".amazonaws.com").or_else(|| host.strip_suffix(".amazonaws.com.cn"))?;
    let region = host.strip_prefix("bedrock-runtime-fips.").or_else(|| host.strip_prefix("bedrock-runtime."))?;
    (!region.is_empty() && region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'))
        .then(|| region.to_owned())
}

/// `(endpoint, region)`: the region from an ARN model id, the environment, the explicit endpoint,
/// `us-east-1` without a profile, else the profile's; the model's base URL unless it is a standard
/// endpoint and a region or profile is configured.
pub fn resolve_target(model: &Model) -> Result<(String, String), String> {
    let configured = configured_region();
    let has_profile = env("AWS_PROFILE").is_some();
    let endpoint_region = standard_endpoint_region(&model.base_url);
    let explicit = endpoint_region.is_none() || (configured.is_none() && !has_profile);
    let arn_region = model.id.strip_prefix("arn:aws").and_then(|rest| {
        let rest = rest.split_once(":bedrock:")?.1;
        let region = rest.split(':').next()?;
        (!region.is_empty()).then(|| region.to_owned())
    });
    let region = arn_region
        .or(configured)
        .or_else(|| endpoint_region.clone().filter(|_| explicit))
        .or_else(|| (!has_profile).then(|| "us-east-1".to_owned()))
        .or_else(profile_region)
        .ok_or_else(|| "Region is missing".to_owned())?;
    let endpoint = if explicit && !model.base_url.is_empty() {
        model.base_url.trim_end_matches('/').to_owned()
    } else {
        let suffix = if region.starts_with("cn-") { "amazonaws.com.cn" } else { "amazonaws.com" };
        format!("https://bedrock-runtime.{region}.{suffix}")
    };
    Ok((endpoint, region))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt_models_take_a_reasoning_effort() {
        let model = |id: &str| Model { id: id.into(), name: id.into(), reasoning: true, ..Default::default() };
        let options = StreamOptions { reasoning: Some(ThinkingLevel::Xhigh), ..Default::default() };
        assert_eq!(
            additional_fields(&model("openai.gpt-oss-120b-1:0"), &options, None),
            Some(json!({"reasoning_effort": "high"}))
        );
        assert_eq!(
            additional_fields(&model("openai.gpt-5.5"), &options, None),
            Some(json!({"reasoning": {"effort": "xhigh"}}))
        );
        let minimal = StreamOptions { reasoning: Some(ThinkingLevel::Minimal), ..Default::default() };
        assert_eq!(
            additional_fields(&model("openai.gpt-5.5"), &minimal, None),
            Some(json!({"reasoning": {"effort": "low"}}))
        );
        assert_eq!(additional_fields(&model("amazon.nova-2-lite-v1:0"), &options, None), None);
        let off = StreamOptions::default();
        assert_eq!(additional_fields(&model("openai.gpt-5.5"), &off, None), None);
    }

    #[test]
    fn standard_endpoints() {
        assert_eq!(
            standard_endpoint_region("https://bedrock-runtime.eu-west-1.amazonaws.com").as_deref(),
            Some("eu-west-1")
        );
        assert_eq!(
            standard_endpoint_region("https://bedrock-runtime-fips.us-east-1.amazonaws.com/").as_deref(),
            Some("us-east-1")
        );
        assert_eq!(standard_endpoint_region("http://127.0.0.1:8080"), None);
    }
}
