//! The `POST /chat/completions` body (pi's `buildParams` and `convertMessages`).

use serde_json::{Map, Value, json};

use super::compat::CompletionsCompat;
use crate::http::shared::{
    clamp_thinking_level, data_url, resolve_sampling_params, thinking_budget_for_level, transform_for_model,
};
use crate::options::{CacheRetention, StreamOptions, ToolChoice};
use crate::transcript::{
    ResolvedTools, ToolChangeSupport, TranscriptContext, render_system_message_update, resolve_transcript,
    resolve_transcript_tools, system_message_text,
};
use crate::types::{AssistantBlock, Content, Message, Model, ThinkingLevel, Tool, UserBlock};

/// The three fields a thinking block's signature may name, where the server streamed it.
const REASONING_FIELDS: [&str; 3] = ["reasoning", "reasoning_content", "reasoning_text"];

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
    let cache_retention = options.cache_retention.unwrap_or_else(CacheRetention::from_env);
    let tools = resolve_transcript_tools(context.messages(), tool_support(compat));
    let mut messages = convert_messages(model, context, compat, &tools);
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
    } else if compat.requires_tools_with_tool_history && has_tool_history(context.messages()) {
        request_tools = Some(Vec::new());
    }
    if compat.cache_control_format.as_deref() == Some("anthropic") && cache_retention != CacheRetention::None {
        let mut marker = json!({"type": "ephemeral"});
        if cache_retention == CacheRetention::Long && compat.supports_long_cache_retention {
            marker["ttl"] = json!("1h");
        }
        apply_cache_control(&mut messages, request_tools.as_mut(), &marker);
    }
    p.insert("messages".into(), Value::Array(messages));
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
    p
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

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        _ => false,
    })
}

/// `{type:"function", function:{name, description, parameters, strict?}}` per tool.
pub fn convert_tools(tools: &[Tool], compat: &CompletionsCompat) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            let mut function = Map::new();
            function.insert("name".into(), json!(tool.name));
            function.insert("description".into(), json!(tool.description));
            function.insert("parameters".into(), tool.parameters.clone());
            if compat.supports_strict_mode {
                function.insert("strict".into(), json!(false));
            }
            json!({"type": "function", "function": function})
        })
        .collect()
}

fn apply_cache_control(messages: &mut [Value], tools: Option<&mut Vec<Value>>, marker: &Value) {
    if let Some(m) = messages.iter_mut().find(|m| matches!(m["role"].as_str(), Some("system" | "developer"))) {
        add_cache_control(m, marker);
    }
    if let Some(last) = tools.and_then(|t| t.last_mut()).and_then(Value::as_object_mut) {
        last.insert("cache_control".into(), marker.clone());
    }
    for m in messages.iter_mut().rev() {
        if matches!(m["role"].as_str(), Some("user" | "assistant" | "tool")) && add_cache_control(m, marker) {
            break;
        }
    }
}

fn add_cache_control(message: &mut Value, marker: &Value) -> bool {
    match message.get_mut("content") {
        Some(Value::String(s)) => {
            if s.is_empty() {
                return false;
            }
            let text = std::mem::take(s);
            message["content"] = json!([{"type": "text", "text": text, "cache_control": marker}]);
            true
        }
        Some(Value::Array(parts)) => match parts.iter_mut().rev().find(|p| p["type"] == "text") {
            Some(part) => {
                part["cache_control"] = marker.clone();
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// Converts the transcript into Chat Completions messages (pi's `convertMessages`).
pub fn convert_messages(
    model: &Model,
    context: &TranscriptContext,
    compat: &CompletionsCompat,
    tools: &ResolvedTools,
) -> Vec<Value> {
    let messages = transform_for_model(context.messages(), model, &|id: &str, _: &crate::types::AssistantMessage| {
        normalize_tool_call_id(model, id)
    });
    let instruction_role = if model.reasoning && compat.supports_developer_role { "developer" } else { "system" };
    let mut params: Vec<Value> = Vec::with_capacity(messages.len());
    let mut last_role: Option<&str> = None;
    let mut system_index = 0usize;
    let mut i = 0usize;
    while i < messages.len() {
        let msg = &messages[i];
        if compat.requires_assistant_after_tool_result
            && last_role == Some("toolResult")
            && matches!(msg, Message::User(_))
        {
            params.push(json!({"role": "assistant", "content": "I have processed the tool results."}));
        }
        match msg {
            Message::System(s) => {
                let index = system_index;
                system_index += 1;
                if index >= tools.folded_system_messages {
                    let added = s.tools_added.as_deref().unwrap_or_default();
                    if !added.is_empty() {
                        params.push(json!({"role": "system", "tools": convert_tools(added, compat)}));
                    }
                }
                let text = if i == 0 { system_message_text(s) } else { render_system_message_update(s) };
                if !text.is_empty() {
                    params.push(json!({"role": instruction_role, "content": text}));
                }
                last_role = Some("system");
            }
            Message::User(u) => {
                match &u.content {
                    Content::Text(text) => params.push(json!({"role": "user", "content": text})),
                    Content::Blocks(blocks) => {
                        let content: Vec<Value> = blocks
                            .iter()
                            .filter(|b| !matches!(b, UserBlock::Text(t) if t.text.is_empty()))
                            .map(|b| match b {
                                UserBlock::Text(t) => json!({"type": "text", "text": t.text}),
                                UserBlock::Image(img) => {
                                    json!({"type": "image_url", "image_url": {"url": data_url(&img.mime_type, &img.data)}})
                                }
                            })
                            .collect();
                        if content.is_empty() {
                            i += 1;
                            continue;
                        }
                        params.push(json!({"role": "user", "content": content}));
                    }
                }
                last_role = Some("user");
            }
            Message::Assistant(a) => {
                let non_null =
                    compat.requires_assistant_after_tool_result || compat.requires_non_null_assistant_content;
                let mut out = Map::new();
                out.insert("role".into(), json!("assistant"));
                out.insert("content".into(), if non_null { json!("") } else { Value::Null });
                let texts: Vec<&str> =
                    a.content.iter().filter_map(AssistantBlock::as_text).filter(|t| !t.trim().is_empty()).collect();
                let joined: String = texts.concat();
                let thinking: Vec<&crate::types::ThinkingContent> = a
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => Some(t),
                        _ => None,
                    })
                    .collect();
                let reasoning_details = a.content.iter().find_map(|b| match b {
                    AssistantBlock::Thinking(t) => parse_reasoning_details(t.thinking_signature.as_deref()),
                    _ => None,
                });
                if !thinking.is_empty() {
                    if compat.requires_thinking_as_text {
                        let text = thinking.iter().map(|t| t.thinking.as_str()).collect::<Vec<_>>().join("\n\n");
                        let mut parts = vec![json!({"type": "text", "text": text})];
                        parts.extend(texts.iter().map(|t| json!({"type": "text", "text": t})));
                        out.insert("content".into(), Value::Array(parts));
                    } else {
                        if !joined.is_empty() {
                            out.insert("content".into(), json!(joined));
                        }
                        if reasoning_details.is_none() {
                            let mut signature = thinking[0].thinking_signature.as_deref();
                            if model.provider == "opencode-go" && signature == Some("reasoning") {
                                signature = Some("reasoning_content");
                            }
                            if let Some(field) = signature.filter(|s| REASONING_FIELDS.contains(s)) {
                                let text = thinking.iter().map(|t| t.thinking.as_str()).collect::<Vec<_>>().join("\n");
                                out.insert(field.to_owned(), json!(text));
                            }
                        }
                    }
                } else if !joined.is_empty() {
                    out.insert("content".into(), json!(joined));
                }
                let calls: Vec<Value> = a
                    .tool_calls()
                    .map(|tc| {
                        json!({
                            "id": tc.id,
                            "type": "function",
                            "function": {"name": tc.name, "arguments": Value::Object(tc.arguments.clone()).to_string()},
                        })
                    })
                    .collect();
                let has_calls = !calls.is_empty();
                if has_calls {
                    out.insert("tool_calls".into(), Value::Array(calls));
                }
                if let Some(details) = reasoning_details {
                    out.insert("reasoning_details".into(), details);
                }
                if compat.requires_reasoning_content_on_assistant_messages
                    && model.reasoning
                    && !out.contains_key("reasoning_content")
                {
                    out.insert("reasoning_content".into(), json!(""));
                }
                let has_content = match &out["content"] {
                    Value::String(s) => !s.is_empty(),
                    Value::Array(a) => !a.is_empty(),
                    _ => false,
                };
                if !has_content && !has_calls {
                    i += 1;
                    continue;
                }
                params.push(Value::Object(out));
                last_role = Some("assistant");
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                let mut j = i;
                while let Some(Message::ToolResult(r)) = messages.get(j) {
                    let text = r.content.iter().filter_map(UserBlock::as_text).collect::<Vec<_>>().join("\n");
                    let has_images = r.content.iter().any(|b| matches!(b, UserBlock::Image(_)));
                    let text = if !text.trim().is_empty() {
                        text
                    } else if has_images {
                        "(see attached image)".to_owned()
                    } else {
                        "(no tool output)".to_owned()
                    };
                    let mut m = Map::new();
                    m.insert("role".into(), json!("tool"));
                    m.insert("content".into(), json!(text));
                    m.insert("tool_call_id".into(), json!(r.tool_call_id));
                    if compat.requires_tool_result_name && !r.tool_name.is_empty() {
                        m.insert("name".into(), json!(r.tool_name));
                    }
                    params.push(Value::Object(m));
                    if has_images && model.supports_images() {
                        for b in &r.content {
                            if let UserBlock::Image(img) = b {
                                images.push(json!({"type": "image_url", "image_url": {"url": data_url(&img.mime_type, &img.data)}}));
                            }
                        }
                    }
                    j += 1;
                }
                if images.is_empty() {
                    last_role = Some("toolResult");
                } else {
                    if compat.requires_assistant_after_tool_result {
                        params.push(json!({"role": "assistant", "content": "I have processed the tool results."}));
                    }
                    let mut content = vec![json!({"type": "text", "text": "Attached image(s) from tool result:"})];
                    content.extend(images);
                    params.push(json!({"role": "user", "content": content}));
                    last_role = Some("user");
                }
                i = j;
                continue;
            }
        }
        i += 1;
    }
    params
}

/// OpenRouter-style `reasoning_details` stored as a thinking signature (a non-empty JSON array of
/// `reasoning.summary` / `reasoning.encrypted` / `reasoning.text` objects).
fn parse_reasoning_details(signature: Option<&str>) -> Option<Value> {
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

/// `resolveTranscript` with this API's compat flag.
pub fn resolve_context(context: TranscriptContext, compat: &CompletionsCompat) -> TranscriptContext {
    resolve_transcript(context, compat.supports_mid_convo_system_messages)
}
