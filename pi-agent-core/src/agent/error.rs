//! The errors of the Agent's own API.

use crate::hooks::BoxError;

/// Errors of the Agent's own API. Failures inside a run never surface here: they end the run
/// with an error message in the transcript.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// `prompt` while a run is active.
    #[error(
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    )]
    AlreadyPrompting,
    /// `continue` while a run is active.
    #[error("Agent is already processing. Wait for completion before continuing.")]
    AlreadyContinuing,
    /// `reset` while a run is active.
    #[error("Agent is already processing. Wait for completion before resetting.")]
    AlreadyResetting,
    /// `continue` with nothing to continue from.
    #[error("No messages to continue from")]
    NoMessages,
    /// `continue` after an assistant message with empty queues.
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
    /// A listener failed again while the failure path reported a first failure.
    #[error("{0}")]
    Listener(BoxError),
}
