//! The wire form of a provider event inside `message_update` (pi's `assistantMessageEvent`):
//! written for the JSON and RPC modes and for JavaScript handlers, read back when a
//! `message_update` event is deserialized.

use pi_ai::AssistantMessageEvent;
use serde_json::{Map, Value, json};

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The wire form of a provider event inside `message_update`.
pub fn assistant_event_json(event: &AssistantMessageEvent) -> Value {
    use AssistantMessageEvent as E;
    let kind = event.kind();
    match event {
        E::Start { .. } => json!({"type": kind}),
        E::TextStart { content_index, .. } | E::ThinkingStart { content_index, .. } => {
            json!({"type": kind, "contentIndex": content_index})
        }
        E::TextDelta { content_index, delta }
        | E::ThinkingDelta { content_index, delta }
        | E::ToolCallDelta { content_index, delta } => {
            json!({"type": kind, "contentIndex": content_index, "delta": delta})
        }
        E::TextEnd { content_index, block } => {
            json!({"type": kind, "contentIndex": content_index, "content": block.text})
        }
        E::ThinkingEnd { content_index, block } => {
            json!({"type": kind, "contentIndex": content_index, "content": block.thinking})
        }
        E::ToolCallStart { content_index, tool_call } => json!({
            "type": kind, "contentIndex": content_index, "id": tool_call.id, "toolName": tool_call.name
        }),
        E::ToolCallEnd { content_index, tool_call } => {
            json!({"type": kind, "contentIndex": content_index, "toolCall": to_value(tool_call)})
        }
        E::Done { reason, message } => json!({"type": kind, "reason": to_value(reason), "message": to_value(message)}),
        E::Error { reason, error } => json!({"type": kind, "reason": to_value(reason), "error": to_value(error)}),
    }
}

/// An [`AssistantMessageEvent`] read back from its wire form ([`assistant_event_json`]). The wire
/// form does not carry everything: a `start` has no partial (`message_update` carries the
/// message beside it), a `*_start` block is empty and a `*_end` block has only its text.
pub fn assistant_event_from_json(value: &Value) -> Result<AssistantMessageEvent, String> {
    use AssistantMessageEvent as E;
    use pi_ai::{TextContent, ThinkingContent, ToolCall};
    fn parsed<T: serde::de::DeserializeOwned>(value: &Value, key: &str) -> Result<T, String> {
        let member = value.get(key).cloned().unwrap_or(Value::Null);
        serde_json::from_value(member).map_err(|e| format!("assistantMessageEvent.{key}: {e}"))
    }
    let kind = value.get("type").and_then(Value::as_str).ok_or("an assistantMessageEvent without a type")?;
    let index = || {
        let index = value.get("contentIndex").and_then(Value::as_u64);
        index.and_then(|i| usize::try_from(i).ok()).ok_or_else(|| format!("a {kind} event without a contentIndex"))
    };
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok(match kind {
        "start" => E::Start { partial: Box::default() },
        "text_start" => E::TextStart { content_index: index()?, block: TextContent::default() },
        "text_delta" => E::TextDelta { content_index: index()?, delta: text("delta") },
        "text_end" => E::TextEnd { content_index: index()?, block: TextContent::new(text("content")) },
        "thinking_start" => E::ThinkingStart { content_index: index()?, block: ThinkingContent::default() },
        "thinking_delta" => E::ThinkingDelta { content_index: index()?, delta: text("delta") },
        "thinking_end" => E::ThinkingEnd { content_index: index()?, block: ThinkingContent::new(text("content")) },
        "toolcall_start" => E::ToolCallStart {
            content_index: index()?,
            tool_call: Box::new(ToolCall::new(text("id"), text("toolName"), Map::new())),
        },
        "toolcall_delta" => E::ToolCallDelta { content_index: index()?, delta: text("delta") },
        "toolcall_end" => E::ToolCallEnd { content_index: index()?, tool_call: Box::new(parsed(value, "toolCall")?) },
        "done" => E::Done { reason: parsed(value, "reason")?, message: Box::new(parsed(value, "message")?) },
        "error" => E::Error { reason: parsed(value, "reason")?, error: Box::new(parsed(value, "error")?) },
        other => return Err(format!("an assistantMessageEvent of unknown type {other:?}")),
    })
}

/// `#[serde(with = "…")]` for an [`AssistantMessageEvent`] in its wire form: written (as
/// [`assistant_event_json`]) only when the event is serialized, e.g. for a JavaScript handler,
/// and read back with [`assistant_event_from_json`].
pub mod assistant_event_serde {
    use pi_ai::AssistantMessageEvent;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;

    /// Writes `event` as [`super::assistant_event_json`] does.
    pub fn serialize<S: Serializer>(event: &AssistantMessageEvent, serializer: S) -> Result<S::Ok, S::Error> {
        super::assistant_event_json(event).serialize(serializer)
    }

    /// Reads an event written by [`serialize`].
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<AssistantMessageEvent, D::Error> {
        let value = Value::deserialize(deserializer)?;
        super::assistant_event_from_json(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use pi_agent_core::AgentMessage;
    use pi_ai::{AssistantMessage, AssistantMessageEvent as E, StopReason, ToolCall};
    use serde_json::{Map, json};

    use crate::extensions::NotifyEvent;

    fn update(event: E) -> NotifyEvent {
        NotifyEvent::MessageUpdate {
            message: AgentMessage::Assistant(AssistantMessage::default().into()),
            assistant_message_event: event,
        }
    }

    #[test]
    fn a_message_update_carries_the_typed_event_and_writes_pis_json() {
        let delta = update(E::TextDelta { content_index: 2, delta: "Hi".into() });
        let written = serde_json::to_value(&delta).expect("serialize");
        assert_eq!(written["type"], "message_update");
        assert_eq!(written["assistantMessageEvent"], json!({"type": "text_delta", "contentIndex": 2, "delta": "Hi"}));
        let read: NotifyEvent = serde_json::from_value(written).expect("deserialize");
        assert_eq!(read, delta);
    }

    #[test]
    fn every_event_the_wire_form_carries_whole_reads_back_the_same() {
        let call = ToolCall::new("c1", "read", Map::from_iter([("path".to_owned(), json!("a.txt"))]));
        let done = AssistantMessage { stop_reason: StopReason::Stop, ..Default::default() };
        let events = [
            E::ThinkingDelta { content_index: 0, delta: "hm".into() },
            E::ToolCallDelta { content_index: 1, delta: "{\"pa".into() },
            E::TextStart { content_index: 3, block: Default::default() },
            E::TextEnd { content_index: 3, block: pi_ai::TextContent::new("all") },
            E::ToolCallStart { content_index: 1, tool_call: Box::new(ToolCall::new("c1", "read", Map::new())) },
            E::ToolCallEnd { content_index: 1, tool_call: Box::new(call) },
            E::Done { reason: StopReason::Stop, message: Box::new(done) },
        ];
        for event in events {
            let json = super::assistant_event_json(&event);
            assert_eq!(super::assistant_event_from_json(&json).as_ref(), Ok(&event), "{json}");
        }
        assert!(super::assistant_event_from_json(&json!({"type": "text_delta"})).is_err());
    }
}
