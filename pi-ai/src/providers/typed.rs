//! Helpers of the typed, borrowing chunk reads (issue 20): the providers read their common
//! streamed delta into small borrowing structs and hand any other shape to their `serde_json::Value`
//! path, so a typed read must reject every chunk it would not handle exactly as that path does.

use serde::Deserializer;
use serde::de::IgnoredAny;

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
