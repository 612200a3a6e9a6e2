//! pi-messages events → pi events (the reference's `createEventConverter`): the server streams
//! pi's own assistant-message events; each is checked, applied to the partial and passed on.

use std::borrow::Cow;

use serde_json::Value;

use crate::http::ProviderOutput;
use crate::stream::AssistantMessageEvent as E;
use crate::types::{AssistantBlock, StopReason, TextContent, ThinkingContent, ToolCall, Usage};

/// What an event did to the response.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Keep reading.
    Continue,
    /// A terminal `done` or `error` event was emitted.
    Finished,
}

fn index_of(event: &Value, kind: &str, len: usize) -> Result<usize, String> {
    let raw = event.get("contentIndex").cloned().unwrap_or(Value::Null);
    let limit = if kind.ends_with("_start") { Some(len) } else { len.checked_sub(1) };
    match (raw.as_u64(), limit) {
        (Some(i), Some(limit)) if i as usize <= limit => Ok(i as usize),
        _ => {
            let shown = if raw.is_null() { "undefined".to_owned() } else { raw.to_string() };
            Err(format!("Invalid contentIndex {shown} in pi-messages {kind} event"))
        }
    }
}

fn s(event: &Value, key: &str) -> Option<String> {
    event.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn finish(event: &Value, out: &mut ProviderOutput) -> Result<(StopReason, Usage), String> {
    let reason: StopReason = serde_json::from_value(event.get("reason").cloned().unwrap_or(Value::Null))
        .map_err(|e| format!("Invalid pi-messages stop reason: {e}"))?;
    let usage: Usage = match event.get("usage") {
        Some(u) => serde_json::from_value(u.clone()).map_err(|e| format!("Invalid pi-messages usage: {e}"))?,
        None => Usage::default(),
    };
    let m = out.message_mut();
    m.stop_reason = reason;
    m.usage = usage.clone();
    m.response_id = s(event, "responseId");
    if let Some(model) = s(event, "responseModel") {
        m.response_model = Some(model);
    }
    if let Some(level) = s(event, "providerThinkingLevel") {
        m.provider_thinking_level = Some(level);
    }
    if let Some(rewrite) = event.get("rewrite").filter(|r| r.is_object()) {
        let diagnostic =
            serde_json::json!({"type": "pi_messages_rewrite", "timestamp": crate::types::now_ms(), "details": rewrite});
        m.diagnostics.get_or_insert_with(Vec::new).push(diagnostic);
    }
    Ok((reason, usage))
}

/// Applies one server event; `Err` ends the response with that text.
pub fn on_event(event: &Value, out: &mut ProviderOutput) -> Result<Step, String> {
    let kind = event.get("type").and_then(Value::as_str).unwrap_or_default();
    let len = out.message().content.len();
    let index = || index_of(event, kind, len);
    let has_index = event.get("contentIndex").is_some();
    if has_index {
        index()?;
    }
    match kind {
        "done" => {
            finish(event, out)?;
            out.done();
            return Ok(Step::Finished);
        }
        "error" => {
            let (reason, _) = finish(event, out)?;
            let m = out.message_mut();
            m.error_message = s(event, "errorMessage");
            let error = m.clone();
            out.emit(E::Error { reason, error: Box::new(error) });
            return Ok(Step::Finished);
        }
        "start" => out.start(),
        "text_start" => out.emit(E::TextStart { content_index: index()?, block: TextContent::new("") }),
        "text_delta" => {
            out.emit(E::TextDelta { content_index: index()?, delta: s(event, "delta").unwrap_or_default() })
        }
        "text_end" => {
            let i = index()?;
            let block = TextContent {
                text: s(event, "content").unwrap_or_default(),
                text_signature: s(event, "contentSignature"),
                ..Default::default()
            };
            out.emit(E::TextEnd { content_index: i, block });
        }
        "thinking_start" => out.emit(E::ThinkingStart { content_index: index()?, block: ThinkingContent::new("") }),
        "thinking_delta" => {
            out.emit(E::ThinkingDelta { content_index: index()?, delta: s(event, "delta").unwrap_or_default() })
        }
        "thinking_end" => {
            let i = index()?;
            let block = ThinkingContent {
                thinking: s(event, "content").unwrap_or_default(),
                thinking_signature: s(event, "contentSignature"),
                redacted: event.get("redacted").and_then(Value::as_bool),
                ..Default::default()
            };
            out.emit(E::ThinkingEnd { content_index: i, block });
        }
        "toolcall_start" => {
            let call = ToolCall::new(
                s(event, "id").unwrap_or_default(),
                s(event, "toolName").unwrap_or_default(),
                Default::default(),
            );
            out.emit(E::ToolCallStart { content_index: index()?, tool_call: Box::new(call) });
        }
        "toolcall_delta" => {
            out.emit(E::ToolCallDelta { content_index: index()?, delta: s(event, "delta").unwrap_or_default() })
        }
        "toolcall_end" => {
            let i = index()?;
            let Some(AssistantBlock::ToolCall(current)) = out.message().content.get(i).cloned() else {
                return Err(format!("Invalid contentIndex {i} in pi-messages toolcall_end event"));
            };
            let mut merged = serde_json::to_value(&current).map_err(|e| e.to_string())?;
            if let (Some(target), Some(update)) =
                (merged.as_object_mut(), event.get("toolCall").and_then(Value::as_object))
            {
                for (k, v) in update {
                    target.insert(k.clone(), v.clone());
                }
            }
            let tool_call: ToolCall =
                serde_json::from_value(merged).map_err(|e| format!("Invalid pi-messages tool call: {e}"))?;
            out.emit(E::ToolCallEnd { content_index: i, tool_call: Box::new(tool_call) });
        }
        _ => {}
    }
    Ok(Step::Continue)
}

/// The event almost every streamed delta is: a text, thinking or argument delta of an existing
/// block. Read typed and borrowing; any other event (or a bad index, a field of another type, a
/// duplicate key) is left to [`on_event`], which reads every shape.
#[derive(serde::Deserialize)]
struct TypedDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(rename = "contentIndex")]
    content_index: u64,
    #[serde(borrow, default, deserialize_with = "crate::providers::typed::borrowed")]
    delta: Option<Cow<'a, str>>,
}

/// Applies `data` when it is a delta event the typed read handles exactly as [`on_event`] would;
/// whether it did.
pub fn on_typed_delta(data: &str, out: &mut ProviderOutput) -> bool {
    let Ok(event) = serde_json::from_str::<TypedDelta<'_>>(data) else { return false };
    let Ok(index) = usize::try_from(event.content_index) else { return false };
    if index >= out.message().content.len() {
        return false;
    }
    let delta = event.delta.map(Cow::into_owned).unwrap_or_default();
    let event = match &*event.kind {
        "text_delta" => E::TextDelta { content_index: index, delta },
        "thinking_delta" => E::ThinkingDelta { content_index: index, delta },
        "toolcall_delta" => E::ToolCallDelta { content_index: index, delta },
        _ => return false,
    };
    out.emit(event);
    true
}

/// `data:` payload of one SSE event (`None` for `[DONE]` or no data).
pub fn parse_data(data: &str) -> Result<Option<Value>, String> {
    let data = data.trim();
    if data.is_empty() || data == "[DONE]" {
        return Ok(None);
    }
    // `JSON.parse`'s wording for the common case (a cut event); serde's text otherwise.
    serde_json::from_str(data).map(Some).map_err(|e| {
        if e.is_eof() {
            "Unexpected end of JSON input".to_owned()
        } else {
            format!("Invalid pi-messages event JSON: {e}")
        }
    })
}
