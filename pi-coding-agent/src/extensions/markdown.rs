//! `pi.registerMarkdownTransformer`: an extension rewrites the Markdown the interactive
//! transcript draws (user and assistant messages and thinking by default; custom messages,
//! summaries and the changelog when asked). One transformer per extension, the last registration
//! wins; transformers run in extension load order, each on the previous one's output, and a
//! transformer that fails or declines keeps the current Markdown (pi's `applyMarkdownTransformers`).

use std::collections::HashSet;
use std::sync::Arc;

/// The surfaces a transformer runs on by default (pi's `DEFAULT_MARKDOWN_MESSAGE_TYPES`).
pub const DEFAULT_MARKDOWN_MESSAGE_TYPES: &[&str] = &["user", "assistant", "assistant-thinking"];

/// Where the Markdown is drawn (pi's `MarkdownTransformContext`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MarkdownTransformContext {
    /// `user`, `assistant`, `assistant-thinking`, `custom`, `summary` or `changelog`.
    pub message_type: String,
    /// Whether the message is still streaming.
    pub is_streaming: bool,
    /// The width available to the Markdown.
    pub available_width: usize,
    /// The session entry's id, when drawn from a persisted entry.
    pub message_id: Option<String>,
    /// The session entry's ISO timestamp, when drawn from a persisted entry.
    pub timestamp: Option<String>,
}

/// A Markdown transformer: the new Markdown, or `None` to keep it.
pub type MarkdownTransformer = Arc<dyn Fn(&str, &MarkdownTransformContext) -> Option<String> + Send + Sync>;

/// A registered transformer and the surfaces it runs on (pi's `MarkdownTransformerRegistration`).
#[derive(Clone)]
pub struct MarkdownTransformerRegistration {
    /// The transformer.
    pub transformer: MarkdownTransformer,
    /// The message types it runs on.
    pub message_types: HashSet<String>,
}

impl std::fmt::Debug for MarkdownTransformerRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarkdownTransformerRegistration").field("message_types", &self.message_types).finish()
    }
}
