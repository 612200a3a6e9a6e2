//! Named system-prompt sections, ordered as a JavaScript object orders its keys.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// An ordered map of section name to text, where `None` (JSON `null`) deletes a section in a later
/// system message.
///
/// Keys keep JavaScript object order, because that is the order pi writes and replays them in:
/// integer-like keys (array indices) come first in ascending order, then the other keys in
/// insertion order. Replacing a key keeps its slot; removing and re-adding moves it to the end.
///
/// ```
/// use pi_ai::Sections;
/// let mut s = Sections::new();
/// s.insert("z", Some("Z".into()));
/// s.insert("10", Some("ten".into()));
/// s.insert("2", Some("two".into()));
/// assert_eq!(s.keys().collect::<Vec<_>>(), ["2", "10", "z"]);
/// assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"2":"two","10":"ten","z":"Z"}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    entries: Vec<(String, Option<String>)>,
}

/// Whether `key` is a JavaScript array index (`"0"`..=`"4294967294"`, canonical decimal form).
pub(crate) fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    if n < u64::from(u32::MAX) { Some(n as u32) } else { None }
}

impl Sections {
    /// An empty map.
    pub fn new() -> Self {
        Sections::default()
    }

    /// Number of entries (deletions included).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets `key` to `value`, keeping the key's slot if it exists.
    pub fn insert(&mut self, key: impl Into<String>, value: Option<String>) {
        let key = key.into();
        if let Some(slot) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
            return;
        }
        match array_index(&key) {
            Some(n) => {
                let pos = self
                    .entries
                    .iter()
                    .position(|(k, _)| array_index(k).is_none_or(|m| m > n))
                    .unwrap_or(self.entries.len());
                self.entries.insert(pos, (key, value));
            }
            None => self.entries.push((key, value)),
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Option<String>> {
        let pos = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(pos).1)
    }

    /// The value of `key`: `Some(None)` for a deletion marker.
    pub fn get(&self, key: &str) -> Option<Option<&str>> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_deref())
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_deref()))
    }
}

impl<K: Into<String>, V: Into<Option<String>>> FromIterator<(K, V)> for Sections {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut s = Sections::new();
        for (k, v) in iter {
            s.insert(k, v.into());
        }
        s
    }
}

impl Serialize for Sections {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Sections {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Sections;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of section name to string or null")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sections, A::Error> {
                let mut s = Sections::new();
                while let Some((k, v)) = map.next_entry::<String, Option<String>>()? {
                    s.insert(k, v);
                }
                Ok(s)
            }
        }
        deserializer.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_index_rules() {
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index("10"), Some(10));
        assert_eq!(array_index("4294967294"), Some(4_294_967_294));
        assert_eq!(array_index("4294967295"), None);
        assert_eq!(array_index("01"), None);
        assert_eq!(array_index("-1"), None);
        assert_eq!(array_index("1.5"), None);
        assert_eq!(array_index(""), None);
    }

    #[test]
    fn null_values_are_written() {
        let s: Sections = [("a", None), ("b", Some("B".to_owned()))].into_iter().collect();
        assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"a":null,"b":"B"}"#);
    }
}
