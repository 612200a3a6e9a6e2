//! The wire format of runtime-loaded extensions: JSON-RPC 2.0 messages, one per line, over the
//! process's stdin (host → extension) and stdout (extension → host). Version
//! [`PROTOCOL_VERSION`]; see `pi-coding-agent/docs/extension-protocol.md`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::extensions::api::FlagType;
use crate::extensions::runtime::FlagValue;

/// The protocol version this host speaks.
pub const PROTOCOL_VERSION: u32 = 4;

/// The versions this host accepts from an extension (version 1 and 2 extensions keep working).
pub const SUPPORTED_VERSIONS: &[u32] = &[1, 2, 3, 4];

/// Host → extension: the handshake request.
pub const METHOD_INITIALIZE: &str = "initialize";
/// Host → extension: an event (a request when the answer matters, else a notification).
pub const METHOD_EVENT: &str = "event";
/// Host → extension: run a tool the extension registered.
pub const METHOD_TOOL_EXECUTE: &str = "tool.execute";
/// Host → extension: run a command the extension registered.
pub const METHOD_COMMAND_RUN: &str = "command.run";

/// JSON-RPC error code of a failed host action (`pi.*`).
pub const ERROR_ACTION_FAILED: i64 = -32000;
/// JSON-RPC error code of an unknown method.
pub const ERROR_METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC error code of invalid parameters.
pub const ERROR_INVALID_PARAMS: i64 = -32602;

/// `initialize` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The host's protocol version.
    pub protocol_version: u32,
    /// The path the extension was loaded from.
    pub extension_path: String,
    /// The session's working directory.
    pub cwd: String,
}

/// A tool an extension declares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRegistration {
    /// Tool name.
    pub name: String,
    /// UI label (default: the name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Description for the model.
    pub description: String,
    /// JSON Schema of the arguments (must be an object).
    pub parameters: Value,
    /// One line for the system prompt's tool list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_snippet: Option<String>,
    /// The tool's `constrainedSampling` declaration (JSON-schema strictness or a grammar).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrained_sampling: Option<Value>,
    /// Guideline bullets for the system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_guidelines: Option<Vec<String>>,
    /// Version 2: the tool draws its call (`render` with `"kind":"toolCall"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub has_render_call: bool,
    /// Version 2: the tool draws its result (`render` with `"kind":"toolResult"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub has_render_result: bool,
}

/// A command an extension declares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandRegistration {
    /// Name without `/`.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A flag an extension declares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlagRegistration {
    /// Name without `--`.
    pub name: String,
    /// `boolean` or `string`.
    #[serde(rename = "type")]
    pub kind: FlagType,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<FlagValue>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One handler an extension registered (version 2): events to it carry its `handlerId`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandlerRegistration {
    /// The event name.
    pub event: String,
    /// The extension's id of the handler.
    pub id: u64,
}

/// A keyboard shortcut an extension declares (version 2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShortcutRegistration {
    /// The key (`"ctrl+shift+p"`).
    pub shortcut: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `initialize` result: what the extension registers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The extension's protocol version (must equal [`PROTOCOL_VERSION`]).
    pub protocol_version: u32,
    /// Event names to receive (`"tool_result"`, `"context"`, `"session_start"`, …).
    #[serde(default)]
    pub events: Vec<String>,
    /// Tools.
    #[serde(default)]
    pub tools: Vec<ToolRegistration>,
    /// Commands.
    #[serde(default)]
    pub commands: Vec<CommandRegistration>,
    /// Flags.
    #[serde(default)]
    pub flags: Vec<FlagRegistration>,
    /// Version 2: each handler with its id, in registration order (replaces `events` when present).
    #[serde(default)]
    pub handlers: Vec<HandlerRegistration>,
    /// Version 2: keyboard shortcuts.
    #[serde(default)]
    pub shortcuts: Vec<ShortcutRegistration>,
    /// Version 2: `customType`s of entries the extension renders (method `render`).
    #[serde(default)]
    pub entry_renderers: Vec<String>,
    /// Version 2: `customType`s of messages the extension renders (method `render`).
    #[serde(default)]
    pub message_renderers: Vec<String>,
    /// Version 2: how many tool renderers the extension registered.
    #[serde(default)]
    pub tool_renderers: usize,
    /// Version 3: virtual models (pi's `VirtualModelDefinition` without `route`; the host asks
    /// `virtualModel.route` for each request routed through one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub virtual_models: Vec<Value>,
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// Error code.
    pub code: i64,
    /// Message (becomes the extension error's text).
    pub message: String,
    /// Extra data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// One incoming line, classified.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// A request (with an id) or a notification (without) from the extension.
    Call {
        /// Request id (`None` for a notification).
        id: Option<Value>,
        /// Method (`pi.appendEntry`, …).
        method: String,
        /// Params (`{}` when absent).
        params: Value,
    },
    /// A response to one of the host's requests.
    Response {
        /// The id of the host's request.
        id: u64,
        /// The result or the error.
        outcome: Result<Value, RpcError>,
    },
}

/// Parses one line. `Err` holds the text reported for garbage.
pub fn parse_line(line: &str) -> Result<Incoming, String> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| format!("Invalid JSON from extension ({e}): {}", clip(line)))?;
    let Value::Object(mut obj) = value else {
        return Err(format!("Invalid JSON-RPC message from extension: {}", clip(line)));
    };
    if let Some(Value::String(method)) = obj.remove("method") {
        let params = obj.remove("params").unwrap_or_else(|| Value::Object(Map::new()));
        return Ok(Incoming::Call { id: obj.remove("id").filter(|v| !v.is_null()), method, params });
    }
    let id = obj.get("id").and_then(Value::as_u64);
    match (id, obj.remove("result"), obj.remove("error")) {
        (Some(id), _, Some(error)) => {
            let error = serde_json::from_value::<RpcError>(error.clone()).unwrap_or_else(|_| RpcError {
                code: ERROR_ACTION_FAILED,
                message: error.to_string(),
                data: None,
            });
            Ok(Incoming::Response { id, outcome: Err(error) })
        }
        (Some(id), Some(result), None) => Ok(Incoming::Response { id, outcome: Ok(result) }),
        (Some(id), None, None) => Ok(Incoming::Response { id, outcome: Ok(Value::Null) }),
        _ => Err(format!("Invalid JSON-RPC message from extension: {}", clip(line))),
    }
}

fn clip(line: &str) -> String {
    const MAX: usize = 200;
    if line.len() <= MAX {
        return line.to_owned();
    }
    let mut end = MAX;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

/// A request line.
pub fn request(id: u64, method: &str, params: Value) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A notification line.
pub fn notification(method: &str, params: Value) -> String {
    serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// A response line.
pub fn response(id: Value, outcome: Result<Value, RpcError>) -> String {
    match outcome {
        Ok(result) => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
        Err(error) => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_lines() {
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#),
            Ok(Incoming::Response { id: 3, outcome: Ok(serde_json::json!({"a": 1})) })
        );
        let err = parse_line(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"boom"}}"#);
        assert!(
            matches!(err, Ok(Incoming::Response { id: 4, outcome: Err(RpcError { ref message, .. }) }) if message == "boom")
        );
        assert!(matches!(
            parse_line(r#"{"jsonrpc":"2.0","method":"pi.appendEntry","params":{"customType":"x"}}"#),
            Ok(Incoming::Call { id: None, .. })
        ));
        assert!(parse_line("hello").unwrap_err().starts_with("Invalid JSON from extension"));
        assert!(parse_line("[1]").unwrap_err().starts_with("Invalid JSON-RPC message"));
    }
}
