//! Turn control: `finish_turn`, `prepare_request` and `prepare_next_turn`.

use std::sync::Arc;

use async_trait::async_trait;
use pi_ai::{AssistantMessage, Model, ThinkingLevel, ToolResultMessage};
use tokio_util::sync::CancellationToken;

use crate::hooks::BoxError;
use crate::message::{AgentMessage, CustomMessage};
use crate::tool::AgentTool;

/// A finished turn, as `finish_turn` and `prepare_next_turn` see it.
#[derive(Debug)]
pub struct AgentTurnContext<'a, C> {
    /// The turn's assistant message.
    pub message: &'a AssistantMessage,
    /// Its tool results.
    pub tool_results: &'a [ToolResultMessage],
    /// The loop's working context.
    pub context: &'a [AgentMessage<C>],
    /// Messages added by this run so far.
    pub new_messages: &'a [AgentMessage<C>],
}

/// `finish_turn`'s decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnDecision {
    /// Make one more request even without new input.
    Continue,
    /// End the run after this turn (queues are not polled).
    End,
}

/// What `prepare_request` sees.
pub struct PrepareRequestContext<'a, C> {
    /// The working context.
    pub messages: &'a [AgentMessage<C>],
    /// The executable tools.
    pub tools: &'a [Arc<dyn AgentTool>],
    /// The model of this request.
    pub model: &'a Model,
    /// The thinking level of this request.
    pub thinking_level: ThinkingLevel,
}

/// Replacements for the rest of the run (never written back to the agent's state).
pub struct RequestUpdate<C> {
    /// Replaces the working context's messages.
    pub messages: Option<Vec<AgentMessage<C>>>,
    /// Replaces the executable tools.
    pub tools: Option<Vec<Arc<dyn AgentTool>>>,
    /// Replaces the model.
    pub model: Option<Model>,
    /// Replaces the thinking level (`Off` means no reasoning).
    pub thinking_level: Option<ThinkingLevel>,
}

/// `prepare_next_turn`'s answer: like [`RequestUpdate`] plus messages to emit before the turn's
/// steering messages.
pub struct NextTurnUpdate<C> {
    /// Replacements for the run.
    pub update: RequestUpdate<C>,
    /// Messages to add (with events) at the start of the next turn.
    pub messages: Vec<AgentMessage<C>>,
}

impl<C> Default for RequestUpdate<C> {
    fn default() -> Self {
        RequestUpdate { messages: None, tools: None, model: None, thinking_level: None }
    }
}

impl<C> Default for NextTurnUpdate<C> {
    fn default() -> Self {
        NextTurnUpdate { update: RequestUpdate::default(), messages: Vec::new() }
    }
}

/// Turn-level hooks. All default to "no change".
#[async_trait]
pub trait TurnHooks<C: CustomMessage = crate::UnknownMessage>: Send + Sync {
    /// Runs after each turn, before `turn_end`; `End` stops the run, `Continue` makes one more
    /// context-only request.
    async fn finish_turn(
        &self,
        _turn: AgentTurnContext<'_, C>,
        _cancel: &CancellationToken,
    ) -> Result<Option<TurnDecision>, BoxError> {
        Ok(None)
    }

    /// Runs before every request, after pending messages were emitted.
    async fn prepare_request(
        &self,
        _ctx: PrepareRequestContext<'_, C>,
        _cancel: &CancellationToken,
    ) -> Result<Option<RequestUpdate<C>>, BoxError> {
        Ok(None)
    }

    /// Runs before every turn but the first, before `turn_start`.
    async fn prepare_next_turn(
        &self,
        _turn: AgentTurnContext<'_, C>,
        _cancel: &CancellationToken,
    ) -> Result<Option<NextTurnUpdate<C>>, BoxError> {
        Ok(None)
    }
}
