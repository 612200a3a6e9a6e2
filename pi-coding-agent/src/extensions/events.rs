//! Typed events and their results (spec §3.3).
//!
//! Each event type implements [`ExtensionEvent`]: its pi name and the type a handler may return
//! (`Ok(None)` = pi's `undefined`). Notify-only events share one enum, [`NotifyEvent`], and are
//! registered by name with [`ExtensionApi::on_notify`](crate::extensions::ExtensionApi::on_notify).
//!
//! Every event serializes to pi's JSON shape (`{"type": "tool_result", "toolName": …}`); that is
//! what runtime-loaded extensions receive.

use std::sync::Arc;

use async_trait::async_trait;
use indexmap::IndexMap;
use pi_ai::{AssistantMessage, ImageContent, ToolResultMessage, Usage, UserBlock};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::actions::ExtensionMessage;
use super::context_messages::ContextMessages;
use super::errors::BoxError;
use crate::messages::CodingAgentMessage;

/// An event extensions can handle.
pub trait ExtensionEvent: Send + 'static {
    /// pi's event name (`"tool_call"`, …).
    const NAME: &'static str;
    /// What a handler may return (wrapped in `Option`: `None` is pi's `undefined`).
    type Output: Send + 'static;
}

/// `context`: the conversation without system messages (see [`ContextMessages`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ContextEvent {
    /// The visible messages; edit in place or return a list.
    pub messages: ContextMessages,
}

impl ExtensionEvent for ContextEvent {
    const NAME: &'static str = "context";
    type Output = ContextMessages;
}

/// `context_with_system`: the full transcript, system messages included; the result is used as is.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextWithSystemEvent {
    /// Every message; edit in place or return a list.
    pub messages: Vec<CodingAgentMessage>,
}

impl ExtensionEvent for ContextWithSystemEvent {
    const NAME: &'static str = "context_with_system";
    type Output = Vec<CodingAgentMessage>;
}

/// `tool_call`: before a tool runs. `input` may be edited in place (not revalidated).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEvent {
    /// Call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// The validated arguments, mutable.
    pub input: Map<String, Value>,
    /// The enclosing call of a nested `executeTool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_call_id: Option<String>,
}

/// A `tool_call` handler's answer (pi's `{block?, reason?, terminate?}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallResult {
    /// Do not run the tool; the first blocking answer wins.
    #[serde(default)]
    pub block: bool,
    /// Why (the text of the blocked call's error result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Ask the loop to stop after this batch.
    #[serde(default)]
    pub terminate: bool,
}

/// The name the lead's interface uses for [`ToolCallResult`].
pub type ToolCallBlock = ToolCallResult;

impl ToolCallResult {
    /// A blocking answer with a reason.
    pub fn block(reason: impl Into<String>) -> Self {
        ToolCallResult { block: true, reason: Some(reason.into()), terminate: false }
    }
}

impl ExtensionEvent for ToolCallEvent {
    const NAME: &'static str = "tool_call";
    type Output = ToolCallResult;
}

/// `tool_result`: after a tool ran; handlers patch the result, chained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultEvent {
    /// Tool name.
    pub tool_name: String,
    /// Call id.
    pub tool_call_id: String,
    /// Enclosing call of a nested execution (a tool's `ctx.executeTool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_call_id: Option<String>,
    /// The arguments.
    pub input: Map<String, Value>,
    /// The content the model will see (after earlier patches).
    pub content: Vec<UserBlock>,
    /// The details (after earlier patches).
    pub details: Value,
    /// Structured output, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the result is an error.
    pub is_error: bool,
    /// Usage of the tool's own work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// A partial patch of a tool result (pi's `ToolResultEventResult`). As the result of
/// [`ExtensionRunner::emit_tool_result`](crate::extensions::ExtensionRunner::emit_tool_result) it
/// holds the final values instead; convert it with `AfterToolCallResult::from`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultPatch {
    /// Replaces the content (and drops `structured_content` unless that is set too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<UserBlock>>,
    /// Replaces the details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Replaces the structured content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Replaces the error flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Replaces the usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl From<ToolResultPatch> for pi_agent_core::AfterToolCallResult {
    fn from(p: ToolResultPatch) -> Self {
        pi_agent_core::AfterToolCallResult {
            content: p.content,
            details: p.details,
            structured_content: p.structured_content,
            is_error: p.is_error,
            usage: p.usage,
            terminate: None,
        }
    }
}

impl ExtensionEvent for ToolResultEvent {
    const NAME: &'static str = "tool_result";
    type Output = ToolResultPatch;
}

/// `message_end`: a message is complete. A handler may replace it with one of the same role.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageEndEvent {
    /// The message (after earlier handlers).
    pub message: CodingAgentMessage,
}

impl ExtensionEvent for MessageEndEvent {
    const NAME: &'static str = "message_end";
    type Output = CodingAgentMessage;
}

/// Where an input came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum InputSource {
    /// Typed in the terminal.
    Interactive,
    /// From an RPC client.
    Rpc,
    /// Sent by an extension (`sendUserMessage`).
    Extension,
}

/// How a prompt is queued while the agent streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamingBehavior {
    /// Steer the running turn.
    Steer,
    /// Run after the current run.
    FollowUp,
}

/// `input`: user input before skill and template expansion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputEvent {
    /// The text (after earlier transforms).
    pub text: String,
    /// Attached images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<ImageContent>>,
    /// Where it came from.
    pub source: InputSource,
    /// How it would be queued while streaming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming_behavior: Option<StreamingBehavior>,
}

/// An `input` handler's answer (also the runner's outcome, pi's `InputEventResult`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum InputOutcome {
    /// Go on with the input as it is.
    Continue,
    /// Replace the text (and the images, when given); later handlers see the new values.
    Transform {
        /// New text.
        text: String,
        /// New images (`None` keeps the current ones).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
    },
    /// The extension handled it; nothing is sent and later handlers do not run.
    Handled,
}

impl ExtensionEvent for InputEvent {
    const NAME: &'static str = "input";
    type Output = InputOutcome;
}

/// What started a run, as `before_agent_start` sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "messageType", rename_all = "camelCase")]
pub enum AgentStartTrigger {
    /// A user prompt.
    User {
        /// The prompt text.
        prompt: String,
        /// Attached images.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        images: Option<Vec<ImageContent>>,
    },
    /// A custom message sent with `triggerTurn`.
    Custom {
        /// The message.
        message: Box<CodingAgentMessage>,
    },
}

/// `before_agent_start`: before a run starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAgentStartEvent {
    /// What started the run.
    #[serde(flatten)]
    pub trigger: AgentStartTrigger,
    /// The current system prompt (after an earlier handler forced one, that one).
    pub system_prompt: String,
    /// pi's `systemPromptOptions.sections`: the custom prompt sections of this run, by name.
    /// Handlers may add, change or remove entries (the MCP extension keeps `mcp_servers` here).
    #[serde(skip)]
    pub sections: IndexMap<String, String>,
}

/// A `before_agent_start` handler's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAgentStartResult {
    /// A custom message to send after the prompt (every handler's is collected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<ExtensionMessage>,
    /// A system prompt to force for this run (the last one wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
}

impl ExtensionEvent for BeforeAgentStartEvent {
    const NAME: &'static str = "before_agent_start";
    type Output = BeforeAgentStartResult;
}

/// What [`ExtensionRunner::emit_before_agent_start`](crate::extensions::ExtensionRunner::emit_before_agent_start) returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeforeAgentStartOutcome {
    /// Every handler's message, in order (sent as custom messages after the prompt).
    pub messages: Vec<ExtensionMessage>,
    /// The last forced system prompt (pi's `forceSystemPrompt`).
    pub system_prompt: Option<String>,
    /// The custom sections after every handler ran.
    pub sections: IndexMap<String, String>,
}

/// `user_bash`: the user ran `!cmd` / `!!cmd`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserBashEvent {
    /// The command line.
    pub command: String,
    /// `!!cmd`: not sent to the model.
    pub exclude_from_context: bool,
    /// Working directory.
    pub cwd: String,
}

/// The result of a shell command run by an extension instead of locally (pi's `BashResult`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashResult {
    /// Collected output.
    pub output: String,
    /// Exit code (`None` when cancelled or unknown).
    pub exit_code: Option<i64>,
    /// Whether the command was cancelled.
    pub cancelled: bool,
    /// Whether `output` is truncated.
    pub truncated: bool,
    /// Where the full output was saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

/// How to run a user shell command elsewhere (pi's `BashOperations`, e.g. over SSH).
#[async_trait]
pub trait UserBashOperations: Send + Sync {
    /// Runs `command` in `cwd`, streaming output chunks to `on_data`; returns the exit code.
    async fn exec(
        &self,
        command: &str,
        cwd: &str,
        on_data: &(dyn for<'b> Fn(&'b [u8]) + Send + Sync),
        cancel: CancellationToken,
    ) -> Result<Option<i64>, BoxError>;
}

/// A `user_bash` handler's answer: run with these operations, or use this result.
#[derive(Clone)]
pub enum UserBashResult {
    /// Run the command with these operations instead of locally.
    Operations(Arc<dyn UserBashOperations>),
    /// The command already ran; use this result.
    Result(BashResult),
}

impl std::fmt::Debug for UserBashResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserBashResult::Operations(_) => f.write_str("Operations(..)"),
            UserBashResult::Result(r) => f.debug_tuple("Result").field(r).finish(),
        }
    }
}

impl ExtensionEvent for UserBashEvent {
    const NAME: &'static str = "user_bash";
    type Output = UserBashResult;
}

/// `before_provider_request`: the provider payload about to be sent; a handler returns a new one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BeforeProviderRequestEvent {
    /// The payload (after earlier handlers).
    pub payload: Value,
}

impl ExtensionEvent for BeforeProviderRequestEvent {
    const NAME: &'static str = "before_provider_request";
    type Output = Value;
}

/// A tool result as notify events carry it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultData {
    /// Content blocks.
    pub content: Vec<UserBlock>,
    /// Details.
    pub details: Value,
}

impl From<&pi_agent_core::AgentToolResult> for ToolResultData {
    fn from(r: &pi_agent_core::AgentToolResult) -> Self {
        ToolResultData { content: r.content.clone(), details: r.details.clone() }
    }
}

/// Notify-only events and the `session_before_*` events (pi's generic `emit`).
///
/// Handlers return `Option<Value>`: ignored except for `session_before_*`, where the last
/// non-null answer is returned and one with `"cancel": true` stops at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum NotifyEvent {
    /// The session started.
    SessionStart {
        /// `startup`, `reload`, `new`, `resume` or `fork`.
        reason: String,
        /// The previous session file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        previous_session_file: Option<String>,
    },
    /// About to switch sessions (cancellable).
    SessionBeforeSwitch {
        /// `new` or `resume`.
        reason: String,
        /// The session to switch to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_session_file: Option<String>,
    },
    /// About to fork (cancellable).
    SessionBeforeFork {
        /// The entry to fork at.
        entry_id: String,
        /// `before` or `at`.
        position: String,
    },
    /// The session is shutting down.
    SessionShutdown {
        /// Why.
        reason: String,
        /// The next session file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_session_file: Option<String>,
    },
    /// A run started.
    AgentStart,
    /// A run ended.
    AgentEnd {
        /// The messages the run added.
        messages: Vec<CodingAgentMessage>,
    },
    /// A run settled.
    AgentSettled {
        /// Whether it was aborted.
        aborted: bool,
    },
    /// A turn started.
    TurnStart {
        /// 0-based turn index in the run.
        turn_index: u64,
        /// Unix milliseconds.
        timestamp: u64,
    },
    /// A turn ended: a boundary event (see [`ExtensionRunner::emit_boundary`](crate::extensions::ExtensionRunner::emit_boundary));
    /// a handler may answer a [`BoundaryResult`](crate::extensions::BoundaryResult) as JSON.
    TurnEnd {
        /// 0-based turn index in the run.
        turn_index: u64,
        /// The turn's assistant message.
        message: pi_ai::Shared<AssistantMessage>,
        /// Its tool results.
        tool_results: Vec<ToolResultMessage>,
        /// The session entry of the assistant message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_entry_id: Option<String>,
        /// The session entries of the tool results.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_result_entry_ids: Option<Vec<String>>,
        /// The boundary state (drafts, continuation, context preview, outcome).
        #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
        boundary: Option<super::boundary_state::BoundaryState>,
    },
    /// Before the run settles: a boundary event; handlers may append entries and ask for one more
    /// request.
    AgentBeforeSettle {
        /// The boundary state.
        #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
        boundary: Option<super::boundary_state::BoundaryState>,
    },
    /// A message entered the transcript.
    MessageStart {
        /// The message.
        message: CodingAgentMessage,
    },
    /// The streaming assistant message changed.
    MessageUpdate {
        /// The partial message so far.
        message: CodingAgentMessage,
        /// The provider event (its JSON is pi's `assistantMessageEvent`, written only when the
        /// event is serialized).
        #[serde(with = "super::assistant_event_wire::assistant_event_serde")]
        assistant_message_event: pi_ai::AssistantMessageEvent,
    },
    /// A tool call started.
    ToolExecutionStart {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// Arguments.
        args: Map<String, Value>,
        /// Enclosing call of a nested execution.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    /// A running tool reported progress.
    ToolExecutionUpdate {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// Arguments.
        args: Map<String, Value>,
        /// The partial result.
        partial_result: ToolResultData,
        /// Enclosing call of a nested execution.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    /// A tool call finished.
    ToolExecutionEnd {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// The final result.
        result: ToolResultData,
        /// Whether it failed.
        is_error: bool,
        /// How long it ran.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        /// Enclosing call of a nested execution.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    /// Any other notify event of pi (`session_compact`, `model_select`, …): its name and payload.
    #[serde(untagged)]
    Other {
        /// The event name.
        #[serde(rename = "type")]
        kind: String,
        /// The payload fields besides `type`.
        #[serde(flatten)]
        payload: Map<String, Value>,
    },
}

impl NotifyEvent {
    /// pi's event name.
    pub fn kind(&self) -> &str {
        match self {
            NotifyEvent::Other { kind, .. } => kind,
            known => known.known_kind().unwrap_or_default(),
        }
    }

    /// pi's event name of every variant but [`NotifyEvent::Other`] (whose name is its own).
    pub fn known_kind(&self) -> Option<&'static str> {
        Some(match self {
            NotifyEvent::SessionStart { .. } => "session_start",
            NotifyEvent::SessionBeforeSwitch { .. } => "session_before_switch",
            NotifyEvent::SessionBeforeFork { .. } => "session_before_fork",
            NotifyEvent::SessionShutdown { .. } => "session_shutdown",
            NotifyEvent::AgentStart => "agent_start",
            NotifyEvent::AgentEnd { .. } => "agent_end",
            NotifyEvent::AgentSettled { .. } => "agent_settled",
            NotifyEvent::TurnStart { .. } => "turn_start",
            NotifyEvent::TurnEnd { .. } => "turn_end",
            NotifyEvent::AgentBeforeSettle { .. } => "agent_before_settle",
            NotifyEvent::MessageStart { .. } => "message_start",
            NotifyEvent::MessageUpdate { .. } => "message_update",
            NotifyEvent::ToolExecutionStart { .. } => "tool_execution_start",
            NotifyEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            NotifyEvent::ToolExecutionEnd { .. } => "tool_execution_end",
            NotifyEvent::Other { .. } => return None,
        })
    }

    /// Whether this is a `session_before_*` event (its handlers' answers matter).
    pub fn is_session_before(&self) -> bool {
        self.kind().starts_with("session_before_")
    }
}

impl ExtensionEvent for NotifyEvent {
    /// Not used for lookup: notify handlers are registered under [`NotifyEvent::kind`].
    const NAME: &'static str = "*";
    type Output = Value;
}

impl Serialize for ContextEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("messages", &self.messages.to_vec())?;
        map.end()
    }
}

impl Serialize for ContextWithSystemEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("messages", &self.messages)?;
        map.end()
    }
}

impl Serialize for MessageEndEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("message", &self.message)?;
        map.end()
    }
}
