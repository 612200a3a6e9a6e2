//! GitHub Copilot's per-request headers (pi-ai's `github-copilot-headers.js`), added by every API
//! a `github-copilot` model uses: `X-Initiator` (`user` when the last message is the user's,
//! `agent` for a follow-up after assistant or tool messages), `Openai-Intent:
//! conversation-edits`, and `Copilot-Vision-Request: true` when a user message or tool result
//! carries an image.

use crate::http::HeaderMap;
use crate::types::{Message, UserBlock};

/// The provider id these headers belong to.
pub const COPILOT_PROVIDER: &str = "github-copilot";

/// Adds the dynamic headers to `headers` when `provider` is GitHub Copilot.
pub fn apply(headers: &mut HeaderMap, provider: &str, messages: &[Message]) {
    if provider != COPILOT_PROVIDER {
        return;
    }
    let agent = messages.last().is_some_and(|m| m.role() != "user");
    headers.set("X-Initiator", if agent { "agent" } else { "user" });
    headers.set("Openai-Intent", "conversation-edits");
    if has_vision_input(messages) {
        headers.set("Copilot-Vision-Request", "true");
    }
}

/// Whether a user message or a tool result carries an image (pi's `hasCopilotVisionInput`).
pub fn has_vision_input(messages: &[Message]) -> bool {
    let image = |b: &UserBlock| matches!(b, UserBlock::Image(_));
    messages.iter().any(|m| match m {
        Message::User(u) => u.content.blocks().is_some_and(|b| b.iter().any(image)),
        Message::ToolResult(t) => t.content.iter().any(image),
        _ => false,
    })
}
