//! The `POST /responses` body (pi's `buildParams` and `convertResponsesMessages`).

use crate::handoff::HandedOff;
use crate::providers::constrained;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::wire::{self, Item};
use crate::http::body::to_value;
use crate::http::shared::{clamp_thinking_level, resolve_sampling_params, short_hash};
use crate::options::{CacheRetention, StreamOptions, ToolChoice};
use crate::transcript::{ToolChangeSupport, TranscriptContext, resolve_transcript_tools};
use crate::types::{AssistantMessage, Message, Model, ThinkingLevel, Tool};

/// Providers whose Responses tool-call ids keep the `call|item` form.
const TOOL_CALL_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];

/// `model.compat` of an `openai-responses` model (the fields ported; others are accepted).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResponsesCompatOverrides {
    /// Instructions use the `developer` role on reasoning models (default true).
    pub supports_developer_role: Option<bool>,
    /// Keep later system messages in place (default false: collapse).
    pub supports_mid_convo_system_messages: Option<bool>,
    /// `openrouter` or `openai` session headers (detected from provider and URL).
    pub session_affinity_format: Option<String>,
    /// `disabled` stops sending `prompt_cache_key`.
    pub prompt_cache_key_mode: Option<String>,
    /// `cacheRetention: long` sends `prompt_cache_retention: "24h"` (default true).
    pub supports_long_cache_retention: Option<bool>,
    /// Tools carry `strict: false` (default false: no `strict` field).
    pub supports_strict_mode: Option<bool>,
    /// Send `max_output_tokens` (default true).
    pub supports_max_output_tokens: Option<bool>,
    /// Everything else pi knows (grammar tools, tool search, explicit cache mode, managed effort).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// Resolved flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponsesCompat {
    /// See [`ResponsesCompatOverrides::supports_developer_role`].
    pub supports_developer_role: bool,
    /// See [`ResponsesCompatOverrides::supports_mid_convo_system_messages`].
    pub supports_mid_convo_system_messages: bool,
    /// See [`ResponsesCompatOverrides::session_affinity_format`].
    pub session_affinity_format: String,
    /// See [`ResponsesCompatOverrides::prompt_cache_key_mode`].
    pub prompt_cache_key_mode: String,
    /// See [`ResponsesCompatOverrides::supports_long_cache_retention`].
    pub supports_long_cache_retention: bool,
    /// See [`ResponsesCompatOverrides::supports_strict_mode`].
    pub supports_strict_mode: bool,
    /// See [`ResponsesCompatOverrides::supports_max_output_tokens`].
    pub supports_max_output_tokens: bool,
    /// `compat.supportsOpenAIGrammarTools`: tools declaring grammar constrained sampling are sent
    /// as `custom` tools (default false).
    pub supports_openai_grammar_tools: bool,
}

/// pi's `getCompat` for `openai-responses`.
pub fn resolve_compat(model: &Model) -> ResponsesCompat {
    let o: ResponsesCompatOverrides = model
        .compat
        .as_ref()
        .and_then(|raw| serde_json::from_value(Value::Object(raw.clone())).ok())
        .unwrap_or_default();
    let open_router = model.provider == "openrouter" || model.base_url.contains("openrouter.ai");
    ResponsesCompat {
        supports_developer_role: o.supports_developer_role.unwrap_or(true),
        supports_mid_convo_system_messages: o.supports_mid_convo_system_messages.unwrap_or(false),
        session_affinity_format: o
            .session_affinity_format
            .unwrap_or_else(|| if open_router { "openrouter" } else { "openai" }.to_owned()),
        prompt_cache_key_mode: o.prompt_cache_key_mode.unwrap_or_else(|| "auto".to_owned()),
        supports_long_cache_retention: o.supports_long_cache_retention.unwrap_or(true),
        supports_strict_mode: o.supports_strict_mode.unwrap_or(false),
        supports_max_output_tokens: o.supports_max_output_tokens.unwrap_or(true),
        supports_openai_grammar_tools: o
            .other
            .get("supportsOpenAIGrammarTools")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

/// The reasoning level actually requested: `options.reasoning` clamped to the model, `None` for off.
pub fn reasoning_effort(model: &Model, options: &StreamOptions) -> Option<ThinkingLevel> {
    options.reasoning.map(|level| clamp_thinking_level(model, level)).filter(|l| *l != ThinkingLevel::Off)
}

/// Builds the request body.
pub fn build_body(
    model: &Model,
    context: &TranscriptContext,
    options: &StreamOptions,
    compat: &ResponsesCompat,
) -> Map<String, Value> {
    let view: Vec<&Message> = context.messages().iter().collect();
    let handed_off = wire::handoff(model, &view);
    let (mut body, items) = build_body_parts(model, &view, &handed_off, options, compat);
    body.insert("input".into(), to_value(&items));
    body
}

/// The body as its top-level fields (with `input: null` in place) and the typed input items.
pub(crate) fn build_body_parts<'a>(
    model: &Model,
    view: &[&Message],
    handed_off: &'a [HandedOff<'a>],
    options: &StreamOptions,
    compat: &ResponsesCompat,
) -> (Map<String, Value>, Vec<Item<'a>>) {
    let cache_retention = options.cache_retention.unwrap_or_else(CacheRetention::from_env);
    let tools = resolve_transcript_tools(view, ToolChangeSupport::None);
    let grammar = constrained::grammar_input_properties(
        &crate::transcript::declared_tools(view),
        compat.supports_openai_grammar_tools,
    )
    .unwrap_or_default();
    let input = wire::convert(model, handed_off, &grammar);
    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert("input".into(), Value::Null);
    p.insert("stream".into(), json!(true));
    if cache_retention != CacheRetention::None
        && compat.prompt_cache_key_mode != "disabled"
        && let Some(session) = &options.session_id
    {
        p.insert("prompt_cache_key".into(), json!(session.chars().take(64).collect::<String>()));
    }
    if cache_retention == CacheRetention::Long && compat.supports_long_cache_retention {
        p.insert("prompt_cache_retention".into(), json!("24h"));
    }
    p.insert("store".into(), json!(false));
    if let Some(max) = options.max_tokens.filter(|m| *m > 0 && compat.supports_max_output_tokens) {
        p.insert("max_output_tokens".into(), json!(max.max(16)));
    }
    if let Some(t) = options.temperature {
        p.insert("temperature".into(), json!(t));
    }
    if !tools.request_tools.is_empty() {
        p.insert("tools".into(), Value::Array(convert_tools(&tools.request_tools, compat)));
    }
    if let Some(choice) = options.tool_choice {
        p.insert("tool_choice".into(), json!(if choice == ToolChoice::Auto { "auto" } else { "none" }));
    }
    let effort = reasoning_effort(model, options);
    if model.reasoning {
        let map = model.thinking_level_map.as_ref();
        match effort {
            Some(level) => {
                let value = match map.and_then(|m| m.get(level.as_str())) {
                    Some(Value::Null) | None => json!(level.as_str()),
                    Some(v) => v.clone(),
                };
                p.insert("reasoning".into(), json!({"effort": value, "summary": "auto"}));
                p.insert("include".into(), json!(["reasoning.encrypted_content"]));
            }
            None => {
                let off = map.and_then(|m| m.get("off"));
                if model.provider != "github-copilot" && !off.is_some_and(Value::is_null) {
                    p.insert("reasoning".into(), json!({"effort": off.cloned().unwrap_or_else(|| json!("none"))}));
                }
            }
        }
        if model.provider == "xai" {
            p.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
    }
    if let Some(sampling) = resolve_sampling_params(model, effort.unwrap_or(ThinkingLevel::Off), options) {
        for (k, v) in sampling {
            p.insert(k, v);
        }
    }
    (p, input)
}

/// `{type:"function", name, description, parameters, strict?}` per tool, or
/// `{type:"custom", name, description, format:{type:"grammar", syntax, definition}}` for a grammar tool.
pub fn convert_tools(tools: &[Tool], compat: &ResponsesCompat) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            if let Ok(Some(grammar)) = constrained::resolve_grammar(tool, compat.supports_openai_grammar_tools) {
                return json!({"type": "custom", "name": tool.name, "description": tool.description,
                    "format": {"type": "grammar", "syntax": grammar.format, "definition": grammar.definition}});
            }
            let mut t = Map::new();
            t.insert("type".into(), json!("function"));
            t.insert("name".into(), json!(tool.name));
            t.insert("description".into(), json!(tool.description));
            let (strict, parameters) = constrained::tool_parameters(tool, compat.supports_strict_mode, None);
            t.insert("parameters".into(), parameters);
            if compat.supports_strict_mode {
                t.insert("strict".into(), json!(strict));
            }
            Value::Object(t)
        })
        .collect()
}

fn normalize_id_part(part: &str) -> String {
    crate::handoff::normalize_responses_foreign_tool_call_id(part)
}

/// pi's Responses tool-call id normalisation (`source` is the message the call came from).
pub fn normalize_tool_call_id(model: &Model, id: &str, source: &AssistantMessage) -> String {
    let azure = model.api == "azure-openai-responses" && model.provider == "azure";
    if !TOOL_CALL_PROVIDERS.contains(&model.provider.as_str()) && !azure {
        return normalize_id_part(id);
    }
    let Some((call, rest)) = id.split_once('|') else {
        return normalize_id_part(id);
    };
    let item = rest.split('|').next().unwrap_or_default();
    let call = normalize_id_part(call);
    let foreign = source.provider != model.provider || source.api != model.api;
    let mut item =
        if foreign { format!("fc_{}", short_hash(item)).chars().take(64).collect() } else { normalize_id_part(item) };
    if !item.starts_with("fc_") {
        item = normalize_id_part(&format!("fc_{item}"));
    }
    format!("{call}|{item}")
}

/// Converts the transcript into Responses input items.
pub fn convert_messages(model: &Model, context: &TranscriptContext) -> Vec<Value> {
    let view: Vec<&Message> = context.messages().iter().collect();
    let messages = wire::handoff(model, &view);
    let grammar = constrained::grammar_input_properties(
        &crate::transcript::declared_tools(context.messages()),
        resolve_compat(model).supports_openai_grammar_tools,
    )
    .unwrap_or_default();
    match to_value(&wire::convert(model, &messages, &grammar)) {
        Value::Array(items) => items,
        _ => Vec::new(),
    }
}
