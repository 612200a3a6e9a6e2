//! Session events as pi's JSON wire records (`modes/json-event.ts` of pi 1.6.0): agent events
//! keep their SDK shape except `message_update`, which becomes `{type, usage,
//! assistantMessageEvent}` with every `partial` removed (and `toolcall_start` gains `id` and
//! `toolName`).

use pi_agent_core::{AgentEvent, AgentToolResult};
use pi_ai::{AssistantMessageEvent, Usage};
use serde_json::{Map, Value, json};

use crate::messages::CodingMessage;
use crate::sdk::SessionEvent;

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// pi's tool result object: `{content, details}` (+ `structuredContent`).
pub fn tool_result_json(result: &AgentToolResult) -> Value {
    let mut obj = Map::new();
    obj.insert("content".into(), to_value(&result.content));
    obj.insert("details".into(), result.details.clone());
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

/// Turns session events into wire records. It remembers the usage of the assistant message being
/// streamed, since `message_update` carries it beside the delta.
#[derive(Debug, Default)]
pub struct JsonEventEncoder {
    usage: Usage,
}

impl JsonEventEncoder {
    /// A new encoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// The wire record of `event`, or `None` for events pi does not put on the wire.
    pub fn encode(&mut self, event: &SessionEvent) -> Option<Value> {
        match event {
            SessionEvent::Agent(e) => Some(self.encode_agent(e)),
            SessionEvent::AgentEnd { messages, will_retry } => {
                Some(json!({"type": "agent_end", "messages": to_value(messages), "willRetry": will_retry}))
            }
            SessionEvent::EntryAppended { .. } => None,
            SessionEvent::Session(record) => Some(record.clone()),
            // Written by each mode where it settles a prompt.
            SessionEvent::AgentSettled { .. } => None,
        }
    }

    /// The wire record of an agent event.
    pub fn encode_agent(&mut self, event: &AgentEvent<CodingMessage>) -> Value {
        let kind = event.kind();
        match event {
            AgentEvent::AgentStart | AgentEvent::TurnStart => json!({"type": kind}),
            AgentEvent::AgentEnd { messages } => {
                json!({"type": kind, "messages": to_value(messages), "willRetry": false})
            }
            AgentEvent::TurnEnd { message, tool_results } => {
                json!({"type": kind, "message": to_value(message), "toolResults": to_value(tool_results)})
            }
            AgentEvent::MessageStart { message } => {
                if let pi_agent_core::AgentMessage::Assistant(a) = message {
                    self.usage = a.usage.clone();
                }
                json!({"type": kind, "message": to_value(message)})
            }
            AgentEvent::MessageEnd { message } => json!({"type": kind, "message": to_value(message)}),
            AgentEvent::MessageUpdate { assistant_message_event } => {
                if let AssistantMessageEvent::Done { message, .. } = assistant_message_event {
                    self.usage = message.usage.clone();
                }
                json!({
                    "type": kind,
                    "usage": to_value(&self.usage),
                    "assistantMessageEvent": assistant_event_json(assistant_message_event),
                })
            }
            AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args } => {
                json!({"type": kind, "toolCallId": tool_call_id, "toolName": tool_name, "args": args})
            }
            AgentEvent::ToolExecutionUpdate { tool_call_id, tool_name, args, partial_result } => json!({
                "type": kind, "toolCallId": tool_call_id, "toolName": tool_name, "args": args,
                "partialResult": tool_result_json(partial_result),
            }),
            AgentEvent::ToolExecutionEnd { tool_call_id, tool_name, result, is_error, duration_ms } => {
                let mut v = json!({
                    "type": kind, "toolCallId": tool_call_id, "toolName": tool_name,
                    "result": tool_result_json(result), "isError": is_error,
                });
                if let (Some(d), Value::Object(o)) = (duration_ms, &mut v) {
                    o.insert("durationMs".into(), json!(d));
                }
                v
            }
        }
    }
}

/// `agent_settled` (pi emits it once a session-level run has no automatic work left).
pub fn agent_settled(aborted: bool) -> Value {
    json!({"type": "agent_settled", "aborted": aborted})
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{TextContent, ToolCall};

    #[test]
    fn message_update_drops_partial_and_adds_tool_identity() {
        let mut enc = JsonEventEncoder::new();
        let e = AgentEvent::<CodingMessage>::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { content_index: 0, delta: "Hi".into() },
        };
        let v = enc.encode_agent(&e);
        assert_eq!(v["assistantMessageEvent"], json!({"type":"text_delta","contentIndex":0,"delta":"Hi"}));
        assert_eq!(v["usage"]["totalTokens"], json!(0));
        let tc: ToolCall =
            serde_json::from_value(json!({"type":"toolCall","id":"c1","name":"read","arguments":{}})).unwrap();
        let v = assistant_event_json(&AssistantMessageEvent::ToolCallStart { content_index: 1, tool_call: tc });
        assert_eq!(v, json!({"type":"toolcall_start","contentIndex":1,"id":"c1","toolName":"read"}));
        let v =
            assistant_event_json(&AssistantMessageEvent::TextEnd { content_index: 0, block: TextContent::new("done") });
        assert_eq!(v, json!({"type":"text_end","contentIndex":0,"content":"done"}));
    }
}
