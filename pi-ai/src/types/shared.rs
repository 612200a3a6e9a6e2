//! [`Shared`]: a message shared by reference count, with value semantics.
//!
//! A transcript is copied on every request (into `transform_context`, into the model's messages,
//! into the stream function that owns them). pi's transcripts are arrays of object references, so
//! those copies are shallow there; with messages held inline they were deep here (every string of
//! every message, ~1.2 ms and ~5 MB for 10 000 messages). Holding each message behind a
//! reference count makes a copy of the transcript one pointer per message, and keeps `Message`
//! and `AgentMessage` 16 bytes wide.
//!
//! [`Shared<T>`] still behaves as a value: reading goes through [`Deref`], and writing through
//! [`DerefMut`] first copies the message if another transcript still holds it (copy-on-write, as
//! [`Arc::make_mut`]), so no change made through one copy is ever seen through another.

use std::borrow::Borrow;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value shared by reference count, copied on write.
///
/// Cloning is one atomic increment; reading derefs; writing copies the value first when it is
/// shared ([`Arc::make_mut`]). It serializes, compares and prints as the value itself.
///
/// ```
/// use pi_ai::{Message, Shared, UserMessage};
/// let a = Message::User(UserMessage::new("hi").into());
/// let mut b = a.clone(); // shares the user message
/// if let Message::User(u) = &mut b {
///     u.timestamp = 7; // copies it first: `a` is unchanged
/// }
/// assert_ne!(a, b);
/// let s: Shared<UserMessage> = UserMessage::new("x").into();
/// assert_eq!(s.timestamp, s.clone().into_inner().timestamp);
/// ```
pub struct Shared<T>(Arc<T>);

impl<T> Shared<T> {
    /// Wraps a value.
    pub fn new(value: T) -> Self {
        Shared(Arc::new(value))
    }

    /// Whether both point to the same allocation (then they are certainly equal).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl<T: Clone> Shared<T> {
    /// The value, moved out when this is its only holder, cloned otherwise.
    pub fn into_inner(self) -> T {
        Arc::unwrap_or_clone(self.0)
    }

    /// A mutable reference, copying the value first if it is shared.
    pub fn make_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<T> AsRef<T> for Shared<T> {
    fn as_ref(&self) -> &T {
        &self.0
    }
}

impl<T> Borrow<T> for Shared<T> {
    fn borrow(&self) -> &T {
        &self.0
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Self {
        Shared::new(value)
    }
}

impl<T: Default> Default for Shared<T> {
    fn default() -> Self {
        Shared::new(T::default())
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl<T: PartialEq> PartialEq<T> for Shared<T> {
    fn eq(&self, other: &T) -> bool {
        *self.0 == *other
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Shared<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Shared::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_through_a_shared_copy_leaves_the_other_alone() {
        let a = Shared::new(vec![1, 2]);
        let mut b = a.clone();
        assert!(Shared::ptr_eq(&a, &b));
        b.push(3);
        assert_eq!(*a, vec![1, 2]);
        assert_eq!(*b, vec![1, 2, 3]);
        assert!(!Shared::ptr_eq(&a, &b));
    }

    #[test]
    fn writing_to_the_only_holder_does_not_copy() {
        let mut a = Shared::new(vec![1]);
        let before = Arc::as_ptr(&a.0);
        a.push(2);
        assert_eq!(before, Arc::as_ptr(&a.0));
        assert_eq!(a.into_inner(), vec![1, 2]);
    }

    #[test]
    fn serializes_and_compares_as_the_value() {
        let a: Shared<Vec<u8>> = serde_json::from_str("[1,2]").unwrap_or_default();
        assert_eq!(serde_json::to_string(&a).ok().as_deref(), Some("[1,2]"));
        assert_eq!(a, Shared::new(vec![1, 2]));
        assert_eq!(format!("{a:?}"), "[1, 2]");
    }
}
