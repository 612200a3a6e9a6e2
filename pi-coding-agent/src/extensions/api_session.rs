//! The members of pi's `ExtensionAPI` that read or change the session's model, thinking level,
//! settings and commands, register model providers, and reach the shared event bus.

use serde_json::Value;

use super::actions::SlashCommandInfo;
use super::api::ExtensionApi;
use super::bus::EventBus;
use super::errors::ExtensionApiError;
use super::registrations::RegisteredProvider;
use super::runtime::lock;

impl ExtensionApi {
    /// pi's `getThinkingLevel()` (`"off"` before the runner is bound, as pi's unbound default).
    pub fn get_thinking_level(&self) -> Result<String, ExtensionApiError> {
        self.act(|a| Ok(a.get_thinking_level().unwrap_or_else(|| "off".to_owned())))
    }

    /// pi's `setThinkingLevel(level)`: `off`, `minimal`, `low`, `medium`, `high` or `xhigh`
    /// (clamped to the model by the session).
    pub fn set_thinking_level(&self, level: &str) -> Result<(), ExtensionApiError> {
        self.act(|a| a.set_thinking_level(level))
    }

    /// pi's `getSettings()`: a copy of the effective settings (global and project merged).
    pub fn get_settings(&self) -> Result<Value, ExtensionApiError> {
        self.act(|a| Ok(a.get_settings()))
    }

    /// pi's `getCommands()`: extension commands (by invocation name), prompt templates, skills.
    pub fn get_commands(&self) -> Result<Vec<SlashCommandInfo>, ExtensionApiError> {
        self.act(|a| Ok(a.get_commands()))
    }

    /// pi's `setModel(model)`: switches to `provider`/`id`; `false` when the model is unknown or
    /// its provider has no credentials.
    pub async fn set_model(&self, provider: &str, id: &str) -> Result<bool, ExtensionApiError> {
        let future = self.act(|a| Ok(a.set_model(provider, id)))?;
        future.await.map_err(|e| ExtensionApiError::Action(e.to_string()))
    }

    /// pi's `registerProvider(name, config)`: registers a model provider (the `models.json`
    /// provider shape), merged over a previous registration of `name`; its models become
    /// available to `setModel` at once. pi's checks apply (see `provider_validation`): once the
    /// runner is bound a rejected registration is this error; while loading, as pi queues
    /// registrations, it is reported by [`ExtensionRunner::provider_errors`](super::ExtensionRunner::provider_errors).
    pub fn register_provider(&self, name: &str, config: Value) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        if name.is_empty() {
            return Err(ExtensionApiError::Invalid("Provider name is required".to_owned()));
        }
        if !config.is_object() {
            return Err(ExtensionApiError::Invalid("Provider config is required when registering by name".to_owned()));
        }
        super::provider_validation::register_provider(&self.runtime, name, config, &self.record.path)
            .map_err(ExtensionApiError::Invalid)
    }

    /// pi's `unregisterProvider(name)`: removes a provider registered by any extension.
    pub fn unregister_provider(&self, name: &str) {
        lock(&self.runtime.providers).retain(|p| p.name != name);
    }

    /// Adds a provider's login to `/login` (pi's `registerProvider` with `auth.apiKey.login` or
    /// `auth.oauth`); a later one with the same provider id replaces it.
    pub fn register_login_provider(&self, provider: std::sync::Arc<dyn crate::auth::LoginProvider>) {
        self.runtime.login_providers.register(provider);
    }

    /// The event bus every extension of the session shares (pi's `pi.events`).
    pub fn events(&self) -> EventBus {
        EventBus {
            state: self.runtime.bus.clone(),
            report: self.runtime.error_sink(),
            extension_path: self.record.path.clone(),
        }
    }
}

impl super::runner::ExtensionRunner {
    /// The model providers extensions registered, in registration order.
    pub fn registered_providers(&self) -> Vec<RegisteredProvider> {
        let providers = lock(&self.runtime.providers).clone();
        providers.into_iter().map(|p| super::node::provider_models::with_live_models(&self.runtime, p)).collect()
    }

    /// Provider registrations rejected while the extensions loaded, with pi's message (pi
    /// reports each as `Extension "<path>" error: <message>`; the extension still loads).
    pub fn provider_errors(&self) -> Vec<super::errors::ExtensionLoadError> {
        lock(&self.runtime.provider_errors).clone()
    }

    /// The providers extensions registered that have configured auth (see
    /// [`has_configured_auth`](super::has_configured_auth)), with the session's agent dir.
    pub fn available_registered_providers(&self) -> Vec<RegisteredProvider> {
        let agent_dir = super::node::request_auth::agent_dir(&self.runtime);
        self.registered_providers()
            .into_iter()
            .filter(|p| super::provider_availability::has_configured_auth(p, &agent_dir))
            .collect()
    }

    /// The logins extensions registered, for `/login` (shared: later registrations show up).
    pub fn login_providers(&self) -> crate::auth::LoginRegistry {
        self.runtime.login_providers.clone()
    }
}

impl ExtensionApi {
    /// pi's `registerMarkdownTransformer(transformer, {messageTypes?})`: replaces this
    /// extension's transformer; `message_types` defaults to [`DEFAULT_MARKDOWN_MESSAGE_TYPES`](super::markdown::DEFAULT_MARKDOWN_MESSAGE_TYPES).
    pub fn register_markdown_transformer(
        &self,
        transformer: impl Fn(&str, &super::markdown::MarkdownTransformContext) -> Option<String> + Send + Sync + 'static,
        message_types: Option<&[&str]>,
    ) -> Result<(), ExtensionApiError> {
        self.assert_active()?;
        let types = message_types.unwrap_or(super::markdown::DEFAULT_MARKDOWN_MESSAGE_TYPES);
        *lock(&self.record.markdown_transformer) = Some(super::markdown::MarkdownTransformerRegistration {
            transformer: std::sync::Arc::new(transformer),
            message_types: types.iter().map(|t| (*t).to_owned()).collect(),
        });
        Ok(())
    }
}
