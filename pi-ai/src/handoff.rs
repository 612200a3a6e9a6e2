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
    transform_messages_borrowed(messages, model, normalize_id).into_iter().map(HandedOff::into_owned).collect()
}

/// A message after the handoff: the caller's own when the handoff left it unchanged, otherwise a
/// changed copy (or a synthetic tool result). Two words, so a long transcript stays cheap to hold.
#[derive(Clone, Debug, PartialEq)]
pub enum HandedOff<'a> {
    /// Unchanged.
    Borrowed(&'a Message),
    /// Changed or synthetic.
    Owned(Box<Message>),
}

impl HandedOff<'_> {
    /// The message as an owned value (cloning a borrowed one).
    pub fn into_owned(self) -> Message {
        match self {
            HandedOff::Borrowed(m) => m.clone(),
            HandedOff::Owned(m) => *m,
        }
    }
}

impl std::ops::Deref for HandedOff<'_> {
    type Target = Message;

    fn deref(&self) -> &Message {
        match self {
            HandedOff::Borrowed(m) => m,
            HandedOff::Owned(m) => m,
        }
    }
}

/// [`transform_messages`] without copying: messages the handoff leaves unchanged are borrowed,
/// only changed ones (and synthetic tool results) are owned.
pub fn transform_messages_borrowed<'a, M: std::borrow::Borrow<Message>>(
    messages: &'a [M],
    model: &Model,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
) -> Vec<HandedOff<'a>> {
    let (mut transformed, order) = transform_in_order(messages, model, normalize_id);
    order
        .into_iter()
        .filter_map(|slot| match slot {
            Slot::Take(index) => transformed.get_mut(index).and_then(Option::take),
            Slot::Synthetic(result) => Some(HandedOff::Owned(result)),
        })
        .collect()
}

/// One message of a [`plan_handoff`]: a position in the input (unchanged) or a changed copy.
#[derive(Clone, Debug, PartialEq)]
pub enum Handed {
    /// The input message at this position, unchanged.
    Same(usize),
    /// A changed copy or a synthetic tool result.
    Changed(Box<Message>),
}

/// [`transform_messages_borrowed`]'s answer as positions and copies, borrowing nothing: a
/// request body written twice from the same messages (measured, then sent) plans the handoff
/// once and applies it each time ([`apply_handoff`]).
pub fn plan_handoff<M: std::borrow::Borrow<Message>>(
    messages: &[M],
    model: &Model,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
) -> Vec<Handed> {
    let (mut transformed, order) = transform_in_order(messages, model, normalize_id);
    order
        .into_iter()
        .filter_map(|slot| match slot {
            Slot::Take(index) => transformed.get_mut(index).and_then(Option::take).map(|m| match m {
                HandedOff::Borrowed(_) => Handed::Same(index),
                HandedOff::Owned(m) => Handed::Changed(m),
            }),
            Slot::Synthetic(result) => Some(Handed::Changed(result)),
        })
        .collect()
}

/// A [`plan_handoff`] of `messages` applied to them: what [`transform_messages_borrowed`] gives,
/// the changed messages borrowed from the plan. The plan must have been made for these messages;
/// a position past their end (a plan made for others) is a bug: it fails a debug build and is
/// skipped in a release one.
pub fn apply_handoff<'a, M: std::borrow::Borrow<Message>>(plan: &'a [Handed], messages: &'a [M]) -> Vec<HandedOff<'a>> {
    plan.iter()
        .filter_map(|h| match h {
            Handed::Same(index) => {
                debug_assert!(*index < messages.len(), "a handoff plan applied to other messages");
                messages.get(*index).map(|m| HandedOff::Borrowed(m.borrow()))
            }
            Handed::Changed(m) => Some(HandedOff::Borrowed(m)),
        })
        .collect()
}

/// Where a message of the handoff's output comes from.
enum Slot {
    /// The transformed message at this position.
    Take(usize),
    /// A synthetic tool result.
    Synthetic(Box<Message>),
}

/// Both passes of `transformMessages`: every message transformed (borrowed when unchanged), and
/// the output's order as positions into that list plus synthetic results.
fn transform_in_order<'a, M: std::borrow::Borrow<Message>>(
    messages: &'a [M],
    model: &Model,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
) -> (Vec<Option<HandedOff<'a>>>, Vec<Slot>) {
    let vision = model.supports_images();
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut transformed: Vec<Option<HandedOff<'a>>> = Vec::with_capacity(messages.len());
    for message in messages {
        transformed.push(Some(transform_one(message.borrow(), model, vision, normalize_id, &mut id_map)));
    }

    // Pending tool calls are tracked by reference into `transformed`, which is only read here;
    // the output order is recorded as indices plus synthetic results, and assembled afterwards.
    let mut order: Vec<Slot> = Vec::with_capacity(transformed.len());
    {
        let view: Vec<&Message> = transformed.iter().flatten().map(|m| &**m).collect();
        let mut pending: Vec<&ToolCall> = Vec::new();
        let mut answered: Vec<&str> = Vec::new();
        let mut held: Vec<usize> = Vec::new();
        let close =
            |order: &mut Vec<Slot>, pending: &mut Vec<&ToolCall>, answered: &mut Vec<&str>, held: &mut Vec<usize>| {
                // Usually a handful of calls: a linear scan beats hashing; many use a set.
                let set: Option<HashSet<&str>> =
                    (pending.len() * answered.len() > 256).then(|| answered.iter().copied().collect());
                for call in pending.drain(..) {
                    let done = match &set {
                        Some(set) => set.contains(call.id.as_str()),
                        None => answered.contains(&call.id.as_str()),
                    };
                    if !done {
                        order.push(Slot::Synthetic(Box::new(Message::ToolResult(
                            ToolResultMessage {
                                tool_call_id: call.id.clone(),
                                tool_name: call.name.clone(),
                                content: vec![UserBlock::Text(TextContent::new("No result provided"))],
                                is_error: true,
                                timestamp: now_ms(),
                                ..Default::default()
                            }
                            .into(),
                        ))));
                    }
                }
                answered.clear();
                order.extend(held.drain(..).map(Slot::Take));
            };
        for (index, message) in view.iter().enumerate() {
            match message {
                Message::Assistant(a) => {
                    close(&mut order, &mut pending, &mut answered, &mut held);
                    if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) {
                        continue;
                    }
                    let calls: Vec<&ToolCall> = a.tool_calls().collect();
                    if !calls.is_empty() {
                        pending = calls;
                        answered.clear();
                    }
                    order.push(Slot::Take(index));
                }
                Message::ToolResult(r) => {
                    answered.push(r.tool_call_id.as_str());
                    order.push(Slot::Take(index));
                }
                Message::System(_) if !pending.is_empty() => held.push(index),
                Message::System(_) => order.push(Slot::Take(index)),
                Message::User(_) => {
                    close(&mut order, &mut pending, &mut answered, &mut held);
                    order.push(Slot::Take(index));
                }
            }
        }
        close(&mut order, &mut pending, &mut answered, &mut held);
    }
    (transformed, order)
}

/// The handoff of one message (the first pass of `transformMessages`): borrowed when unchanged.
fn transform_one<'a>(
    message: &'a Message,
    model: &Model,
    vision: bool,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
    id_map: &mut HashMap<String, String>,
) -> HandedOff<'a> {
    let has_image = |blocks: &[UserBlock]| blocks.iter().any(|b| matches!(b, UserBlock::Image(_)));
    match message {
        Message::User(m) if !vision => match &m.content {
            Content::Blocks(blocks) if has_image(blocks) => {
                let mut m = m.clone();
                m.content = Content::Blocks(replace_images(blocks, USER_IMAGE_PLACEHOLDER));
                HandedOff::Owned(Box::new(Message::User(m)))
            }
            _ => HandedOff::Borrowed(message),
        },
        Message::ToolResult(r) => {
            let strip = !vision && has_image(&r.content);
            let new_id = id_map.get(&r.tool_call_id);
            if !strip && new_id.is_none() {
                return HandedOff::Borrowed(message);
            }
            let mut m = r.clone();
            if strip {
                m.content = replace_images(&m.content, TOOL_IMAGE_PLACEHOLDER);
            }
            if let Some(id) = new_id {
                m.tool_call_id = id.clone();
            }
            HandedOff::Owned(Box::new(Message::ToolResult(m)))
        }
        Message::Assistant(a) => {
            let same = a.provider == model.provider && a.api == model.api && a.model == model.id;
            if same {
                if a.content.iter().all(keeps_same_model_block) {
                    return HandedOff::Borrowed(message);
                }
                let content = a.content.iter().filter(|b| keeps_same_model_block(b)).cloned().collect();
                return HandedOff::Owned(Box::new(Message::Assistant(with_content(a, content).into())));
            }
            let mut ids: Vec<Option<String>> = Vec::new();
            let mut unchanged = true;
            for block in &a.content {
                match block {
                    AssistantBlock::Thinking(_) => unchanged = false,
                    AssistantBlock::Text(t) => {
                        unchanged &= t.text_signature.is_none() && t.extra.is_empty() && t.key_order.is_canonical();
                    }
                    AssistantBlock::ToolCall(call) => {
                        unchanged &= call.thought_signature.is_none();
                        let id = normalize_id(&call.id, a);
                        if id == call.id {
                            ids.push(None);
                        } else {
                            unchanged = false;
                            id_map.insert(call.id.clone(), id.clone());
                            ids.push(Some(id));
                        }
                    }
                }
            }
            if unchanged {
                return HandedOff::Borrowed(message);
            }
            let mut ids = ids.into_iter();
            let content = a
                .content
                .iter()
                .filter_map(|block| match block {
                    AssistantBlock::Thinking(_) => None,
                    AssistantBlock::Text(t) => Some(AssistantBlock::Text(TextContent::new(t.text.clone()))),
                    AssistantBlock::ToolCall(call) => {
                        let mut call = call.clone();
                        call.thought_signature = None;
                        if let Some(Some(id)) = ids.next() {
                            call.id = id;
                        }
                        Some(AssistantBlock::ToolCall(call))
                    }
                })
                .collect();
            HandedOff::Owned(Box::new(Message::Assistant(with_content(a, content).into())))
        }
        _ => HandedOff::Borrowed(message),
    }
}

/// `a` with `content` in place of its own. Every field is named: the message is not cloned whole
/// (its content, often the bulk of it, only to be dropped), and a new field does not compile
/// until it is carried here.
fn with_content(a: &AssistantMessage, content: Vec<AssistantBlock>) -> AssistantMessage {
    AssistantMessage {
        content,
        api: a.api.clone(),
        provider: a.provider.clone(),
        model: a.model.clone(),
        response_model: a.response_model.clone(),
        usage: a.usage.clone(),
        stop_reason: a.stop_reason,
        response_id: a.response_id.clone(),
        provider_thinking_level: a.provider_thinking_level.clone(),
        diagnostics: a.diagnostics.clone(),
        deferred: a.deferred.clone(),
        error_message: a.error_message.clone(),
        raw_stop_reason: a.raw_stop_reason.clone(),
        end_turn: a.end_turn,
        timestamp: a.timestamp,
        duration_ms: a.duration_ms,
        thinking_level: a.thinking_level,
        extra: a.extra.clone(),
        key_order: a.key_order.clone(),
    }
}

/// Whether a same-model assistant block survives the handoff (empty unsigned thinking does not).
fn keeps_same_model_block(block: &AssistantBlock) -> bool {
    match block {
        AssistantBlock::Thinking(t) => {
            t.redacted == Some(true) || t.thinking_signature.is_some() || !t.thinking.trim().is_empty()
        }
        _ => true,
    }
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
        Message::Assistant(
            AssistantMessage {
                content,
                api: "anthropic-messages".into(),
                provider: provider.into(),
                model: "claude".into(),
                stop_reason: stop,
                ..Default::default()
            }
            .into(),
        )
    }

    /// A planned handoff applied to the messages is the direct one: the same messages borrowed
    /// in the same places, equal copies where the handoff changed one (a synthetic result's time
    /// aside).
    fn plan_agrees(input: &[Message], target: &Model, normalize: &dyn Fn(&str, &AssistantMessage) -> String) {
        let untimed = |m: &Message| match m {
            Message::ToolResult(r) => Message::ToolResult(ToolResultMessage { timestamp: 0, ..(**r).clone() }.into()),
            other => other.clone(),
        };
        let direct = transform_messages_borrowed(input, target, normalize);
        let plan = plan_handoff(input, target, normalize);
        let applied = apply_handoff(&plan, input);
        assert_eq!((direct.len(), plan.len()), (applied.len(), applied.len()));
        for ((direct, applied), planned) in direct.iter().zip(&applied).zip(&plan) {
            match (direct, planned) {
                (HandedOff::Borrowed(m), Handed::Same(i)) => {
                    assert!(std::ptr::eq(*m, &input[*i]) && std::ptr::eq(&**applied, *m));
                }
                (HandedOff::Owned(m), Handed::Changed(c)) => {
                    assert_eq!(untimed(m), untimed(c));
                    assert!(std::ptr::eq(&**applied, &**c));
                }
                other => panic!("the plan differs: {other:?}"),
            }
        }
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
            Message::User(UserMessage::new(vec![UserBlock::Text(TextContent::new("look")), img(), img()]).at(1).into()),
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
            Message::System(SystemMessage::new("mid").into()),
            Message::User(UserMessage::new("next").at(2).into()),
            assistant("anthropic", vec![AssistantBlock::Text(TextContent::new("partial"))], StopReason::Aborted),
            assistant("openai", vec![AssistantBlock::ToolCall(c2.clone())], StopReason::ToolUse),
            Message::ToolResult(
                ToolResultMessage { tool_call_id: "c2".into(), tool_name: "t".into(), ..Default::default() }.into(),
            ),
        ];
        plan_agrees(&input, &target, &|id, _| normalize_anthropic_tool_call_id(id));
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
        let Message::Assistant(original) = &input[1] else { panic!() };
        let fields = |m: &AssistantMessage| AssistantMessage { content: Vec::new(), ..m.clone() };
        assert_eq!(fields(a), fields(original), "every field but the content is kept");
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
            Message::System(SystemMessage::new("held").into()),
            Message::ToolResult(
                ToolResultMessage { tool_call_id: "a".into(), tool_name: "t".into(), ..Default::default() }.into(),
            ),
            Message::User(UserMessage::new("u").into()),
        ];
        let roles: Vec<_> =
            transform_messages(&input, &target, &|id, _| id.to_owned()).iter().map(Message::role).collect();
        assert_eq!(roles, ["assistant", "toolResult", "system", "user"]);
        plan_agrees(&input, &target, &|id, _| id.to_owned());
    }

    #[test]
    fn normalisers() {
        assert_eq!(normalize_anthropic_tool_call_id(&"a🙈".repeat(40)).len(), 64);
        assert_eq!(normalize_responses_foreign_tool_call_id("toolu_01+"), "toolu_01");
        assert_eq!(normalize_completions_tool_call_id(&"x".repeat(50), "openai").len(), 40);
        assert_eq!(normalize_completions_tool_call_id(&"x".repeat(50), "groq").len(), 50);
    }
}
