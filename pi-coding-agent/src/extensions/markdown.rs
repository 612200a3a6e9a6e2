//! `pi.registerMarkdownTransformer`: an extension rewrites the Markdown the interactive
//! transcript draws (user and assistant messages and thinking by default; custom messages,
//! summaries and the changelog when asked). One transformer per extension, the last registration
//! wins; transformers run in extension load order, each on the previous one's output, and a
//! transformer that fails or declines keeps the current Markdown (pi's `applyMarkdownTransformers`).

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use super::api::ExtensionApi;
use super::errors::ExtensionApiError;
use super::runner::ExtensionRunner;
use super::runtime::lock;

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

impl ExtensionApi {
    /// pi's `registerMarkdownTransformer(transformer, {messageTypes?})`: replaces this
    /// extension's transformer; `message_types` defaults to [`DEFAULT_MARKDOWN_MESSAGE_TYPES`].
    pub fn register_markdown_transformer(
        &self,
        transformer: impl Fn(&str, &MarkdownTransformContext) -> Option<String> + Send + Sync + 'static,
        message_types: Option<&[&str]>,
    ) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        let types = message_types.unwrap_or(DEFAULT_MARKDOWN_MESSAGE_TYPES);
        *lock(&self.record.markdown_transformer) = Some(MarkdownTransformerRegistration {
            transformer: Arc::new(transformer),
            message_types: types.iter().map(|t| (*t).to_owned()).collect(),
        });
        Ok(())
    }
}

impl ExtensionRunner {
    /// The registered transformers, in extension load order (pi's `getMarkdownTransformers`).
    pub fn markdown_transformers(&self) -> Vec<MarkdownTransformerRegistration> {
        self.extensions.iter().filter_map(|e| lock(&e.markdown_transformer).clone()).collect()
    }

    /// Runs every transformer registered for `context.message_type` over `markdown`, chained; a
    /// transformer that panics or answers `None` keeps the current Markdown.
    pub fn transform_markdown(&self, markdown: &str, context: &MarkdownTransformContext) -> String {
        let mut current = markdown.to_owned();
        for registration in self.markdown_transformers() {
            if !registration.message_types.contains(&context.message_type) {
                continue;
            }
            let transformer = registration.transformer.clone();
            if let Ok(Some(next)) = std::panic::catch_unwind(AssertUnwindSafe(|| transformer(&current, context))) {
                current = next;
            }
        }
        current
    }
}
