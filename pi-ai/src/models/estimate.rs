//! Token estimates of a transcript, and fitting `maxTokens` into the context window
//! (pi's `utils/estimate.js` and `clampMaxTokensToContext`).

use crate::transcript::system_message_text;
use crate::types::{AssistantBlock, Content, Message, Model, StopReason, Usage, UserBlock};

const CHARS_PER_TOKEN: f64 = 3.5;
const ESTIMATED_IMAGE_CHARS: usize = 4800;
const CONTEXT_SAFETY_TOKENS: i64 = 4096;
const CONTEXT_SAFETY_RATIO: f64 = 0.15;
const MIN_OUTPUT_WITH_RATIO_MARGIN: i64 = 32768;
const MIN_MAX_TOKENS: i64 = 1;

use crate::js::js_len;

fn tokens(chars: usize) -> u64 {
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u64
}

fn user_blocks_chars(blocks: &[UserBlock]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            UserBlock::Text(t) => js_len(&t.text),
            UserBlock::Image(_) => ESTIMATED_IMAGE_CHARS,
        })
        .sum()
}

/// Tokens a usage report says the context holds (`totalTokens`, else the sum of its parts).
pub fn usage_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

fn json_tokens<T: serde::Serialize>(items: &Option<Vec<T>>) -> u64 {
    match items {
        Some(items) if !items.is_empty() => tokens(js_len(&serde_json::to_string(items).unwrap_or_default())),
        _ => 0,
    }
}

/// pi's `estimateMessageTokens`: characters / 3.5, images as 4800 characters.
pub fn estimate_message_tokens(message: &Message) -> u64 {
    match message {
        Message::System(m) => {
            tokens(js_len(&system_message_text(m))) + json_tokens(&m.tools_added) + json_tokens(&m.tools_removed)
        }
        Message::User(m) => match &m.content {
            Content::Text(s) => tokens(js_len(s)),
            Content::Blocks(b) => tokens(user_blocks_chars(b)),
        },
        Message::ToolResult(m) => tokens(user_blocks_chars(&m.content)),
        Message::Assistant(m) => tokens(
            m.content
                .iter()
                .map(|b| match b {
                    AssistantBlock::Text(t) => js_len(&t.text),
                    AssistantBlock::Thinking(t) => js_len(&t.thinking),
                    AssistantBlock::ToolCall(c) => {
                        js_len(&c.name) + js_len(&serde_json::to_string(&c.arguments).unwrap_or_default())
                    }
                })
                .sum(),
        ),
    }
}

/// pi's `estimateContextTokens`: the last usable assistant usage plus estimates of the messages
/// after it, or estimates of every message.
pub fn estimate_context_tokens(messages: &[Message]) -> u64 {
    let mut latest_prefix = i128::MIN;
    let mut last: Option<(u64, usize)> = None;
    for (i, message) in messages.iter().enumerate() {
        if let Message::Assistant(a) = message {
            let applies = i128::from(a.timestamp) >= latest_prefix;
            let usable = !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error);
            let used = usage_context_tokens(&a.usage);
            if applies && usable && used > 0 {
                last = Some((used, i));
            }
        }
        latest_prefix = latest_prefix.max(i128::from(message.timestamp()));
    }
    match last {
        Some((used, index)) => used + messages[index + 1..].iter().map(estimate_message_tokens).sum::<u64>(),
        None => messages.iter().map(estimate_message_tokens).sum(),
    }
}

/// pi's `clampMaxTokensToContext`: fits `max_tokens` into the window, leaving a margin for the
/// input being counted higher than estimated.
///
/// ```
/// use pi_ai::Model;
/// let m = Model { context_window: 128_000, max_tokens: 16_384, ..Default::default() };
/// assert_eq!(pi_ai::models::clamp_max_tokens_to_context(&m, &[], 16_384), 16_384);
/// let small = Model { context_window: 8_000, ..Default::default() };
/// assert_eq!(pi_ai::models::clamp_max_tokens_to_context(&small, &[], 16_384), 3_904);
/// ```
pub fn clamp_max_tokens_to_context(model: &Model, messages: &[Message], max_tokens: u64) -> u64 {
    let max_tokens = max_tokens as i64;
    if model.context_window == 0 {
        return max_tokens.max(MIN_MAX_TOKENS) as u64;
    }
    let window = model.context_window as i64;
    let input = estimate_context_tokens(messages) as i64;
    let margin = CONTEXT_SAFETY_TOKENS.max((input as f64 * CONTEXT_SAFETY_RATIO).ceil() as i64);
    let mut room = window - input - margin;
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN {
        room = MIN_OUTPUT_WITH_RATIO_MARGIN.min(window - input - CONTEXT_SAFETY_TOKENS);
    }
    max_tokens.min(room.max(MIN_MAX_TOKENS)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, UserMessage};

    #[test]
    fn last_usage_plus_trailing_estimates() {
        let a = AssistantMessage {
            usage: Usage { total_tokens: 1000, ..Default::default() },
            timestamp: 5,
            ..Default::default()
        };
        let messages = vec![
            Message::User(UserMessage::new("x".repeat(700)).at(1).into()),
            Message::Assistant(a.into()),
            Message::User(UserMessage::new("y".repeat(7)).at(6).into()),
        ];
        assert_eq!(estimate_context_tokens(&messages), 1002);
        let m = Model { context_window: 200_000, ..Default::default() };
        // room = 200000 - 1002 - 4096 = 194902
        assert_eq!(clamp_max_tokens_to_context(&m, &messages, 1_000_000), 194_902);
    }
}
