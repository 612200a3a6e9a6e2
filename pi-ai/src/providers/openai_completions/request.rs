//! The `POST /chat/completions` body (pi's `buildParams` and `convertMessages`).

use serde_json::{Map, Value, json};

use super::compat::CompletionsCompat;
use super::wire::{self, WireList};
use crate::handoff::HandedOff;
use crate::http::body::to_value;
use crate::http::shared::{
    clamp_thinking_level, resolve_sampling_params, thinking_budget_for_level, transform_for_model_borrowed,
};
use crate::options::{CacheRetention, StreamOptions, ToolChoice};
use crate::providers::constrained;
use crate::transcript::{ResolvedTools, ToolChangeSupport, TranscriptContext, resolve_transcript_tools};
use crate::types::{Message, Model, ThinkingLevel, Tool};

/// The three fields a thinking block's signature may name, where the server streamed it.
pub(super) const REASONING_FIELDS: [&str; 3] = ["reasoning", "reasoning_content", "reasoning_text"];

/// The reasoning level actually requested: `options.reasoning` clamped to the model, `None` for off.
pub fn reasoning_effort(model: &Model, options: &StreamOptions) -> Option<ThinkingLevel> {
    options.reasoning.map(|level| clamp_thinking_level(model, level)).filter(|l| *l != ThinkingLevel::Off)
}

/// pi's tool-call id normalisation for Chat Completions.
pub fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    crate::handoff::normalize_completions_tool_call_id(id, &model.provider)
}

fn tool_support(compat: &CompletionsCompat) -> ToolChangeSupport {
    if compat.supports_mid_convo_system_messages && compat.supports_mid_convo_tool_additions {
        ToolChangeSupport::Additions
    } else {
        ToolChangeSupport::None
    }
}

/// Builds the request body.
pub fn build_body(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    compat: &CompletionsCompat,
) -> Map<String, Value> {
    let view: Vec<&Message> = context.messages().iter().collect();
    let messages = handoff(model, &view);
    let (mut body, wire) = build_body_parts(model, &view, &messages, options, compat);
    body.insert("messages".into(), to_value(&wire));
    body
}

/// The body as its top-level fields (with `messages: null` in place) and the typed message list
/// (converted whole only when cache markers are placed on it; otherwise converted as it is
/// written).
pub(super) fn build_body_parts<'a>(
    model: &'a Model,
    view: &[&Message],
    handed_off: &'a [HandedOff<'a>],
    options: &StreamOptions,
    compat: &'a CompletionsCompat,
) -> (Map<String, Value>, WireList<'a>) {
    let cache_retention = options.cache_retention.unwrap_or_else(CacheRetention::from_env);
    let tools = resolve_transcript_tools(view, tool_support(compat));
    let grammar = grammar_tools(view, compat);
    let effort = reasoning_effort(model, options);

    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert("messages".into(), Value::Null); // placed here, filled below (cache markers first)
    p.insert("stream".into(), json!(true));
    let key_mode = compat.prompt_cache_key_mode.as_deref().unwrap_or("auto");
    let supports_key = key_mode == "enabled"
        || (key_mode == "auto"
            && (model.base_url.contains("api.openai.com")
                || (cache_retention == CacheRetention::Long && compat.supports_long_cache_retention)));
    if cache_retention != CacheRetention::None
        && supports_key
        && let Some(session) = &options.session_id
    {
        p.insert("prompt_cache_key".into(), json!(session.chars().take(64).collect::<String>()));
    }
    if cache_retention == CacheRetention::Long && compat.supports_long_cache_retention {
        p.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if compat.supports_usage_in_streaming {
        p.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        p.insert("store".into(), json!(false));
    }
    if let Some(max) = options.max_tokens.filter(|m| *m > 0) {
        let field = if compat.max_tokens_field == "max_tokens" { "max_tokens" } else { "max_completion_tokens" };
        p.insert(field.into(), json!(max));
    }
    if let Some(t) = options.temperature {
        p.insert("temperature".into(), json!(t));
    }
    let mut request_tools = None;
    if !tools.request_tools.is_empty() {
        request_tools = Some(convert_tools(&tools.request_tools, compat));
    } else if compat.requires_tools_with_tool_history && has_tool_history(view) {
        request_tools = Some(Vec::new());
    }
    let messages =
        if compat.cache_control_format.as_deref() == Some("anthropic") && cache_retention != CacheRetention::None {
            let mut messages = wire::convert(model, handed_off, compat, &tools, &grammar);
            let mut marker = json!({"type": "ephemeral"});
            if cache_retention == CacheRetention::Long && compat.supports_long_cache_retention {
                marker["ttl"] = json!("1h");
            }
            wire::apply_cache_control(&mut messages, request_tools.as_mut(), &marker);
            WireList::Built(messages)
        } else {
            WireList::Streamed(wire::StreamedWire { model, messages: handed_off, compat, tools, grammar })
        };
    if let Some(tools) = request_tools {
        let non_empty = !tools.is_empty();
        p.insert("tools".into(), Value::Array(tools));
        if non_empty && compat.zai_tool_stream {
            p.insert("tool_stream".into(), json!(true));
        }
    }
    if let Some(choice) = options.tool_choice {
        p.insert("tool_choice".into(), json!(if choice == ToolChoice::Auto { "auto" } else { "none" }));
    }
    if let Some(priority) = &compat.vllm_priority {
        p.insert("priority".into(), priority.clone());
    }
    let budget = clamped_thinking_budget(model, options, effort, &p);
    apply_thinking(&mut p, model, compat, effort, budget);
    let budget_field = compat
        .thinking_token_budget_field
        .clone()
        .or_else(|| compat.supports_thinking_token_budget.then(|| "thinking_token_budget".to_owned()));
    if let (Some(field), Some(budget)) = (budget_field, budget) {
        p.insert(field, json!(budget));
    }
    if let Some(routing) = &compat.open_router_routing {
        p.insert("provider".into(), routing.clone());
    }
    if let Some(routing) = compat.vercel_gateway_routing.as_ref().and_then(Value::as_object) {
        let mut gateway = Map::new();
        for key in ["only", "order"] {
            if let Some(v) = routing.get(key).filter(|v| !v.is_null()) {
                gateway.insert(key.into(), v.clone());
            }
        }
        if !gateway.is_empty() {
            p.insert("providerOptions".into(), json!({"gateway": gateway}));
        }
    }
    if let Some(sampling) = resolve_sampling_params(model, effort.unwrap_or(ThinkingLevel::Off), options) {
        for (k, v) in sampling {
            p.insert(k, v);
        }
    }
    (p, messages)
}

fn mapped_level(model: &Model, level: &str) -> Option<Value> {
    model.thinking_level_map.as_ref().and_then(|m| m.get(level)).cloned()
}

/// `map[level] ?? level` (`null` and absent both fall back).
fn effort_value(model: &Model, level: ThinkingLevel) -> Value {
    match mapped_level(model, level.as_str()) {
        Some(Value::Null) | None => json!(level.as_str()),
        Some(v) => v,
    }
}

fn clamped_thinking_budget(
    model: &Model,
    options: &StreamOptions,
    effort: Option<ThinkingLevel>,
    params: &Map<String, Value>,
) -> Option<u64> {
    let level = effort?;
    if !model.reasoning {
        return None;
    }
    let ceiling = params
        .get("max_tokens")
        .or_else(|| params.get("max_completion_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(model.max_tokens);
    let budget = thinking_budget_for_level(level, options.thinking_budgets.as_ref()).min(ceiling.saturating_sub(1024));
    (budget > 0).then_some(budget)
}

fn apply_thinking(
    p: &mut Map<String, Value>,
    model: &Model,
    compat: &CompletionsCompat,
    effort: Option<ThinkingLevel>,
    budget: Option<u64>,
) {
    if !model.reasoning {
        return;
    }
    let off = mapped_level(model, "off");
    match compat.thinking_format.as_str() {
        "zai" => {
            p.insert(
                "thinking".into(),
                if effort.is_some() {
                    json!({"type": "enabled", "clear_thinking": false})
                } else {
                    json!({"type": "disabled"})
                },
            );
            if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                let v = mapped_level(model, level.as_str()).unwrap_or_else(|| json!(level.as_str()));
                if v.is_string() {
                    p.insert("reasoning_effort".into(), v);
                }
            }
        }
        "qwen" => {
            p.insert("enable_thinking".into(), json!(effort.is_some()));
            if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                let v = effort_value(model, level);
                if v.is_string() {
                    p.insert("reasoning_effort".into(), v);
                }
            }
        }
        "qwen-chat-template" => {
            p.insert(
                "chat_template_kwargs".into(),
                json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
            );
        }
        "chat-template" => {
            if let Some(v) = chat_template_values(model, effort, &compat.chat_template_kwargs, budget) {
                p.insert("chat_template_kwargs".into(), Value::Object(v));
            }
        }
        "baseten" => {
            if let Some(v) = chat_template_values(model, effort, &compat.chat_template_args, budget) {
                p.insert("chat_template_args".into(), Value::Object(v));
            }
            if compat.supports_reasoning_effort {
                let mapped = match effort {
                    Some(level) => mapped_level(model, level.as_str()),
                    None => off.clone(),
                };
                let v = mapped.or_else(|| effort.map(|l| json!(l.as_str())));
                if let Some(v) = v.filter(Value::is_string) {
                    p.insert("reasoning_effort".into(), v);
                }
            }
        }
        "deepseek" => {
            if effort.is_some() {
                p.insert("thinking".into(), json!({"type": "enabled"}));
            } else if off != Some(Value::Null) {
                p.insert("thinking".into(), json!({"type": "disabled"}));
            }
            if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                p.insert("reasoning_effort".into(), effort_value(model, level));
            }
        }
        "openrouter" => {
            if let Some(level) = effort {
                p.insert("reasoning".into(), json!({"effort": effort_value(model, level)}));
            } else if off != Some(Value::Null) {
                p.insert("reasoning".into(), json!({"effort": off.unwrap_or_else(|| json!("none"))}));
            }
        }
        "ant-ling" => {
            if let Some(v) = effort.and_then(|l| mapped_level(model, l.as_str())).filter(Value::is_string) {
                p.insert("reasoning".into(), json!({"effort": v}));
            }
        }
        "together" => {
            p.insert("reasoning".into(), json!({"enabled": effort.is_some()}));
            if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                p.insert("reasoning_effort".into(), effort_value(model, level));
            }
        }
        "string-thinking" => {
            if let Some(level) = effort {
                p.insert("thinking".into(), effort_value(model, level));
            } else if off != Some(Value::Null) {
                p.insert("thinking".into(), off.unwrap_or_else(|| json!("none")));
            }
        }
        _ => {
            if !compat.supports_reasoning_effort {
                return;
            }
            match effort {
                Some(level) => {
                    p.insert("reasoning_effort".into(), effort_value(model, level));
                }
                None => {
                    if let Some(v) = off.filter(Value::is_string) {
                        p.insert("reasoning_effort".into(), v);
                    }
                }
            }
        }
    }
}

fn chat_template_values(
    model: &Model,
    effort: Option<ThinkingLevel>,
    values: &Map<String, Value>,
    budget: Option<u64>,
) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    for (key, value) in values {
        let resolved = match value {
            Value::Object(spec) => {
                if effort.is_none() && spec.get("omitWhenOff").is_some_and(|v| v.as_bool() == Some(true)) {
                    None
                } else {
                    match spec.get("$var").and_then(Value::as_str) {
                        Some("thinking.enabled") => Some(json!(effort.is_some())),
                        Some("thinking.budget") => budget.map(|b| json!(b)),
                        _ => {
                            let mapped = match effort {
                                Some(level) => mapped_level(model, level.as_str()),
                                None => mapped_level(model, "off"),
                            };
                            match mapped {
                                None => effort.map(|l| json!(l.as_str())),
                                Some(v) if v.is_string() => Some(v),
                                Some(_) => None,
                            }
                        }
                    }
                }
            }
            other => Some(other.clone()),
        };
        if let Some(v) = resolved {
            out.insert(key.clone(), v);
        }
    }
    (!out.is_empty()).then_some(out)
}

fn has_tool_history(messages: &[&Message]) -> bool {
    messages.iter().any(|m| match *m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        _ => false,
    })
}

/// Grammar tool name → input property, for the declared tools (none when the model takes no
/// grammar tools; a declaration that cannot work was refused when the request was built).
pub fn grammar_tools(view: &[&Message], compat: &CompletionsCompat) -> std::collections::HashMap<String, String> {
    constrained::grammar_input_properties(
        &crate::transcript::declared_tools(view),
        compat.supports_openai_grammar_tools,
    )
    .unwrap_or_default()
}

/// `{type:"function", function:{name, description, parameters, strict?}}` per tool, or
/// `{type:"custom", custom:{name, description, format:{type:"grammar", grammar:{syntax, definition}}}}`
/// for a grammar tool.
pub fn convert_tools(tools: &[Tool], compat: &CompletionsCompat) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            if let Ok(Some(grammar)) = constrained::resolve_grammar(tool, compat.supports_openai_grammar_tools) {
                return json!({"type": "custom", "custom": {"name": tool.name, "description": tool.description,
                    "format": {"type": "grammar", "grammar": {"syntax": grammar.format, "definition": grammar.definition}}}});
            }
            let mut function = Map::new();
            function.insert("name".into(), json!(tool.name));
            function.insert("description".into(), json!(tool.description));
            let (strict, parameters) = constrained::tool_parameters(tool, compat.supports_strict_mode, None);
            function.insert("parameters".into(), parameters);
            if compat.supports_strict_mode {
                function.insert("strict".into(), json!(strict));
            }
            json!({"type": "function", "function": function})
        })
        .collect()
}

/// Converts the transcript into Chat Completions messages (pi's `convertMessages`).
pub fn convert_messages(
    model: &Model,
    context: &TranscriptContext,
    compat: &CompletionsCompat,
    tools: &ResolvedTools,
) -> Vec<Value> {
    let view: Vec<&Message> = context.messages().iter().collect();
    let messages = handoff(model, &view);
    let grammar = grammar_tools(&view, compat);
    match to_value(&wire::convert(model, &messages, compat, tools, &grammar)) {
        Value::Array(items) => items,
        _ => Vec::new(),
    }
}

/// The cross-provider handoff with this API's tool-call ids, borrowing unchanged messages.
pub(super) fn handoff<'a>(model: &Model, view: &'a [&'a Message]) -> Vec<HandedOff<'a>> {
    transform_for_model_borrowed(view, model, &|id: &str, _: &crate::types::AssistantMessage| {
        normalize_tool_call_id(model, id)
    })
}

/// [`handoff`] as a plan ([`crate::handoff::plan_handoff`]), for a body written more than once.
pub(super) fn handoff_plan(model: &Model, view: &[&Message]) -> Vec<crate::handoff::Handed> {
    crate::http::shared::plan_for_model(view, model, &|id: &str, _: &crate::types::AssistantMessage| {
        normalize_tool_call_id(model, id)
    })
}

/// OpenRouter-style `reasoning_details` stored as a thinking signature (a non-empty JSON array of
/// `reasoning.summary` / `reasoning.encrypted` / `reasoning.text` objects).
pub(super) fn parse_reasoning_details(signature: Option<&str>) -> Option<Value> {
    let parsed: Value = serde_json::from_str(signature?).ok()?;
    let items = parsed.as_array()?;
    let valid = !items.is_empty()
        && items.iter().all(|d| match d["type"].as_str() {
            Some("reasoning.summary") => d["summary"].is_string(),
            Some("reasoning.encrypted") => d["data"].is_string(),
            Some("reasoning.text") => d["text"].is_string(),
            _ => false,
        });
    valid.then_some(parsed)
}
