//! `ctx.modelRegistry`'s models by type and its non-chat requests (pi's `getModelsOfType`,
//! `getAvailableOfType`, `getModelOfType`, `findOfType`, `classify`, `generateImages`): chat
//! models are the session's, image and classifier models the registry's
//! ([`TypedModels`]: pi-ai's catalogs and the llama.cpp provider's stored classifiers). A request
//! runs with the provider's request-time auth, as a chat request does, and never fails: every
//! error (wrong model type, images a model does not accept, an unknown or unconfigured provider,
//! the service's answer) is in the result, worded as pi's `ModelRuntime`.

use std::collections::HashMap;

use pi_ai::classify::{ClassifierContext, ClassifierModel, ClassifierResult, ClassifyOptions};
use pi_ai::images::{ImageModel, ImagesContext, ImagesOptions, ImagesResult};
use serde_json::Value;

use super::model_registry::ExtensionModelRegistry;
use super::node::request_auth::{self, ProviderAuth};
use crate::auth::typed_models::TypedModels;

/// The built-in llama.cpp extension's provider.
const LLAMA_PROVIDER: &str = "llama.cpp";

/// What a typed request runs with, or why it cannot run.
struct Prepared {
    api_key: Option<String>,
    headers: Vec<(String, Option<String>)>,
    base_url: String,
}

/// `{NAME}` placeholders of a base URL filled from the auth's provider variables.
fn fill_base_url(base_url: &str, env: &HashMap<String, String>) -> String {
    let mut url = base_url.to_owned();
    for (name, value) in env {
        url = url.replace(&format!("{{{name}}}"), value);
    }
    url
}

/// The caller's headers over the auth's (pi's `mergeHeaders`).
fn merge_headers(auth: &[(String, String)], caller: &[(String, Option<String>)]) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = auth.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect();
    for (name, value) in caller {
        out.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        out.push((name.clone(), value.clone()));
    }
    out
}

impl ExtensionModelRegistry {
    /// The registry's image and classifier models with the session's auth.
    fn typed(&self) -> TypedModels {
        let runtime = &self.ctx.runtime;
        let dir = request_auth::agent_dir(runtime);
        let registry = crate::auth::ModelRegistry::load(&dir);
        let configured = |provider: &str| match request_auth::registered(runtime, provider) {
            Some(_) => request_auth::auth_status(runtime, provider)["configured"] == Value::Bool(true),
            None => registry.has_configured_auth(provider),
        };
        let mut typed = TypedModels::load(&dir, configured, request_auth::is_using_oauth(runtime, "openai"));
        // The llama.cpp provider's stored classifiers are its provider's models: listed while the
        // built-in extension has it registered (not with `--no-extensions`).
        if request_auth::registered(runtime, LLAMA_PROVIDER).is_none() {
            for list in [&mut typed.all, &mut typed.available] {
                list.retain(|m| m.get("provider").and_then(Value::as_str) != Some(LLAMA_PROVIDER));
            }
        }
        typed
    }

    fn chat_of(models: Vec<pi_ai::Model>, provider: Option<&str>) -> Vec<Value> {
        models
            .into_iter()
            .filter(|m| provider.is_none_or(|p| m.provider == p))
            .filter_map(|m| serde_json::to_value(m).ok())
            .collect()
    }

    /// Every known model of `model_type` (`chat`, `image`, `classifier`), of `provider` when
    /// given, as pi's JSON (pi's `getModelsOfType`). An unknown type has none.
    pub fn get_models_of_type(&self, model_type: &str, provider: Option<&str>) -> Vec<Value> {
        match model_type {
            "chat" => Self::chat_of(self.get_all(), provider),
            kind => self.typed().of_type(false, kind, provider),
        }
    }

    /// The models of `model_type` whose provider has configured auth (pi's `getAvailableOfType`).
    pub fn get_available_of_type(&self, model_type: &str, provider: Option<&str>) -> Vec<Value> {
        match model_type {
            "chat" => Self::chat_of(self.get_available(), provider),
            kind => self.typed().of_type(true, kind, provider),
        }
    }

    /// One model of `model_type` by provider and id (pi's `getModelOfType`).
    pub fn get_model_of_type(&self, model_type: &str, provider: &str, id: &str) -> Option<Value> {
        let models = self.get_models_of_type(model_type, Some(provider));
        models.into_iter().find(|m| m.get("id").and_then(Value::as_str) == Some(id))
    }

    /// pi's `findOfType`: [`Self::get_model_of_type`], e.g.
    /// `find_of_type("classifier", "typesafe", "jev-latest")`.
    pub fn find_of_type(&self, model_type: &str, provider: &str, id: &str) -> Option<Value> {
        self.get_model_of_type(model_type, provider, id)
    }

    /// pi's `prepareRequest` for a typed model: its provider known and configured, the caller's
    /// key and headers over the auth's, the base URL's provider variables filled.
    async fn prepare(
        &self,
        provider: &str,
        base_url: &str,
        api_key: Option<String>,
        headers: &[(String, Option<String>)],
    ) -> Result<Prepared, String> {
        let runtime = &self.ctx.runtime;
        let known = pi_ai::models::builtin_catalog().contains_key(provider)
            || pi_ai::classify::builtin_classifier_models().contains_key(provider)
            || pi_ai::images::builtin_image_models().contains_key(provider)
            || request_auth::registered(runtime, provider).is_some();
        if !known {
            return Err(format!("Unknown provider: {provider}"));
        }
        let auth: ProviderAuth = match request_auth::resolve(runtime, provider).await? {
            Some(auth) => auth,
            None if api_key.is_some() => ProviderAuth::default(),
            None => return Err(format!("Provider is not configured: {provider}")),
        };
        Ok(Prepared {
            api_key: api_key.or(auth.api_key),
            headers: merge_headers(&auth.headers, headers),
            base_url: fill_base_url(base_url, &auth.env),
        })
    }

    /// Classifies `context` with `model` and the provider's request-time auth (pi's
    /// `ctx.modelRegistry.classify`); errors are in the result.
    pub async fn classify(
        &self,
        model: &ClassifierModel,
        context: &ClassifierContext,
        options: ClassifyOptions,
    ) -> ClassifierResult {
        let aborted = || options.cancel.as_ref().is_some_and(|c| c.is_cancelled());
        let reference = format!("{}/{}", model.provider, model.id);
        if model.model_type != "classifier" {
            return pi_ai::classify::error_result(
                model,
                format!("Model {reference} is not a classifier model"),
                aborted(),
            );
        }
        if !context.images().is_empty() && !model.supports_images() {
            let message = format!("Model {reference} does not accept image input");
            return pi_ai::classify::error_result(model, message, aborted());
        }
        match self.prepare(&model.provider, &model.base_url, options.api_key.clone(), &options.headers).await {
            Err(message) => pi_ai::classify::error_result(model, message, aborted()),
            Ok(prepared) => {
                let mut model = model.clone();
                model.base_url = prepared.base_url;
                let options = ClassifyOptions { api_key: prepared.api_key, headers: prepared.headers, ..options };
                pi_ai::classify::classify(&model, context, &options).await
            }
        }
    }

    /// Generates images with `model` and the provider's request-time auth (pi's
    /// `ctx.modelRegistry.generateImages`); errors are in the result.
    pub async fn generate_images(
        &self,
        model: &ImageModel,
        context: &ImagesContext,
        options: ImagesOptions,
    ) -> ImagesResult {
        let aborted = || options.cancel.as_ref().is_some_and(|c| c.is_cancelled());
        if model.model_type != "image" {
            let message = format!("Model {}/{} is not an image model", model.provider, model.id);
            return ImagesResult::failed(model, message, aborted());
        }
        match self.prepare(&model.provider, &model.base_url, options.api_key.clone(), &options.headers).await {
            Err(message) => ImagesResult::failed(model, message, aborted()),
            Ok(prepared) => {
                let mut model = model.clone();
                model.base_url = prepared.base_url;
                let options = ImagesOptions { api_key: prepared.api_key, headers: prepared.headers, ..options };
                pi_ai::images::generate_images(&model, context, &options).await
            }
        }
    }
}

/// The registry's image and classifier models for a `ctx.modelRegistry` snapshot: every one
/// (pi's JSON, `type` set) and the `provider/id` keys of those with configured auth.
pub(crate) fn typed_snapshot(registry: &ExtensionModelRegistry) -> (Vec<Value>, Vec<String>) {
    let typed = registry.typed();
    let key = |m: &Value| {
        let field = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        format!("{}/{}", field("provider"), field("id"))
    };
    let available = typed.available.iter().map(key).collect();
    (typed.all, available)
}

/// The request options of a typed call (pi's `ProviderRequestOptions` that cross the protocol).
struct WireOptions {
    api_key: Option<String>,
    headers: Vec<(String, Option<String>)>,
    temperature: Option<f64>,
    timeout: Option<std::time::Duration>,
    max_retries: Option<u32>,
    max_retry_delay: Option<std::time::Duration>,
}

fn wire_options(o: &Value) -> WireOptions {
    let millis = |k: &str| o.get(k).and_then(Value::as_u64).map(std::time::Duration::from_millis);
    WireOptions {
        api_key: o.get("apiKey").and_then(Value::as_str).map(str::to_owned),
        headers: o
            .get("headers")
            .and_then(Value::as_object)
            .map(|h| h.iter().map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned))).collect())
            .unwrap_or_default(),
        temperature: o.get("temperature").and_then(Value::as_f64),
        timeout: millis("timeoutMs"),
        max_retries: o.get("maxRetries").and_then(Value::as_u64).map(|n| n.min(u64::from(u32::MAX)) as u32),
        max_retry_delay: millis("maxRetryDelayMs"),
    }
}

/// A model as the typed struct `T`, or (when the JSON is not one, e.g. a chat model) a bare one
/// carrying its `type`, `api`, `provider` and `id` so the type check words the error.
fn typed_model<T: serde::de::DeserializeOwned>(
    value: &Value,
    bare: impl FnOnce(String, String, String, String) -> T,
) -> T {
    serde_json::from_value(value.clone()).unwrap_or_else(|_| {
        let field = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("chat").to_owned();
        bare(kind, field("api"), field("provider"), field("id"))
    })
}

/// Runs `ctx.modelRegistry.classify` / `generateImages` for an out-of-process extension:
/// `{model, context, options}` in, pi's result JSON out (errors included); `None` for any other
/// method.
pub(crate) async fn typed_call(
    registry: &ExtensionModelRegistry,
    method: &str,
    params: &Value,
    cancel: tokio_util::sync::CancellationToken,
) -> Option<Result<Value, String>> {
    let model = params.get("model").cloned().unwrap_or(Value::Null);
    let context = params.get("context").cloned().unwrap_or(Value::Null);
    let o = wire_options(params.get("options").unwrap_or(&Value::Null));
    let result = match method {
        "ctx.modelRegistry.classify" => {
            let model: ClassifierModel = typed_model(&model, |model_type, api, provider, id| ClassifierModel {
                model_type,
                api,
                provider,
                id,
                ..Default::default()
            });
            let result = match serde_json::from_value::<ClassifierContext>(context) {
                Ok(context) => {
                    let options = ClassifyOptions {
                        api_key: o.api_key,
                        headers: o.headers,
                        temperature: o.temperature,
                        timeout: o.timeout,
                        max_retries: o.max_retries,
                        max_retry_delay: o.max_retry_delay,
                        cancel: Some(cancel),
                    };
                    registry.classify(&model, &context, options).await
                }
                Err(error) => pi_ai::classify::error_result(&model, error.to_string(), cancel.is_cancelled()),
            };
            serde_json::to_value(result)
        }
        "ctx.modelRegistry.generateImages" => {
            let model: ImageModel = typed_model(&model, |model_type, api, provider, id| ImageModel {
                model_type,
                api,
                provider,
                id,
                ..Default::default()
            });
            let result = match serde_json::from_value::<ImagesContext>(context) {
                Ok(context) => {
                    let options = ImagesOptions {
                        api_key: o.api_key,
                        headers: o.headers,
                        timeout: o.timeout,
                        max_retries: o.max_retries,
                        max_retry_delay: o.max_retry_delay,
                        cancel: Some(cancel),
                    };
                    registry.generate_images(&model, &context, options).await
                }
                Err(error) => ImagesResult::failed(&model, error.to_string(), cancel.is_cancelled()),
            };
            serde_json::to_value(result)
        }
        _ => return None,
    };
    Some(result.map_err(|e| e.to_string()))
}
