//! The coding agent's four message roles and its `convert_to_llm`.
//!
//! The transcript of the coding agent is wider than what a model understands. Besides the four
//! LLM roles it holds:
//!
//! | role | what it is | what the model sees |
//! |---|---|---|
//! | `bashExecution` | a shell command the user ran with `!cmd` | a user text (dropped when `excludeFromContext`) |
//! | `custom` | a message an extension sent | a user message with its `content` only |
//! | `branchSummary` | context from a `branch_summary` session entry | a user text wrapped in `<summary>` |
//! | `compactionSummary` | context from a `compaction` session entry | a user text wrapped in `<summary>` |
//!
//! UI-only data never reaches a model: [`convert_to_llm`] returns `Vec<pi_ai::Message>`, and
//! `custom`'s `display`, `details` and `customType` are dropped by construction. Roles this program
//! does not know are kept as raw JSON ([`CodingMessage::Other`]) so a transcript round-trips, and
//! are dropped from the model context.
//!
//! ```
//! use pi_coding_agent::messages::{convert_to_llm, BashExecutionMessage, CodingAgentMessage, CodingMessage};
//! let m = CodingAgentMessage::Custom(CodingMessage::BashExecution(BashExecutionMessage {
//!     command: "false".into(),
//!     exit_code: Some(1),
//!     ..Default::default()
//! }.into()));
//! let llm = convert_to_llm(&[m]);
//! assert_eq!(
//!     serde_json::to_string(&llm[0]).unwrap(),
//!     r#"{"role":"user","content":[{"type":"text","text":"Ran `false`\n(no output)\n\nCommand exited with code 1"}],"timestamp":0}"#
//! );
//! ```

use std::fmt;

use pi_agent_core::{AgentMessage, CustomMessage, UnknownMessage};
use pi_ai::{Content, Message, Shared, TextContent, UserBlock, UserMessage, json_object};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Opens the text the model sees for a `compactionSummary`.
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Closes the text the model sees for a `compactionSummary` (note the leading newline).
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Opens the text the model sees for a `branchSummary`.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Closes the text the model sees for a `branchSummary` (no leading newline, unlike compaction).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

json_object! {
    /// A shell command the user ran directly (`!cmd`), not a tool call of the model.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct BashExecutionMessage tag("role" = "bashExecution") {
        /// The command line.
        command: req String = "command",
        /// The collected output (a tail when truncated).
        output: req String = "output",
        /// Exit code; `None` when cancelled or unknown.
        exit_code: opt i64 = "exitCode",
        /// Whether the user cancelled the command.
        cancelled: req bool = "cancelled",
        /// Whether `output` is a truncated tail.
        truncated: req bool = "truncated",
        /// Where the full output was saved when truncated.
        full_output_path: opt String = "fullOutputPath",
        /// Unix milliseconds.
        timestamp: req u64 = "timestamp",
        /// `!!cmd`: shown to the user, never sent to the model.
        exclude_from_context: opt bool = "excludeFromContext",
    }
}

json_object! {
    /// A message an extension sent. Only `content` reaches the model.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CustomRoleMessage tag("role" = "custom") {
        /// Which extension sent it.
        custom_type: req String = "customType",
        /// What the model sees, as a user message.
        content: req Content<UserBlock> = "content",
        /// Whether the terminal renders it (never sent to the model).
        display: req bool = "display",
        /// Structured data for programs (never sent to the model).
        details: opt Value = "details",
        /// Unix milliseconds.
        timestamp: req u64 = "timestamp",
    }
}

json_object! {
    /// Context from a `branch_summary` session entry.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct BranchSummaryMessage tag("role" = "branchSummary") {
        /// The summary text.
        summary: req String = "summary",
        /// The leaf the user came back from (may be the literal `"root"`).
        from_id: req String = "fromId",
        /// Unix milliseconds.
        timestamp: req u64 = "timestamp",
    }
}

json_object! {
    /// Context from a `compaction` session entry.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CompactionSummaryMessage tag("role" = "compactionSummary") {
        /// The summary text.
        summary: req String = "summary",
        /// Estimated context tokens before compaction.
        tokens_before: num f64 = "tokensBefore",
        /// Unix milliseconds.
        timestamp: req u64 = "timestamp",
    }
}

/// The coding agent's own roles, plus any other role kept as raw JSON.
///
/// Like the four LLM roles, each is held behind [`Shared`] (a reference count, copied on write),
/// so copying a transcript copies pointers; build them with `.into()`.
#[derive(Clone, Debug, PartialEq)]
pub enum CodingMessage {
    /// `bashExecution`.
    BashExecution(Shared<BashExecutionMessage>),
    /// `custom`.
    Custom(Shared<CustomRoleMessage>),
    /// `branchSummary`.
    BranchSummary(Shared<BranchSummaryMessage>),
    /// `compactionSummary`.
    CompactionSummary(Shared<CompactionSummaryMessage>),
    /// Any other role (e.g. legacy `hookMessage`, or an extension's own), kept verbatim.
    Other(UnknownMessage),
}

/// A message of the coding agent's transcript.
pub type CodingAgentMessage = AgentMessage<CodingMessage>;

impl CustomMessage for CodingMessage {
    fn role(&self) -> &str {
        match self {
            CodingMessage::BashExecution(_) => "bashExecution",
            CodingMessage::Custom(_) => "custom",
            CodingMessage::BranchSummary(_) => "branchSummary",
            CodingMessage::CompactionSummary(_) => "compactionSummary",
            CodingMessage::Other(u) => u.role(),
        }
    }

    fn timestamp(&self) -> Option<u64> {
        match self {
            CodingMessage::BashExecution(m) => Some(m.timestamp),
            CodingMessage::Custom(m) => Some(m.timestamp),
            CodingMessage::BranchSummary(m) => Some(m.timestamp),
            CodingMessage::CompactionSummary(m) => Some(m.timestamp),
            CodingMessage::Other(u) => CustomMessage::timestamp(u),
        }
    }
}

impl From<BashExecutionMessage> for CodingMessage {
    fn from(m: BashExecutionMessage) -> Self {
        CodingMessage::BashExecution(m.into())
    }
}

impl From<CustomRoleMessage> for CodingMessage {
    fn from(m: CustomRoleMessage) -> Self {
        CodingMessage::Custom(m.into())
    }
}

impl From<BranchSummaryMessage> for CodingMessage {
    fn from(m: BranchSummaryMessage) -> Self {
        CodingMessage::BranchSummary(m.into())
    }
}

impl From<CompactionSummaryMessage> for CodingMessage {
    fn from(m: CompactionSummaryMessage) -> Self {
        CodingMessage::CompactionSummary(m.into())
    }
}

impl Serialize for CodingMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CodingMessage::BashExecution(m) => m.serialize(serializer),
            CodingMessage::Custom(m) => m.serialize(serializer),
            CodingMessage::BranchSummary(m) => m.serialize(serializer),
            CodingMessage::CompactionSummary(m) => m.serialize(serializer),
            CodingMessage::Other(m) => m.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for CodingMessage {
    /// Known roles parse into their struct (a malformed one falls back to [`CodingMessage::Other`],
    /// so nothing read is ever lost); any other role is kept raw.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CodingMessage;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message object with a \"role\"")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CodingMessage, A::Error> {
                let mut obj = Map::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    obj.insert(k, v);
                }
                Ok(CodingMessage::from_object(obj))
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl CodingMessage {
    /// Builds a message from a JSON object: a known, well-formed role becomes its variant,
    /// anything else [`CodingMessage::Other`].
    pub fn from_object(obj: Map<String, Value>) -> CodingMessage {
        fn typed<T: serde::de::DeserializeOwned>(v: &Value) -> Option<T> {
            // `&Value` is a deserializer: no clone, and the key order is kept (preserve_order).
            T::deserialize(v).ok()
        }
        let role = obj.get("role").and_then(Value::as_str).map(str::to_owned);
        let value = Value::Object(obj);
        let parsed = match role.as_deref() {
            Some("bashExecution") => {
                typed::<BashExecutionMessage>(&value).map(|m| CodingMessage::BashExecution(Shared::new(m)))
            }
            Some("custom") => typed::<CustomRoleMessage>(&value).map(|m| CodingMessage::Custom(Shared::new(m))),
            Some("branchSummary") => {
                typed::<BranchSummaryMessage>(&value).map(|m| CodingMessage::BranchSummary(Shared::new(m)))
            }
            Some("compactionSummary") => {
                typed::<CompactionSummaryMessage>(&value).map(|m| CodingMessage::CompactionSummary(Shared::new(m)))
            }
            _ => None,
        };
        match (parsed, value) {
            (Some(m), _) => m,
            (None, Value::Object(obj)) => CodingMessage::Other(UnknownMessage(obj.into())),
            (None, _) => CodingMessage::Other(UnknownMessage::default()),
        }
    }
}

/// The text the model sees for a `bashExecution` message (pi's `bashExecutionToText`).
///
/// The output is not trimmed; the exit code is reported only when non-zero and not cancelled; the
/// truncation note only when a full-output path exists.
///
/// ```
/// use pi_coding_agent::messages::{bash_execution_to_text, BashExecutionMessage};
/// let m = BashExecutionMessage { command: "echo hi".into(), output: "hi\n".into(), exit_code: Some(0), ..Default::default() };
/// assert_eq!(bash_execution_to_text(&m), "Ran `echo hi`\n```\nhi\n\n```");
/// ```
pub fn bash_execution_to_text(m: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", m.command);
    if m.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str("```\n");
        text.push_str(&m.output);
        text.push_str("\n```");
    }
    if m.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m.exit_code.filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if m.truncated
        && let Some(path) = m.full_output_path.as_deref().filter(|p| !p.is_empty())
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

fn user_text(text: String, timestamp: u64) -> Message {
    Message::User(
        UserMessage {
            content: Content::Blocks(vec![UserBlock::Text(TextContent::new(text))]),
            timestamp,
            ..Default::default()
        }
        .into(),
    )
}

/// Converts one coding-agent message to what the model sees, or `None` when it is dropped.
pub fn message_to_llm(m: &CodingAgentMessage) -> Option<Message> {
    match m {
        AgentMessage::Custom(c) => coding_message_to_llm(c),
        other => other.to_llm(),
    }
}

/// Converts one of the coding agent's own roles, or `None` when it is dropped.
pub fn coding_message_to_llm(m: &CodingMessage) -> Option<Message> {
    match m {
        CodingMessage::BashExecution(b) => {
            if b.exclude_from_context == Some(true) {
                return None;
            }
            Some(user_text(bash_execution_to_text(b), b.timestamp))
        }
        CodingMessage::Custom(c) => {
            let content = match &c.content {
                Content::Text(t) => Content::Blocks(vec![UserBlock::Text(TextContent::new(t.clone()))]),
                Content::Blocks(b) => Content::Blocks(b.clone()),
            };
            Some(Message::User(UserMessage { content, timestamp: c.timestamp, ..Default::default() }.into()))
        }
        CodingMessage::BranchSummary(s) => {
            Some(user_text(format!("{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}", s.summary), s.timestamp))
        }
        CodingMessage::CompactionSummary(s) => {
            Some(user_text(format!("{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}", s.summary), s.timestamp))
        }
        CodingMessage::Other(_) => None,
    }
}

/// The coding agent's `convertToLlm`: the four LLM roles pass through unchanged, the coding roles
/// become user messages, unknown roles are dropped. Order is kept; adjacent user messages are not
/// merged.
pub fn convert_to_llm(messages: &[CodingAgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(message_to_llm).collect()
}

/// [`convert_to_llm`] over owned messages, moving the LLM roles instead of cloning them.
pub fn into_llm(messages: Vec<CodingAgentMessage>) -> Vec<Message> {
    messages
        .into_iter()
        .filter_map(|m| match m.into_llm() {
            Ok(m) => Some(m),
            Err(c) => coding_message_to_llm(&c),
        })
        .collect()
}

/// The coding agent's converter as an agent hook: [`into_llm`] for owned messages and
/// [`convert_to_llm`] from a borrow, so a request without `transform_context` copies only what the
/// model sees.
///
/// ```
/// use pi_agent_core::ConvertToLlm;
/// use pi_coding_agent::messages::{CodingAgentMessage, CodingConvertToLlm};
/// let transcript: Vec<CodingAgentMessage> = vec![pi_agent_core::AgentMessage::User(pi_ai::UserMessage::new("hi").into())];
/// let sent = CodingConvertToLlm.convert_to_llm_borrowed(&transcript).unwrap();
/// assert_eq!(sent, CodingConvertToLlm.convert_to_llm(transcript).unwrap());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CodingConvertToLlm;

impl pi_agent_core::ConvertToLlm<CodingMessage> for CodingConvertToLlm {
    fn convert_to_llm(&self, messages: Vec<CodingAgentMessage>) -> Result<Vec<Message>, pi_agent_core::BoxError> {
        Ok(into_llm(messages))
    }

    fn convert_to_llm_borrowed(
        &self,
        messages: &[CodingAgentMessage],
    ) -> Result<Vec<Message>, pi_agent_core::BoxError> {
        Ok(convert_to_llm(messages))
    }
}

/// A `branchSummary` message (pi's `createBranchSummaryMessage`).
pub fn create_branch_summary_message(summary: &str, from_id: &str, timestamp: u64) -> CodingAgentMessage {
    AgentMessage::Custom(CodingMessage::BranchSummary(
        BranchSummaryMessage {
            summary: summary.to_owned(),
            from_id: from_id.to_owned(),
            timestamp,
            ..Default::default()
        }
        .into(),
    ))
}

/// A `compactionSummary` message (pi's `createCompactionSummaryMessage`).
pub fn create_compaction_summary_message(summary: &str, tokens_before: f64, timestamp: u64) -> CodingAgentMessage {
    AgentMessage::Custom(CodingMessage::CompactionSummary(
        CompactionSummaryMessage { summary: summary.to_owned(), tokens_before, timestamp, ..Default::default() }.into(),
    ))
}

/// A `custom` message (pi's `createCustomMessage`).
pub fn create_custom_message(
    custom_type: &str,
    content: Content<UserBlock>,
    display: bool,
    details: Option<Value>,
    timestamp: u64,
) -> CodingAgentMessage {
    AgentMessage::Custom(CodingMessage::Custom(
        CustomRoleMessage {
            custom_type: custom_type.to_owned(),
            content,
            display,
            details,
            timestamp,
            ..Default::default()
        }
        .into(),
    ))
}
