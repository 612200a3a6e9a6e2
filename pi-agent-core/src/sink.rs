//! Where a run's events go ([`EventSink`]) and how a finished message passes through it
//! (`MessageEnd` may hand back a replacement of the same role). The loop and the tool executor
//! both end messages here.

use async_trait::async_trait;
use futures::future::BoxFuture;
use pi_ai::{AssistantMessage, AssistantMessageEvent, Shared, ToolResultMessage};

use crate::event::AgentEvent;
use crate::hooks::BoxError;
use crate::message::{AgentMessage, CustomMessage};

/// Receives the events of a run. The loop waits for each `emit` (a barrier, as pi awaits its
/// listeners); an error ends the run through the failure path.
///
/// Every `MessageEnd` goes through [`EventSink::emit_message_end`], which may hand back a
/// replacement for the finished message.
#[async_trait]
pub trait EventSink<C>: Send {
    /// Handles one event.
    async fn emit(&mut self, event: AgentEvent<C>) -> Result<(), BoxError>;

    /// Handles `MessageEnd` for `message` and returns the message the run goes on with: `message`
    /// itself, or a replacement of the same role.
    ///
    /// pi's listeners may replace a finished message in place (the coding agent's extensions do,
    /// from `message_end`), and its loop holds that same object, so the replacement is what the
    /// run uses from then on: the transcript and the next requests, an assistant message's stop
    /// reason and tool calls (the replacement's calls are the ones executed), `finish_turn`,
    /// `TurnEnd` and `AgentEnd`. A replacement of another role ends the run with an error.
    ///
    /// The default emits the event and keeps the message.
    async fn emit_message_end(&mut self, message: AgentMessage<C>) -> Result<AgentMessage<C>, BoxError>
    where
        C: Clone + Send + 'static,
    {
        self.emit(AgentEvent::MessageEnd { message: message.clone() }).await?;
        Ok(message)
    }

    /// Handles `MessageUpdate` for `delta`, the event of every streamed token, as [`emit`](Self::emit)
    /// would, but without a future when nothing has to be awaited: `Ok(None)` when it was handled
    /// at once, else the future that finishes it (the loop awaits it before the next event).
    ///
    /// The default returns [`emit`](Self::emit)'s future.
    fn emit_update(
        &mut self,
        delta: AssistantMessageEvent,
    ) -> Result<Option<BoxFuture<'_, Result<(), BoxError>>>, BoxError> {
        Ok(Some(self.emit(AgentEvent::MessageUpdate { assistant_message_event: delta })))
    }
}

/// An [`EventSink`] from a closure.
pub struct FnSink<F>(pub F);

#[async_trait]
impl<C: Send + 'static, F: FnMut(AgentEvent<C>) + Send> EventSink<C> for FnSink<F> {
    async fn emit(&mut self, event: AgentEvent<C>) -> Result<(), BoxError> {
        (self.0)(event);
        Ok(())
    }
}

/// [`EventSink::emit_message_end`], checking that a replacement kept the role.
pub(crate) async fn end_message<C: CustomMessage>(
    sink: &mut dyn EventSink<C>,
    message: AgentMessage<C>,
) -> Result<AgentMessage<C>, BoxError> {
    let role = message.role().to_owned();
    let ended = sink.emit_message_end(message).await?;
    if ended.role() != role {
        return Err(role_changed(&role, ended.role()));
    }
    Ok(ended)
}

/// The error of a `message_end` replacement of another role (a typed transcript cannot hold it
/// where the original stood).
pub(crate) fn role_changed(from: &str, to: &str) -> BoxError {
    format!("A message_end replacement must keep the role: {from} became {to}").into()
}

/// [`end_message`] for an assistant message.
pub(crate) async fn end_assistant<C: CustomMessage>(
    sink: &mut dyn EventSink<C>,
    message: Shared<AssistantMessage>,
) -> Result<Shared<AssistantMessage>, BoxError> {
    match end_message(sink, AgentMessage::Assistant(message)).await? {
        AgentMessage::Assistant(m) => Ok(m),
        other => Err(role_changed("assistant", other.role())),
    }
}

/// [`end_message`] for a tool result.
pub(crate) async fn end_tool_result<C: CustomMessage>(
    sink: &mut dyn EventSink<C>,
    message: Shared<ToolResultMessage>,
) -> Result<Shared<ToolResultMessage>, BoxError> {
    match end_message(sink, AgentMessage::ToolResult(message)).await? {
        AgentMessage::ToolResult(m) => Ok(m),
        other => Err(role_changed("toolResult", other.role())),
    }
}
