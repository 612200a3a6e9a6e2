//! The registry's non-chat models (pi's `getModelsOfType("image" | "classifier")`): pi-ai's
//! built-in classifier and image catalogs with models.json's provider `baseUrl`, `headers` and
//! `compat` applied, then the classifier models the llama.cpp provider stored in
//! `models-store.json` (pi's llama.cpp extension lists them through its provider's
//! `getAllModels`). A model is available when its provider has configured auth, except OpenAI's
//! Decisions models while `openai` is a ChatGPT (OAuth) login, which that API does not accept.
//! Entries are pi's JSON: `type` is `"image"` or `"classifier"`; an entry without `type` is a chat
//! model.

use std::path::Path;

use serde_json::Value;

use super::{CredentialType, ModelRegistry};

/// The provider whose stored classifier models are listed (pi's built-in llama.cpp extension).
const LLAMA_PROVIDER: &str = "llama.cpp";

/// A model's type: `"chat"` when the entry names none (pi's `getModelType`).
pub fn model_type(model: &Value) -> &str {
    model.get("type").and_then(Value::as_str).unwrap_or("chat")
}

/// The image and classifier models the registry knows, and those it can run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypedModels {
    /// Every image and classifier model, in pi's order (classifiers, images, then llama.cpp's).
    pub all: Vec<Value>,
    /// The ones whose provider has configured auth.
    pub available: Vec<Value>,
}

impl TypedModels {
    /// The typed models of `agent_dir` (its models.json and models-store.json), available as
    /// `configured` says of each provider; `openai_oauth` when `openai` is a ChatGPT login.
    pub fn load(agent_dir: &Path, configured: impl Fn(&str) -> bool, openai_oauth: bool) -> Self {
        let config = pi_ai::models::ModelsConfig::load(agent_dir.join("models.json")).ok().map(without_failed);
        let mut all = builtin_entries(config.as_ref());
        all.extend(stored_llama_classifiers(agent_dir));
        let usable = |m: &Value| {
            let provider = m.get("provider").and_then(Value::as_str).unwrap_or_default();
            let decisions = m.get("api").and_then(Value::as_str) == Some("openai-decisions");
            configured(provider) && !(decisions && provider == "openai" && openai_oauth)
        };
        let available = all.iter().filter(|m| usable(m)).cloned().collect();
        TypedModels { all, available }
    }

    /// [`TypedModels::load`] with `registry`'s auth (auth.json, models.json, environment).
    pub fn for_registry(agent_dir: &Path, registry: &ModelRegistry) -> Self {
        let openai_oauth =
            matches!(registry.auth_storage().get("openai"), Ok(Some(c)) if c.kind() == CredentialType::OAuth);
        TypedModels::load(agent_dir, |p| registry.has_configured_auth(p), openai_oauth)
    }

    /// The models of `kind`, of `provider` when given, from `all` or `available`.
    pub fn of_type(&self, available: bool, kind: &str, provider: Option<&str>) -> Vec<Value> {
        let list = if available { &self.available } else { &self.all };
        list.iter()
            .filter(|m| model_type(m) == kind)
            .filter(|m| provider.is_none_or(|p| m.get("provider").and_then(Value::as_str) == Some(p)))
            .cloned()
            .collect()
    }
}

/// `config` without the providers whose entries pi cannot compose (they keep their built-in
/// models, typed ones included).
fn without_failed(mut config: pi_ai::models::ModelsConfig) -> pi_ai::models::ModelsConfig {
    if let Err(failed) = config.apply(&mut pi_ai::models::builtin_catalog_owned()) {
        config.providers.retain(|id, _| !failed.contains(id));
    }
    config
}

/// The built-in classifier and image models as catalog entries, with models.json's provider-level
/// `baseUrl`, `headers` and `compat` applied (so a provider pointed elsewhere keeps its models).
pub fn builtin_entries(config: Option<&pi_ai::models::ModelsConfig>) -> Vec<Value> {
    let classifiers = pi_ai::classify::builtin_classifier_models().values().flatten().map(serde_json::to_value);
    let images = pi_ai::images::builtin_image_models().values().flatten().map(serde_json::to_value);
    classifiers
        .chain(images)
        .filter_map(Result::ok)
        .map(|mut entry| {
            let provider = entry.get("provider").and_then(Value::as_str).unwrap_or_default().to_owned();
            if let (Some(p), Some(map)) = (config.and_then(|c| c.providers.get(&provider)), entry.as_object_mut()) {
                if let Some(base_url) = &p.base_url {
                    map.insert("baseUrl".into(), Value::String(base_url.clone()));
                }
                for (key, extra) in [("headers", &p.headers), ("compat", &p.compat)] {
                    if let Some(extra) = extra {
                        let mut merged = map.get(key).and_then(Value::as_object).cloned().unwrap_or_default();
                        merged.extend(extra.clone());
                        map.insert(key.into(), Value::Object(merged));
                    }
                }
            }
            entry
        })
        .collect()
}

/// The llama.cpp provider's classifier models stored in `<agent_dir>/models-store.json` (its
/// chat models through `llama-cpp-classify`, its decision models through `typesafe-system-one`).
pub fn stored_llama_classifiers(agent_dir: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(agent_dir.join("models-store.json")) else { return Vec::new() };
    let Ok(data) = serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}')) else { return Vec::new() };
    let Some(stored) = data.get(LLAMA_PROVIDER).and_then(|p| p.get("models")).and_then(Value::as_array) else {
        return Vec::new();
    };
    stored
        .iter()
        .filter(|m| m.get("provider").and_then(Value::as_str) == Some(LLAMA_PROVIDER))
        .filter(|m| model_type(m) == "classifier")
        .filter(|m| matches!(m.get("api").and_then(Value::as_str), Some("llama-cpp-classify" | "typesafe-system-one")))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_llama_classifiers_are_listed_after_the_builtin_ones_and_available_with_auth() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = serde_json::json!({"llama.cpp": {"checkedAt": 1, "models": [
            {"id": "q", "name": "q", "api": "openai-completions", "provider": "llama.cpp"},
            {"type": "classifier", "id": "q", "name": "q", "api": "llama-cpp-classify", "provider": "llama.cpp",
             "baseUrl": "http://127.0.0.1:1", "input": ["text"], "cost": {}},
            {"type": "classifier", "id": "other", "name": "o", "api": "chat", "provider": "llama.cpp"},
        ]}});
        std::fs::write(dir.path().join("models-store.json"), store.to_string()).expect("write");
        let typed = TypedModels::load(dir.path(), |p| p == "llama.cpp", false);
        let last = typed.all.last().expect("entries");
        assert_eq!((last["id"].as_str(), last["api"].as_str()), (Some("q"), Some("llama-cpp-classify")));
        assert_eq!(typed.of_type(true, "classifier", None).len(), 1);
        assert!(typed.of_type(true, "image", None).is_empty());
        assert!(typed.of_type(false, "image", Some("openrouter")).len() > 1);
        let none = TypedModels::load(dir.path(), |_| false, false);
        assert!(none.available.is_empty());
    }

    #[test]
    fn a_provider_whose_entry_fails_keeps_its_builtin_typed_models() {
        let dir = tempfile::tempdir().expect("tempdir");
        // typesafe has no chat model to take an api from: its entry fails; openai's applies.
        let models = r#"{"providers": {"typesafe": {"baseUrl": "http://changed", "models": [{"id": "m"}]},
            "openai": {"baseUrl": "http://openai-changed"}}}"#;
        std::fs::write(dir.path().join("models.json"), models).expect("write");
        let typed = TypedModels::load(dir.path(), |_| true, false);
        let url = |provider: &str| {
            let entries = typed.of_type(false, "classifier", Some(provider));
            entries.first().and_then(|m| m["baseUrl"].as_str()).map(str::to_owned).expect("a classifier")
        };
        assert_eq!(url("typesafe"), "https://api.typesafe.ai/v1/");
        assert_eq!(url("openai"), "http://openai-changed");
    }

    #[test]
    fn openai_decisions_models_are_not_available_to_a_chatgpt_login() {
        let dir = tempfile::tempdir().expect("tempdir");
        let decisions = |t: &TypedModels| {
            t.available.iter().filter(|m| m["api"] == "openai-decisions" && m["provider"] == "openai").count()
        };
        assert!(decisions(&TypedModels::load(dir.path(), |p| p == "openai", false)) > 0);
        assert_eq!(decisions(&TypedModels::load(dir.path(), |p| p == "openai", true)), 0);
    }
}
