//! Custom providers and models from a `models.json` in pi's format.
//!
//! ```json
//! { "providers": { "ollama": { "baseUrl": "http://localhost:11434/v1", "api": "openai-completions",
//!                              "apiKey": "ollama", "models": [{ "id": "qwen2.5-coder:7b" }] } } }
//! ```
//!
//! A built-in provider id changes that provider (`baseUrl` applies to its models, `models` add or
//! replace by id, `modelOverrides` merge into existing models); any other id adds a provider,
//! which needs `baseUrl` and an `api` at provider or model level. Model defaults: `name` = id,
//! `reasoning` false, `input` `["text"]`, zero cost, `contextWindow` 128000, `maxTokens` 16384.
//! `apiKey` and header values may be `$NAME` / `${NAME}` (environment), `!command` (its output)
//! or a literal.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::ModelList;
use crate::types::Model;

/// A `models.json` that cannot be used. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ModelsConfigError {
    /// The file could not be read.
    #[error("Failed to read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("Invalid JSON in {path}: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A field has the wrong shape.
    #[error("Invalid {path}: {at}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Where in the file, e.g. `providers.ollama.models[0].id`.
        at: String,
        /// What is wrong.
        message: String,
    },
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
    /// Models added or replaced, completed with defaults.
    pub models: Vec<Model>,
    /// Field overrides of existing models by id.
    pub model_overrides: Map<String, Value>,
}

/// A parsed `models.json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelsConfig {
    /// Where it was read from.
    pub path: PathBuf,
    /// Provider entries in file order.
    pub providers: IndexMap<String, ProviderConfig>,
}

impl ModelsConfig {
    /// Reads and validates `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelsConfigError> {
        let path = path.as_ref();
        let text =
            std::fs::read_to_string(path).map_err(|source| ModelsConfigError::Io { path: path.to_owned(), source })?;
        Self::parse(path, &text)
    }

    /// Validates the text of a `models.json`; `path` names it in errors.
    ///
    /// ```
    /// use pi_ai::models::ModelsConfig;
    /// let err = ModelsConfig::parse("m.json", r#"{"providers":{"x":{"models":[{"id":"a"}]}}}"#).unwrap_err();
    /// assert_eq!(err.to_string(), "Invalid m.json: providers.x: \"baseUrl\" is required for a custom provider");
    /// ```
    pub fn parse(path: impl AsRef<Path>, text: &str) -> Result<Self, ModelsConfigError> {
        let path = path.as_ref().to_owned();
        let root: Value = serde_json::from_str(text)
            .map_err(|e| ModelsConfigError::Json { path: path.clone(), message: e.to_string() })?;
        let invalid =
            |at: &str, message: String| ModelsConfigError::Invalid { path: path.clone(), at: at.to_owned(), message };
        let root = root.as_object().ok_or_else(|| invalid("(root)", "expected an object".into()))?;
        let mut providers = IndexMap::new();
        let Some(entries) = root.get("providers") else {
            return Ok(ModelsConfig { path, providers });
        };
        let entries = entries.as_object().ok_or_else(|| invalid("providers", "expected an object".into()))?;
        for (id, entry) in entries {
            let at = format!("providers.{id}");
            let entry = entry.as_object().ok_or_else(|| invalid(&at, "expected an object".into()))?;
            let string = |key: &str| -> Result<Option<String>, ModelsConfigError> {
                match entry.get(key) {
                    None => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(_) => Err(invalid(&format!("{at}.{key}"), "expected a string".into())),
                }
            };
            let object = |key: &str| -> Result<Option<Map<String, Value>>, ModelsConfigError> {
                match entry.get(key) {
                    None => Ok(None),
                    Some(Value::Object(m)) => Ok(Some(m.clone())),
                    Some(_) => Err(invalid(&format!("{at}.{key}"), "expected an object".into())),
                }
            };
            let mut provider = ProviderConfig {
                name: string("name")?,
                base_url: string("baseUrl")?,
                api_key: string("apiKey")?,
                api: string("api")?,
                headers: object("headers")?,
                compat: object("compat")?,
                auth_header: match entry.get("authHeader") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Err(invalid(&format!("{at}.authHeader"), "expected a boolean".into())),
                },
                models: Vec::new(),
                model_overrides: object("modelOverrides")?.unwrap_or_default(),
            };
            // The catalog is consulted only when it decides something (parsing it costs a one-shot run).
            if provider.base_url.is_none() && entry.get("models").is_some() && super::get_models(id).is_empty() {
                let any_model_url = entry
                    .get("models")
                    .and_then(Value::as_array)
                    .is_some_and(|ms| !ms.is_empty() && ms.iter().all(|m| m.get("baseUrl").is_some()));
                if !any_model_url {
                    return Err(invalid(&at, "\"baseUrl\" is required for a custom provider".into()));
                }
            }
            let models = match entry.get("models") {
                None => &Vec::new(),
                Some(Value::Array(models)) => models,
                Some(_) => return Err(invalid(&format!("{at}.models"), "expected an array".into())),
            };
            for (i, raw) in models.iter().enumerate() {
                let at = format!("{at}.models[{i}]");
                let raw = raw.as_object().ok_or_else(|| invalid(&at, "expected an object".into()))?;
                let Some(model_id) = raw.get("id").and_then(Value::as_str) else {
                    return Err(invalid(&at, "\"id\" is required and must be a string".into()));
                };
                // pi's schema: a model's limits are positive (`must be > 0`); the file is rejected.
                for key in ["contextWindow", "maxTokens"] {
                    if raw.get(key).and_then(Value::as_f64).is_some_and(|n| n <= 0.0) {
                        return Err(invalid(&format!("{at}.{key}"), "must be > 0".into()));
                    }
                }
                let api = raw.get("api").and_then(Value::as_str).map(str::to_owned).or_else(|| provider.api.clone());
                let api = api.or_else(|| super::get_models(id).first().map(|m| m.api.clone()));
                let Some(api) = api else {
                    return Err(invalid(&at, "\"api\" is required (on the model or its provider)".into()));
                };
                let base_url = raw.get("baseUrl").and_then(Value::as_str).map(str::to_owned);
                let base_url = base_url
                    .or_else(|| provider.base_url.clone())
                    .or_else(|| super::get_models(id).first().map(|m| m.base_url.clone()))
                    .unwrap_or_default();
                let mut full = json!({
                    "id": model_id, "name": model_id, "api": api, "provider": id, "baseUrl": base_url,
                    "reasoning": false, "input": ["text"],
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    "contextWindow": 128000, "maxTokens": 16384,
                });
                if let Value::Object(full) = &mut full {
                    for (k, v) in raw {
                        if k != "api" && k != "baseUrl" {
                            full.insert(k.clone(), v.clone());
                        }
                    }
                    if let Some(compat) = &provider.compat {
                        let mut merged = compat.clone();
                        if let Some(Value::Object(own)) = full.get("compat") {
                            merged.extend(own.clone());
                        }
                        full.insert("compat".into(), Value::Object(merged));
                    }
                }
                let model: Model = serde_json::from_value(full).map_err(|e| invalid(&at, e.to_string()))?;
                provider.models.push(model);
            }
            providers.insert(id.clone(), provider);
        }
        Ok(ModelsConfig { path, providers })
    }

    /// Applies the configuration to a catalog of models by provider: built-in providers get the
    /// new `baseUrl`, their overrides and their added or replaced models; custom providers are
    /// added. Only the providers it changes are copied out of the built-in catalog.
    pub fn apply(&self, catalog: &mut IndexMap<String, ModelList>) -> Result<(), ModelsConfigError> {
        for (id, provider) in &self.providers {
            let list = catalog.entry(id.clone()).or_default();
            if provider.base_url.is_none() && provider.model_overrides.is_empty() && provider.models.is_empty() {
                continue;
            }
            let models = list.to_mut();
            for model in models.iter_mut() {
                if let Some(url) = &provider.base_url {
                    model.base_url = url.clone();
                }
                if let Some(Value::Object(patch)) = provider.model_overrides.get(&model.id) {
                    let mut value = serde_json::to_value(&*model).map_err(|e| self.invalid(id, e))?;
                    if let Value::Object(fields) = &mut value {
                        for (k, v) in patch {
                            match (fields.get_mut(k), v) {
                                (Some(Value::Object(old)), Value::Object(new)) => old.extend(new.clone()),
                                _ => {
                                    fields.insert(k.clone(), v.clone());
                                }
                            }
                        }
                    }
                    *model = serde_json::from_value(value).map_err(|e| self.invalid(id, e))?;
                }
            }
            for model in &provider.models {
                match models.iter_mut().find(|m| m.id == model.id) {
                    Some(existing) => *existing = model.clone(),
                    None => models.push(model.clone()),
                }
            }
        }
        Ok(())
    }

    fn invalid(&self, provider: &str, error: serde_json::Error) -> ModelsConfigError {
        ModelsConfigError::Invalid {
            path: self.path.clone(),
            at: format!("providers.{provider}.modelOverrides"),
            message: error.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_provider_models_get_defaults() {
        let text = r#"{"providers":{"ollama":{"baseUrl":"http://localhost:11434/v1","api":"openai-completions",
            "apiKey":"ollama","compat":{"supportsStore":false},"models":[{"id":"qwen","compat":{"x":1}}]}}}"#;
        let config = ModelsConfig::parse("models.json", text).unwrap();
        let mut catalog = IndexMap::new();
        config.apply(&mut catalog).unwrap();
        let m = &catalog["ollama"][0];
        assert_eq!((m.name.as_str(), m.context_window, m.max_tokens), ("qwen", 128000, 16384));
        assert_eq!(m.input, vec!["text"]);
        assert_eq!(serde_json::to_value(&m.compat).unwrap(), json!({"supportsStore": false, "x": 1}));
    }

    #[test]
    fn builtin_provider_base_url_and_overrides() {
        let text =
            r#"{"providers":{"groq":{"baseUrl":"https://proxy/v1","modelOverrides":{"MODEL":{"cost":{"input":9}}}}}}"#;
        let first = super::super::get_models("groq")[0].clone();
        let config = ModelsConfig::parse("m.json", &text.replace("MODEL", &first.id)).unwrap();
        let mut catalog = super::super::builtin_catalog_owned();
        config.apply(&mut catalog).unwrap();
        let m = &catalog["groq"][0];
        assert_eq!(m.base_url, "https://proxy/v1");
        assert_eq!((m.cost.input, m.cost.output), (9.0, first.cost.output));
    }

    #[test]
    fn errors_name_the_file_and_the_field() {
        let err = ModelsConfig::parse("/x/models.json", "{").unwrap_err().to_string();
        assert!(err.starts_with("Invalid JSON in /x/models.json: "), "{err}");
        let err = ModelsConfig::parse("/x/models.json", r#"{"providers":{"p":{"baseUrl":"u","models":[{}]}}}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "Invalid /x/models.json: providers.p.models[0]: \"id\" is required and must be a string");
        let err = ModelsConfig::parse("m.json", r#"{"providers":{"p":{"baseUrl":"u","models":[{"id":"a"}]}}}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "Invalid m.json: providers.p.models[0]: \"api\" is required (on the model or its provider)");
        let zero = r#"{"providers":{"p":{"baseUrl":"h","api":"a","models":[{"id":"m","maxTokens":0}]}}}"#;
        let err = ModelsConfig::parse("m.json", zero).unwrap_err().to_string();
        assert_eq!(err, "Invalid m.json: providers.p.models[0].maxTokens: must be > 0");
    }
}
