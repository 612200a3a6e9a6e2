//! `ctx.modelRegistry` (pi's `ModelRegistry` as extensions see it): the models the session
//! knows, those it can use, lookups, request-time auth (`getApiKeyAndHeaders`,
//! `getProviderAuth`, `getApiKeyForProvider`) and requests through the session's providers
//! (`stream`, `streamSimple`, `complete`) with that auth and none of the session's hooks. Before
//! the session is bound it knows no models and cannot run requests.

use pi_ai::{AssistantMessage, AssistantMessageEventStream, Context, Model};
use serde_json::Value;

use super::node::request_auth::{self, ProviderAuth};
use super::runtime::ExtensionContext;
use pi_ai::options::StreamOptions;

/// What `ctx.model_registry().get_api_key_and_headers(model)` answers (pi's
/// `ResolvedRequestAuth`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestAuth {
    /// The request can be made with these (either may be absent).
    Ok {
        /// The key.
        api_key: Option<String>,
        /// The headers.
        headers: Vec<(String, String)>,
    },
    /// It cannot ("No API key found for \"x\"", or why the auth failed).
    Err(String),
}

/// What `ctx.modelRegistry` answers (read when called, so models registered meanwhile count).
#[derive(Clone)]
pub struct ExtensionModelRegistry {
    pub(super) ctx: ExtensionContext,
}

impl std::fmt::Debug for ExtensionModelRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExtensionModelRegistry")
    }
}

impl ExtensionModelRegistry {
    fn models(&self, available_only: bool) -> Vec<Model> {
        self.ctx.runtime.actions().map(|a| a.models(available_only)).unwrap_or_default()
    }

    /// Every known model (pi's `getAll`).
    pub fn get_all(&self) -> Vec<Model> {
        self.models(false)
    }

    /// The models whose provider has configured auth (pi's `getAvailable`).
    pub fn get_available(&self) -> Vec<Model> {
        self.models(true)
    }

    /// A model by provider and id (pi's `find`).
    pub fn find(&self, provider: &str, id: &str) -> Option<Model> {
        self.get_all().into_iter().find(|m| m.provider == provider && m.id == id)
    }

    /// Whether the model's provider has configured auth (pi's `hasConfiguredAuth`).
    pub fn has_configured_auth(&self, model: &Model) -> bool {
        self.get_available().iter().any(|m| m.provider == model.provider)
    }

    /// Whether requests to the model's provider use a stored OAuth credential (pi's
    /// `isUsingOAuth`).
    pub fn is_using_oauth(&self, model: &Model) -> bool {
        request_auth::is_using_oauth(&self.ctx.runtime, &model.provider)
    }

    /// pi's `getProviderAuthStatus`: `{configured, source?, label?}`.
    pub fn get_provider_auth_status(&self, provider: &str) -> Value {
        request_auth::auth_status(&self.ctx.runtime, provider)
    }

    /// pi's `getProviderDisplayName`.
    pub fn get_provider_display_name(&self, provider: &str) -> String {
        request_auth::display_name(&self.ctx.runtime, provider)
    }

    /// The providers extensions registered (pi's `getRegisteredProviderIds`).
    pub fn get_registered_provider_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for p in super::runtime::lock(&self.ctx.runtime.providers).iter() {
            if !ids.contains(&p.name) {
                ids.push(p.name.clone());
            }
        }
        ids
    }

    /// A registered provider's configuration (pi's `getRegisteredProviderConfig`).
    pub fn get_registered_provider_config(&self, provider: &str) -> Option<Value> {
        request_auth::registered(&self.ctx.runtime, provider).map(|p| p.config)
    }

    /// The auth a request to `provider` uses, refreshed OAuth included (pi's `getProviderAuth`);
    /// `Ok(None)` when it has none.
    pub async fn get_provider_auth(&self, provider: &str) -> Result<Option<ProviderAuth>, String> {
        request_auth::resolve(&self.ctx.runtime, provider).await
    }

    /// The key a request to `provider` uses (pi's `getApiKeyForProvider`; failures read as none).
    pub async fn get_api_key_for_provider(&self, provider: &str) -> Option<String> {
        self.get_provider_auth(provider).await.ok().flatten().and_then(|a| a.api_key)
    }

    /// pi's `getApiKeyAndHeaders(model)`.
    pub async fn get_api_key_and_headers(&self, model: &Model) -> RequestAuth {
        let answer = request_auth::api_key_and_headers(&self.ctx.runtime, &model.provider).await;
        if answer["ok"] != Value::Bool(true) {
            return RequestAuth::Err(answer["error"].as_str().unwrap_or_default().to_owned());
        }
        let headers = answer["headers"]
            .as_object()
            .map(|h| h.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
            .unwrap_or_default();
        RequestAuth::Ok { api_key: answer["apiKey"].as_str().map(str::to_owned), headers }
    }

    /// A request through the session's providers with request-time auth (pi's `stream`: a native
    /// JavaScript provider's `stream`; pi-rs's options serve `stream` and `streamSimple` alike). A
    /// virtual model cannot be streamed this way (pi's "must be routed before streaming" error).
    pub fn stream(&self, model: &Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream {
        self.request(model, context, options, false)
    }

    fn request(
        &self,
        model: &Model,
        context: Context,
        options: StreamOptions,
        simple: bool,
    ) -> AssistantMessageEventStream {
        super::node::registry_request::registry_request(&self.ctx.runtime, model, context, options, simple)
    }

    /// pi's `streamSimple`. A virtual model is routed first (reason `direct`, no router state; the
    /// output budget capped to the routed model's, the caller's key and headers kept only when the
    /// routed model has the virtual model's provider), as pi's `ModelRuntime.streamSimple`.
    pub fn stream_simple(
        &self,
        model: &Model,
        context: Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        self.request(model, context, options, true)
    }

    /// pi's `complete`: the request's final message.
    pub async fn complete(&self, model: &Model, context: Context, options: StreamOptions) -> AssistantMessage {
        self.stream(model, context, options).result().await
    }

    /// pi's `completeSimple` (its runtime's): the final message of [`Self::stream_simple`].
    pub async fn complete_simple(&self, model: &Model, context: Context, options: StreamOptions) -> AssistantMessage {
        self.stream_simple(model, context, options).result().await
    }
}

impl ExtensionContext {
    /// pi's `ctx.modelRegistry`.
    pub fn model_registry(&self) -> ExtensionModelRegistry {
        ExtensionModelRegistry { ctx: self.clone() }
    }
}
