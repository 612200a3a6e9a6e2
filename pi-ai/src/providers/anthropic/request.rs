//! The `POST /v1/messages` body (pi's `buildParams` and `convertMessages`).

use serde_json::{Map, Value, json};

use super::compat::AnthropicCompat;
use crate::http::shared::{thinking_budget_for_level, transform_for_model};
use crate::options::{CacheRetention, StreamOptions, ToolChoice};
use crate::transcript::{
    TranscriptContext, blocks_text, current_tools, initial_system_message, render_system_message_update,
    system_message_text,
};
use crate::types::{
    AssistantBlock, Content, ImageContent, Message, Model, ThinkingLevel, Tool, ToolResultMessage, UserBlock,
};

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
    let cache = cache_control(options, compat);
    let initial = initial_system_message(context.messages());
    let initial_text = initial.map(system_message_text).unwrap_or_default();
    let transformed =
        transform_for_model(context.messages(), model, &|id: &str, _: &crate::types::AssistantMessage| {
            normalize_tool_call_id(id)
        });
    let conversation = if initial.is_some() && !transformed.is_empty() { &transformed[1..] } else { &transformed[..] };
    let messages = convert_messages(conversation, cache.as_ref(), compat);

    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert("messages".into(), Value::Array(messages));
    p.insert("max_tokens".into(), json!(max_tokens));
    p.insert("stream".into(), json!(true));
    if !initial_text.is_empty() {
        let mut block = Map::new();
        block.insert("type".into(), json!("text"));
        block.insert("text".into(), json!(initial_text));
        if let Some(c) = &cache {
            block.insert("cache_control".into(), c.clone());
        }
        p.insert("system".into(), json!([block]));
    }
    if let Some(t) = options.temperature
        && *thinking == Thinking::Off
        && compat.supports_temperature
    {
        p.insert("temperature".into(), json!(t));
    }
    let tools = current_tools(context.messages());
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
    p
}

/// `{name, description, eager_input_streaming?, input_schema, cache_control? (last)}` per tool.
pub fn convert_tools(tools: &[Tool], compat: &AnthropicCompat, cache: Option<&Value>) -> Vec<Value> {
    let last = tools.len().saturating_sub(1);
    tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let schema = &tool.parameters;
            let mut input = Map::new();
            input.insert("type".into(), json!("object"));
            input.insert("properties".into(), schema.get("properties").cloned().unwrap_or_else(|| json!({})));
            input.insert("required".into(), schema.get("required").cloned().unwrap_or_else(|| json!([])));
            for key in ["additionalProperties", "$defs", "definitions"] {
                if let Some(v) = schema.get(key) {
                    input.insert(key.into(), v.clone());
                }
            }
            let mut t = Map::new();
            t.insert("name".into(), json!(tool.name));
            t.insert("description".into(), json!(tool.description));
            if compat.supports_eager_tool_input_streaming {
                t.insert("eager_input_streaming".into(), json!(true));
            }
            t.insert("input_schema".into(), Value::Object(input));
            if let Some(c) = cache.filter(|_| i == last) {
                t.insert("cache_control".into(), c.clone());
            }
            Value::Object(t)
        })
        .collect()
}

fn image_block(image: &ImageContent) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}})
}

/// pi's `convertContentBlocks`: text only → the texts joined with "\n"; with images → blocks,
/// with "(see attached image)" first when there is no text.
fn tool_result_content(content: &[UserBlock]) -> Value {
    if !content.iter().any(|b| matches!(b, UserBlock::Image(_))) {
        return json!(blocks_text(content, "\n"));
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .map(|b| match b {
            UserBlock::Text(t) => json!({"type": "text", "text": t.text}),
            UserBlock::Image(img) => image_block(img),
        })
        .collect();
    if !content.iter().any(|b| matches!(b, UserBlock::Text(_))) {
        blocks.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(blocks)
}

const ERROR_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";

/// pi's `splitErrorToolResultImages`: an error result's images move after all results.
fn split_error_images(msg: &ToolResultMessage) -> Option<(Vec<UserBlock>, String, Vec<&ImageContent>)> {
    if !msg.is_error {
        return None;
    }
    let images: Vec<&ImageContent> = msg
        .content
        .iter()
        .filter_map(|b| match b {
            UserBlock::Image(i) => Some(i),
            UserBlock::Text(_) => None,
        })
        .collect();
    if images.is_empty() {
        return None;
    }
    let mut content = Vec::new();
    let mut previous_was_placeholder = false;
    for block in &msg.content {
        match block {
            UserBlock::Image(_) => {
                if !previous_was_placeholder {
                    content.push(UserBlock::Text(crate::types::TextContent::new(ERROR_IMAGE_PLACEHOLDER)));
                }
                previous_was_placeholder = true;
            }
            UserBlock::Text(t) => {
                previous_was_placeholder = t.text == ERROR_IMAGE_PLACEHOLDER;
                content.push(block.clone());
            }
        }
    }
    let caption = format!("Images from the error result of tool call {} ({}):", msg.tool_call_id, msg.tool_name);
    Some((content, caption, images))
}

/// Converts the conversation (without the leading system message) into Anthropic messages.
pub fn convert_messages(messages: &[Message], cache: Option<&Value>, compat: &AnthropicCompat) -> Vec<Value> {
    let mut params: Vec<Value> = Vec::with_capacity(messages.len());
    let mut pending_system: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::System(s) => {
                let text = render_system_message_update(s);
                if !text.is_empty() {
                    pending_system.push(json!({"role": "system", "content": [{"type": "text", "text": text}]}));
                }
            }
            Message::User(u) => match &u.content {
                Content::Text(text) => {
                    if !text.trim().is_empty() {
                        params.push(json!({"role": "user", "content": text}));
                    }
                }
                Content::Blocks(blocks) => {
                    let content: Vec<Value> = blocks
                        .iter()
                        .filter(|b| !matches!(b, UserBlock::Text(t) if t.text.trim().is_empty()))
                        .map(|b| match b {
                            UserBlock::Text(t) => json!({"type": "text", "text": t.text}),
                            UserBlock::Image(img) => image_block(img),
                        })
                        .collect();
                    if !content.is_empty() {
                        params.push(json!({"role": "user", "content": content}));
                    }
                }
            },
            Message::Assistant(a) => {
                let mut blocks = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantBlock::Text(t) => {
                            if !t.text.trim().is_empty() {
                                blocks.push(json!({"type": "text", "text": t.text}));
                            }
                        }
                        AssistantBlock::Thinking(t) => {
                            if t.redacted == Some(true) {
                                blocks.push(json!({"type": "redacted_thinking", "data": t.thinking_signature}));
                                continue;
                            }
                            let signature = t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty());
                            if t.thinking.trim().is_empty() && signature.is_none() {
                                continue;
                            }
                            blocks.push(match signature {
                                Some(sig) => json!({"type": "thinking", "thinking": t.thinking, "signature": sig}),
                                None if compat.allow_empty_signature => {
                                    json!({"type": "thinking", "thinking": t.thinking, "signature": ""})
                                }
                                None => json!({"type": "text", "text": t.thinking}),
                            });
                        }
                        AssistantBlock::ToolCall(call) => {
                            blocks.push(
                                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}),
                            );
                        }
                    }
                }
                if blocks.is_empty() {
                    i += 1;
                    continue;
                }
                params.append(&mut pending_system);
                params.push(json!({"role": "assistant", "content": blocks}));
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                let mut error_images = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i) {
                    match split_error_images(r) {
                        Some((content, caption, images)) => {
                            results.push(json!({"type": "tool_result", "tool_use_id": r.tool_call_id, "content": tool_result_content(&content), "is_error": r.is_error}));
                            error_images.push(json!({"type": "text", "text": caption}));
                            error_images.extend(images.into_iter().map(image_block));
                        }
                        None => results.push(json!({"type": "tool_result", "tool_use_id": r.tool_call_id, "content": tool_result_content(&r.content), "is_error": r.is_error})),
                    }
                    i += 1;
                }
                results.append(&mut error_images);
                params.push(json!({"role": "user", "content": results}));
                continue;
            }
        }
        i += 1;
    }
    params.append(&mut pending_system);
    if let (Some(cache), Some(last)) = (cache, params.last_mut())
        && matches!(last["role"].as_str(), Some("user" | "system"))
    {
        match last.get_mut("content") {
            Some(Value::Array(blocks)) => {
                if let Some(block) = blocks.last_mut()
                    && matches!(
                        block["type"].as_str(),
                        Some("text" | "image" | "tool_result" | "tool_addition" | "tool_removal")
                    )
                {
                    block["cache_control"] = cache.clone();
                }
            }
            Some(Value::String(s)) => {
                let text = std::mem::take(s);
                last["content"] = json!([{"type": "text", "text": text, "cache_control": cache}]);
            }
            _ => {}
        }
    }
    params
}
