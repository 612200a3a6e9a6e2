//! Unknown fields of a JSON object, kept so that a round trip loses nothing.

use std::ops::Index;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Fields a type does not know, in the order they were read.
///
/// Boxed and empty by default, so the common case (no unknown fields) costs one pointer.
///
/// ```
/// use pi_ai::json::Extra;
/// let mut e = Extra::default();
/// assert!(e.is_empty());
/// e.insert("futureField", serde_json::json!(1));
/// assert_eq!(e["futureField"], 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extra(Option<Box<Map<String, Value>>>);

static NULL: Value = Value::Null;

impl Extra {
    /// Whether there are no unknown fields.
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|m| m.is_empty())
    }

    /// Number of unknown fields.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |m| m.len())
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.as_ref().and_then(|m| m.get(key))
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` (a new key goes last).
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> Option<Value> {
        self.map_mut().insert(key.into(), value)
    }

    /// Removes `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.0.as_mut().and_then(|m| m.shift_remove(key))
    }

    /// The fields, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().flat_map(|m| m.iter())
    }

    /// The fields as a map, if any.
    pub fn as_map(&self) -> Option<&Map<String, Value>> {
        self.0.as_deref()
    }

    /// Mutable access to the fields (allocates the map when empty).
    pub fn map_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Default::default)
    }
}

impl Index<&str> for Extra {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl From<Map<String, Value>> for Extra {
    fn from(map: Map<String, Value>) -> Self {
        if map.is_empty() { Extra(None) } else { Extra(Some(Box::new(map))) }
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(m) => m.serialize(serializer),
            None => Map::new().serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Extra {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::deserialize(deserializer).map(Extra::from)
    }
}
