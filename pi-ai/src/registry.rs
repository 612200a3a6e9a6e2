//! The `Models` collection: providers by id with their models and auth, dispatching each request
//! to the [`ApiProvider`] registered for `model.api` (pi's `createModels`).
//!
//! ```
//! use pi_ai::providers::faux::{FauxOptions, FauxProvider, faux_assistant_message, faux_text};
//! use pi_ai::registry::Models;
//! use pi_ai::{Context, Message, UserMessage};
//!
//! # futures::executor::block_on(async {
//! let faux = FauxProvider::new(FauxOptions::default());
//! faux.set_responses(vec![faux_assistant_message(vec![faux_text("hi")], Default::default()).into()]);
//! let mut models = Models::new();
//! models.add_faux(&faux);
//! let context = Context { messages: vec![Message::User(UserMessage::new("hello").into())], ..Default::default() };
//! let reply = models.complete(&faux.model(), context, Default::default()).await;
//! assert_eq!(reply.text(), "hi");
//! # });
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::models::{
    ModelList, ResolvedAuth, clamp_max_tokens_to_context, clamp_thinking_level, resolve_provider_auth,
};
use crate::options::StreamOptions;
use crate::provider::ApiProvider;
use crate::providers::faux::FauxProvider;
use crate::stream::AssistantMessageEventStream;
use crate::transcript::normalize_context;
use crate::types::{AssistantMessage, Context, Model, StopReason, ThinkingLevel, now_ms};

/// How a provider authenticates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderAuth {
    /// The request's `api_key`, else pi's environment variable for the provider id.
    EnvKey,
    /// The request's `api_key`, else this key.
    Key(String),
    /// No key needed (local servers, faux).
    Keyless,
    /// Whatever this source resolves at request time (a credential store such as pi's auth.json),
    /// given the request's `api_key` as an override; `Ok(None)` is "no credential", `Err` fails the
    /// request with its text.
    Source(KeySource),
}

/// A request-time credential lookup (see [`ProviderAuth::Source`]).
#[derive(Clone)]
pub struct KeySource(pub Arc<KeyLookup>);

/// The function behind a [`KeySource`]: (provider id, the request's own key) → the auth to use,
/// none, or an error text.
pub type KeyLookup = dyn Fn(&str, Option<&str>) -> Result<Option<ResolvedAuth>, String> + Send + Sync;

impl KeySource {
    /// Wraps a lookup.
    pub fn new(f: impl Fn(&str, Option<&str>) -> Result<Option<ResolvedAuth>, String> + Send + Sync + 'static) -> Self {
        KeySource(Arc::new(f))
    }
}

impl std::fmt::Debug for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeySource(..)")
    }
}

impl PartialEq for KeySource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for KeySource {}

/// An Azure chat-completions model pointed at its endpoint, with the deployment sent as the
/// request's `model` (pi's `azureStreams`; the user's payload hook still runs after).
fn azure_endpoint(
    model: &Model,
    options: &mut StreamOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Model, String> {
    let mut resolved = model.clone();
    resolved.base_url = crate::models::resolve_azure_base_url(&model.base_url, env)?;
    let deployment = crate::models::resolve_azure_deployment(&model.id, env);
    if deployment != model.id {
        let user = options.active_payload_hook().cloned();
        options.on_payload_wanted = None;
        options.on_payload = Some(Arc::new(move |payload: &serde_json::Value, m: &Model| {
            let mut params = payload.clone();
            if let Some(o) = params.as_object_mut() {
                o.insert("model".into(), serde_json::Value::String(deployment.clone()));
            }
            let user = user.as_ref().map(|hook| hook(&params, m));
            Box::pin(async move {
                match user {
                    Some(hooked) => hooked.await.or(Some(params)),
                    None => Some(params),
                }
            })
        }));
    }
    Ok(resolved)
}

/// Awaits the observer's header transform, then starts the request (pi's `applyAuth` running
/// `transformHeaders` last, on the merged extra headers).
fn with_transformed_headers(
    api: Arc<dyn ApiProvider>,
    model: Model,
    context: crate::transcript::TranscriptContext,
    mut options: StreamOptions,
    observer: Arc<dyn crate::options::RequestObserver>,
) -> AssistantMessageEventStream {
    use futures::StreamExt;
    AssistantMessageEventStream::new(async_stream::stream! {
        let headers = std::mem::take(&mut options.headers);
        options.headers = observer.transform_headers(headers, &model).await;
        let mut inner = api.stream(&model, context, options);
        while let Some(event) = inner.next().await {
            yield event;
        }
    })
}

/// One provider: its models, its auth and (optionally) its own API implementations.
#[derive(Clone)]
pub struct ProviderEntry {
    /// Provider id.
    pub id: String,
    /// Its models (a built-in provider's are parsed when first read).
    pub models: ModelList,
    /// How it authenticates.
    pub auth: ProviderAuth,
    /// API implementations of this provider only, by API id (override the collection's).
    pub apis: HashMap<String, Arc<dyn ApiProvider>>,
}

impl std::fmt::Debug for ProviderEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderEntry")
            .field("id", &self.id)
            .field("models", &self.models.len())
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

/// The collection of providers a program talks to.
#[derive(Clone, Default)]
pub struct Models {
    providers: IndexMap<String, ProviderEntry>,
    apis: HashMap<String, Arc<dyn ApiProvider>>,
}

impl std::fmt::Debug for Models {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Models")
            .field("providers", &self.providers.keys().collect::<Vec<_>>())
            .field("apis", &self.apis.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Models {
    /// An empty collection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every provider of the built-in catalog with environment-key auth, and no API registered:
    /// the HTTP providers register theirs with [`Models::register_api`]. Nothing is parsed yet.
    pub fn from_catalog() -> Self {
        let mut models = Models::new();
        for (id, list) in crate::models::builtin_catalog() {
            models.set_provider(ProviderEntry {
                id: id.clone(),
                models: list.clone(),
                auth: ProviderAuth::EnvKey,
                apis: HashMap::new(),
            });
        }
        models
    }

    /// Registers the implementation of one API id for every provider.
    pub fn register_api(&mut self, api: Arc<dyn ApiProvider>) {
        self.apis.insert(api.api().to_owned(), api);
    }

    /// Adds or replaces a provider.
    pub fn set_provider(&mut self, provider: ProviderEntry) {
        self.providers.insert(provider.id.clone(), provider);
    }

    /// Adds a faux provider (keyless, its own API).
    pub fn add_faux(&mut self, faux: &FauxProvider) {
        let mut apis: HashMap<String, Arc<dyn ApiProvider>> = HashMap::new();
        apis.insert(faux.api().to_owned(), Arc::new(faux.clone()));
        self.set_provider(ProviderEntry {
            id: faux.provider().to_owned(),
            models: faux.models().to_vec().into(),
            auth: ProviderAuth::Keyless,
            apis,
        });
    }

    /// Removes a provider.
    pub fn delete_provider(&mut self, id: &str) -> Option<ProviderEntry> {
        self.providers.shift_remove(id)
    }

    /// Removes every provider.
    pub fn clear_providers(&mut self) {
        self.providers.clear();
    }

    /// A model by provider and id (only that provider's list is parsed, and only when it has the
    /// id).
    pub fn get_model(&self, provider: &str, id: &str) -> Option<&Model> {
        let list = &self.providers.get(provider)?.models;
        let index = list.keys().position(|(model, _)| model == id)?;
        list.get(index)
    }

    /// The providers in order, their models not parsed.
    pub fn providers(&self) -> impl Iterator<Item = &ProviderEntry> {
        self.providers.values()
    }

    /// The models of one provider, or of all providers (which parses the whole built-in catalog).
    pub fn get_models(&self, provider: Option<&str>) -> Vec<&Model> {
        match provider {
            Some(p) => self.providers.get(p).map(|e| e.models.iter().collect()).unwrap_or_default(),
            None => self.providers.values().flat_map(|e| e.models.iter()).collect(),
        }
    }

    /// The provider ids.
    pub fn get_providers(&self) -> Vec<&str> {
        self.providers.keys().map(String::as_str).collect()
    }

    /// Starts a request: normalises the context once, resolves the provider, its auth and API,
    /// and dispatches. Setup failures are a single `error` event.
    pub fn stream(&self, model: &Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream {
        let failed = |text: String, reason: StopReason| {
            AssistantMessageEventStream::failed(AssistantMessage {
                api: model.api.clone(),
                provider: model.provider.clone(),
                model: model.id.clone(),
                stop_reason: reason,
                error_message: Some(text),
                timestamp: now_ms(),
                ..Default::default()
            })
        };
        let context = normalize_context(context);
        if options.is_cancelled() {
            return failed("This operation was aborted".into(), StopReason::Aborted);
        }
        let Some(provider) = self.providers.get(&model.provider) else {
            return failed(format!("Unknown provider: {}", model.provider), StopReason::Error);
        };
        let mut options = options;
        let resolved = match &provider.auth {
            ProviderAuth::Keyless => None,
            ProviderAuth::Key(key) => Some(ResolvedAuth::key(options.api_key.clone().unwrap_or_else(|| key.clone()))),
            ProviderAuth::EnvKey => {
                resolve_provider_auth(&provider.id, options.api_key.as_deref(), &|n| std::env::var(n).ok())
            }
            ProviderAuth::Source(source) => match (source.0)(&provider.id, options.api_key.as_deref()) {
                Ok(resolved) => resolved,
                Err(text) => return failed(text, StopReason::Error),
            },
        };
        let mut filled;
        let mut model = model;
        if let Some(auth) = resolved {
            if auth.api_key.is_some() {
                options.api_key = auth.api_key.clone();
            }
            if !auth.headers.is_empty() {
                let explicit = std::mem::take(&mut options.headers);
                options.headers = auth.headers.clone();
                options.headers.extend(explicit);
            }
            if !auth.env.is_empty() {
                // pi passes a credential's `env` as `options.env`; the caller's own entries win.
                let mut env = auth.env.clone();
                if let Some(explicit) = &options.env {
                    env.extend(explicit.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                options.env = Some(Arc::new(env));
            }
            if !auth.env.is_empty() && model.base_url.contains('{') {
                filled = model.clone();
                filled.base_url = auth.fill_base_url(&model.base_url);
                model = &filled;
            }
            if provider.id == "azure" && model.api == "openai-completions" {
                let env = |name: &str| auth.env.get(name).cloned();
                match azure_endpoint(model, &mut options, &env) {
                    Ok(resolved) => {
                        filled = resolved;
                        model = &filled;
                    }
                    Err(text) => return failed(text, StopReason::Error),
                }
            }
        }
        if options.api_key.is_none() && !matches!(provider.auth, ProviderAuth::Keyless) {
            let has_auth_header = options.headers.iter().any(|(k, v)| {
                ["authorization", "x-api-key", "cf-aig-authorization"].iter().any(|h| k.eq_ignore_ascii_case(h))
                    && v.is_some()
            });
            if !has_auth_header {
                return failed(format!("No API key for provider: {}", provider.id), StopReason::Error);
            }
        }
        let api = provider.apis.get(&model.api).or_else(|| self.apis.get(&model.api));
        let Some(api) = api else {
            return failed(
                format!("Provider {} has no API implementation for \"{}\"", provider.id, model.api),
                StopReason::Error,
            );
        };
        match options.request_observer.clone().filter(|o| o.wants_headers()) {
            Some(observer) => with_transformed_headers(api.clone(), model.clone(), context, options, observer),
            None => api.stream(model, context, options),
        }
    }

    /// [`Models::stream`] to its final message; never fails (errors are in the message).
    pub async fn complete(&self, model: &Model, context: Context, options: StreamOptions) -> AssistantMessage {
        self.stream(model, context, options).result().await
    }

    /// Like [`Models::stream`], with pi's `streamSimple` defaults: `max_tokens` (default the
    /// model's) is fitted into the context window and the reasoning level is clamped to the
    /// model's supported levels (`off` becomes `None`).
    pub fn stream_simple(
        &self,
        model: &Model,
        context: Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let mut options = options;
        let requested = options.max_tokens.unwrap_or(model.max_tokens);
        options.max_tokens = Some(clamp_max_tokens_to_context(model, &context.messages, requested));
        options.reasoning = options
            .reasoning
            .map(|level| clamp_thinking_level(model, level))
            .filter(|level| *level != ThinkingLevel::Off);
        self.stream(model, context, options)
    }

    /// [`Models::stream_simple`] to its final message.
    pub async fn complete_simple(&self, model: &Model, context: Context, options: StreamOptions) -> AssistantMessage {
        self.stream_simple(model, context, options).result().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::faux::{FauxOptions, faux_assistant_message, faux_text};

    fn errored(models: &Models, model: &Model, options: StreamOptions) -> AssistantMessage {
        futures::executor::block_on(models.complete(model, Context::default(), options))
    }

    #[test]
    fn setup_errors_are_single_error_events() {
        let models = Models::from_catalog();
        let nope = Model { provider: "nope".into(), ..Default::default() };
        let m = errored(&models, &nope, Default::default());
        assert_eq!((m.error_message.as_deref(), m.content.len()), (Some("Unknown provider: nope"), 0));
        let mut local = Models::new();
        local.set_provider(ProviderEntry {
            id: "local".into(),
            models: Default::default(),
            auth: ProviderAuth::EnvKey,
            apis: HashMap::new(),
        });
        let lm = Model { provider: "local".into(), api: "openai-completions".into(), ..Default::default() };
        assert_eq!(
            errored(&local, &lm, Default::default()).error_message.as_deref(),
            Some("No API key for provider: local")
        );
        let keyed = StreamOptions { api_key: Some("k".into()), ..Default::default() };
        assert_eq!(
            errored(&local, &lm, keyed).error_message.as_deref(),
            Some("Provider local has no API implementation for \"openai-completions\"")
        );
        let token = tokio_util::sync::CancellationToken::new();
        token.cancel();
        let m = errored(&local, &lm, StreamOptions { cancel: Some(token), ..Default::default() });
        assert_eq!(
            (m.stop_reason, m.error_message.as_deref()),
            (StopReason::Aborted, Some("This operation was aborted"))
        );
    }

    #[test]
    fn faux_through_the_collection_with_simple_options() {
        let faux = FauxProvider::new(FauxOptions::default());
        faux.set_responses(vec![faux_assistant_message(vec![faux_text("hello")], Default::default()).into()]);
        let mut models = Models::new();
        models.add_faux(&faux);
        assert_eq!(models.get_providers(), ["faux"]);
        let model = models.get_model("faux", "faux-1").cloned().unwrap();
        let options = StreamOptions { reasoning: Some(ThinkingLevel::High), ..Default::default() };
        let reply = futures::executor::block_on(models.complete_simple(&model, Context::default(), options));
        assert_eq!(reply.text(), "hello");
    }
}
