//! [`ContextMessages`]: the list `context` handlers work on, each message with the identity pi
//! compares by (see [`crate::extensions::context`] for the rules).

use std::ops::{Index, RangeBounds};
use std::sync::atomic::{AtomicU64, Ordering};

use pi_agent_core::AgentMessage;
use pi_ai::SystemMessage;
use pi_ai::transcript::TranscriptEntry;

use crate::messages::CodingAgentMessage;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn fresh_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A message with the identity pi would compare by.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tracked {
    pub(crate) id: u64,
    pub(crate) message: CodingAgentMessage,
}

impl Tracked {
    pub(crate) fn fresh(message: CodingAgentMessage) -> Self {
        Tracked { id: fresh_id(), message }
    }

    pub(crate) fn is_system(&self) -> bool {
        matches!(self.message, AgentMessage::System(_))
    }
}

impl TranscriptEntry for Tracked {
    fn as_system_message(&self) -> Option<&SystemMessage> {
        self.message.as_system_message()
    }
}

/// The messages a `context` handler sees: the conversation without system messages, each with
/// a stable identity (see [`crate::extensions::context`]).
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
    pub(crate) items: Vec<Tracked>,
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
