//! The wire form of what a provider streams and a tool returns (pi's `message_update`
//! `assistantMessageEvent` and tool result objects). Below both the session, which hands
//! `message_update` to extensions, and [`super::wire`], which writes session events.

use pi_agent_core::AgentToolResult;
use pi_ai::AssistantMessageEvent;
use serde_json::{Map, Value, json};

pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// pi's tool result object: `{content, details}` (+ `structuredContent`).
pub fn tool_result_json(result: &AgentToolResult) -> Value {
    let mut obj = Map::new();
    obj.insert("content".into(), to_value(&result.content));
    // `Null` is pi's undefined: omitted.
    if !result.details.is_null() {
        obj.insert("details".into(), result.details.clone());
    }
    if let Some(s) = &result.structured_content {
        obj.insert("structuredContent".into(), s.clone());
    }
    Value::Object(obj)
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
