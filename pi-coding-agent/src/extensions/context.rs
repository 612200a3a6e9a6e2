//! The `context` / `context_with_system` algorithm (pi's `ExtensionRunner.emitContext`) and
//! [`ContextMessages`], the list `context` handlers work on.
//!
//! # Object identity, re-expressed
//!
//! pi decides whether a `context` handler changed the conversation by **object identity**: the
//! list is "the same" when it has the same length and the same message objects in the same
//! order, even if the handler edited those objects in place. Rust values have no identity, so
//! every message in a [`ContextMessages`] carries a stable, private id assigned before the call:
//!
//! | pi (TypeScript) | here |
//! |---|---|
//! | `e.messages[0].content = …` (edit an object) | `e.messages.get_mut(0)` — same id, edit applied in place |
//! | `return { messages: e.messages }` / `[...e.messages]` | `Some(e.messages.clone())` — clones keep ids: unchanged |
//! | `e.messages.splice(0, 1)` (no return) | `e.messages.remove(0)` — the list changed |
//! | `return { messages: e.messages.slice(-1) }` | `e.messages.split_off(len - 1)` / [`ContextMessages::filtered`] — kept ids, shorter list: changed |
//! | a new object (`{role: "user", …}`, `structuredClone`) | [`ContextMessages::push`], `ContextMessages::from(vec)` — fresh ids |
//!
//! When the handler's list has the same ids in the same order, every system message stays in
//! place and the (possibly edited) messages are written back at their positions. Otherwise the
//! transcript becomes `[current_system_message(current)?, ...returned]`: the replayed head, then
//! exactly what the handler returned (system messages a handler returns itself are kept).

use pi_agent_core::AgentMessage;
use pi_ai::transcript::current_system_message;

pub use super::context_messages::ContextMessages;
use super::context_messages::Tracked;
use super::errors::{ExtensionError, REMOVED_LEADING_SYSTEM_MESSAGE};
use super::events::{ContextEvent, ContextWithSystemEvent, ExtensionEvent};
use super::runner::ExtensionRunner;
use crate::messages::CodingAgentMessage;

/// The transcript after a `context` handler answered `returned` (pi's `restoreSystemMessages`).
fn restore_system_messages(
    current: Vec<Tracked>,
    visible: &ContextMessages,
    returned: ContextMessages,
) -> Vec<Tracked> {
    if returned.same_elements(visible) {
        // Same elements: keep every system message in place, apply in-place edits.
        let mut edits = returned.items.into_iter();
        return current.into_iter().map(|t| if t.is_system() { t } else { edits.next().unwrap_or(t) }).collect();
    }
    let head = current_system_message(&current);
    let mut next = Vec::with_capacity(returned.items.len() + 1);
    if let Some(head) = head {
        next.push(Tracked::fresh(AgentMessage::System(head.into())));
    }
    next.extend(returned.items);
    next
}

impl ExtensionRunner {
    /// Runs the request-time transforms in two phases (pi's `emitContext`, spec §3.4).
    ///
    /// 1. Every extension's `context` handlers (load order, then registration order) see the
    ///    conversation without system messages as a [`ContextMessages`]; they may return a list or
    ///    edit `event.messages` in place. After each, the prompt and tool state are restored: an
    ///    unchanged list keeps the system messages in place, a changed one becomes
    ///    `[current_system_message(current)?, ...returned]`.
    /// 2. Then every `context_with_system` handler sees the full list, system messages included,
    ///    and its output is used verbatim; dropping a leading system message is reported
    ///    ([`REMOVED_LEADING_SYSTEM_MESSAGE`]) but honoured.
    ///
    /// A failing or panicking handler is reported to the `on_error` listeners and the value from
    /// before it is kept. The caller's messages are consumed; the result is a new list.
    pub async fn emit_context(&self, messages: Vec<CodingAgentMessage>) -> Vec<CodingAgentMessage> {
        let ctx = self.create_context();
        let mut current: Vec<Tracked> = messages.into_iter().map(Tracked::fresh).collect();
        for (path, handler) in self.snapshot::<ContextEvent>(ContextEvent::NAME) {
            let visible = ContextMessages { items: current.iter().filter(|t| !t.is_system()).cloned().collect() };
            let mut event = ContextEvent { messages: visible.clone() };
            match self.call_handler(&handler, &mut event, &ctx).await {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), ContextEvent::NAME, error)),
                Ok(result) => {
                    let returned = match result {
                        Some(returned) => returned,
                        None if event.messages.same_elements(&visible) && event.messages == visible => continue,
                        None => event.messages,
                    };
                    current = restore_system_messages(current, &visible, returned);
                }
            }
        }
        let mut current: Vec<CodingAgentMessage> = current.into_iter().map(|t| t.message).collect();
        for (path, handler) in self.snapshot::<ContextWithSystemEvent>(ContextWithSystemEvent::NAME) {
            let had_head = matches!(current.first(), Some(AgentMessage::System(_)));
            let mut event = ContextWithSystemEvent { messages: current.clone() };
            match self.call_handler(&handler, &mut event, &ctx).await {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), ContextWithSystemEvent::NAME, error)),
                Ok(result) => {
                    current = result.unwrap_or(event.messages);
                    if had_head && !matches!(current.first(), Some(AgentMessage::System(_))) {
                        self.report(ExtensionError::new(
                            path.as_ref(),
                            ContextWithSystemEvent::NAME,
                            REMOVED_LEADING_SYSTEM_MESSAGE,
                        ));
                    }
                }
            }
        }
        current
    }
}
