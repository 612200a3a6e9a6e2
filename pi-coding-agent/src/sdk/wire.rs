//! Session events as pi's JSON wire records (`modes/json-event.ts` of pi 1.6.0), the one
//! serializer the json and rpc modes and SDK users share: agent events keep their SDK shape except
//! `message_update`, which becomes `{type, usage, assistantMessageEvent}` with every `partial`
//! removed (and `toolcall_start` gains `id` and `toolName`); session events are pi's records.
//! [`to_line`] writes a record as JavaScript's `JSON.stringify` does (`0`, not `0.0`).
//!
//! ```
//! use pi_coding_agent::sdk::{SessionEvent, wire::JsonEventEncoder};
//! let mut enc = JsonEventEncoder::new();
//! let event = SessionEvent::QueueUpdate { steering: vec!["a".into()], follow_up: vec![] };
//! let record = enc.encode(&event).unwrap();
//! assert_eq!(pi_coding_agent::sdk::wire::to_line(&record), r#"{"type":"queue_update","steering":["a"],"followUp":[]}"#);
//! ```

use pi_agent_core::AgentEvent;
use pi_ai::{AssistantMessageEvent, Usage};
use serde_json::{Map, Value, json};

use super::agent_wire::to_value;
pub use super::agent_wire::{assistant_event_json, tool_result_json};
use super::session::SessionEvent;
use crate::messages::CodingMessage;

/// A record as one line of pi's output: `JSON.stringify(record)` (no newline).
pub fn to_line(record: &Value) -> String {
    pi_ai::json::to_js_json(record)
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
            SessionEvent::EntryPersisted { .. } => None,
            // Written by each mode where it settles a prompt.
            SessionEvent::AgentSettled { .. } => None,
            other => session_record(other),
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

/// The wire record of a session-level event (`None` for agent events and the SDK-only
/// [`SessionEvent::EntryPersisted`]).
pub fn session_record(event: &SessionEvent) -> Option<Value> {
    let kind = event.kind();
    let record = match event {
        SessionEvent::Agent(_) | SessionEvent::EntryPersisted { .. } => return None,
        SessionEvent::NestedToolExecution { parent_tool_call_id, event } => {
            let mut record = JsonEventEncoder::new().encode_agent(event);
            if let Value::Object(o) = &mut record {
                o.insert("parentToolCallId".into(), json!(parent_tool_call_id));
            }
            record
        }
        SessionEvent::AgentEnd { messages, will_retry } => {
            json!({"type": kind, "messages": to_value(messages), "willRetry": will_retry})
        }
        SessionEvent::AgentSettled { aborted } => agent_settled(*aborted),
        SessionEvent::EntryAppended { entry } => json!({"type": kind, "entry": to_value(entry.as_ref())}),
        SessionEvent::CompactionStart { reason } => json!({"type": kind, "reason": reason.as_str()}),
        SessionEvent::CompactionEnd(end) => {
            let mut o = Map::new();
            o.insert("type".into(), json!(kind));
            o.insert("reason".into(), json!(end.reason.as_str()));
            if let Some(r) = &end.result {
                o.insert("result".into(), r.to_json());
            }
            o.insert("aborted".into(), json!(end.aborted));
            o.insert("willRetry".into(), json!(end.will_retry));
            if let Some(e) = &end.error_message {
                o.insert("errorMessage".into(), json!(e));
            }
            Value::Object(o)
        }
        SessionEvent::AutoRetryStart { attempt, max_attempts, delay_ms, error_message } => json!({
            "type": kind, "attempt": attempt, "maxAttempts": max_attempts, "delayMs": delay_ms,
            "errorMessage": error_message,
        }),
        SessionEvent::AutoRetryEnd { success, attempt, final_error } => {
            let mut v = json!({"type": kind, "success": success, "attempt": attempt});
            if let (Some(e), Value::Object(o)) = (final_error, &mut v) {
                o.insert("finalError".into(), json!(e));
            }
            v
        }
        SessionEvent::QueueUpdate { steering, follow_up } => {
            json!({"type": kind, "steering": steering, "followUp": follow_up})
        }
        SessionEvent::BashExecutionUpdate { id, delta } => {
            let mut o = Map::new();
            o.insert("type".into(), json!(kind));
            if let Some(id) = id {
                o.insert("id".into(), json!(id));
            }
            o.insert("delta".into(), json!(delta));
            Value::Object(o)
        }
        SessionEvent::ThinkingLevelChanged { level } => json!({"type": kind, "level": level.as_str()}),
        SessionEvent::SessionInfoChanged { name } => {
            let mut v = json!({"type": kind});
            if let (Some(n), Value::Object(o)) = (name, &mut v) {
                o.insert("name".into(), json!(n));
            }
            v
        }
    };
    Some(record)
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
        let v =
            assistant_event_json(&AssistantMessageEvent::ToolCallStart { content_index: 1, tool_call: Box::new(tc) });
        assert_eq!(v, json!({"type":"toolcall_start","contentIndex":1,"id":"c1","toolName":"read"}));
        let v =
            assistant_event_json(&AssistantMessageEvent::TextEnd { content_index: 0, block: TextContent::new("done") });
        assert_eq!(v, json!({"type":"text_end","contentIndex":0,"content":"done"}));
    }
}
