//! `message_update` to the JavaScript host as a patch of the message the host already holds.
//!
//! pi hands a `message_update` handler the whole partial message with every delta. Sent whole
//! across the process boundary, that is a copy of everything streamed so far per delta: quadratic
//! in the answer (a 64 KiB answer in 7-character deltas is 9 000 events and 300 MB of JSON). The
//! host keeps its own copy of the streaming message instead; the first event of a message carries
//! it whole, every later one only what changed: the message's other fields when they changed, the
//! blocks that changed, and, for a text or thinking block that only grew by the event's delta, an
//! instruction to append the delta. The host rebuilds pi's event from its copy, so the handler
//! sees what pi's would.
//!
//! The handler's context changes little while a message streams: after the first event only
//! the fields that do change (`isIdle`, `hasPendingMessages`, `signal`) are sent; the host keeps
//! the rest from the snapshot before (protocol: `docs/extension-protocol.md`).

use std::sync::Mutex;

use pi_ai::{AssistantBlock, AssistantMessage, AssistantMessageEvent};
use serde_json::{Map, Value, json};

use super::link::light_context_snapshot;
use crate::extensions::runtime::{ExtensionContext, lock};

/// What the host holds of one block: for a text or thinking block, its text's length in bytes
/// and everything but the text (`rest`); a tool call (`rest: None`) is sent again whenever its
/// own events change it.
#[derive(Debug, PartialEq)]
struct HeldBlock {
    len: usize,
    rest: Option<AssistantBlock>,
}

/// What the host holds of the streaming message.
#[derive(Debug)]
struct Held {
    /// The process that holds it ([`Link::generation`](super::link::Link::generation)).
    generation: u64,
    /// The message without its content.
    head: AssistantMessage,
    blocks: Vec<HeldBlock>,
}

/// The record, per forwarding handler, of what its extension's host holds.
#[derive(Debug, Default)]
pub(crate) struct UpdatePatcher {
    held: Mutex<Option<Held>>,
}

/// The message's fields but its content.
fn head_of(m: &AssistantMessage) -> AssistantMessage {
    AssistantMessage {
        content: Vec::new(),
        api: m.api.clone(),
        provider: m.provider.clone(),
        model: m.model.clone(),
        response_model: m.response_model.clone(),
        usage: m.usage.clone(),
        stop_reason: m.stop_reason,
        response_id: m.response_id.clone(),
        provider_thinking_level: m.provider_thinking_level.clone(),
        diagnostics: m.diagnostics.clone(),
        deferred: m.deferred.clone(),
        error_message: m.error_message.clone(),
        raw_stop_reason: m.raw_stop_reason.clone(),
        end_turn: m.end_turn,
        timestamp: m.timestamp,
        duration_ms: m.duration_ms,
        thinking_level: m.thinking_level,
        extra: m.extra.clone(),
        key_order: m.key_order.clone(),
    }
}

/// The block as the host holds it, and its growing text (if any).
fn held_block(block: &AssistantBlock) -> (HeldBlock, Option<&str>) {
    match block {
        AssistantBlock::Text(t) => {
            let rest = pi_ai::TextContent {
                text: String::new(),
                text_signature: t.text_signature.clone(),
                extra: t.extra.clone(),
                key_order: t.key_order.clone(),
            };
            (HeldBlock { len: t.text.len(), rest: Some(AssistantBlock::Text(rest)) }, Some(&t.text))
        }
        AssistantBlock::Thinking(t) => {
            let rest = pi_ai::ThinkingContent {
                thinking: String::new(),
                thinking_signature: t.thinking_signature.clone(),
                redacted: t.redacted,
                extra: t.extra.clone(),
                key_order: t.key_order.clone(),
            };
            (HeldBlock { len: t.thinking.len(), rest: Some(AssistantBlock::Thinking(rest)) }, Some(&t.thinking))
        }
        AssistantBlock::ToolCall(_) => (HeldBlock { len: 0, rest: None }, None),
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl UpdatePatcher {
    /// Forgets what the host holds (after a failed call: the next event sends the message whole).
    pub(crate) fn forget(&self) {
        *lock(&self.held) = None;
    }

    /// The `message_update` payload and context for the host: the message whole with the full
    /// context snapshot, or a patch with the light one.
    pub(crate) fn params(
        &self,
        message: &AssistantMessage,
        event: &AssistantMessageEvent,
        ctx: &ExtensionContext,
        generation: u64,
    ) -> (Value, Value) {
        let wire = crate::extensions::assistant_event_wire::assistant_event_json(event);
        let mut held = lock(&self.held);
        let patch = match held.as_mut() {
            Some(held) if held.generation == generation && !matches!(event, AssistantMessageEvent::Start { .. }) => {
                patch(held, message, event)
            }
            _ => None,
        };
        match patch {
            Some(patch) => (
                json!({"type": "message_update", "assistantMessageEvent": wire, "patch": patch}),
                light_context_snapshot(ctx),
            ),
            None => {
                *held = Some(Held {
                    generation,
                    head: head_of(message),
                    blocks: message.content.iter().map(|b| held_block(b).0).collect(),
                });
                let payload =
                    json!({"type": "message_update", "message": to_value(message), "assistantMessageEvent": wire});
                (payload, super::link::context_snapshot(ctx, false))
            }
        }
    }
}

/// The patch from what the host holds to `message` (updating the record), or `None` when the
/// message is not the one held (another message, or fewer blocks).
fn patch(held: &mut Held, message: &AssistantMessage, event: &AssistantMessageEvent) -> Option<Value> {
    if message.timestamp != held.head.timestamp || message.content.len() < held.blocks.len() {
        return None;
    }
    let mut out = Map::new();
    let head = head_of(message);
    if head != held.head {
        out.insert("head".into(), to_value(&head));
        held.head = head;
    }
    let (event_index, delta) = match event {
        AssistantMessageEvent::TextDelta { content_index, delta }
        | AssistantMessageEvent::ThinkingDelta { content_index, delta } => (Some(*content_index), Some(delta.as_str())),
        other => (other.content_index(), None),
    };
    let mut blocks = Vec::new();
    let mut append = None;
    for (index, block) in message.content.iter().enumerate() {
        let (now, text) = held_block(block);
        let text_len = text.map_or(0, str::len);
        // pi-ai's contract: a text or thinking block grows only by its own deltas between its
        // start and its (authoritative) end; a tool call changes only with its own events.
        let same = match (held.blocks.get(index), &now.rest) {
            (Some(HeldBlock { rest: None, .. }), None) => event_index != Some(index),
            (Some(HeldBlock { len, rest: Some(rest) }), Some(now_rest)) if rest == now_rest => {
                match delta.filter(|_| event_index == Some(index)) {
                    None => event_index != Some(index) && *len == text_len,
                    Some(delta) => {
                        let grown = *len + delta.len() == text_len && text.is_some_and(|t| t.ends_with(delta));
                        if grown {
                            append = Some(index);
                        }
                        grown
                    }
                }
            }
            _ => false,
        };
        if !same {
            blocks.push(json!([index, to_value(block)]));
        }
        match held.blocks.get_mut(index) {
            Some(slot) => *slot = now,
            None => held.blocks.push(now),
        }
    }
    if !blocks.is_empty() {
        out.insert("blocks".into(), Value::Array(blocks));
    }
    if let Some(index) = append {
        out.insert("append".into(), json!(index));
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{TextContent, ThinkingContent, ToolCall};

    fn message(blocks: Vec<AssistantBlock>) -> AssistantMessage {
        AssistantMessage { content: blocks, timestamp: 7, ..Default::default() }
    }

    fn held(m: &AssistantMessage) -> Held {
        Held { generation: 0, head: head_of(m), blocks: m.content.iter().map(|b| held_block(b).0).collect() }
    }

    fn text_delta(index: usize, delta: &str) -> AssistantMessageEvent {
        AssistantMessageEvent::TextDelta { content_index: index, delta: delta.into() }
    }

    #[test]
    fn a_delta_that_only_grows_its_block_is_sent_as_an_append() {
        let before = message(vec![
            AssistantBlock::Thinking(ThinkingContent::new("Hm")),
            AssistantBlock::Text(TextContent::new("Hel")),
        ]);
        let mut record = held(&before);
        let after = message(vec![
            AssistantBlock::Thinking(ThinkingContent::new("Hm")),
            AssistantBlock::Text(TextContent::new("Hello")),
        ]);
        assert_eq!(patch(&mut record, &after, &text_delta(1, "lo")), Some(json!({"append": 1})));
        // The record follows: the next delta appends again.
        let later = message(vec![
            AssistantBlock::Thinking(ThinkingContent::new("Hm")),
            AssistantBlock::Text(TextContent::new("Hello!")),
        ]);
        assert_eq!(patch(&mut record, &later, &text_delta(1, "!")), Some(json!({"append": 1})));
    }

    #[test]
    fn changed_fields_and_new_or_rewritten_blocks_are_sent_whole() {
        let before = message(vec![AssistantBlock::Text(TextContent::new("a"))]);
        let mut record = held(&before);
        // A signature set beside the delta, a new tool call and the head's response id.
        let mut text = TextContent::new("ab");
        text.text_signature = Some("sig".into());
        let call = ToolCall { id: "c1".into(), name: "read".into(), ..Default::default() };
        let mut after = message(vec![AssistantBlock::Text(text.clone()), AssistantBlock::ToolCall(call.clone())]);
        after.response_id = Some("r1".into());
        let sent = patch(&mut record, &after, &text_delta(0, "b")).expect("a patch");
        assert_eq!(sent["blocks"], json!([[0, to_value(&after.content[0])], [1, to_value(&after.content[1])]]));
        assert_eq!(sent["head"]["responseId"], "r1");
        assert_eq!(sent["head"]["content"], json!([]));
        assert!(sent.get("append").is_none());
        // A tool call's own delta sends it again; nothing else changed.
        let delta = AssistantMessageEvent::ToolCallDelta { content_index: 1, delta: "{".into() };
        assert_eq!(patch(&mut record, &after, &delta), Some(json!({"blocks": [[1, to_value(&after.content[1])]]})));
        // A block's end is sent whole (its text is the provider's, not the deltas' sum), and so
        // is a text that grew by other than the event's delta.
        let ended = {
            let mut m = after.clone();
            m.content[0] = AssistantBlock::Text(TextContent { text: "ab!".into(), ..text.clone() });
            m
        };
        let end = AssistantMessageEvent::TextEnd { content_index: 0, block: TextContent::new("ab!") };
        assert_eq!(patch(&mut record, &ended, &end), Some(json!({"blocks": [[0, to_value(&ended.content[0])]]})));
        let grown = {
            let mut m = ended.clone();
            m.content[0] = AssistantBlock::Text(TextContent { text: "ab!xy".into(), ..text });
            m
        };
        assert_eq!(
            patch(&mut record, &grown, &text_delta(0, "y")),
            Some(json!({"blocks": [[0, to_value(&grown.content[0])]]}))
        );
    }

    #[test]
    fn another_message_or_fewer_blocks_is_not_patched() {
        let before =
            message(vec![AssistantBlock::Text(TextContent::new("a")), AssistantBlock::Text(TextContent::new("b"))]);
        let mut record = held(&before);
        let fewer = message(vec![AssistantBlock::Text(TextContent::new("a"))]);
        assert_eq!(patch(&mut record, &fewer, &text_delta(0, "a")), None);
        let mut other = before.clone();
        other.timestamp = 8;
        assert_eq!(patch(&mut record, &other, &text_delta(0, "a")), None);
    }
}
