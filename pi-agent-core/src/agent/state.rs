//! The agent's state and the reducer that applies each event to it before listeners run.

use std::sync::Arc;

use pi_ai::transcript::{current_system_message, current_system_prompt};
use pi_ai::{Model, PartialMessage, SystemMessage, ThinkingLevel};

use crate::event::AgentEvent;
use crate::message::{AgentMessage, CustomMessage};
use crate::tool::AgentTool;

/// The message currently streaming: an assistant partial, or another message between its start and end.
// One per agent, held in place while it streams: boxing the partial would only add an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum StreamingMessage<C> {
    /// The assistant response being streamed (updates applied).
    Assistant(PartialMessage),
    /// A non-assistant message between `message_start` and `message_end`.
    Other(AgentMessage<C>),
}

/// The agent's state. Listeners see it already updated for the event they receive.
#[derive(Clone)]
pub struct AgentState<C> {
    /// The model.
    pub model: Model,
    /// The requested thinking level.
    pub thinking_level: ThinkingLevel,
    /// The executable tools (the transcript declares them on the next request when they differ).
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// The transcript.
    pub messages: Vec<AgentMessage<C>>,
    /// True from run start until the run settled, `agent_end` listeners included.
    pub is_streaming: bool,
    /// The message between `message_start` and `message_end`.
    pub streaming_message: Option<StreamingMessage<C>>,
    /// Tool calls between `tool_execution_start` and `tool_execution_end`.
    pub pending_tool_calls: Vec<String>,
    /// The last failed turn's error text (cleared when a run starts).
    pub error_message: Option<String>,
}

impl<C: CustomMessage> AgentState<C> {
    /// The system prompt: a replay of the transcript's system messages. Read-only; change it by
    /// appending a system message (for example with `Agent::prompt`).
    pub fn system_prompt(&self) -> String {
        current_system_prompt(&self.messages)
    }

    /// The replayed system head (prompt, sections, current tools).
    pub fn system_message(&self) -> Option<SystemMessage> {
        current_system_message(&self.messages)
    }

    /// Applies one event (the state listeners see is already updated for the event they receive).
    pub(super) fn apply(&mut self, event: &AgentEvent<C>) {
        let state = self;
        match event {
            AgentEvent::MessageStart { message } => {
                state.streaming_message = Some(match message {
                    AgentMessage::Assistant(a) => {
                        StreamingMessage::Assistant(PartialMessage::new(a.clone().into_inner()))
                    }
                    other => StreamingMessage::Other(other.clone()),
                });
            }
            AgentEvent::MessageUpdate { assistant_message_event } => {
                if let Some(StreamingMessage::Assistant(partial)) = &mut state.streaming_message {
                    partial.apply(assistant_message_event);
                }
            }
            AgentEvent::MessageEnd { message } => {
                state.streaming_message = None;
                state.messages.push(message.clone());
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => state.pending_tool_calls.push(tool_call_id.clone()),
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                state.pending_tool_calls.retain(|id| id != tool_call_id)
            }
            AgentEvent::TurnEnd { message, .. } => {
                if let Some(e) = &message.error_message {
                    state.error_message = Some(e.clone());
                }
            }
            AgentEvent::AgentEnd { .. } => state.streaming_message = None,
            AgentEvent::AgentStart | AgentEvent::TurnStart | AgentEvent::ToolExecutionUpdate { .. } => {}
        }
    }
}
