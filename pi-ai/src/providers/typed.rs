//! Helpers of the typed, borrowing chunk reads (issue 20): the providers read their common
//! streamed delta into small borrowing structs and hand any other shape to their `serde_json::Value`
//! path, so a typed read must reject every chunk it would not handle exactly as that path does.

use serde::Deserializer;
use serde::de::{IgnoredAny, Visitor};
use std::borrow::Cow;

/// `#[serde(default, deserialize_with = "present")]` on a `bool`: whether the member is there at
/// all, `null` included (`Option<IgnoredAny>` reads a `null` as absent).
pub fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    serde::Deserialize::deserialize(deserializer).map(|_: IgnoredAny| true)
}

/// `#[serde(default, deserialize_with = "nullable")]` on an `Option<Option<T>>`: `None` when the
/// member is absent, `Some(None)` when it is `null`, `Some(Some(value))` otherwise.
pub fn nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(deserializer).map(Some)
}

/// A JSON array of which only the first element matters (a chunk's `choices`): that element read
/// as `T`, the others skipped unread, and no list allocated. `First(None)` for an empty array;
/// anything but an array is an error, as it is for a `Vec<T>`.
pub struct First<T>(pub Option<T>);

impl<T> First<T> {
    /// The first element.
    pub fn first(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for First<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = First<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<First<T>, A::Error> {
                let first = seq.next_element::<T>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(First(first))
            }
        }
        deserializer.deserialize_seq(Visit(std::marker::PhantomData))
    }
}

/// `#[serde(borrow, default, deserialize_with = "borrowed")]` on an `Option<Cow<'a, str>>`: the
/// string borrowed from the chunk's text when it has no escapes, owned only when it has. serde's
/// own `Cow` reading copies every string into a fresh allocation (its zero-copy `borrow` applies
/// to a bare `Cow<str>` field alone, not to one inside an `Option`), which cost an allocation, a
/// copy and a free for each of a chunk's `id`, `model` and delta text.
pub fn borrowed<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    struct Text;
    impl<'de> Visitor<'de> for Text {
        type Value = Cow<'de, str>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string")
        }
        fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Cow::Borrowed(v))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v.to_owned()))
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v))
        }
    }
    struct Nullable;
    impl<'de> Visitor<'de> for Nullable {
        type Value = Option<Cow<'de, str>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string or null")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
            deserializer.deserialize_str(Text).map(Some)
        }
    }
    deserializer.deserialize_option(Nullable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Chunk<'a> {
        #[serde(borrow, default, deserialize_with = "borrowed")]
        text: Option<Cow<'a, str>>,
    }

    fn read(json: &str) -> Option<Cow<'_, str>> {
        serde_json::from_str::<Chunk<'_>>(json).expect("chunk").text
    }

    #[test]
    fn borrowed_reads_a_plain_string_in_place_and_an_escaped_one_owned() {
        assert!(matches!(read(r#"{"text":"plain"}"#), Some(Cow::Borrowed("plain"))));
        match read(r#"{"text":"a\nb"}"#) {
            Some(Cow::Owned(s)) => assert_eq!(s, "a\nb"),
            other => panic!("expected an owned string, got {other:?}"),
        }
        assert!(read(r#"{"text":null}"#).is_none());
        assert!(read("{}").is_none());
        assert!(serde_json::from_str::<Chunk<'_>>(r#"{"text":1}"#).is_err());
    }
}
