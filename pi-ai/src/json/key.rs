//! Reading object keys without allocating for the keys a type knows.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error, Visitor};

/// What a key read from an object turned out to be.
#[doc(hidden)]
#[derive(Debug)]
pub enum KeyId {
    /// The type's tag key (`role` / `type`).
    Tag,
    /// The n-th known field (1-based, declaration order).
    Field(u16),
    /// An unknown key.
    Other(String),
}

/// Matches a key against a type's tag and field names.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct KeySeed {
    /// The tag key, if the type has one.
    pub tag: Option<&'static str>,
    /// The JSON names of the known fields, in declaration order.
    pub keys: &'static [&'static str],
}

impl KeySeed {
    fn classify(&self, key: &str) -> Option<KeyId> {
        if self.tag == Some(key) {
            return Some(KeyId::Tag);
        }
        self.keys.iter().position(|k| *k == key).map(|i| KeyId::Field(i as u16 + 1))
    }
}

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = KeyId;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<KeyId, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = KeyId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<KeyId, E> {
        Ok(self.classify(v).unwrap_or_else(|| KeyId::Other(v.to_owned())))
    }

    fn visit_string<E: Error>(self, v: String) -> Result<KeyId, E> {
        Ok(self.classify(&v).unwrap_or(KeyId::Other(v)))
    }
}

/// A small stack buffer of key slots; spills to the heap past 32 keys.
#[doc(hidden)]
#[derive(Default)]
pub struct SlotBuf {
    inline: [u16; 32],
    len: usize,
    spill: Vec<u16>,
}

impl SlotBuf {
    /// Records one slot.
    pub fn push(&mut self, slot: u16) {
        if self.len < self.inline.len() {
            self.inline[self.len] = slot;
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.inline);
            }
            self.spill.push(slot);
        }
        self.len += 1;
    }

    /// The slots recorded.
    pub fn as_slice(&self) -> &[u16] {
        if self.len <= self.inline.len() { &self.inline[..self.len] } else { &self.spill }
    }
}

/// What a tag value read from an object turned out to be.
#[doc(hidden)]
#[derive(Debug)]
pub enum TagId {
    /// One of the accepted values.
    Known(&'static str),
    /// Anything else.
    Unknown(String),
}

/// Matches a tag value against the accepted ones without allocating.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct TagSeed {
    /// The accepted tag values.
    pub values: &'static [&'static str],
}

impl<'de> DeserializeSeed<'de> for TagSeed {
    type Value = TagId;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<TagId, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for TagSeed {
    type Value = TagId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tag string")
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<TagId, E> {
        Ok(match self.values.iter().find(|k| **k == v) {
            Some(k) => TagId::Known(k),
            None => TagId::Unknown(v.to_owned()),
        })
    }
}
