//! [`SdkError`]: what the SDK's calls fail with.

use thiserror::Error;

use super::resources::ResourceError;
use super::system_prompt;
use crate::session::SessionError;

/// Errors of the SDK.
#[derive(Debug, Error)]
pub enum SdkError {
    /// No model was given and none could be chosen.
    #[error("No model available. Pass a model or set an API key for a provider.")]
    NoModel,
    /// A prompt while a run is active.
    #[error("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")]
    Busy,
    /// Resources failed to load.
    #[error(transparent)]
    Resources(#[from] ResourceError),
    /// The session file failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A custom section name was invalid.
    #[error(transparent)]
    Prompt(#[from] system_prompt::InvalidSectionName),
    /// The agent refused the call.
    #[error(transparent)]
    Agent(#[from] pi_agent_core::AgentError),
    /// A prompt while a compaction or branch summary runs.
    #[error("Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry.")]
    Compacting,
    /// An operation failed with pi's message (`Nothing to compact (session too small)`,
    /// `Compaction cancelled`, `Entry X not found`, an extension's `user_bash` error, …).
    #[error("{0}")]
    Failed(String),
}
