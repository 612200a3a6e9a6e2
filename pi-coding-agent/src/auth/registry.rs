//! `ModelRegistry`: pi-ai's built-in catalog with `models.json` applied, pi-ai's HTTP APIs
//! registered, and credentials looked up at request time in pi's order: the runtime key
//! (`--api-key`), auth.json, the provider's models.json `apiKey`, the environment.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use futures::StreamExt;
use pi_agent_core::StreamFn;
use pi_ai::models::{
    ModelsConfig, ModelsConfigError, ProviderConfig, ProviderErrors, ResolvedAuth, config_value_env_names,
    is_command_config_value,
};
use pi_ai::registry::{KeySource, Models, ProviderAuth, ProviderEntry};
use pi_ai::{AssistantMessageEvent, AssistantMessageEventStream, Context, Model};

use super::configured_headers::{failed_request, with_configured_headers, with_model_headers};
use super::credential::CredentialType;
use super::oauth::RefreshWhen;
use super::oauth::{Endpoints, OAuthError, OAuthFlow, builtin_flow, expires_soon, now_ms};
use super::storage::{AuthError, AuthStorage};

/// The OAuth flows requests may refresh with, by provider id.
#[derive(Clone, Debug, Default)]
struct Flows {
    endpoints: Endpoints,
}

impl Flows {
    fn get(&self, provider: &str) -> Option<Arc<dyn OAuthFlow>> {
        builtin_flow(provider, &self.endpoints)
    }
}

/// The request auth of `provider`: a stored OAuth credential through its flow's `toAuth`
/// (unless a runtime or request key wins), else [`AuthStorage::resolve`].
fn resolve_auth(
    auth: &AuthStorage,
    flows: &Flows,
    provider: &str,
    override_key: Option<&str>,
    configured: Option<&str>,
) -> Result<Option<ResolvedAuth>, AuthError> {
    if override_key.is_none()
        && auth.runtime_api_key(provider).is_none()
        && let Some(credential) = auth.get(provider)?
        && credential.kind() == CredentialType::OAuth
        && let Some(flow) = flows.get(provider)
    {
        let derived = flow.to_auth(&credential);
        let headers = derived.headers.into_iter().map(|(k, v)| (k, Some(v))).collect();
        return Ok(Some(ResolvedAuth { api_key: derived.api_key, headers, env: HashMap::new() }));
    }
    auth.resolve(provider, override_key, configured)
}

/// Why the registry is partly loaded: pi reports these as "errors loading models.json".
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// models.json is broken; the built-in catalog alone is used.
    #[error(transparent)]
    ModelsJson(#[from] ModelsConfigError),
    /// Some providers' models.json entries could not be composed; those providers keep their
    /// built-in models (a custom one is left out), the others are applied.
    #[error(transparent)]
    Providers(#[from] ProviderErrors),
    /// auth.json is broken; no stored credential is used, and the file is left as it is.
    #[error("Availability refresh: {0}")]
    Auth(#[from] AuthError),
    /// More than one of the above, in pi's order (models.json, its providers, auth.json), shown
    /// as pi's `getError` joins them: a blank line between.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n\n"))]
    Several(Vec<RegistryError>),
}

impl RegistryError {
    /// `errors` as one error (none when empty).
    fn combined(mut errors: Vec<RegistryError>) -> Option<Self> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(RegistryError::Several(errors)),
        }
    }
}

/// Models with their credentials (pi's `ModelRegistry`). Cheap to clone.
///
/// ```
/// use pi_coding_agent::auth::{AuthStorage, Credential, ModelRegistry};
/// let auth = AuthStorage::in_memory(Default::default());
/// auth.set("groq", Credential::api_key("gsk-doc")).unwrap();
/// let registry = ModelRegistry::new(auth, None);
/// assert!(registry.has_configured_auth("groq"));
/// assert_eq!(registry.api_key("groq").unwrap().as_deref(), Some("gsk-doc"));
/// assert!(registry.get_available().iter().any(|m| m.provider == "groq"));
/// ```
#[derive(Clone, Debug)]
pub struct ModelRegistry {
    flows: Flows,
    /// Shared: the catalog is large, and every clone (the stream function holds one) reads it.
    models: Arc<Models>,
    auth: AuthStorage,
    configured: Arc<HashMap<String, String>>,
    /// The models.json entries applied (a provider whose entry failed has none).
    provider_configs: Arc<HashMap<String, ProviderConfig>>,
    error: Option<Arc<RegistryError>>,
}

impl ModelRegistry {
    /// `<agent_dir>/auth.json` and `<agent_dir>/models.json` (either may be missing).
    pub fn load(agent_dir: &Path) -> Self {
        Self::new(AuthStorage::for_agent_dir(agent_dir), Some(&agent_dir.join("models.json")))
    }

    /// A registry over `auth` and an optional models.json. A broken models.json leaves the
    /// built-in catalog and is kept as [`ModelRegistry::error`]; so is a broken auth.json.
    pub fn new(auth: AuthStorage, models_json: Option<&Path>) -> Self {
        let mut catalog = pi_ai::models::builtin_catalog_owned();
        let mut configured = HashMap::new();
        let mut provider_configs = HashMap::new();
        let mut errors = Vec::new();
        if let Some(path) = models_json {
            match ModelsConfig::load(path) {
                Ok(config) => {
                    let failed = config.apply(&mut catalog).err();
                    for (id, provider) in &config.providers {
                        if failed.as_ref().is_some_and(|f| f.contains(id)) {
                            continue;
                        }
                        if let Some(key) = &provider.api_key {
                            configured.insert(id.clone(), key.clone());
                        }
                        provider_configs.insert(id.clone(), provider.clone());
                    }
                    errors.extend(failed.map(RegistryError::from));
                }
                Err(e) => errors.push(RegistryError::from(e)),
            }
        }
        if let Err(e) = auth.reload() {
            errors.push(RegistryError::from(e));
        }
        let error = RegistryError::combined(errors).map(Arc::new);
        let configured = Arc::new(configured);
        let provider_configs = Arc::new(provider_configs);
        let mut models = Models::new();
        for api in pi_ai::providers::http_apis() {
            models.register_api(api);
        }
        let flows = Flows { endpoints: Endpoints::from_env() };
        let source = {
            let (auth, configured, flows) = (auth.clone(), configured.clone(), flows.clone());
            let provider_configs = provider_configs.clone();
            KeySource::new(move |provider, override_key| {
                let resolved =
                    resolve_auth(&auth, &flows, provider, override_key, configured.get(provider).map(String::as_str))
                        .map_err(|e| format!("API key auth failed for provider {provider}: {e}"))?;
                match (resolved, provider_configs.get(provider)) {
                    (Some(resolved), Some(config)) => with_configured_headers(provider, config, resolved)
                        .map(Some)
                        .map_err(|e| format!("API key auth failed for provider {provider}: {e}")),
                    (resolved, _) => Ok(resolved),
                }
            })
        };
        for (id, list) in catalog {
            models.set_provider(ProviderEntry {
                id,
                models: list,
                auth: ProviderAuth::Source(source.clone()),
                apis: HashMap::new(),
            });
        }
        ModelRegistry { flows, models: Arc::new(models), auth, configured, provider_configs, error }
    }

    /// The models.json or auth.json problem found while loading, if any.
    pub fn error(&self) -> Option<&RegistryError> {
        self.error.as_deref()
    }

    /// [`ModelRegistry::error`], shareable.
    pub fn shared_error(&self) -> Option<Arc<RegistryError>> {
        self.error.clone()
    }

    /// The credential storage.
    pub fn auth_storage(&self) -> &AuthStorage {
        &self.auth
    }

    /// The pi-ai collection (providers, models, APIs) requests go through.
    pub fn models(&self) -> &Models {
        &self.models
    }

    /// The same collection as a shared handle (no copy), for work done later or elsewhere.
    pub fn shared_models(&self) -> Arc<Models> {
        Arc::clone(&self.models)
    }

    /// Every model, in catalog order.
    pub fn get_all(&self) -> Vec<&Model> {
        self.models.get_models(None)
    }

    /// The models whose provider has credentials (auth.json is asked for changes once per call).
    pub fn get_available(&self) -> Vec<&Model> {
        self.auth.with_snapshot(|| with_provider_auth(&self.models, |p| self.has_configured_auth(p)))
    }

    /// One model by provider and id.
    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        self.models.get_models(Some(provider)).into_iter().find(|m| m.id == id)
    }

    /// Whether `provider` has credentials: a runtime key, a usable auth.json credential, a
    /// models.json `apiKey` whose variables are set (a `!command` counts without running it), or
    /// an environment variable. A broken auth.json gives no provider credentials, as in pi.
    pub fn has_configured_auth(&self, provider: &str) -> bool {
        if self.auth.runtime_api_key(provider).is_some() {
            return true;
        }
        if let (Ok(false), Some(raw)) = (self.auth.has(provider), self.configured.get(provider)) {
            return is_command_config_value(raw)
                || config_value_env_names(raw).iter().all(|n| std::env::var(n).is_ok_and(|v| !v.is_empty()));
        }
        matches!(self.resolve(provider), Ok(Some(_)))
    }

    /// The API key a request to `provider` would use (see the module docs for the order).
    pub fn api_key(&self, provider: &str) -> Result<Option<String>, AuthError> {
        Ok(self.resolve(provider)?.and_then(|a| a.api_key))
    }

    /// The whole auth a request to `provider` would use: key, headers (`ANTHROPIC_AUTH_TOKEN` as
    /// a bearer token, Cloudflare AI Gateway's header) and variables (Cloudflare's account id).
    pub fn resolve(&self, provider: &str) -> Result<Option<ResolvedAuth>, AuthError> {
        resolve_auth(&self.auth, &self.flows, provider, None, self.configured.get(provider).map(String::as_str))
    }

    /// Sets a key for this process only (pi's `--api-key`); it wins over every stored key.
    pub fn set_runtime_api_key(&self, provider: &str, key: impl Into<String>) {
        self.auth.set_runtime_api_key(provider, key);
    }

    /// Sends every OAuth request (refreshes) to `endpoints` (a local server in tests).
    pub fn set_oauth_endpoints(&mut self, endpoints: Endpoints) {
        self.flows = Flows { endpoints };
    }

    /// The OAuth flow of `provider`, when it signs in with one.
    pub fn oauth_flow(&self, provider: &str) -> Option<Arc<dyn OAuthFlow>> {
        self.flows.get(provider)
    }

    /// Whether `provider`'s stored OAuth credential expires within five minutes and has a flow
    /// to refresh it with.
    pub fn needs_oauth_refresh(&self, provider: &str) -> bool {
        self.auth.runtime_api_key(provider).is_none()
            && self.flows.get(provider).is_some()
            && matches!(self.auth.get(provider), Ok(Some(c)) if c.kind() == CredentialType::OAuth && expires_soon(&c, now_ms()))
    }

    /// Refreshes `provider`'s stored OAuth credential when it expires soon (under the auth.json
    /// lock, written before it is released). Requests through [`ModelRegistry::stream_fn`] do this
    /// themselves.
    pub async fn refresh_oauth(&self, provider: &str) -> Result<(), OAuthError> {
        self.refresh_oauth_when(provider, RefreshWhen::ExpiresSoon).await
    }

    /// Refreshes `provider`'s stored OAuth credential when it expires within `min_validity_ms`
    /// (or five minutes, whichever is longer), under the auth.json lock (pi's
    /// `getAuth(provider, { minOAuthValidityMs })`).
    pub async fn refresh_oauth_within(&self, provider: &str, min_validity_ms: u64) -> Result<(), OAuthError> {
        self.refresh_oauth_when(provider, RefreshWhen::ExpiresWithin(min_validity_ms)).await
    }

    async fn refresh_oauth_when(&self, provider: &str, when: RefreshWhen) -> Result<(), OAuthError> {
        if let Some(flow) = self.flows.get(provider) {
            self.auth.refresh_oauth_with(provider, flow.as_ref(), when).await?;
        }
        Ok(())
    }

    /// The stored OAuth access token of `provider` when a request would use it.
    fn oauth_access(&self, provider: &str) -> Option<String> {
        if self.auth.runtime_api_key(provider).is_some() || self.flows.get(provider).is_none() {
            return None;
        }
        let credential = self.auth.get(provider).ok().flatten().filter(|c| c.kind() == CredentialType::OAuth)?;
        credential.access().map(str::to_owned)
    }

    /// `model` as a request with `provider`'s stored OAuth credential sends it (GitHub Copilot's
    /// proxy endpoint as its base URL).
    fn with_oauth_base_url(&self, model: &Model) -> Model {
        let mut model = model.clone();
        if let (Some(flow), Ok(Some(c))) = (self.flows.get(&model.provider), self.auth.get(&model.provider))
            && c.kind() == CredentialType::OAuth
            && self.auth.runtime_api_key(&model.provider).is_none()
            && let Some(base) = flow.to_auth(&c).base_url
        {
            model.base_url = base;
        }
        model
    }

    /// A stream function dispatching through this registry (keys looked up per request). With a
    /// stored OAuth credential, an expiring token is refreshed first (a failed refresh fails the
    /// request), and a request refused with 401 before anything streamed is retried once after a
    /// refresh.
    pub fn stream_fn(&self) -> StreamFn {
        let registry = self.clone();
        Arc::new(move |model: &Model, transcript, options| {
            let context = Context { system_prompt: None, messages: transcript.into_messages(), tools: None };
            let options = match with_model_headers(registry.provider_configs.get(&model.provider), model, options) {
                Ok(options) => options,
                Err(message) => return failed_request(model, message),
            };
            if registry.oauth_access(&model.provider).is_none() {
                return registry.models.stream_simple(model, context, options);
            }
            let (registry, model) = (registry.clone(), model.clone());
            let start = async move {
                let fail = |message: String| super::failed_request(&model, message);
                if registry.needs_oauth_refresh(&model.provider)
                    && let Err(e) = registry.refresh_oauth(&model.provider).await
                {
                    return fail(e.to_string()).boxed();
                }
                let used = registry.oauth_access(&model.provider);
                let first = registry.models.stream_simple(
                    &registry.with_oauth_base_url(&model),
                    context.clone(),
                    options.clone(),
                );
                let (head, rest) = split_head(first).await;
                if !head.iter().any(is_unauthorized) {
                    return futures::stream::iter(head).chain(rest).boxed();
                }
                let Some(used) = used else { return futures::stream::iter(head).chain(rest).boxed() };
                if let Err(e) = registry.refresh_oauth_when(&model.provider, RefreshWhen::AccessIs(used)).await {
                    return fail(e.to_string()).boxed();
                }
                registry.models.stream_simple(&registry.with_oauth_base_url(&model), context, options).boxed()
            };
            AssistantMessageEventStream::new(futures::stream::once(start).flatten())
        })
    }
}

/// The events up to and including the first that is not `Start`, and the rest of the stream.
async fn split_head(
    mut stream: AssistantMessageEventStream,
) -> (Vec<AssistantMessageEvent>, futures::stream::BoxStream<'static, AssistantMessageEvent>) {
    let mut head = Vec::new();
    while let Some(event) = stream.next().await {
        let start = matches!(event, AssistantMessageEvent::Start { .. });
        head.push(event);
        if !start {
            break;
        }
    }
    (head, stream.boxed())
}

/// Whether `event` is an error for an HTTP 401 answer.
fn is_unauthorized(event: &AssistantMessageEvent) -> bool {
    let AssistantMessageEvent::Error { error, .. } = event else { return false };
    let message = error.error_message.as_deref().unwrap_or("");
    message.strip_prefix("401").is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// The models whose provider `has_auth`, asking once per run of one provider's models (a catalog
/// lists a provider's models together; a credential check may read auth.json).
pub(crate) fn with_provider_auth(models: &Models, has_auth: impl Fn(&str) -> bool) -> Vec<&Model> {
    let mut out = Vec::new();
    for entry in models.providers().filter(|e| !e.models.is_empty()) {
        // A built-in catalog list is all of its provider: asked once, parsed only when usable.
        if entry.models.is_builtin() {
            if has_auth(&entry.id) {
                out.extend(entry.models.iter());
            }
            continue;
        }
        let mut last: Option<(&str, bool)> = None;
        out.extend(entry.models.iter().filter(|m| match last {
            Some((provider, has)) if provider == m.provider => has,
            _ => {
                let has = has_auth(&m.provider);
                last = Some((&m.provider, has));
                has
            }
        }));
    }
    out
}
