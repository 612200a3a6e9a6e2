//! RPC records (pi's `rpc-types.ts`): parsing a command line from stdin, and the response shape
//! `{id?, type:"response", command, success, data? | error?}`.
//!
//! ```
//! use pi_coding_agent::modes::rpc_command::{parse_command, RpcCommand};
//! let c = parse_command(r#"{"id":"1","type":"prompt","message":"hi"}"#).unwrap();
//! assert_eq!(c.id.as_deref(), Some("1"));
//! assert_eq!(c.command, RpcCommand::Prompt { message: "hi".into(), images: vec![], streaming_behavior: None });
//! let bad = parse_command("{nope").unwrap_err();
//! assert_eq!(bad["command"], "parse");
//! ```

use pi_ai::ImageContent;
use serde_json::{Map, Value, json};

/// A command pi's RPC mode understands (the subset this port executes; others are
/// [`RpcCommand::Other`]).
#[derive(Clone, Debug, PartialEq)]
pub enum RpcCommand {
    /// Start (or queue) a prompt.
    Prompt {
        /// The text.
        message: String,
        /// Images sent with the text (`images: ImageContent[]`).
        images: Vec<ImageContent>,
        /// `"steer"` or `"followUp"` while streaming.
        streaming_behavior: Option<String>,
    },
    /// Queue a steering message.
    Steer {
        /// The text.
        message: String,
        /// Images sent with the text.
        images: Vec<ImageContent>,
    },
    /// Queue a follow-up message.
    FollowUp {
        /// The text.
        message: String,
        /// Images sent with the text.
        images: Vec<ImageContent>,
    },
    /// Abort the run.
    Abort,
    /// Run a shell command.
    Bash {
        /// The command.
        command: String,
        /// Keep it out of the model's context.
        exclude_from_context: bool,
    },
    /// Cancel the running shell commands.
    AbortBash,
    /// Session state.
    GetState,
    /// The transcript.
    GetMessages,
    /// Switch model.
    SetModel {
        /// Provider id.
        provider: String,
        /// Model id.
        model_id: String,
    },
    /// Next model with credentials.
    CycleModel,
    /// Set the thinking level.
    SetThinkingLevel {
        /// The level.
        level: String,
    },
    /// The last assistant text.
    GetLastAssistantText,
    /// Token and message counts.
    GetSessionStats,
    /// Compact the context now.
    Compact {
        /// Extra instructions for the summary.
        custom_instructions: Option<String>,
    },
    /// Switch automatic compaction.
    SetAutoCompaction {
        /// On or off.
        enabled: bool,
    },
    /// Switch auto-retry.
    SetAutoRetry {
        /// On or off.
        enabled: bool,
    },
    /// Cancel a retry back-off.
    AbortRetry,
    /// Drop queued steering and follow-up messages.
    ClearQueue,
    /// Start a new session.
    NewSession {
        /// The parent session file written to the header.
        parent_session: Option<String>,
    },
    /// Open another session file.
    SwitchSession {
        /// Its path.
        session_path: String,
    },
    /// Fork before a user message into a new session.
    Fork {
        /// The user message entry.
        entry_id: String,
    },
    /// Copy the current path into a new session.
    Clone,
    /// User messages that can be forked from.
    GetForkMessages,
    /// Next thinking level the model supports.
    CycleThinkingLevel,
    /// The thinking levels of the current model.
    GetAvailableThinkingLevels,
    /// Models with credentials.
    GetAvailableModels,
    /// How queued steering messages are delivered (`all` / `one-at-a-time`).
    SetSteeringMode {
        /// The mode.
        mode: String,
    },
    /// How queued follow-up messages are delivered.
    SetFollowUpMode {
        /// The mode.
        mode: String,
    },
    /// Name the session.
    SetSessionName {
        /// The name (trimmed; empty is refused).
        name: String,
    },
    /// The session's entries (after `since` when given) and leaf.
    GetEntries {
        /// An entry id.
        since: Option<String>,
    },
    /// The session tree and leaf.
    GetTree,
    /// Extension commands, prompt templates and skills.
    GetCommands,
    /// Write the session as an HTML page.
    ExportHtml {
        /// Where (default `pi-session-<file stem>.html`).
        output_path: Option<String>,
    },
    /// Any other command type (answered with pi's `Unknown command` or a failure).
    Other(String),
}

/// A parsed command with its optional id.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcRequest {
    /// The client's correlation id.
    pub id: Option<String>,
    /// The command type as sent.
    pub kind: String,
    /// The command.
    pub command: RpcCommand,
}

/// A success response.
pub fn success(id: Option<&str>, command: &str, data: Option<Value>) -> Value {
    let mut o = Map::new();
    if let Some(id) = id {
        o.insert("id".into(), json!(id));
    }
    o.insert("type".into(), json!("response"));
    o.insert("command".into(), json!(command));
    o.insert("success".into(), json!(true));
    if let Some(d) = data {
        o.insert("data".into(), d);
    }
    Value::Object(o)
}

/// A failure response.
pub fn failure(id: Option<&str>, command: &str, error: &str) -> Value {
    let mut o = Map::new();
    if let Some(id) = id {
        o.insert("id".into(), json!(id));
    }
    o.insert("type".into(), json!("response"));
    o.insert("command".into(), json!(command));
    o.insert("success".into(), json!(false));
    o.insert("error".into(), json!(error));
    Value::Object(o)
}

/// Parses one stdin line. Malformed JSON gives pi's parse failure response
/// (`command: "parse"`, `Failed to parse command: …`, no id).
pub fn parse_command(line: &str) -> Result<RpcRequest, Value> {
    let value: Value = serde_json::from_str(line.trim_end_matches('\r'))
        .map_err(|e| failure(None, "parse", &format!("Failed to parse command: {e}")))?;
    let Value::Object(obj) = value else {
        return Err(failure(None, "parse", "Failed to parse command: expected a JSON object"));
    };
    let id = obj.get("id").and_then(Value::as_str).map(str::to_owned);
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
    let s = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_owned);
    let required = |k: &str| -> Result<String, Value> {
        s(k).ok_or_else(|| failure(id.as_deref(), &kind, &format!("Missing required field: {k}")))
    };
    let flag = |k: &str| -> Result<bool, Value> {
        obj.get(k)
            .and_then(Value::as_bool)
            .ok_or_else(|| failure(id.as_deref(), &kind, &format!("Missing required field: {k}")))
    };
    // `images: ImageContent[]` of prompt / steer / follow_up (absent or null: none). pi does not
    // validate them and would spread any value into the message content; a value that is not
    // `ImageContent[]` is answered with a failure here instead.
    let images = || -> Result<Vec<ImageContent>, Value> {
        match obj.get("images") {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| failure(id.as_deref(), &kind, &format!("Invalid images: {e}"))),
        }
    };
    let command = match kind.as_str() {
        "prompt" => RpcCommand::Prompt {
            message: required("message")?,
            images: images()?,
            streaming_behavior: s("streamingBehavior"),
        },
        "steer" => RpcCommand::Steer { message: required("message")?, images: images()? },
        "follow_up" => RpcCommand::FollowUp { message: required("message")?, images: images()? },
        "abort" => RpcCommand::Abort,
        "bash" => RpcCommand::Bash {
            command: required("command")?,
            exclude_from_context: obj.get("excludeFromContext").and_then(Value::as_bool).unwrap_or(false),
        },
        "abort_bash" => RpcCommand::AbortBash,
        "get_state" => RpcCommand::GetState,
        "get_messages" => RpcCommand::GetMessages,
        "set_model" => RpcCommand::SetModel { provider: required("provider")?, model_id: required("modelId")? },
        "cycle_model" => RpcCommand::CycleModel,
        "set_thinking_level" => RpcCommand::SetThinkingLevel { level: required("level")? },
        "get_last_assistant_text" => RpcCommand::GetLastAssistantText,
        "get_session_stats" => RpcCommand::GetSessionStats,
        "compact" => RpcCommand::Compact { custom_instructions: s("customInstructions") },
        "set_auto_compaction" => RpcCommand::SetAutoCompaction { enabled: flag("enabled")? },
        "set_auto_retry" => RpcCommand::SetAutoRetry { enabled: flag("enabled")? },
        "abort_retry" => RpcCommand::AbortRetry,
        "clear_queue" => RpcCommand::ClearQueue,
        "new_session" => RpcCommand::NewSession { parent_session: s("parentSession") },
        "switch_session" => RpcCommand::SwitchSession { session_path: required("sessionPath")? },
        "fork" => RpcCommand::Fork { entry_id: required("entryId")? },
        "clone" => RpcCommand::Clone,
        "get_fork_messages" => RpcCommand::GetForkMessages,
        "cycle_thinking_level" => RpcCommand::CycleThinkingLevel,
        "get_available_thinking_levels" => RpcCommand::GetAvailableThinkingLevels,
        "get_available_models" => RpcCommand::GetAvailableModels,
        "set_steering_mode" => RpcCommand::SetSteeringMode { mode: required("mode")? },
        "set_follow_up_mode" => RpcCommand::SetFollowUpMode { mode: required("mode")? },
        "set_session_name" => RpcCommand::SetSessionName { name: required("name")? },
        "get_entries" => RpcCommand::GetEntries { since: s("since") },
        "get_tree" => RpcCommand::GetTree,
        "get_commands" => RpcCommand::GetCommands,
        "export_html" => RpcCommand::ExportHtml { output_path: s("outputPath") },
        other => RpcCommand::Other(other.to_owned()),
    };
    Ok(RpcRequest { id, kind, command })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(
            success(Some("a"), "abort", None),
            json!({"id":"a","type":"response","command":"abort","success":true})
        );
        assert_eq!(failure(None, "x", "e"), json!({"type":"response","command":"x","success":false,"error":"e"}));
        let r = parse_command(r#"{"type":"set_model","provider":"p","modelId":"m"}"#).unwrap();
        assert_eq!(r.command, RpcCommand::SetModel { provider: "p".into(), model_id: "m".into() });
        assert_eq!(parse_command(r#"{"type":"zzz"}"#).unwrap().command, RpcCommand::Other("zzz".into()));
        let c = parse_command(r#"{"type":"compact","customInstructions":"keep names"}"#).unwrap();
        assert_eq!(c.command, RpcCommand::Compact { custom_instructions: Some("keep names".into()) });
        let c = parse_command(r#"{"type":"set_auto_retry","enabled":false}"#).unwrap();
        assert_eq!(c.command, RpcCommand::SetAutoRetry { enabled: false });
        assert!(parse_command(r#"{"type":"fork"}"#).is_err());
        let c = parse_command(
            r#"{"type":"steer","message":"see","images":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}"#,
        )
        .unwrap();
        assert_eq!(
            c.command,
            RpcCommand::Steer { message: "see".into(), images: vec![ImageContent::new("AAAA", "image/png")] }
        );
        let bad = parse_command(r#"{"id":"8","type":"follow_up","message":"x","images":"nope"}"#).unwrap_err();
        assert!(bad["error"].as_str().unwrap().starts_with("Invalid images: "), "{bad}");
        let e = parse_command(r#"{"id":"7","type":"prompt"}"#).unwrap_err();
        assert_eq!(e["id"], "7");
        assert_eq!(e["success"], false);
    }
}
