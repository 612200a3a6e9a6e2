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

use std::ops::{Index, RangeBounds};
use std::sync::atomic::{AtomicU64, Ordering};

use pi_agent_core::AgentMessage;
use pi_ai::SystemMessage;
use pi_ai::transcript::{TranscriptEntry, current_system_message};

use super::errors::{ExtensionError, REMOVED_LEADING_SYSTEM_MESSAGE};
use super::events::{ContextEvent, ContextWithSystemEvent, ExtensionEvent};
use super::runner::ExtensionRunner;
use crate::messages::CodingAgentMessage;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn fresh_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A message with the identity pi would compare by.
#[derive(Clone, Debug, PartialEq)]
struct Tracked {
    id: u64,
    message: CodingAgentMessage,
}

impl Tracked {
    fn fresh(message: CodingAgentMessage) -> Self {
        Tracked { id: fresh_id(), message }
    }

    fn is_system(&self) -> bool {
        matches!(self.message, AgentMessage::System(_))
    }
}

impl TranscriptEntry for Tracked {
    fn as_system_message(&self) -> Option<&SystemMessage> {
        self.message.as_system_message()
    }
}

/// The messages a `context` handler sees: the conversation without system messages, each with
/// a stable identity (see the [module docs](self)).
///
/// ```
/// use pi_coding_agent::extensions::ContextMessages;
/// use pi_ai::UserMessage;
/// let mut list = ContextMessages::from(vec![UserMessage::new("one").into(), UserMessage::new("two").into()]);
/// let same = list.clone(); // like `[...e.messages]`: the same elements
/// assert!(list.same_elements(&same));
/// list.remove(0); // like `e.messages.splice(0, 1)`
/// assert!(!list.same_elements(&same));
/// assert_eq!(list.len(), 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextMessages {
    items: Vec<Tracked>,
}

impl ContextMessages {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The messages in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &CodingAgentMessage> + ExactSizeIterator {
        self.items.iter().map(|t| &t.message)
    }

    /// The messages in order, for in-place edits (identity is kept).
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut CodingAgentMessage> + ExactSizeIterator {
        self.items.iter_mut().map(|t| &mut t.message)
    }

    /// The message at `index`.
    pub fn get(&self, index: usize) -> Option<&CodingAgentMessage> {
        self.items.get(index).map(|t| &t.message)
    }

    /// The message at `index`, for an in-place edit (identity is kept).
    pub fn get_mut(&mut self, index: usize) -> Option<&mut CodingAgentMessage> {
        self.items.get_mut(index).map(|t| &mut t.message)
    }

    /// Appends a new message (a new identity).
    pub fn push(&mut self, message: CodingAgentMessage) {
        self.items.push(Tracked::fresh(message));
    }

    /// Inserts a new message at `index` (a new identity). Panics if `index > len`, like `Vec::insert`.
    pub fn insert(&mut self, index: usize, message: CodingAgentMessage) {
        self.items.insert(index, Tracked::fresh(message));
    }

    /// Removes and returns the message at `index`. Panics if out of bounds, like `Vec::remove`.
    pub fn remove(&mut self, index: usize) -> CodingAgentMessage {
        self.items.remove(index).message
    }

    /// Keeps the messages for which `keep` answers true.
    pub fn retain(&mut self, mut keep: impl FnMut(&CodingAgentMessage) -> bool) {
        self.items.retain(|t| keep(&t.message));
    }

    /// Keeps the first `len` messages.
    pub fn truncate(&mut self, len: usize) {
        self.items.truncate(len);
    }

    /// Removes every message.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Removes a range and returns its messages.
    pub fn drain(&mut self, range: impl RangeBounds<usize>) -> Vec<CodingAgentMessage> {
        self.items.drain(range).map(|t| t.message).collect()
    }

    /// Splits off the messages from `at` on, keeping their identities (pi's `slice(at)`).
    /// Panics if `at > len`, like `Vec::split_off`.
    pub fn split_off(&mut self, at: usize) -> ContextMessages {
        ContextMessages { items: self.items.split_off(at) }
    }

    /// A new list of the messages for which `keep` answers true, keeping their identities
    /// (pi's `e.messages.filter(…)`).
    pub fn filtered(&self, mut keep: impl FnMut(&CodingAgentMessage) -> bool) -> ContextMessages {
        ContextMessages { items: self.items.iter().filter(|t| keep(&t.message)).cloned().collect() }
    }

    /// Whether `other` has the same elements: same length and the same identities in order
    /// (pi's `sameMessages`). Edits of the messages do not matter.
    pub fn same_elements(&self, other: &ContextMessages) -> bool {
        self.items.len() == other.items.len() && self.items.iter().zip(&other.items).all(|(a, b)| a.id == b.id)
    }

    /// The messages, cloned.
    pub fn to_vec(&self) -> Vec<CodingAgentMessage> {
        self.iter().cloned().collect()
    }

    /// The messages.
    pub fn into_vec(self) -> Vec<CodingAgentMessage> {
        self.items.into_iter().map(|t| t.message).collect()
    }
}

impl From<Vec<CodingAgentMessage>> for ContextMessages {
    /// New messages, each with a new identity.
    fn from(messages: Vec<CodingAgentMessage>) -> Self {
        messages.into_iter().collect()
    }
}

impl FromIterator<CodingAgentMessage> for ContextMessages {
    fn from_iter<I: IntoIterator<Item = CodingAgentMessage>>(iter: I) -> Self {
        ContextMessages { items: iter.into_iter().map(Tracked::fresh).collect() }
    }
}

impl Index<usize> for ContextMessages {
    type Output = CodingAgentMessage;

    fn index(&self, index: usize) -> &CodingAgentMessage {
        &self.items[index].message
    }
}

impl IntoIterator for ContextMessages {
    type Item = CodingAgentMessage;
    type IntoIter = std::vec::IntoIter<CodingAgentMessage>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

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
