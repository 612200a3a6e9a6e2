//! Request-building helpers shared by the three HTTP providers.

use serde_json::{Map, Value};

use crate::options::{StreamOptions, ThinkingBudgets};
use crate::types::{Message, Model, ThinkingLevel};

/// `data:<mime>;base64,<data>`.
pub fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

pub use crate::models::clamp_thinking_level;

/// pi's `thinkingBudgetForLevel`: defaults minimal 1024, low 2048, medium 8192, high (and above)
/// 16384, overridden by `budgets`.
pub fn thinking_budget_for_level(level: ThinkingLevel, budgets: Option<&ThinkingBudgets>) -> u64 {
    let b = budgets.copied().unwrap_or_default();
    match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal => b.minimal.unwrap_or(1024),
        ThinkingLevel::Low => b.low.unwrap_or(2048),
        ThinkingLevel::Medium => b.medium.unwrap_or(8192),
        ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => b.high.unwrap_or(16384),
    }
}

/// pi's `resolveSamplingParams`: `model.samplingParams`, then the entry of
/// `samplingParamsByThinkingLevel` for the (clamped) level, then `options.sampling_params`.
pub fn resolve_sampling_params(
    model: &Model,
    level: ThinkingLevel,
    options: &StreamOptions,
) -> Option<Map<String, Value>> {
    let level = clamp_thinking_level(model, level);
    let by_level =
        model.sampling_params_by_thinking_level.as_ref().and_then(|m| m.get(level.as_str())).and_then(Value::as_object);
    if model.sampling_params.is_none() && by_level.is_none() && options.sampling_params.is_none() {
        return None;
    }
    let mut out = Map::new();
    for source in [model.sampling_params.as_ref(), by_level, options.sampling_params.as_ref()].into_iter().flatten() {
        for (k, v) in source {
            out.insert(k.clone(), v.clone());
        }
    }
    Some(out)
}

/// The OpenAI SDK's reading of one SSE event: JSON, with `event: error` or an `error` member
/// raised as an API error (its `message`, or its JSON when it has none).
pub fn parse_openai_sse_data(event: crate::sse::SseEventRef<'_>) -> Result<Value, String> {
    let data: Value = serde_json::from_str(event.data)
        .map_err(|_| "Error reading response: malformed server-sent event JSON.".to_owned())?;
    let error = if event.event == Some("error") {
        Some(data.get("error").filter(|e| !e.is_null()).unwrap_or(&data))
    } else {
        data.get("error").filter(|e| is_truthy(e))
    };
    if let Some(error) = error {
        return Err(match error.get("message").filter(|m| is_truthy(m)) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => error.to_string(),
        });
    }
    Ok(data)
}

use crate::js::is_truthy;

/// pi's `calculateCost`: sets `usage.cost` from the model's per-million rates.
pub fn calculate_cost(model: &Model, usage: &mut crate::types::Usage) {
    crate::models::calculate_cost(model, usage);
}

/// Cross-provider handoff for `model` (pi's `transformMessages`), with the API's tool-call id
/// normalisation.
/// `normalize_id` receives the id and the assistant message the call came from.
pub fn transform_for_model(
    messages: &[Message],
    model: &Model,
    normalize_id: &dyn Fn(&str, &crate::types::AssistantMessage) -> String,
) -> Vec<Message> {
    crate::handoff::transform_messages(messages, model, normalize_id)
}

/// [`transform_for_model`] borrowing the messages the handoff leaves unchanged.
pub fn transform_for_model_borrowed<'a, M: std::borrow::Borrow<Message>>(
    messages: &'a [M],
    model: &Model,
    normalize_id: &dyn Fn(&str, &crate::types::AssistantMessage) -> String,
) -> Vec<crate::handoff::HandedOff<'a>> {
    crate::handoff::transform_messages_borrowed(messages, model, normalize_id)
}

/// [`transform_for_model_borrowed`] as a plan of positions and copies
/// ([`crate::handoff::plan_handoff`]), for a body written more than once.
pub fn plan_for_model<M: std::borrow::Borrow<Message>>(
    messages: &[M],
    model: &Model,
    normalize_id: &dyn Fn(&str, &crate::types::AssistantMessage) -> String,
) -> Vec<crate::handoff::Handed> {
    crate::handoff::plan_handoff(messages, model, normalize_id)
}

/// pi's `shortHash` (cyrb53 over UTF-16 code units, base 36).
pub fn short_hash(text: &str) -> String {
    crate::handoff::short_hash(text)
}

/// The final arguments of a tool call from its streamed text (pi's `ToolCallArgumentsStream.finish`):
/// the object, and `argumentsError` when the text was not a JSON object.
pub fn finish_tool_arguments(text: &str) -> (Map<String, Value>, Option<String>) {
    let parsed = crate::tool_args::parse_tool_call_arguments(text);
    (parsed.arguments, parsed.arguments_error)
}

/// Before an error ends the response: every tool call whose arguments are still streaming gets its
/// best-effort partial arguments, as pi's live partial had them.
pub fn settle_open_tool_calls(out: &mut crate::http::ProviderOutput) {
    let open: Vec<(usize, Map<String, Value>)> = out
        .message()
        .content
        .iter()
        .enumerate()
        .filter_map(|(i, _)| out.partial().tool_arguments_text(i).map(|t| (i, partial_arguments(t))))
        .collect();
    for (index, arguments) in open {
        if let Some(crate::types::AssistantBlock::ToolCall(call)) = out.message_mut().content.get_mut(index) {
            call.arguments = arguments;
        }
    }
}

/// Best-effort arguments of incomplete JSON (pi's `parseStreamingJson`), always an object.
pub fn partial_arguments(text: &str) -> Map<String, Value> {
    crate::tool_args::parse_streaming_json(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_default_and_override() {
        assert_eq!(thinking_budget_for_level(ThinkingLevel::Xhigh, None), 16384);
        let custom = ThinkingBudgets { low: Some(100), ..Default::default() };
        assert_eq!(thinking_budget_for_level(ThinkingLevel::Low, Some(&custom)), 100);
        assert_eq!(thinking_budget_for_level(ThinkingLevel::Medium, Some(&custom)), 8192);
    }

    #[test]
    fn openai_sse_errors() {
        let ev = |event, data| crate::sse::SseEventRef { event, data, id: None };
        assert_eq!(
            parse_openai_sse_data(ev(None, "{")).unwrap_err(),
            "Error reading response: malformed server-sent event JSON."
        );
        assert_eq!(parse_openai_sse_data(ev(None, r#"{"error":{"message":"m"}}"#)).unwrap_err(), "m");
        assert_eq!(parse_openai_sse_data(ev(Some("error"), r#"{"code":1}"#)).unwrap_err(), r#"{"code":1}"#);
        assert!(parse_openai_sse_data(ev(None, r#"{"error":null,"x":1}"#)).is_ok());
    }
}
