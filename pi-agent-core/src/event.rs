//! Events of an agent run, in pi's order (see the spec's sequences (a)–(e)).

use pi_ai::{AssistantMessage, AssistantMessageEvent, Shared, ToolResultMessage};
use serde_json::{Map, Value};

use crate::message::AgentMessage;
use crate::tool::AgentToolResult;

/// One step of an agent run.
///
/// Order of a run: `AgentStart`, `TurnStart`, `MessageStart`/`MessageEnd` for each input message,
/// the assistant's `MessageStart`, `MessageUpdate`s, `MessageEnd`, tool execution events and
/// tool-result messages, `TurnEnd`, further turns, `AgentEnd`.
///
/// `MessageUpdate` carries the provider event (a delta), not a copy of the whole partial message:
/// the partial is the `MessageStart` message with the updates applied (use
/// [`pi_ai::PartialMessage`], or read `streaming_message` from the [`Agent`](crate::Agent)'s state),
/// so an update costs O(delta), not O(message).
#[derive(Clone, Debug)]
pub enum AgentEvent<C = crate::UnknownMessage> {
    /// The run started.
    AgentStart,
    /// The run ended; `messages` are the messages this run added (for `continue`, pre-existing
    /// messages are excluded; on the failure path only the failure message).
    AgentEnd {
        /// Messages added by the run.
        messages: Vec<AgentMessage<C>>,
    },
    /// A turn (one provider request and its tool calls) started.
    TurnStart,
    /// A turn ended.
    TurnEnd {
        /// The turn's assistant message (shared with the transcript, not copied).
        message: Shared<AssistantMessage>,
        /// Its tool results, in source order.
        tool_results: Vec<ToolResultMessage>,
    },
    /// A message entered the transcript (for assistants: the partial at stream start).
    MessageStart {
        /// The message.
        message: AgentMessage<C>,
    },
    /// The streaming assistant message changed.
    MessageUpdate {
        /// The provider event (`text_delta`, `toolcall_end`, …; never `start`/`done`/`error`).
        assistant_message_event: AssistantMessageEvent,
    },
    /// A message is complete (for assistants: the final message). A listener may replace it
    /// ([`Agent::subscribe_replacing`](crate::Agent::subscribe_replacing), or any sink through
    /// [`EventSink::emit_message_end`](crate::EventSink::emit_message_end)); the run then goes on
    /// with the replacement.
    MessageEnd {
        /// The message.
        message: AgentMessage<C>,
    },
    /// A tool call started (before validation).
    ToolExecutionStart {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// The raw arguments from the model (not coerced).
        args: Map<String, Value>,
    },
    /// A running tool reported a partial result.
    ToolExecutionUpdate {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// The raw arguments.
        args: Map<String, Value>,
        /// The partial result (boxed, as every large payload is: an event is moved through
        /// each listener, and its size is the largest variant's).
        partial_result: Box<AgentToolResult>,
    },
    /// A tool call finished (completion order in parallel mode).
    ToolExecutionEnd {
        /// Call id.
        tool_call_id: String,
        /// Tool name.
        tool_name: String,
        /// The final result (boxed).
        result: Box<AgentToolResult>,
        /// Whether it failed.
        is_error: bool,
        /// Execution time, when the tool actually ran.
        duration_ms: Option<u64>,
    },
}

impl<C> AgentEvent<C> {
    /// pi's event `type` string (`"message_update"`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart => "agent_start",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// Every listener gets the event moved to it, and every delta is one: large payloads are
    /// boxed or shared so a move stays a few words (it was 560 bytes, a `memcpy` per move).
    #[test]
    fn an_event_is_small() {
        assert!(std::mem::size_of::<AgentEvent>() <= 136, "{}", std::mem::size_of::<AgentEvent>());
    }
}
