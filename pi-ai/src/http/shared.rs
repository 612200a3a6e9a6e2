//! Request-building helpers shared by the three HTTP providers.

use serde_json::{Map, Value};

use crate::options::{StreamOptions, ThinkingBudgets};
use crate::types::{Message, Model, ThinkingLevel};

/// `data:<mime>;base64,<data>`.
pub fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

/// pi's `getSupportedThinkingLevels`: `[off]` for a non-reasoning model; `xhigh` and `max` only
/// with a non-null `thinkingLevelMap` entry; a `null` entry removes a level.
pub fn supported_thinking_levels(model: &Model) -> Vec<ThinkingLevel> {
    if !model.reasoning {
        return vec![ThinkingLevel::Off];
    }
    ThinkingLevel::ALL
        .into_iter()
        .filter(|level| {
            let mapped = model.thinking_level_map.as_ref().and_then(|m| m.get(level.as_str()));
            if mapped.is_some_and(Value::is_null) {
                return false;
            }
            !matches!(level, ThinkingLevel::Xhigh | ThinkingLevel::Max) || mapped.is_some()
        })
        .collect()
}

/// pi's `clampThinkingLevel`: the level if supported, else the nearest supported one above, else
/// below.
pub fn clamp_thinking_level(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    let available = supported_thinking_levels(model);
    if available.contains(&level) {
        return level;
    }
    let all = ThinkingLevel::ALL;
    let index = all.iter().position(|l| *l == level).unwrap_or(0);
    all[index..]
        .iter()
        .chain(all[..index].iter().rev())
        .find(|l| available.contains(l))
        .copied()
        .unwrap_or(ThinkingLevel::Off)
}

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

/// pi's `calculateCost`: sets `usage.cost` from the model's per-million rates.
pub fn calculate_cost(model: &Model, usage: &mut crate::types::Usage) {
    crate::http::interim::models::calculate_cost(model, usage);
}

/// Cross-provider handoff for `model` (pi's `transformMessages`), with the API's tool-call id
/// normalisation.
pub fn transform_for_model(messages: &[Message], model: &Model, normalize_id: &dyn Fn(&str) -> String) -> Vec<Message> {
    crate::http::interim::handoff::transform_messages(messages, model, Some(normalize_id))
}

/// The final arguments of a tool call from its streamed text (pi's `ToolCallArgumentsStream.finish`):
/// the object, and `argumentsError` when the text was not a JSON object.
pub fn finish_tool_arguments(text: &str) -> (Map<String, Value>, Option<String>) {
    let parsed = crate::http::interim::tool_args::parse_tool_call_arguments(text);
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
    match crate::http::interim::tool_args::parse_streaming_json(text) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamping_moves_up_then_down() {
        let mut m = Model { reasoning: true, ..Default::default() };
        assert_eq!(clamp_thinking_level(&m, ThinkingLevel::Xhigh), ThinkingLevel::High);
        m.thinking_level_map = Some(serde_json::from_str(r#"{"minimal":null,"xhigh":"xhigh"}"#).unwrap());
        assert_eq!(clamp_thinking_level(&m, ThinkingLevel::Minimal), ThinkingLevel::Low);
        assert_eq!(clamp_thinking_level(&m, ThinkingLevel::Max), ThinkingLevel::Xhigh);
        let plain = Model::default();
        assert_eq!(clamp_thinking_level(&plain, ThinkingLevel::High), ThinkingLevel::Off);
    }
}
