//! `ctx.modelRegistry` (pi's `ModelRegistry` as extensions see it): the models the session
//! knows, those it can use, and lookups. Before the session is bound it knows none.

use pi_ai::Model;

use super::runtime::ExtensionContext;

/// What `ctx.modelRegistry` answers (read when called, so models registered meanwhile count).
#[derive(Clone)]
pub struct ExtensionModelRegistry {
    ctx: ExtensionContext,
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
}

impl ExtensionContext {
    /// pi's `ctx.modelRegistry`.
    pub fn model_registry(&self) -> ExtensionModelRegistry {
        ExtensionModelRegistry { ctx: self.clone() }
    }
}
