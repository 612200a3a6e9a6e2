//! The wire form of what a provider streams and a tool returns (pi's `message_update`
//! `assistantMessageEvent` and tool result objects). Below both the session, which hands
//! `message_update` to extensions, and [`super::wire`], which writes session events.

use pi_agent_core::AgentToolResult;
use serde_json::{Map, Value};

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

pub use crate::extensions::assistant_event_wire::assistant_event_json;
