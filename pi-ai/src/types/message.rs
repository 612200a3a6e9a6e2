//! The four roles a model understands: system, user, assistant and toolResult.

use serde_json::{Map, Value};

use super::{
    AssistantBlock, Content, Sections, Shared, StopReason, TextContent, ThinkingLevel, Tool, ToolCall, ToolReference,
    Usage, UserBlock,
};
use crate::{json_object, json_tagged_enum};

pub use crate::js::now_ms;

json_object! {
    /// System instructions and tool declarations at one point in the transcript.
    ///
    /// The leading system message is the system prompt plus the initial tools. A later one is a
    /// delta: `content` adds instructions, `sections` patch named sections (`None` deletes),
    /// `tools_added` / `tools_removed` change the tool set. Replaying them all gives the current
    /// head ([`current_system_message`](crate::transcript::current_system_message)).
    ///
    /// ```
    /// use pi_ai::{Sections, SystemMessage};
    /// let m = SystemMessage::new("").with_sections([("skills", Some("<skills>...</skills>".to_owned()))]);
    /// assert_eq!(
    ///     serde_json::to_string(&m).unwrap(),
    ///     r#"{"role":"system","content":"","sections":{"skills":"<skills>...</skills>"},"timestamp":0}"#
    /// );
    /// ```
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SystemMessage tag("role" = "system") {
        /// Instruction text: the base prompt on the leading message, added instructions later.
        content: req Content<TextContent> = "content",
        /// Named prompt sections; `None` removes one.
        sections: opt Sections = "sections",
        /// Tools that become available here.
        tools_added: opt Vec<Tool> = "toolsAdded",
        /// Tools that stop being available here.
        tools_removed: opt Vec<ToolReference> = "toolsRemoved",
        /// Unix milliseconds.
        timestamp: req u64 = "timestamp",
    }
}

impl SystemMessage {
    /// A system message with `content` and timestamp 0 (set it with [`Self::at`]).
    pub fn new(content: impl Into<Content<TextContent>>) -> Self {
        SystemMessage { content: content.into(), ..Default::default() }
    }

    /// Sets the timestamp.
    pub fn at(mut self, timestamp: u64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// Sets the section patches.
    pub fn with_sections<K: Into<String>>(mut self, sections: impl IntoIterator<Item = (K, Option<String>)>) -> Self {
        self.sections = Some(sections.into_iter().collect());
        self
    }

    /// Sets the added tools.
    pub fn with_tools_added(mut self, tools: Vec<Tool>) -> Self {
        self.tools_added = Some(tools);
        self
    }

    /// Sets the removed tools.
    pub fn with_tools_removed<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.tools_removed = Some(names.into_iter().map(ToolReference::new).collect());
        self
    }
}

json_object! {
    /// A user turn: a string or text and image blocks.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct UserMessage tag("role" = "user") {
        /// The content.
        content: req Content<UserBlock> = "content",
        /// Unix milliseconds.
        timestamp: req u64 = "timestamp",
    }
}

impl UserMessage {
    /// A user message with the given content, stamped now.
    pub fn new(content: impl Into<Content<UserBlock>>) -> Self {
        UserMessage { content: content.into(), timestamp: now_ms(), ..Default::default() }
    }

    /// Sets the timestamp.
    pub fn at(mut self, timestamp: u64) -> Self {
        self.timestamp = timestamp;
        self
    }
}

json_object! {
    /// A model response.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct AssistantMessage tag("role" = "assistant") {
        /// Text, thinking and tool-call blocks.
        content: req Vec<AssistantBlock> = "content",
        /// API id (wire protocol), e.g. `openai-completions`.
        api: req String = "api",
        /// Provider id.
        provider: req String = "provider",
        /// The requested model id.
        model: req String = "model",
        /// The model the server reports, when different.
        response_model: opt String = "responseModel",
        /// Token usage.
        usage: req Usage = "usage",
        /// Why the response stopped.
        stop_reason: req StopReason = "stopReason",
        /// Provider response id.
        response_id: opt String = "responseId",
        /// Provider-native effort level used.
        provider_thinking_level: opt String = "providerThinkingLevel",
        /// Diagnostics recorded while streaming.
        diagnostics: opt Vec<Value> = "diagnostics",
        /// Deferred-response handle.
        deferred: opt Value = "deferred",
        /// Error text when `stop_reason` is `error` or `aborted`.
        error_message: opt String = "errorMessage",
        /// The provider's raw stop reason.
        raw_stop_reason: opt String = "rawStopReason",
        /// Whether the model explicitly ended its turn.
        end_turn: opt bool = "endTurn",
        /// Unix milliseconds when the request started.
        timestamp: req u64 = "timestamp",
        /// Milliseconds from `timestamp` until the response ended (monotonic).
        duration_ms: opt u64 = "durationMs",
        /// The pi thinking level the agent loop requested.
        thinking_level: opt ThinkingLevel = "thinkingLevel",
    }
}

impl AssistantMessage {
    /// The tool calls, in content order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(AssistantBlock::as_tool_call)
    }

    /// The text blocks joined with `""`.
    pub fn text(&self) -> String {
        self.content.iter().filter_map(AssistantBlock::as_text).collect()
    }
}

json_object! {
    /// The result of one tool call. `details` and `nested_calls` never reach a model.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ToolResultMessage tag("role" = "toolResult") {
        /// Id of the call this answers.
        tool_call_id: req String = "toolCallId",
        /// Name of the tool.
        tool_name: req String = "toolName",
        /// Text and image blocks for the model.
        content: req Vec<UserBlock> = "content",
        /// Structured data for programs and UIs (never sent to a model).
        details: opt Value = "details",
        /// Usage of the tool's own execution.
        usage: opt Usage = "usage",
        /// Calls this tool made to other tools (never sent to a model).
        nested_calls: opt Map<String, Value> = "nestedCalls",
        /// Whether the tool failed.
        is_error: req bool = "isError",
        /// Execution time in milliseconds (monotonic).
        duration_ms: opt u64 = "durationMs",
        /// Unix milliseconds.
        timestamp: req u64 = "timestamp",
    }
}

json_tagged_enum! {
    /// A message a model understands, tagged by `role`.
    ///
    /// ```
    /// use pi_ai::Message;
    /// let m: Message = serde_json::from_str(r#"{"role":"user","content":"hi","timestamp":1}"#).unwrap();
    /// assert_eq!(m.role(), "user");
    /// assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"role":"user","content":"hi","timestamp":1}"#);
    /// ```
    #[derive(Clone, Debug, PartialEq)]
    pub enum Message tag("role") shared {
        /// System prompt or a delta of it.
        System(SystemMessage) = "system",
        /// A user turn.
        User(UserMessage) = "user",
        /// A model response.
        Assistant(AssistantMessage) = "assistant",
        /// A tool result.
        ToolResult(ToolResultMessage) = "toolResult",
    }
}

impl Message {
    /// The `role` tag.
    pub fn role(&self) -> &'static str {
        self.tag()
    }

    /// The timestamp.
    pub fn timestamp(&self) -> u64 {
        match self {
            Message::System(m) => m.timestamp,
            Message::User(m) => m.timestamp,
            Message::Assistant(m) => m.timestamp,
            Message::ToolResult(m) => m.timestamp,
        }
    }

    /// The system message, if this is one.
    pub fn as_system(&self) -> Option<&SystemMessage> {
        match self {
            Message::System(m) => Some(m),
            _ => None,
        }
    }
}

macro_rules! message_from_shared {
    ($($variant:ident($ty:ty)),*) => {
        $(
            impl From<Shared<$ty>> for Message {
                fn from(value: Shared<$ty>) -> Self {
                    Message::$variant(value)
                }
            }
        )*
    };
}

message_from_shared!(
    System(SystemMessage),
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage)
);
