//! The `llama.cpp` provider (pi's `provider.js`): the router's models as pi models (chat and
//! classifier), the catalog kept in `models-store.json`, and where the server URL and key come
//! from (the stored credential's `env.LLAMA_BASE_URL` and `key`, else `LLAMA_BASE_URL` /
//! `LLAMA_API_KEY`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::client::{LlamaClient, LlamaError, inference_url, normalize_server_url};
use super::router::RouterModel;
use crate::auth::{AuthStorage, Credential};

/// The provider id (pi's `LLAMA_PROVIDER_ID`).
pub const LLAMA_PROVIDER_ID: &str = "llama.cpp";
/// The router's default address (pi's `DEFAULT_LLAMA_SERVER_URL`).
pub const DEFAULT_LLAMA_SERVER_URL: &str = "http://127.0.0.1:9931";

/// Where the provider's connection comes from (pi's `resolve` result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlamaAuth {
    /// The normalised server URL.
    pub server_url: String,
    /// The key: the credential's, else `LLAMA_API_KEY`, else `local`.
    pub api_key: String,
    /// `stored credential` or `LLAMA_BASE_URL`.
    pub source: &'static str,
}

/// The stored credential's `env.LLAMA_BASE_URL`, normalised (pi's `credentialServerUrl`).
pub fn credential_server_url(credential: Option<&Credential>) -> Option<String> {
    let url = credential?.env().get("LLAMA_BASE_URL").cloned()?;
    if url.trim().is_empty() {
        return None;
    }
    normalize_server_url(&url).ok()
}

/// pi's `auth.apiKey.resolve`: the server from the credential or `LLAMA_BASE_URL`; `None` when
/// neither names one.
pub fn resolve_auth(credential: Option<&Credential>, env: &dyn Fn(&str) -> Option<String>) -> Option<LlamaAuth> {
    let configured = credential_server_url(credential)
        .or_else(|| env("LLAMA_BASE_URL").map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()))?;
    let server_url = normalize_server_url(&configured).ok()?;
    let api_key = credential
        .and_then(|c| c.key().map(str::to_owned))
        .or_else(|| env("LLAMA_API_KEY"))
        .unwrap_or_else(|| "local".to_owned());
    let source = if credential.is_some() { "stored credential" } else { "LLAMA_BASE_URL" };
    Some(LlamaAuth { server_url, api_key, source })
}

/// The process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether a model can be chosen (pi's `modelIsSelectable`): loaded, sleeping, or an unloaded
/// preset the router would load on first use.
pub fn is_selectable(model: &RouterModel, router_autoload: bool) -> bool {
    match model.status.as_str() {
        "loaded" | "sleeping" => true,
        "unloaded" => router_autoload && !model.failed() && model.source() == Some("preset"),
        _ => false,
    }
}

/// llama.cpp 0.6.0+ reports decision models with `decisions` among the output modalities.
pub fn is_decision_model(model: &RouterModel) -> bool {
    model.output_modalities().iter().any(|m| m == "decisions")
}

/// Decision-only models are classifiers, not chat models.
pub fn is_chat_model(model: &RouterModel) -> bool {
    !is_decision_model(model) || model.output_modalities().iter().any(|m| m == "text")
}

/// pi's `contextWindowOf`: the running context, the `-c` argument, the cached value, the
/// training context, else 128 000.
pub fn context_window_of(model: &RouterModel, cached: Option<u64>) -> u64 {
    model
        .n_ctx()
        .or_else(|| model.configured_context())
        .or(cached.filter(|c| *c > 0))
        .or_else(|| model.n_ctx_train())
        .unwrap_or(128_000)
}

const ZERO_COST: &str = r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0}"#;

fn zero_cost() -> Value {
    serde_json::from_str(ZERO_COST).unwrap_or(Value::Null)
}

/// pi's `toPiModel`: an `openai-completions` chat model at `<server>/v1`; thinking when the
/// loaded model's chat template mentions `enable_thinking`.
pub fn to_pi_model(model: &RouterModel, server_url: &str, chat_template: Option<&str>, cached: Option<u64>) -> Value {
    let context_window = context_window_of(model, cached);
    let reasoning = chat_template.is_some_and(|t| t.contains("enable_thinking"));
    let image = model.input_modalities().iter().any(|m| m == "image");
    let mut compat = json!({
        "supportsStore": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": true,
        "supportsStrictMode": false, "maxTokensField": "max_tokens",
    });
    if reasoning {
        compat["thinkingFormat"] = json!("qwen-chat-template");
    }
    let mut out = json!({
        "id": model.id, "name": model.id, "api": "openai-completions", "provider": LLAMA_PROVIDER_ID,
        "baseUrl": inference_url(server_url).unwrap_or_else(|_| format!("{server_url}/v1")),
        "reasoning": reasoning,
        "input": if image { json!(["text", "image"]) } else { json!(["text"]) },
        "cost": zero_cost(), "contextWindow": context_window, "maxTokens": context_window, "compat": compat,
    });
    if reasoning {
        out["thinkingLevelMap"] =
            json!({"off": "off", "minimal": null, "low": null, "medium": "medium", "high": null, "xhigh": null});
    }
    out
}

/// pi's `toPiClassifierModel`: decision models through `typesafe-system-one` at `<server>/v1`,
/// chat models through `llama-cpp-classify` at the server root.
pub fn to_classifier_model(model: &RouterModel, server_url: &str, cached: Option<u64>) -> Value {
    let decision = is_decision_model(model);
    let image = decision && model.input_modalities().iter().any(|m| m == "image");
    let base_url = if decision { inference_url(server_url).unwrap_or_default() } else { server_url.to_owned() };
    let mut out = json!({
        "type": "classifier", "id": model.id, "name": model.id,
        "api": if decision { "typesafe-system-one" } else { "llama-cpp-classify" },
        "provider": LLAMA_PROVIDER_ID, "baseUrl": base_url,
        "input": if image { json!(["text", "image"]) } else { json!(["text"]) },
        "cost": zero_cost(), "contextWindow": context_window_of(model, cached),
    });
    if image {
        out["compat"] = json!({"imageInput": "images", "sendImageOptInHeader": false});
    }
    out
}

/// The provider's current models (pi's `models` and `classifiers` closures).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LlamaModels {
    /// Chat models (`/model`).
    pub models: Vec<Value>,
    /// Classifier models (`models.*` of codemode).
    pub classifiers: Vec<Value>,
}

impl LlamaModels {
    /// pi's `setCatalog`: the selectable models of `catalog` without templates or cached
    /// contexts.
    pub fn from_catalog(catalog: &[RouterModel], server_url: &str, router_autoload: bool) -> Self {
        let selectable: Vec<&RouterModel> = catalog.iter().filter(|m| is_selectable(m, router_autoload)).collect();
        LlamaModels {
            models: selectable
                .iter()
                .filter(|m| is_chat_model(m))
                .map(|m| to_pi_model(m, server_url, None, None))
                .collect(),
            classifiers: selectable.iter().map(|m| to_classifier_model(m, server_url, None)).collect(),
        }
    }
}

/// The provider: its models, shared by the extension's command and refresh.
#[derive(Clone, Debug, Default)]
pub struct LlamaProvider {
    current: Arc<Mutex<LlamaModels>>,
}

impl LlamaProvider {
    /// The models now.
    pub fn models(&self) -> LlamaModels {
        self.current.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the models.
    pub fn set(&self, models: LlamaModels) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = models;
    }

    /// The `registerProvider` config: the `models.json` provider shape with the chat models.
    pub fn config(&self, api_key: Option<&str>) -> Value {
        let mut config = Map::new();
        config.insert("name".into(), json!("llama.cpp"));
        config.insert("baseUrl".into(), json!(format!("{DEFAULT_LLAMA_SERVER_URL}/v1")));
        config.insert("api".into(), json!("openai-completions"));
        config.insert("apiKey".into(), json!(api_key.unwrap_or("local")));
        config.insert("models".into(), Value::Array(self.models().models));
        Value::Object(config)
    }
}

/// `<agent_dir>/models-store.json`, where pi keeps refreshed provider catalogs.
pub fn models_store_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("models-store.json")
}

/// The stored catalog of the provider (pi's `context.stored`): chat models of the
/// `openai-completions` API and llama classifiers.
pub fn read_stored(agent_dir: &Path) -> Option<LlamaModels> {
    let text = std::fs::read_to_string(models_store_path(agent_dir)).ok()?;
    let data: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let stored = data.get(LLAMA_PROVIDER_ID)?.get("models")?.as_array()?;
    let mine = stored.iter().filter(|m| m.get("provider").and_then(Value::as_str) == Some(LLAMA_PROVIDER_ID));
    let mut out = LlamaModels::default();
    for model in mine {
        let kind = model.get("type").and_then(Value::as_str).unwrap_or("chat");
        let api = model.get("api").and_then(Value::as_str).unwrap_or("");
        match kind {
            "chat" if api == "openai-completions" => out.models.push(model.clone()),
            "classifier" if api == "llama-cpp-classify" || api == "typesafe-system-one" => {
                out.classifiers.push(model.clone())
            }
            _ => {}
        }
    }
    Some(out)
}

/// Writes the provider's entry of `models-store.json` (`{models, checkedAt}`), keeping the
/// other providers' entries, under the file's lock.
pub fn write_stored(agent_dir: &Path, models: &LlamaModels) -> std::io::Result<()> {
    let path = models_store_path(agent_dir);
    std::fs::create_dir_all(agent_dir)?;
    if !path.exists() {
        std::fs::write(&path, "{}")?;
    }
    let _lock = crate::auth::lock::FileLock::acquire(&path)?;
    let mut data = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let all: Vec<Value> = models.models.iter().chain(&models.classifiers).cloned().collect();
    data[LLAMA_PROVIDER_ID] = json!({"models": all, "checkedAt": pi_ai::now_ms()});
    let text = serde_json::to_string_pretty(&data).map_err(std::io::Error::other)?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(tmp, path)
}

/// The stored llama.cpp credential of `agent_dir`'s auth.json.
pub fn stored_credential(agent_dir: &Path) -> Option<Credential> {
    AuthStorage::for_agent_dir(agent_dir).get(LLAMA_PROVIDER_ID).ok().flatten()
}

/// pi's `refreshModels` network half: the catalog of the stored credential's server, the
/// router's autoload setting, each loaded chat model's template, contexts cached from `stored`.
pub async fn refresh_from_server(
    credential: &Credential,
    stored: Option<&LlamaModels>,
    cancel: &CancellationToken,
) -> Result<Option<LlamaModels>, LlamaError> {
    let Some(server_url) = credential_server_url(Some(credential)) else { return Ok(None) };
    let client = LlamaClient::new(&server_url, credential.key().map(str::to_owned))?;
    let catalog = client.list(false, cancel).await?;
    let needs_autoload = catalog.iter().any(|m| m.status == "unloaded" && m.source() == Some("preset"));
    let autoload = needs_autoload && matches!(client.props(None, cancel).await, Ok((Some(true), _)));
    let cached = |id: &str| -> Option<u64> {
        let stored = stored?;
        stored
            .models
            .iter()
            .chain(&stored.classifiers)
            .find(|m| m.get("id").and_then(Value::as_str) == Some(id))?
            .get("contextWindow")?
            .as_u64()
    };
    let selectable: Vec<&RouterModel> = catalog.iter().filter(|m| is_selectable(m, autoload)).collect();
    let mut models = Vec::new();
    for model in selectable.iter().filter(|m| is_chat_model(m)) {
        let template = if model.status == "loaded" { client.props(Some(&model.id), cancel).await?.1 } else { None };
        models.push(to_pi_model(model, &server_url, template.as_deref(), cached(&model.id)));
    }
    let classifiers = selectable.iter().map(|m| to_classifier_model(m, &server_url, cached(&m.id))).collect();
    Ok(Some(LlamaModels { models, classifiers }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(v: Value) -> RouterModel {
        RouterModel::parse(&v).unwrap()
    }

    #[test]
    fn selectable_models_become_pi_models() {
        let loaded =
            model(json!({"id": "a", "status": {"value": "loaded"}, "meta": {"n_ctx": 4096, "n_ctx_train": 8192}}));
        let m = to_pi_model(&loaded, "http://h:1", Some("{% if enable_thinking %}"), None);
        assert_eq!(m["baseUrl"], "http://h:1/v1");
        assert_eq!((m["contextWindow"].as_u64(), m["reasoning"].as_bool()), (Some(4096), Some(true)));
        assert_eq!(m["compat"]["thinkingFormat"], "qwen-chat-template");
        let preset = model(json!({"id": "p", "source": "preset", "status": {"value": "unloaded"}}));
        assert!(!is_selectable(&preset, false) && is_selectable(&preset, true));
        let decision = model(
            json!({"id": "d", "status": {"value": "sleeping"}, "architecture": {"output_modalities": ["decisions"], "input_modalities": ["image"]}}),
        );
        let listed = LlamaModels::from_catalog(&[loaded, preset, decision], "http://h:1", false);
        assert_eq!(listed.models.len(), 1);
        assert_eq!(listed.classifiers[1]["api"], "typesafe-system-one");
        assert_eq!(listed.classifiers[1]["compat"]["imageInput"], "images");
        assert_eq!(listed.classifiers[0]["baseUrl"], "http://h:1");
    }

    #[test]
    fn auth_prefers_the_credential() {
        let mut credential = Credential::api_key("k1");
        credential.set("env", json!({"LLAMA_BASE_URL": "http://c:2/v1"}));
        let env = |n: &str| match n {
            "LLAMA_BASE_URL" => Some("http://e:3".to_owned()),
            "LLAMA_API_KEY" => Some("k2".to_owned()),
            _ => None,
        };
        let a = resolve_auth(Some(&credential), &env).unwrap();
        assert_eq!((a.server_url.as_str(), a.api_key.as_str(), a.source), ("http://c:2", "k1", "stored credential"));
        let b = resolve_auth(None, &env).unwrap();
        assert_eq!((b.server_url.as_str(), b.api_key.as_str(), b.source), ("http://e:3", "k2", "LLAMA_BASE_URL"));
        assert_eq!(resolve_auth(None, &|_| None), None);
    }

    #[test]
    fn the_store_keeps_other_providers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(models_store_path(dir.path()), r#"{"other":{"models":[],"checkedAt":1}}"#).unwrap();
        let catalog = [model(json!({"id": "a", "status": {"value": "loaded"}}))];
        let models = LlamaModels::from_catalog(&catalog, "http://h:1", false);
        write_stored(dir.path(), &models).unwrap();
        assert_eq!(read_stored(dir.path()), Some(models));
        let text = std::fs::read_to_string(models_store_path(dir.path())).unwrap();
        assert!(text.contains("\"other\""));
    }
}
