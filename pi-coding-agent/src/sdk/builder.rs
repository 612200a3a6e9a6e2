//! One call from an agent dir to a ready session, the way the `pi` binary builds one: settings
//! (global and project), models.json and credentials ([`ModelRegistry`] with a pluggable
//! [`CredentialSource`]), the resource loader (context files, skills, templates, `SYSTEM.md`),
//! the saved default model and thinking level, and the registry's stream function.
//!
//! ```no_run
//! # async fn demo() -> Result<(), pi_coding_agent::sdk::SdkError> {
//! use pi_coding_agent::sdk::SessionBuilder;
//! let built = SessionBuilder::new(".").build().await?; // ~/.pi/agent, as `pi` does
//! for warning in &built.warnings {
//!     eprintln!("Warning: {warning}");
//! }
//! built.session.prompt("hello").await?;
//! # Ok(()) }
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use super::create::{CreateAgentSessionOptions, create_agent_session, initial_model};
use super::error::SdkError;
use super::model_registry::{CredentialSource, ModelRegistry};
use super::session::AgentSession;
use crate::session::{SessionManager, get_agent_dir};
use crate::settings::SettingsManager;

/// Builds a session from an agent dir (see the module docs).
pub struct SessionBuilder {
    cwd: PathBuf,
    agent_dir: Option<PathBuf>,
    credentials: Option<Arc<dyn CredentialSource>>,
    model: Option<(String, String)>,
    in_memory: bool,
    options: CreateAgentSessionOptions,
}

/// What [`SessionBuilder::build`] made.
pub struct BuiltSession {
    /// The session.
    pub session: AgentSession,
    /// The models and credentials it was built with.
    pub registry: ModelRegistry,
    /// Its settings.
    pub settings_manager: Arc<SettingsManager>,
    /// What the binary prints as warnings: settings files that could not be read, a broken
    /// models.json.
    pub warnings: Vec<String>,
}

impl SessionBuilder {
    /// A builder for `cwd`, with the default agent dir ([`get_agent_dir`]) and its stored
    /// credentials (auth.json, models.json keys, pi's environment variables).
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        SessionBuilder {
            cwd: cwd.into(),
            agent_dir: None,
            credentials: None,
            model: None,
            in_memory: false,
            options: CreateAgentSessionOptions::default(),
        }
    }

    /// The agent dir (settings.json, models.json, skills, prompts, sessions).
    pub fn agent_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.agent_dir = Some(dir.into());
        self
    }

    /// Where provider credentials come from (default: the agent dir's
    /// [`StoredCredentials`](super::StoredCredentials)).
    pub fn credentials(mut self, credentials: Arc<dyn CredentialSource>) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// The model, by provider and id (default: the saved default, else the first model with
    /// credentials).
    pub fn model(mut self, provider: &str, id: &str) -> Self {
        self.model = Some((provider.to_owned(), id.to_owned()));
        self
    }

    /// Keeps the session in memory instead of a session file.
    pub fn in_memory(mut self) -> Self {
        self.in_memory = true;
        self
    }

    /// Any other option of [`create_agent_session`] (tools, extensions, settings manager, …).
    pub fn options(mut self, f: impl FnOnce(&mut CreateAgentSessionOptions)) -> Self {
        f(&mut self.options);
        self
    }

    /// Loads everything and creates the session.
    pub async fn build(self) -> Result<BuiltSession, SdkError> {
        let agent_dir = self.agent_dir.unwrap_or_else(get_agent_dir);
        let mut options = self.options;
        let mut warnings = Vec::new();
        let settings_manager =
            options.settings_manager.take().unwrap_or_else(|| Arc::new(SettingsManager::create(&self.cwd, &agent_dir)));
        warnings.extend(settings_manager.drain_errors().iter().map(ToString::to_string));
        let (registry, models_error) = match self.credentials {
            Some(credentials) => ModelRegistry::load_with(&agent_dir, credentials),
            None => ModelRegistry::load(&agent_dir),
        };
        if let Some(e) = models_error {
            warnings.push(format!("errors loading models.json:\n{e}"));
        }
        let model = match (&self.model, options.model.take()) {
            (_, Some(m)) => m,
            (Some((provider, id)), None) => registry
                .find(provider, id)
                .ok_or_else(|| SdkError::Failed(format!("Model not found: {provider}/{id}")))?,
            (None, None) => initial_model(&registry, &settings_manager.settings()).ok_or(SdkError::NoModel)?,
        };
        if self.in_memory && options.session_manager.is_none() {
            options.session_manager = Some(SessionManager::in_memory(&self.cwd));
        }
        if options.models.is_empty() {
            options.models = registry.available_models().into_iter().cloned().collect();
        }
        options.cwd.get_or_insert(self.cwd);
        options.agent_dir = Some(agent_dir);
        options.model = Some(model);
        options.stream_fn.get_or_insert_with(|| registry.stream_fn());
        options.settings_manager = Some(settings_manager.clone());
        let created = create_agent_session(options).await?;
        Ok(BuiltSession { session: created.session, registry, settings_manager, warnings })
    }
}
