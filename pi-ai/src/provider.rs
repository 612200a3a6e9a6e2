//! The seam between the unified API and one wire protocol.

use crate::options::StreamOptions;
use crate::stream::AssistantMessageEventStream;
use crate::transcript::TranscriptContext;
use crate::types::Model;

/// One wire protocol (pi's `ProviderStreams`, keyed by API id such as `openai-completions`).
///
/// `stream` returns at once; all work (HTTP, parsing) happens as the stream is polled. It receives
/// a [`TranscriptContext`], so the prompt and tools are always the transcript's system messages.
/// A returned stream never fails: every error becomes an `Error` event.
pub trait ApiProvider: Send + Sync {
    /// The API id this implementation speaks, e.g. `"anthropic-messages"`.
    fn api(&self) -> &str;

    /// Starts one request.
    fn stream(&self, model: &Model, context: TranscriptContext, options: StreamOptions) -> AssistantMessageEventStream;
}
