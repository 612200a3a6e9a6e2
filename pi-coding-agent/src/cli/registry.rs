//! The model registry the CLI uses: the SDK's [`ModelRegistry`] over `<agentDir>/auth.json` and
//! `<agentDir>/models.json` (pi-ai's built-in catalog, models.json applied, credentials looked up
//! in pi's order: `--api-key`, auth.json, models.json `apiKey`, environment).

use std::path::Path;
use std::sync::Arc;

use pi_agent_core::StreamFn;
use pi_ai::Model;
use pi_ai::registry::Models;

use crate::auth::{ModelRegistry, RegistryError};

/// Models, their credentials and the stream function over them.
#[derive(Clone, Debug)]
pub struct CliRegistry {
    registry: ModelRegistry,
}

impl CliRegistry {
    /// Loads the catalog, `<agent_dir>/models.json` and `<agent_dir>/auth.json` (missing files
    /// are fine). A broken models.json or auth.json is returned beside the registry, which then
    /// has the built-in catalog only, or no stored credentials.
    pub fn load(agent_dir: &Path) -> (Self, Option<Arc<RegistryError>>) {
        let registry = ModelRegistry::load(agent_dir);
        let error = registry.shared_error();
        (CliRegistry { registry }, error)
    }

    /// Providers with models and auth, APIs registered (the registry's, not a copy).
    pub fn models(&self) -> &Models {
        self.registry.models()
    }

    /// The SDK registry underneath.
    pub fn registry(&self) -> &ModelRegistry {
        &self.registry
    }

    /// Whether a provider has credentials (auth.json, models.json key or environment variable).
    pub fn has_auth(&self, provider: &str) -> bool {
        self.registry.has_configured_auth(provider)
    }

    /// Every model, in catalog order (borrowed: the catalog is large).
    pub fn all_models(&self) -> Vec<&Model> {
        self.models().get_models(None)
    }

    /// The models whose provider has credentials.
    pub fn available_models(&self) -> Vec<&Model> {
        self.registry.get_available()
    }

    /// A stream function dispatching through this registry.
    pub fn stream_fn(&self) -> StreamFn {
        self.registry.stream_fn()
    }
}
