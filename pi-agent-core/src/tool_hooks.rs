//! `before_tool_call` / `after_tool_call`: the hooks around each tool execution.

use async_trait::async_trait;
use pi_ai::{AssistantMessage, ToolCall, Usage, UserBlock};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::hooks::BoxError;
use crate::message::{AgentMessage, CustomMessage};
use crate::tool::AgentToolResult;

/// What `before_tool_call` sees.
#[derive(Debug)]
pub struct BeforeToolCallContext<'a, C> {
    /// The assistant message that made the call.
    pub assistant_message: &'a AssistantMessage,
    /// The raw tool-call block.
    pub tool_call: &'a ToolCall,
    /// The validated and coerced arguments.
    pub args: &'a Map<String, Value>,
    /// The loop's working context (results of the current batch are not in it yet).
    pub context: &'a [AgentMessage<C>],
}

/// `before_tool_call`'s answer: block the call (with a reason) and/or ask to terminate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BeforeToolCallResult {
    /// Do not execute; the model gets an error result with `reason` or "Tool execution was blocked".
    pub block: bool,
    /// Why it was blocked.
    pub reason: Option<String>,
    /// Copied into the blocked result's `terminate`.
    pub terminate: bool,
}

/// What `after_tool_call` sees.
#[derive(Debug)]
pub struct AfterToolCallContext<'a, C> {
    /// The assistant message that made the call.
    pub assistant_message: &'a AssistantMessage,
    /// The raw tool-call block.
    pub tool_call: &'a ToolCall,
    /// The validated arguments.
    pub args: &'a Map<String, Value>,
    /// The executed result, before any override.
    pub result: &'a AgentToolResult,
    /// Whether it is an error.
    pub is_error: bool,
    /// The loop's working context.
    pub context: &'a [AgentMessage<C>],
}

/// Field-by-field overrides of a tool result (no deep merge).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AfterToolCallResult {
    /// Replaces `content` (and drops `structured_content` unless that is overridden too).
    pub content: Option<Vec<UserBlock>>,
    /// Replaces `details`.
    pub details: Option<Value>,
    /// Replaces `structured_content`.
    pub structured_content: Option<Value>,
    /// Replaces the error flag.
    pub is_error: Option<bool>,
    /// Replaces `usage`.
    pub usage: Option<Usage>,
    /// Replaces `terminate`.
    pub terminate: Option<bool>,
}

/// Hooks around each tool call. Both default to "no change".
#[async_trait]
pub trait ToolCallHooks<C: CustomMessage = crate::UnknownMessage>: Send + Sync {
    /// Runs after validation, before execution; may block the call.
    async fn before_tool_call(
        &self,
        _ctx: BeforeToolCallContext<'_, C>,
        _cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCallResult>, BoxError> {
        Ok(None)
    }

    /// Runs after execution (only for executed calls); may override the result.
    async fn after_tool_call(
        &self,
        _ctx: AfterToolCallContext<'_, C>,
        _cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCallResult>, BoxError> {
        Ok(None)
    }
}
