//! Running the markdown transformers extensions registered ([`super::markdown`]): in extension
//! load order, each on the previous one's output (pi's `applyMarkdownTransformers`).

use std::panic::AssertUnwindSafe;

use super::markdown::{MarkdownTransformContext, MarkdownTransformerRegistration};
use super::runner::ExtensionRunner;
use super::runtime::lock;

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

impl ExtensionRunner {
    /// The transform a transcript Markdown of `message_type` draws with (pi's
    /// `createMarkdownTransform`), or `None` when no transformer runs on that type. `streaming`
    /// is the message's state when drawn.
    pub fn markdown_transform(
        self: &std::sync::Arc<Self>,
        message_type: &str,
        streaming: bool,
    ) -> Option<pi_tui::components::MarkdownTransform> {
        self.markdown_transform_for(message_type, streaming, None)
    }

    /// [`Self::markdown_transform`] for a Markdown drawn from a persisted session entry: `entry`
    /// is its id and ISO timestamp, the context's `messageId` and `timestamp` (pi fills them when
    /// it draws a session's entries, not for live messages).
    pub fn markdown_transform_for(
        self: &std::sync::Arc<Self>,
        message_type: &str,
        streaming: bool,
        entry: Option<(String, String)>,
    ) -> Option<pi_tui::components::MarkdownTransform> {
        if !self.markdown_transformers().iter().any(|r| r.message_types.contains(message_type)) {
            return None;
        }
        let runner = self.clone();
        let message_type = message_type.to_owned();
        let (message_id, timestamp) = entry.map_or((None, None), |(id, ts)| (Some(id), Some(ts)));
        Some(std::rc::Rc::new(move |markdown: &str, available_width: usize| {
            let context = MarkdownTransformContext {
                message_type: message_type.clone(),
                is_streaming: streaming,
                available_width,
                message_id: message_id.clone(),
                timestamp: timestamp.clone(),
            };
            runner.transform_markdown(markdown, &context)
        }))
    }
}
