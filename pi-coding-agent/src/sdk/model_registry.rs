//! The models a session can use and how their requests are authenticated: pi-ai's built-in
//! catalog with `<agentDir>/models.json` applied, pi-ai's HTTP APIs registered, and credentials
//! from one pluggable [`CredentialSource`], asked at request time. By default that is
//! [`crate::auth::ModelRegistry`]: `auth.json` (with OAuth refresh), models.json keys and pi's
//! environment variables, in pi's order, with each provider's auth headers.
//!
//! A request's key is, in order: the request's own `api_key` (`--api-key`), the credential
//! source's, the provider's `apiKey` in models.json.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use pi_agent_core::StreamFn;
use pi_ai::models::{ModelsConfig, ProviderConfig, env_api_key, resolve_config_value};

use crate::auth::RegistryError;
use pi_ai::registry::{Models, ProviderAuth, ProviderEntry};
use pi_ai::{Context, Model};

/// Where provider credentials come from (pi's `AuthStorage` role). Asked before every request,
/// so a source may refresh or reload what it holds.
pub trait CredentialSource: Send + Sync {
    /// The API key (or token) for `provider`, if this source has one.
    fn api_key(&self, provider: &str) -> Option<String>;

    /// Whether this source can authenticate `provider` (default: it has a key).
    fn has_auth(&self, provider: &str) -> bool {
        self.api_key(provider).is_some()
    }
}

/// pi's environment variables (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, …).
#[derive(Clone, Copy, Debug, Default)]
pub struct EnvCredentials;

impl CredentialSource for EnvCredentials {
    fn api_key(&self, provider: &str) -> Option<String> {
        env_api_key(provider)
    }
}

/// The agent dir's stored credentials (`auth.json`, models.json keys, environment), as pi's
/// `AuthStorage` + `ModelRegistry` resolve them.
#[derive(Clone, Debug)]
pub struct StoredCredentials(pub crate::auth::ModelRegistry);

impl CredentialSource for StoredCredentials {
    fn api_key(&self, provider: &str) -> Option<String> {
        self.0.api_key(provider).ok().flatten()
    }

    fn has_auth(&self, provider: &str) -> bool {
        self.0.has_configured_auth(provider)
    }
}

/// Models, their credentials and the stream function over them.
#[derive(Clone)]
pub struct ModelRegistry {
    /// Providers with models, APIs registered.
    pub models: Models,
    /// `apiKey`s of models.json providers.
    keys: HashMap<String, String>,
    /// The models.json entries applied (their headers go with every request).
    configs: Arc<HashMap<String, ProviderConfig>>,
    credentials: Arc<dyn CredentialSource>,
    /// Set when the credentials are the agent dir's stored ones: requests then go through it
    /// (auth headers, OAuth refresh).
    stored: Option<crate::auth::ModelRegistry>,
}

impl fmt::Debug for ModelRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelRegistry").field("models", &self.models).finish_non_exhaustive()
    }
}

impl ModelRegistry {
    /// Loads the catalog and `<agent_dir>/models.json` (a missing file is fine) with the agent
    /// dir's stored credentials ([`StoredCredentials`]: auth.json, models.json keys, environment).
    /// A broken models.json is returned as the error beside a registry of the built-in catalog
    /// only; entries that cannot be composed, beside a registry without them.
    pub fn load(agent_dir: &Path) -> (Self, Option<RegistryError>) {
        let stored = crate::auth::ModelRegistry::load(agent_dir);
        let (mut registry, error) = Self::load_with(agent_dir, Arc::new(StoredCredentials(stored.clone())));
        registry.stored = Some(stored);
        (registry, error)
    }

    /// [`ModelRegistry::load`] with another credential source.
    pub fn load_with(agent_dir: &Path, credentials: Arc<dyn CredentialSource>) -> (Self, Option<RegistryError>) {
        let mut catalog = pi_ai::models::builtin_catalog_owned();
        let mut keys = HashMap::new();
        let mut configs = HashMap::new();
        let error = match ModelsConfig::load(agent_dir.join("models.json")) {
            Ok(config) => {
                let failed = config.apply(&mut catalog).err();
                for (id, provider) in &config.providers {
                    if failed.as_ref().is_some_and(|f| f.contains(id)) {
                        continue;
                    }
                    if let Some(key) = provider.api_key.as_deref().and_then(resolve_config_value) {
                        keys.insert(id.clone(), key);
                    }
                    configs.insert(id.clone(), provider.clone());
                }
                failed.map(RegistryError::from)
            }
            Err(e) => Some(RegistryError::from(e)),
        };
        let mut models = Models::new();
        for api in pi_ai::providers::http_apis() {
            models.register_api(api);
        }
        for (id, list) in catalog {
            let auth = match keys.get(&id) {
                Some(k) => ProviderAuth::Key(k.clone()),
                None => ProviderAuth::EnvKey,
            };
            models.set_provider(ProviderEntry { id, models: list, auth, apis: HashMap::new() });
        }
        (ModelRegistry { models, keys, configs: Arc::new(configs), credentials, stored: None }, error)
    }

    /// The credential source.
    pub fn credentials(&self) -> &Arc<dyn CredentialSource> {
        &self.credentials
    }

    /// Whether a provider has credentials (the source's or a models.json key).
    pub fn has_auth(&self, provider: &str) -> bool {
        self.keys.contains_key(provider) || self.credentials.has_auth(provider)
    }

    /// Every model, in catalog order.
    pub fn all_models(&self) -> Vec<Model> {
        self.models.get_models(None).into_iter().cloned().collect()
    }

    /// The models whose provider has credentials.
    pub fn available_models(&self) -> Vec<&Model> {
        crate::auth::with_provider_auth(&self.models, |p| self.has_auth(p))
    }

    /// A model by provider and id.
    pub fn find(&self, provider: &str, id: &str) -> Option<Model> {
        self.models.get_model(provider, id).cloned()
    }

    /// A stream function dispatching through this registry; a request without its own key gets
    /// the credential source's for the model's provider.
    pub fn stream_fn(&self) -> StreamFn {
        if let Some(stored) = &self.stored {
            return stored.stream_fn();
        }
        let models = Arc::new(self.models.clone());
        let credentials = self.credentials.clone();
        let (configs, keys) = (self.configs.clone(), Arc::new(self.keys.clone()));
        Arc::new(move |model: &Model, transcript, mut options| {
            if options.api_key.is_none() {
                options.api_key = credentials.api_key(&model.provider);
            }
            let config = configs.get(&model.provider);
            let fallback = keys.get(&model.provider).map(String::as_str);
            let options = match crate::auth::with_configured_request(config, fallback, model, options) {
                Ok(options) => options,
                Err(message) => return crate::auth::failed_request(model, message),
            };
            let context = Context { system_prompt: None, messages: transcript.into_messages(), tools: None };
            models.stream_simple(model, context, options)
        })
    }
}
