//! `ModelRegistry`: pi-ai's built-in catalog with `models.json` applied, pi-ai's HTTP APIs
//! registered, and credentials looked up at request time in pi's order: the runtime key
//! (`--api-key`), auth.json, the provider's models.json `apiKey`, the environment.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use futures::StreamExt;
use pi_agent_core::StreamFn;
use pi_ai::models::{ModelsConfig, ModelsConfigError, ResolvedAuth, config_value_env_names, is_command_config_value};
use pi_ai::registry::{KeySource, Models, ProviderAuth, ProviderEntry};
use pi_ai::{AssistantMessage, AssistantMessageEventStream, Context, Model, StopReason};

use super::credential::CredentialType;
use super::oauth::{AnthropicOAuth, OAuthError, expires_soon, now_ms};
use super::storage::{AuthError, AuthStorage};

/// Why the registry is partly loaded: pi reports both as "errors loading models.json".
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// models.json is broken; the built-in catalog alone is used.
    #[error(transparent)]
    ModelsJson(#[from] ModelsConfigError),
    /// auth.json is broken; no stored credential is used, and the file is left as it is.
    #[error("Availability refresh: {0}")]
    Auth(#[from] AuthError),
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
    anthropic_oauth: AnthropicOAuth,
    /// Shared: the catalog is large, and every clone (the stream function holds one) reads it.
    models: Arc<Models>,
    auth: AuthStorage,
    configured: Arc<HashMap<String, String>>,
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
        let mut error = None;
        if let Some(path) = models_json.filter(|p| p.is_file()) {
            match ModelsConfig::load(path).and_then(|c| c.apply(&mut catalog).map(|()| c)) {
                Ok(config) => {
                    for (id, provider) in &config.providers {
                        if let Some(key) = &provider.api_key {
                            configured.insert(id.clone(), key.clone());
                        }
                    }
                }
                Err(e) => {
                    catalog = pi_ai::models::builtin_catalog_owned();
                    error = Some(Arc::new(RegistryError::from(e)));
                }
            }
        }
        if error.is_none()
            && let Err(e) = auth.reload()
        {
            error = Some(Arc::new(RegistryError::from(e)));
        }
        let configured = Arc::new(configured);
        let mut models = Models::new();
        for api in pi_ai::providers::http_apis() {
            models.register_api(api);
        }
        let source = {
            let (auth, configured) = (auth.clone(), configured.clone());
            KeySource::new(move |provider, override_key| {
                auth.resolve(provider, override_key, configured.get(provider).map(String::as_str))
                    .map_err(|e| format!("API key auth failed for provider {provider}: {e}"))
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
        ModelRegistry { anthropic_oauth: AnthropicOAuth::default(), models: Arc::new(models), auth, configured, error }
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

    /// The models whose provider has credentials.
    pub fn get_available(&self) -> Vec<&Model> {
        let mut last: Option<(&str, bool)> = None;
        self.models
            .get_models(None)
            .into_iter()
            .filter(|m| match last {
                // The catalog lists a provider's models together: one credential check each.
                Some((provider, has)) if provider == m.provider => has,
                _ => {
                    let has = self.has_configured_auth(&m.provider);
                    last = Some((&m.provider, has));
                    has
                }
            })
            .collect()
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
        self.auth.resolve(provider, None, self.configured.get(provider).map(String::as_str))
    }

    /// Sets a key for this process only (pi's `--api-key`); it wins over every stored key.
    pub fn set_runtime_api_key(&self, provider: &str, key: impl Into<String>) {
        self.auth.set_runtime_api_key(provider, key);
    }

    /// Uses another Anthropic token endpoint (a local server in tests, a proxy).
    pub fn set_anthropic_oauth(&mut self, endpoint: AnthropicOAuth) {
        self.anthropic_oauth = endpoint;
    }

    /// Whether `provider`'s stored OAuth credential expires within five minutes and this port can
    /// refresh it.
    pub fn needs_oauth_refresh(&self, provider: &str) -> bool {
        provider == "anthropic"
            && self.auth.runtime_api_key(provider).is_none()
            && matches!(self.auth.get(provider), Ok(Some(c)) if c.kind() == CredentialType::OAuth && expires_soon(&c, now_ms()))
    }

    /// Refreshes `provider`'s stored OAuth credential when it expires soon (under the auth.json
    /// lock, written before it is released). Requests through [`ModelRegistry::stream_fn`] do this
    /// themselves.
    pub async fn refresh_oauth(&self, provider: &str) -> Result<(), OAuthError> {
        if provider == "anthropic" {
            self.auth.refresh_anthropic_oauth(provider, &self.anthropic_oauth).await?;
        }
        Ok(())
    }

    /// A stream function dispatching through this registry (keys looked up per request; an
    /// expiring OAuth token is refreshed first, and a failed refresh fails the request).
    pub fn stream_fn(&self) -> StreamFn {
        let registry = self.clone();
        Arc::new(move |model: &Model, transcript, options| {
            let context = Context { system_prompt: None, messages: transcript.into_messages(), tools: None };
            if !registry.needs_oauth_refresh(&model.provider) {
                return registry.models.stream_simple(model, context, options);
            }
            let (registry, model) = (registry.clone(), model.clone());
            let start = async move {
                if let Err(e) = registry.refresh_oauth(&model.provider).await {
                    return AssistantMessageEventStream::failed(AssistantMessage {
                        api: model.api.clone(),
                        provider: model.provider.clone(),
                        model: model.id.clone(),
                        stop_reason: StopReason::Error,
                        error_message: Some(e.to_string()),
                        timestamp: pi_ai::now_ms(),
                        ..Default::default()
                    });
                }
                registry.models.stream_simple(&model, context, options)
            };
            AssistantMessageEventStream::new(futures::stream::once(start).flatten())
        })
    }
}
