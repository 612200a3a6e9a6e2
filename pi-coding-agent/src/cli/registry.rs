//! The model registry the CLI uses: pi-ai's built-in catalog with `<agentDir>/models.json`
//! applied, pi-ai's HTTP APIs registered, and each provider's credentials (`apiKey` from
//! models.json, else pi's environment variable).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use pi_agent_core::StreamFn;
use pi_ai::models::{ModelsConfig, ModelsConfigError, env_api_key, resolve_config_value};
use pi_ai::registry::{Models, ProviderAuth, ProviderEntry};
use pi_ai::{Context, Model};

/// Models, their credentials and the stream function over them.
#[derive(Clone, Debug)]
pub struct CliRegistry {
    /// Providers with models and auth, APIs registered.
    pub models: Models,
    keys: HashMap<String, String>,
}

impl CliRegistry {
    /// Loads the catalog and `<agent_dir>/models.json` (a missing file is fine). A broken
    /// models.json is returned as the error beside a registry of the built-in catalog only.
    pub fn load(agent_dir: &Path) -> (Self, Option<ModelsConfigError>) {
        let mut catalog = pi_ai::models::builtin_catalog().clone();
        let path = agent_dir.join("models.json");
        let mut keys = HashMap::new();
        let mut error = None;
        if path.is_file() {
            match ModelsConfig::load(&path).and_then(|c| c.apply(&mut catalog).map(|()| c)) {
                Ok(config) => {
                    for (id, provider) in &config.providers {
                        if let Some(key) = provider.api_key.as_deref().and_then(resolve_config_value) {
                            keys.insert(id.clone(), key);
                        }
                    }
                }
                Err(e) => {
                    catalog = pi_ai::models::builtin_catalog().clone();
                    error = Some(e);
                }
            }
        }
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
        (CliRegistry { models, keys }, error)
    }

    /// Whether a provider has credentials (models.json key or environment variable).
    pub fn has_auth(&self, provider: &str) -> bool {
        self.keys.contains_key(provider) || env_api_key(provider).is_some()
    }

    /// Every model, in catalog order.
    pub fn all_models(&self) -> Vec<Model> {
        self.models.get_models(None).into_iter().cloned().collect()
    }

    /// The models whose provider has credentials.
    pub fn available_models(&self) -> Vec<&Model> {
        self.models.get_models(None).into_iter().filter(|m| self.has_auth(&m.provider)).collect()
    }

    /// A stream function dispatching through this registry.
    pub fn stream_fn(&self) -> StreamFn {
        let models = Arc::new(self.models.clone());
        Arc::new(move |model: &Model, transcript, options| {
            let context = Context { system_prompt: None, messages: transcript.into_messages(), tools: None };
            models.stream_simple(model, context, options)
        })
    }
}
