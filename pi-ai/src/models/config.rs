//! Custom providers and models from a `models.json` in pi's format, read, checked and composed as
//! pi 1.6.0 does (`core/model-config.js`, `core/provider-composer.js`).
//!
//! ```json
//! { "providers": { "ollama": { "baseUrl": "http://localhost:11434/v1", "api": "openai-completions",
//!                              "apiKey": "ollama", "models": [{ "id": "qwen2.5-coder:7b" }] } } }
//! ```
//!
//! Reading: a byte-order mark, `//` comments and trailing commas are allowed
//! ([`parse_lenient_json`](super::parse_lenient_json)); the file must then match pi's schema
//! ([`schema_errors`](super::schema_errors)), or the whole file is rejected (`Invalid models.json
//! schema:` and TypeBox's errors). A missing file is an empty configuration.
//!
//! Composing ([`ModelsConfig::apply`]): a built-in provider id changes that provider (`baseUrl`
//! and `compat` apply to its models, `models` add or replace by id, `modelOverrides` merge last);
//! any other id adds a provider. An entry that cannot be composed (`Provider p: …`) drops only
//! that provider's layer, as pi's `compositionErrors`. `apiKey` and header values may be `$NAME` /
//! `${NAME}` (environment), `!command` (its output) or a literal.

use std::fmt;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::ModelList;
use super::compose::{apply_model_overrides, apply_models_json, changes_models};
use super::config_schema::{SchemaError, schema_errors};
use crate::types::Model;

/// A `models.json` that cannot be used at all, with pi's message. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ModelsConfigError {
    /// The file exists but could not be read.
    #[error("Failed to load models.json: {message}\n\nFile: {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's message.
        message: String,
    },
    /// The file is not JSON (after comments and trailing commas are removed).
    #[error("Failed to parse models.json: {message}\n\nFile: {}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The file does not match pi's schema.
    #[error("Invalid models.json schema:\n{}\n\nFile: {}", schema_list(errors), path.display())]
    Schema {
        /// The file.
        path: PathBuf,
        /// TypeBox's errors (at most 8).
        errors: Vec<SchemaError>,
    },
}

/// pi's list of schema errors: `  - <path>: <message>` lines.
fn schema_list(errors: &[SchemaError]) -> String {
    if errors.is_empty() {
        return "Unknown schema error".into();
    }
    errors.iter().map(|e| format!("  - {}: {}", e.path(), e.message)).collect::<Vec<_>>().join("\n")
}

/// One provider whose entry could not be composed (pi's `compositionErrors`).
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderError {
    /// The provider id.
    pub provider: String,
    /// pi's message (`Provider p: …`).
    pub message: String,
}

/// The providers whose entries could not be composed, in pi's order (built-in providers in
/// catalog order, then the file's others). Displayed as pi's `getError` lists them.
#[derive(Clone, Debug, Default, PartialEq, thiserror::Error)]
pub struct ProviderErrors(pub Vec<ProviderError>);

impl fmt::Display for ProviderErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(|e| format!("Provider \"{}\": {}", e.provider, e.message)).collect();
        f.write_str(&lines.join("\n\n"))
    }
}

impl ProviderErrors {
    /// Whether `provider`'s entry failed (its `apiKey` and `headers` are then not used either).
    pub fn contains(&self, provider: &str) -> bool {
        self.0.iter().any(|e| e.provider == provider)
    }
}

/// One provider entry of `models.json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderConfig {
    /// Display name.
    pub name: Option<String>,
    /// Base URL for the provider's models (built-in ones too).
    pub base_url: Option<String>,
    /// API key as written (`$NAME`, `!command` or literal); see [`resolve_config_value`](super::resolve_config_value).
    pub api_key: Option<String>,
    /// API for models that do not set their own.
    pub api: Option<String>,
    /// Request headers (values as written).
    pub headers: Option<Map<String, Value>>,
    /// Compatibility overrides under each model's own.
    pub compat: Option<Map<String, Value>>,
    /// Send the key as `Authorization: Bearer`.
    pub auth_header: bool,
    /// The entry as written (schema-valid).
    pub entry: Value,
}

impl ProviderConfig {
    /// The typed fields of a schema-valid entry.
    fn from_entry(entry: &Value) -> Self {
        let string = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
        let object = |key: &str| entry.get(key).and_then(Value::as_object).cloned();
        ProviderConfig {
            name: string("name"),
            base_url: string("baseUrl"),
            api_key: string("apiKey"),
            api: string("api"),
            headers: object("headers"),
            compat: object("compat"),
            auth_header: entry.get("authHeader").and_then(Value::as_bool).unwrap_or(false),
            entry: entry.clone(),
        }
    }

    /// pi's `rawModelHeaders` for a chat model of this provider: the model's `modelOverrides`
    /// headers, then its `models` definition's (values as written).
    pub fn model_headers(&self, model_id: &str) -> Option<Map<String, Value>> {
        let overrides = self.entry.get("modelOverrides").and_then(|o| o.get(model_id)).and_then(|o| o.get("headers"));
        let definition = self
            .entry
            .get("models")
            .and_then(Value::as_array)
            .and_then(|ms| ms.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(model_id)))
            .and_then(|m| m.get("headers"));
        let mut headers = Map::new();
        for source in [overrides, definition].into_iter().flatten() {
            if let Value::Object(map) = source {
                headers.extend(map.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        (!headers.is_empty()).then_some(headers)
    }
}

/// A parsed, schema-valid `models.json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelsConfig {
    /// Where it was read from.
    pub path: PathBuf,
    /// Provider entries in file order.
    pub providers: IndexMap<String, ProviderConfig>,
}

impl ModelsConfig {
    /// Reads and checks `path`; a missing file is an empty configuration (as in pi).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelsConfigError> {
        let path = path.as_ref();
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(ModelsConfig { path: path.to_owned(), ..Default::default() })
            }
            Err(e) => Err(ModelsConfigError::Io { path: path.to_owned(), message: e.to_string() }),
        }
    }

    /// Checks the text of a `models.json`; `path` names it in errors.
    ///
    /// ```
    /// use pi_ai::models::ModelsConfig;
    /// let err = ModelsConfig::parse("m.json", r#"{"providers":{"x":{"models":[{"id":""}]}}}"#).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "Invalid models.json schema:\n  - providers.x.models.0.id: must not have fewer than 1 characters\n\nFile: m.json"
    /// );
    /// ```
    pub fn parse(path: impl AsRef<Path>, text: &str) -> Result<Self, ModelsConfigError> {
        let path = path.as_ref().to_owned();
        let root = super::parse_lenient_json(text)
            .map_err(|e| ModelsConfigError::Json { path: path.clone(), message: e.to_string() })?;
        let errors = schema_errors(&root);
        if !errors.is_empty() {
            return Err(ModelsConfigError::Schema { path, errors });
        }
        let entries = root.get("providers").and_then(Value::as_object).cloned().unwrap_or_default();
        let providers = entries.iter().map(|(id, entry)| (id.clone(), ProviderConfig::from_entry(entry))).collect();
        Ok(ModelsConfig { path, providers })
    }

    /// Composes the configuration into a catalog of models by provider, as pi composes each
    /// provider: a built-in provider gets its entry applied (only the providers whose models
    /// change are copied out of the built-in catalog), others are added. A provider whose entry
    /// fails keeps its built-in models (a custom one gets none); the failures are returned.
    pub fn apply(&self, catalog: &mut IndexMap<String, ModelList>) -> Result<(), ProviderErrors> {
        let builtin: Vec<String> = catalog.keys().filter(|id| self.providers.contains_key(*id)).cloned().collect();
        let custom = self.providers.keys().filter(|id| !catalog.contains_key(*id)).cloned().collect::<Vec<_>>();
        let mut errors = Vec::new();
        for id in builtin.iter().chain(&custom) {
            let Some(provider) = self.providers.get(id) else { continue };
            let list = catalog.get(id);
            let result = if changes_models(&provider.entry) {
                let base =
                    list.map(|l| l.iter().filter_map(|m| serde_json::to_value(m).ok()).collect()).unwrap_or_default();
                compose(id, base, &provider.entry).map(Some)
            } else {
                apply_models_json(id, Vec::new(), &provider.entry).map(|_| None)
            };
            match result {
                Ok(Some(models)) => *catalog.entry(id.clone()).or_default().to_mut() = models,
                Ok(None) => {
                    catalog.entry(id.clone()).or_default();
                }
                Err(message) => errors.push(ProviderError { provider: id.clone(), message }),
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(ProviderErrors(errors)) }
    }
}

/// One provider's models with its entry applied (`applyModelsJson`, then `modelOverrides`).
fn compose(id: &str, base: Vec<Value>, entry: &Value) -> Result<Vec<Model>, String> {
    let mut models = apply_models_json(id, base, entry)?;
    apply_model_overrides(&mut models, entry);
    models
        .into_iter()
        .map(|m| {
            let model_id = m.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            serde_json::from_value(m).map_err(|e| format!("Provider {id}, model {model_id}: {e}"))
        })
        .collect()
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
