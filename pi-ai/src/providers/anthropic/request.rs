//! The `POST /v1/messages` body (pi's `buildParams` and `convertMessages`).

use serde_json::{Map, Value, json};

use super::compat::AnthropicCompat;
use super::wire::{self, WireMessage};
use crate::handoff::HandedOff;
use crate::http::body::to_value;
use crate::http::shared::{thinking_budget_for_level, transform_for_model_borrowed};
use crate::options::{CacheRetention, StreamOptions, ToolChoice};
use crate::providers::constrained;
use crate::transcript::{TranscriptContext, current_tools, initial_system_message, system_message_text};
use crate::types::{Message, Model, ThinkingLevel, Tool};

/// How thinking is requested, derived from `options.reasoning` (pi's `streamSimple` mapping).
#[derive(Clone, Debug, PartialEq)]
pub enum Thinking {
    /// No reasoning requested.
    Off,
    /// `{type: "enabled", budget_tokens}`.
    Budget(u64),
    /// `{type: "adaptive"}` with `output_config.effort`.
    Adaptive(String),
}

/// `max_tokens` and the thinking mode for a request.
pub fn plan_thinking(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    compat: &AnthropicCompat,
) -> (u64, Thinking) {
    let base = options.max_tokens.unwrap_or(model.max_tokens);
    let Some(level) = options.reasoning.filter(|l| *l != ThinkingLevel::Off) else {
        return (base, Thinking::Off);
    };
    if compat.force_adaptive_thinking {
        let mapped = model.thinking_level_map.as_ref().and_then(|m| m.get(level.as_str())).and_then(Value::as_str);
        let effort = mapped.map(str::to_owned).unwrap_or_else(|| {
            match level {
                ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
                ThinkingLevel::Medium => "medium",
                _ => "high",
            }
            .to_owned()
        });
        return (base, Thinking::Adaptive(effort));
    }
    // adjustMaxTokensForThinking
    let mut budget = thinking_budget_for_level(level, options.thinking_budgets.as_ref());
    let adjusted = (base + budget).min(model.max_tokens);
    if adjusted <= budget {
        budget = budget.min(adjusted.saturating_sub(1024));
    }
    let max_tokens = crate::models::clamp_max_tokens_to_context(model, context.messages(), adjusted);
    let budget = budget.min(max_tokens.saturating_sub(1024));
    (max_tokens, Thinking::Budget(if budget == 0 { 1024 } else { budget }))
}

/// Anthropic's tool-call id rule: `[^a-zA-Z0-9_-]` becomes `_`, at most 64 characters.
pub fn normalize_tool_call_id(id: &str) -> String {
    crate::handoff::normalize_anthropic_tool_call_id(id)
}

/// The cache marker for a retention, if any.
pub fn cache_control(options: &StreamOptions, compat: &AnthropicCompat) -> Option<Value> {
    match options.cache_retention.unwrap_or_else(CacheRetention::from_env) {
        CacheRetention::None => None,
        CacheRetention::Long if compat.supports_long_cache_retention => Some(json!({"type": "ephemeral", "ttl": "1h"})),
        _ => Some(json!({"type": "ephemeral"})),
    }
}

/// The `anthropic-beta` features pi sends by default (a configured header replaces them).
pub fn beta_features(
    model: &Model,
    context: &TranscriptContext,
    thinking: &Thinking,
    compat: &AnthropicCompat,
) -> Vec<String> {
    let mut features = Vec::new();
    if compat.claude_code_identity {
        features.extend(super::oauth::OAUTH_BETAS.map(str::to_owned));
    }
    if !current_tools(context.messages()).is_empty() && !compat.supports_eager_tool_input_streaming {
        features.push("fine-grained-tool-streaming-2025-05-14".to_owned());
    }
    if model.reasoning && *thinking != Thinking::Off && !compat.force_adaptive_thinking {
        features.push("interleaved-thinking-2025-05-14".to_owned());
    }
    features
}

/// Builds the request body.
pub fn build_body(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    compat: &AnthropicCompat,
    max_tokens: u64,
    thinking: &Thinking,
) -> Map<String, Value> {
    let view: Vec<&Message> = context.messages().iter().collect();
    let handed_off = handoff(model, &view);
    let (mut body, wire) = build_body_parts(model, &view, &handed_off, options, compat, max_tokens, thinking);
    body.insert("messages".into(), to_value(&wire));
    body
}

/// The body as its top-level fields (with `messages: null` in place) and the typed message list.
pub(super) fn build_body_parts<'a>(
    model: &Model,
    view: &[&Message],
    handed_off: &'a [HandedOff<'a>],
    options: &StreamOptions,
    compat: &AnthropicCompat,
    max_tokens: u64,
    thinking: &Thinking,
) -> (Map<String, Value>, Vec<WireMessage<'a>>) {
    let cache = cache_control(options, compat);
    let initial = initial_system_message(view);
    let initial_text = initial.map(system_message_text).unwrap_or_default();
    let conversation = if initial.is_some() && !handed_off.is_empty() { &handed_off[1..] } else { handed_off };
    let messages = wire::convert(conversation, cache.as_ref(), compat);

    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert("messages".into(), Value::Null);
    p.insert("max_tokens".into(), json!(max_tokens));
    p.insert("stream".into(), json!(true));
    let text_block = |text: &str| {
        let mut block = Map::new();
        block.insert("type".into(), json!("text"));
        block.insert("text".into(), json!(text));
        if let Some(c) = &cache {
            block.insert("cache_control".into(), c.clone());
        }
        Value::Object(block)
    };
    if compat.claude_code_identity {
        // A subscription token must present Claude Code's identity first.
        let mut system = vec![text_block(super::oauth::CLAUDE_CODE_IDENTITY)];
        if !initial_text.is_empty() {
            system.push(text_block(&initial_text));
        }
        p.insert("system".into(), Value::Array(system));
    } else if !initial_text.is_empty() {
        p.insert("system".into(), json!([text_block(&initial_text)]));
    }
    if let Some(t) = options.temperature
        && *thinking == Thinking::Off
        && compat.supports_temperature
    {
        p.insert("temperature".into(), json!(t));
    }
    let tools = current_tools(view);
    if !tools.is_empty() {
        let tool_cache = if compat.supports_cache_control_on_tools { cache.as_ref() } else { None };
        p.insert("tools".into(), Value::Array(convert_tools(&tools, compat, tool_cache)));
    }
    let thinking_off_allowed =
        model.thinking_level_map.as_ref().and_then(|m| m.get("off")).is_none_or(|v| !v.is_null());
    match thinking {
        Thinking::Off if model.reasoning && thinking_off_allowed => {
            p.insert("thinking".into(), json!({"type": "disabled"}));
        }
        Thinking::Off => {}
        _ if !model.reasoning => {}
        Thinking::Adaptive(effort) => {
            p.insert("thinking".into(), json!({"type": "adaptive", "display": "summarized"}));
            p.insert("output_config".into(), json!({"effort": effort}));
        }
        Thinking::Budget(budget) => {
            p.insert("thinking".into(), json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}));
        }
    }
    if let Some(user_id) = options.metadata.as_ref().and_then(|m| m.get("user_id")).and_then(Value::as_str) {
        p.insert("metadata".into(), json!({"user_id": user_id}));
    }
    if let Some(choice) = options.tool_choice {
        p.insert("tool_choice".into(), json!({"type": if choice == ToolChoice::Auto { "auto" } else { "none" }}));
    }
    (p, messages)
}

/// Keywords Anthropic's strict tool use rejects (with a 400 for the whole request).
fn anthropic_strict_unsupported(key: &str, value: &Value) -> bool {
    const KEYWORDS: [&str; 11] = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
    ];
    const FORMATS: [&str; 10] =
        ["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];
    match key {
        k if KEYWORDS.contains(&k) => true,
        "minItems" => value != &json!(0) && value != &json!(1),
        "format" => value.as_str().is_none_or(|f| !FORMATS.contains(&f)),
        _ => false,
    }
}

/// The error of a tool requiring strict sampling this model cannot give.
pub fn check_strict_tools(tools: &[Tool], compat: &AnthropicCompat) -> Result<(), String> {
    constrained::check_tools(tools, compat.supports_strict_tools, Some(anthropic_strict_unsupported))
}

/// Whether a `"prefer"` tool of `tools` is sent strict (only then can Claude's strict-tool limits
/// be worked around by sending it non-strict).
pub fn has_preferred_strict_tools(tools: &[Tool], compat: &AnthropicCompat) -> bool {
    compat.supports_strict_tools
        && !compat.disable_preferred_strict_tools
        && tools.iter().any(|tool| {
            constrained::prefers_strict(tool)
                && constrained::tool_parameters(tool, true, Some(anthropic_strict_unsupported)).0
        })
}

/// `{name, description, eager_input_streaming?, strict?, input_schema, cache_control? (last)}` per tool.
pub fn convert_tools(tools: &[Tool], compat: &AnthropicCompat, cache: Option<&Value>) -> Vec<Value> {
    let last = tools.len().saturating_sub(1);
    tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let allowed = compat.supports_strict_tools
                && !(compat.disable_preferred_strict_tools && constrained::prefers_strict(tool));
            let (strict, schema) = constrained::tool_parameters(tool, allowed, Some(anthropic_strict_unsupported));
            let mut input = Map::new();
            input.insert("type".into(), json!("object"));
            input.insert("properties".into(), schema.get("properties").cloned().unwrap_or_else(|| json!({})));
            input.insert("required".into(), schema.get("required").cloned().unwrap_or_else(|| json!([])));
            for key in ["additionalProperties", "$defs", "definitions"] {
                if let Some(v) = schema.get(key) {
                    input.insert(key.into(), v.clone());
                }
            }
            if strict && let Value::Object(mut full) = schema {
                // `{...parameters, ...legacyInputSchema}`: existing keys keep their place.
                full.extend(input);
                input = full;
            }
            let mut t = Map::new();
            let name =
                if compat.claude_code_identity { super::oauth::to_claude_code_name(&tool.name) } else { &tool.name };
            t.insert("name".into(), json!(name));
            t.insert("description".into(), json!(tool.description));
            if compat.supports_eager_tool_input_streaming {
                t.insert("eager_input_streaming".into(), json!(true));
            }
            if strict {
                t.insert("strict".into(), json!(true));
            }
            t.insert("input_schema".into(), Value::Object(input));
            if let Some(c) = cache.filter(|_| i == last) {
                t.insert("cache_control".into(), c.clone());
            }
            Value::Object(t)
        })
        .collect()
}

/// Converts the conversation (without the leading system message) into Anthropic messages.
pub fn convert_messages(messages: &[Message], cache: Option<&Value>, compat: &AnthropicCompat) -> Vec<Value> {
    let messages: Vec<HandedOff<'_>> = messages.iter().map(HandedOff::Borrowed).collect();
    match to_value(&wire::convert(&messages, cache, compat)) {
        Value::Array(items) => items,
        _ => Vec::new(),
    }
}

/// The cross-provider handoff with Anthropic's tool-call ids, borrowing unchanged messages.
pub(super) fn handoff<'a>(model: &Model, view: &'a [&'a Message]) -> Vec<HandedOff<'a>> {
    transform_for_model_borrowed(view, model, &|id: &str, _: &crate::types::AssistantMessage| {
        normalize_tool_call_id(id)
    })
}

/// [`handoff`] as a plan, for a body written more than once.
pub(super) fn handoff_plan(model: &Model, view: &[&Message]) -> Vec<crate::handoff::Handed> {
    crate::http::shared::plan_for_model(view, model, &|id: &str, _: &crate::types::AssistantMessage| {
        normalize_tool_call_id(id)
    })
}
