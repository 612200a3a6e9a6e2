//! [`ModelList`]: one provider's models, either the built-in catalog's (parsed on first read,
//! shared across the process) or a list of its own (a custom provider, or a built-in one that
//! models.json changed: copied on first write).

use std::ops::Deref;

use super::catalog::BuiltinProvider;
use crate::types::Model;

/// One provider's models. Reads as a `[Model]`; the built-in catalog's lists are parsed only when
/// first read, and their ids and names ([`ModelList::keys`]) are known without parsing.
///
/// ```
/// use pi_ai::models::ModelList;
/// let mut groq = ModelList::builtin_by_id("groq").unwrap();
/// assert!(groq.keys().any(|(id, _)| id == "llama-3.1-8b-instant"));
/// groq.to_mut()[0].base_url = "https://proxy/v1".into();
/// assert_eq!(groq[0].base_url, "https://proxy/v1");
/// assert_ne!(pi_ai::models::get_models("groq")[0].base_url, "https://proxy/v1");
/// ```
#[derive(Clone, Default)]
pub struct ModelList {
    /// Set while the list is the built-in catalog's (then `owned` is empty).
    builtin: Option<&'static BuiltinProvider>,
    owned: Vec<Model>,
}

impl ModelList {
    /// The built-in catalog's list of `provider` (not parsed yet).
    pub fn builtin(provider: &'static BuiltinProvider) -> Self {
        ModelList { builtin: Some(provider), owned: Vec::new() }
    }

    /// The built-in catalog's list of the provider with this id, if there is one.
    pub fn builtin_by_id(provider: &str) -> Option<Self> {
        super::catalog::builtin_provider(provider).map(Self::builtin)
    }

    /// The models, to change: a built-in list is copied first.
    pub fn to_mut(&mut self) -> &mut Vec<Model> {
        if let Some(provider) = self.builtin.take() {
            self.owned = provider.models().to_vec();
        }
        &mut self.owned
    }

    /// Each model's id and name, in order; a built-in list is not parsed for them.
    pub fn keys(&self) -> impl Iterator<Item = (&str, &str)> {
        let builtin = self.builtin.map(BuiltinProvider::keys).unwrap_or_default();
        builtin.iter().copied().chain(self.owned.iter().map(|m| (m.id.as_str(), m.name.as_str())))
    }

    /// The number of models (without parsing a built-in list).
    pub fn len(&self) -> usize {
        self.builtin.map_or(self.owned.len(), |provider| provider.keys().len())
    }

    /// Whether there are no models (without parsing a built-in list).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether this is the built-in catalog's list, unchanged (then every model's `provider` is
    /// the catalog's provider id).
    pub fn is_builtin(&self) -> bool {
        self.builtin.is_some()
    }

    /// Whether the models are at hand: false for a built-in list not parsed yet (reading it
    /// parses it).
    pub fn is_parsed(&self) -> bool {
        self.builtin.is_none_or(BuiltinProvider::is_parsed)
    }
}

impl Deref for ModelList {
    type Target = [Model];

    fn deref(&self) -> &[Model] {
        match self.builtin {
            Some(provider) => provider.models(),
            None => &self.owned,
        }
    }
}

impl From<Vec<Model>> for ModelList {
    fn from(models: Vec<Model>) -> Self {
        ModelList { builtin: None, owned: models }
    }
}

impl FromIterator<Model> for ModelList {
    fn from_iter<I: IntoIterator<Item = Model>>(iter: I) -> Self {
        ModelList { builtin: None, owned: iter.into_iter().collect() }
    }
}

impl PartialEq for ModelList {
    fn eq(&self, other: &Self) -> bool {
        match (self.builtin, other.builtin) {
            (Some(a), Some(b)) if std::ptr::eq(a, b) => true,
            _ => **self == **other,
        }
    }
}

impl std::fmt::Debug for ModelList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl serde::Serialize for ModelList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'a> IntoIterator for &'a ModelList {
    type Item = &'a Model;
    type IntoIter = std::slice::Iter<'a, Model>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
