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
