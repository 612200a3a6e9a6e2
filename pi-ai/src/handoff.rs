//! Cross-provider handoff: preparing a transcript written by any model for the target model
//! (pi's `transformMessages`), and the tool-call id normalisers of each API.
//!
//! - images become a text placeholder when the target has no image input;
//! - assistant blocks from another model lose thinking, signatures and `thoughtSignature`, and
//!   their tool-call ids are rewritten by the API's normaliser (later tool results follow);
//! - assistant messages that failed (`error`, `aborted`) are dropped;
//! - a tool call without a result gets a synthetic error result, and a system message that
//!   arrives while tool calls are pending is held until their results.

use std::collections::{HashMap, HashSet};

use crate::types::{
    AssistantBlock, AssistantMessage, Content, Message, Model, StopReason, TextContent, ToolCall, ToolResultMessage,
    UserBlock, now_ms,
};

const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";

fn replace_images(content: &[UserBlock], placeholder: &str) -> Vec<UserBlock> {
    let mut result = Vec::with_capacity(content.len());
    let mut previous_was_placeholder = false;
    for block in content {
        match block {
            UserBlock::Image(_) => {
                if !previous_was_placeholder {
                    result.push(UserBlock::Text(TextContent::new(placeholder)));
                }
                previous_was_placeholder = true;
            }
            UserBlock::Text(t) => {
                previous_was_placeholder = t.text == placeholder;
                result.push(block.clone());
            }
        }
    }
    result
}

/// Prepares `messages` for `model` (pi's `transformMessages`). `normalize_id(id, source)` rewrites
/// the ids of tool calls from other models; pass `&|id, _| id.to_owned()` to keep them.
pub fn transform_messages(
    messages: &[Message],
    model: &Model,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
) -> Vec<Message> {
    let vision = model.supports_images();
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut transformed = Vec::with_capacity(messages.len());
    for message in messages {
        transformed.push(match message {
            Message::User(m) if !vision => match &m.content {
                Content::Blocks(blocks) => {
                    let mut m = m.clone();
                    m.content = Content::Blocks(replace_images(blocks, USER_IMAGE_PLACEHOLDER));
                    Message::User(m)
                }
                Content::Text(_) => message.clone(),
            },
            Message::ToolResult(m) => {
                let mut m = m.clone();
                if !vision {
                    m.content = replace_images(&m.content, TOOL_IMAGE_PLACEHOLDER);
                }
                if let Some(id) = id_map.get(&m.tool_call_id) {
                    m.tool_call_id = id.clone();
                }
                Message::ToolResult(m)
            }
            Message::Assistant(a) => {
                let same = a.provider == model.provider && a.api == model.api && a.model == model.id;
                let content = a
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantBlock::Thinking(t) => {
                            if !same {
                                None
                            } else if t.redacted == Some(true) || t.thinking_signature.is_some() {
                                Some(block.clone())
                            } else if t.thinking.trim().is_empty() {
                                None
                            } else {
                                Some(block.clone())
                            }
                        }
                        AssistantBlock::Text(t) if !same => {
                            Some(AssistantBlock::Text(TextContent::new(t.text.clone())))
                        }
                        AssistantBlock::Text(_) => Some(block.clone()),
                        AssistantBlock::ToolCall(call) if !same => {
                            let mut call = call.clone();
                            call.thought_signature = None;
                            let id = normalize_id(&call.id, a);
                            if id != call.id {
                                id_map.insert(call.id.clone(), id.clone());
                                call.id = id;
                            }
                            Some(AssistantBlock::ToolCall(call))
                        }
                        AssistantBlock::ToolCall(_) => Some(block.clone()),
                    })
                    .collect();
                Message::Assistant(AssistantMessage { content, ..a.clone() })
            }
            _ => message.clone(),
        });
    }

    let mut result = Vec::with_capacity(transformed.len());
    let mut pending: Vec<ToolCall> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let mut held: Vec<Message> = Vec::new();
    let close = |result: &mut Vec<Message>,
                 pending: &mut Vec<ToolCall>,
                 answered: &mut HashSet<String>,
                 held: &mut Vec<Message>| {
        for call in pending.drain(..) {
            if !answered.contains(&call.id) {
                result.push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: call.id,
                    tool_name: call.name,
                    content: vec![UserBlock::Text(TextContent::new("No result provided"))],
                    is_error: true,
                    timestamp: now_ms(),
                    ..Default::default()
                }));
            }
        }
        answered.clear();
        result.append(held);
    };
    for message in transformed {
        match &message {
            Message::Assistant(a) => {
                close(&mut result, &mut pending, &mut answered, &mut held);
                if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                let calls: Vec<ToolCall> = a.tool_calls().cloned().collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                result.push(message);
            }
            Message::ToolResult(r) => {
                answered.insert(r.tool_call_id.clone());
                result.push(message);
            }
            Message::System(_) if !pending.is_empty() => held.push(message),
            Message::System(_) => result.push(message),
            Message::User(_) => {
                close(&mut result, &mut pending, &mut answered, &mut held);
                result.push(message);
            }
        }
    }
    close(&mut result, &mut pending, &mut answered, &mut held);
    result
}

/// Replaces every UTF-16 unit outside `[a-zA-Z0-9_-]` with `_` (so the result is ASCII).
fn sanitize(id: &str) -> String {
    id.chars()
        .flat_map(|c| {
            let keep = c.is_ascii_alphanumeric() || c == '_' || c == '-';
            std::iter::repeat_n(if keep { c } else { '_' }, if keep { 1 } else { c.len_utf16() })
        })
        .collect()
}

/// Anthropic's tool-call ids: `[^a-zA-Z0-9_-]` becomes `_`, at most 64 characters.
///
/// ```
/// assert_eq!(pi_ai::handoff::normalize_anthropic_tool_call_id("call|abc+/="), "call_abc___");
/// ```
pub fn normalize_anthropic_tool_call_id(id: &str) -> String {
    let mut s = sanitize(id);
    s.truncate(64);
    s
}

/// Chat Completions' tool-call ids: a Responses `call|item` id becomes `call_item` (both halves
/// sanitised), or `call[..31] + "_" + shortHash(id)[..8]` when longer than 40; provider `openai`
/// also cuts plain ids to 40.
///
/// ```
/// use pi_ai::handoff::normalize_completions_tool_call_id;
/// let long = format!("call_ABC123|fc_{}", "x+/=".repeat(30));
/// assert_eq!(normalize_completions_tool_call_id(&long, "openai"), "call_ABC123_c3fw5n1f");
/// assert_eq!(normalize_completions_tool_call_id("call_short|fc_1", "groq"), "call_short_fc_1");
/// ```
pub fn normalize_completions_tool_call_id(id: &str, target_provider: &str) -> String {
    if let Some((call, item)) = id.split_once('|') {
        let call = sanitize(call);
        let item = sanitize(item);
        let combined = if item.is_empty() { call.clone() } else { format!("{call}_{item}") };
        if combined.len() <= 40 {
            return combined;
        }
        let hash: String = short_hash(id).chars().take(8).collect();
        let prefix: String = call.chars().take((40 - hash.len() - 1).max(1)).collect();
        return format!("{prefix}_{hash}");
    }
    if target_provider == "openai" && id.encode_utf16().count() > 40 {
        return String::from_utf16_lossy(&id.encode_utf16().take(40).collect::<Vec<_>>());
    }
    id.to_owned()
}

/// Responses' ids for calls from a foreign provider: sanitised, at most 64 characters, trailing
/// `_` trimmed.
pub fn normalize_responses_foreign_tool_call_id(id: &str) -> String {
    let mut s = sanitize(id);
    s.truncate(64);
    s.trim_end_matches('_').to_owned()
}

/// pi's `shortHash`: a cyrb53 variant over UTF-16 code units, as two base-36 numbers.
///
/// ```
/// assert_eq!(pi_ai::handoff::short_hash(""), "k4n83c7h0j2b");
/// ```
pub fn short_hash(s: &str) -> String {
    let (mut h1, mut h2): (u32, u32) = (0xdeadbeef, 0x41c6ce57);
    for unit in s.encode_utf16() {
        let c = u32::from(unit);
        h1 = (h1 ^ c).wrapping_mul(2654435761);
        h2 = (h2 ^ c).wrapping_mul(1597334677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2246822507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3266489909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2246822507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3266489909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(std::char::from_digit(n % 36, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ImageContent, SystemMessage, ThinkingContent, UserMessage};
    use serde_json::Map;

    #[test]
    fn short_hash_vectors() {
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("abc"), "y0biex7f9bbh");
        assert_eq!(short_hash("héllo🙈"), "1l2as0416a3mad");
    }

    fn assistant(provider: &str, content: Vec<AssistantBlock>, stop: StopReason) -> Message {
        Message::Assistant(AssistantMessage {
            content,
            api: "anthropic-messages".into(),
            provider: provider.into(),
            model: "claude".into(),
            stop_reason: stop,
            ..Default::default()
        })
    }

    #[test]
    fn worked_example() {
        let target = Model {
            id: "gpt".into(),
            api: "openai-completions".into(),
            provider: "openai".into(),
            input: vec!["text".into()],
            ..Default::default()
        };
        let img = || UserBlock::Image(ImageContent::new("AAA", "image/png"));
        let c2 = ToolCall::new("c2", "t", Map::new());
        let input = vec![
            Message::User(UserMessage::new(vec![UserBlock::Text(TextContent::new("look")), img(), img()]).at(1)),
            assistant(
                "anthropic",
                vec![
                    AssistantBlock::Thinking(ThinkingContent::new("hmm")),
                    AssistantBlock::Text(TextContent {
                        text: "ok".into(),
                        text_signature: Some("s".into()),
                        ..Default::default()
                    }),
                    AssistantBlock::ToolCall(ToolCall::new("call|abc+/=", "t", Map::new())),
                ],
                StopReason::ToolUse,
            ),
            Message::System(SystemMessage::new("mid")),
            Message::User(UserMessage::new("next").at(2)),
            assistant("anthropic", vec![AssistantBlock::Text(TextContent::new("partial"))], StopReason::Aborted),
            assistant("openai", vec![AssistantBlock::ToolCall(c2.clone())], StopReason::ToolUse),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "c2".into(),
                tool_name: "t".into(),
                ..Default::default()
            }),
        ];
        let out = transform_messages(&input, &target, &|id, _| normalize_anthropic_tool_call_id(id));
        let roles: Vec<_> = out.iter().map(Message::role).collect();
        assert_eq!(roles, ["user", "assistant", "toolResult", "system", "user", "assistant", "toolResult"]);
        let Message::User(u) = &out[0] else { panic!() };
        assert_eq!(
            u.content,
            Content::Blocks(vec![
                UserBlock::Text(TextContent::new("look")),
                UserBlock::Text(TextContent::new(USER_IMAGE_PLACEHOLDER))
            ])
        );
        let Message::Assistant(a) = &out[1] else { panic!() };
        assert_eq!(
            a.content,
            vec![
                AssistantBlock::Text(TextContent::new("ok")),
                AssistantBlock::ToolCall(ToolCall::new("call_abc___", "t", Map::new()))
            ]
        );
        let Message::ToolResult(r) = &out[2] else { panic!() };
        assert_eq!((r.tool_call_id.as_str(), r.is_error), ("call_abc___", true));
        assert_eq!(r.content, vec![UserBlock::Text(TextContent::new("No result provided"))]);
        let Message::Assistant(a2) = &out[5] else { panic!() };
        assert_eq!(a2.content, vec![AssistantBlock::ToolCall(c2)]);
    }

    #[test]
    fn system_messages_wait_for_pending_results() {
        let target =
            Model { provider: "anthropic".into(), input: vec!["text".into(), "image".into()], ..Default::default() };
        let input = vec![
            assistant("x", vec![AssistantBlock::ToolCall(ToolCall::new("a", "t", Map::new()))], StopReason::ToolUse),
            Message::System(SystemMessage::new("held")),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "a".into(),
                tool_name: "t".into(),
                ..Default::default()
            }),
            Message::User(UserMessage::new("u")),
        ];
        let roles: Vec<_> =
            transform_messages(&input, &target, &|id, _| id.to_owned()).iter().map(Message::role).collect();
        assert_eq!(roles, ["assistant", "toolResult", "system", "user"]);
    }

    #[test]
    fn normalisers() {
        assert_eq!(normalize_anthropic_tool_call_id(&"a🙈".repeat(40)).len(), 64);
        assert_eq!(normalize_responses_foreign_tool_call_id("toolu_01+"), "toolu_01");
        assert_eq!(normalize_completions_tool_call_id(&"x".repeat(50), "openai").len(), 40);
        assert_eq!(normalize_completions_tool_call_id(&"x".repeat(50), "groq").len(), 50);
    }
}
