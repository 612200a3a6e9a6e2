//! The model a new session starts with (pi's `createAgentSession` model selection): an explicit
//! model, else the selection the session's branch records (a virtual selection holds while its
//! extension registers it; otherwise the physical model that answered last), else a fallback.
//! Extensions are loaded first, so the models they register (`registerProvider`,
//! `registerVirtualModel`) can be chosen, as pi loads extensions before it resolves the model.

use pi_ai::{Model, ThinkingLevel};

use super::error::SdkError;
use crate::extensions::{ExtensionRunner, with_virtual_models};
use crate::session::{SessionEntry, SessionManager};

/// What a [`ModelResolver`] chose.
#[derive(Clone, Debug, Default)]
pub struct ModelChoice {
    /// The model to use whatever the session recorded (`--model`, a scoped model).
    pub model: Option<Model>,
    /// The model to use when there is no explicit one and the session records none that is
    /// available (the saved default, the first available model).
    pub fallback: Option<Model>,
    /// An explicit thinking level; without one a session with messages restores its recorded
    /// level, else the settings' default (else `medium`) applies.
    pub thinking_level: Option<ThinkingLevel>,
}

/// Chooses the model once the extensions are loaded; it gets the models extensions registered
/// (their providers' models and the virtual models).
pub type ModelResolver = Box<dyn FnOnce(&ExtensionModels) -> Result<ModelChoice, SdkError> + Send>;

/// The models extensions registered, all of them and the available ones.
#[derive(Clone, Debug, Default)]
pub struct ExtensionModels {
    /// Every model (known: `--model` can name one, a registered one hides a built-in one).
    pub all: Vec<Model>,
    /// The models of providers with configured auth, and the virtual models of other providers
    /// (pi lists only these: `--list-models`, `/model`, fallbacks, restore).
    pub available: Vec<Model>,
}

impl ExtensionModels {
    /// The models `runner`'s extensions registered.
    pub fn of(runner: &ExtensionRunner) -> Self {
        let providers = runner.registered_providers();
        let available = runner.available_registered_providers();
        let unavailable: Vec<&str> =
            providers.iter().filter(|p| !available.iter().any(|a| a.name == p.name)).map(|p| p.name.as_str()).collect();
        let all = extension_models(runner);
        let available = all.iter().filter(|m| !unavailable.contains(&m.provider.as_str())).cloned().collect();
        ExtensionModels { all, available }
    }
}

/// The models extensions registered: the models of their providers, then the virtual models
/// (each hides a physical model with its provider and id).
pub fn extension_models(runner: &ExtensionRunner) -> Vec<Model> {
    let mut models: Vec<Model> = Vec::new();
    for provider in runner.registered_providers() {
        models.extend(provider.model_values().into_iter().filter_map(|m| serde_json::from_value(m).ok()));
    }
    with_virtual_models(models, &runner.virtual_models())
}

/// [`extension_models`] of providers with configured auth (pi's `getAvailable()` share of them).
pub fn available_extension_models(runner: &ExtensionRunner) -> Vec<Model> {
    ExtensionModels::of(runner).available
}

/// The restored selection and pi's fallback message (`Could not restore model p/m. Using p2/m2`).
pub(crate) struct Restored {
    /// The model, if any.
    pub(crate) model: Option<Model>,
    /// Why the recorded model was not restored.
    pub(crate) fallback_message: Option<String>,
}

/// pi's model restore: a session with messages gets the selection its branch records when that
/// model is `available`; otherwise the fallback, with pi's message.
pub(crate) fn restore_model(
    sm: &SessionManager,
    known: &[Model],
    available: impl Fn(&Model) -> bool,
    fallback: Option<Model>,
) -> Restored {
    let has_messages = sm.has_context_messages();
    let branch = sm.get_branch(None);
    let lookup = |p: &str, id: &str| known.iter().find(|m| m.provider == p && m.id == id).cloned();
    let selection = has_messages.then(|| super::session::branch_selection(&branch, lookup)).flatten();
    let Some((provider, id)) = selection else { return Restored { model: fallback, fallback_message: None } };
    if let Some(model) = lookup(&provider, &id).filter(|m| available(m)) {
        return Restored { model: Some(model), fallback_message: None };
    }
    let fallback_message =
        fallback.as_ref().map(|m| format!("Could not restore model {provider}/{id}. Using {}/{}", m.provider, m.id));
    Restored { model: fallback, fallback_message }
}

/// The thinking level of a new session (pi's `createAgentSession`): the explicit one, else for a
/// session with messages its recorded level (when it recorded one), else the settings' default,
/// else `medium`; clamped to the model.
pub(crate) fn initial_thinking_level(
    sm: &SessionManager,
    model: &Model,
    explicit: Option<ThinkingLevel>,
    default: Option<ThinkingLevel>,
) -> ThinkingLevel {
    let recorded = || {
        // Read from the branch in place (a large session's messages are not cloned for it).
        // A session without messages has no recorded level.
        if !sm.has_context_messages() {
            return None;
        }
        let recorded = sm.get_branch(None).iter().any(|e| matches!(e, SessionEntry::ThinkingLevelChange(_)));
        if recorded { ThinkingLevel::parse(&sm.context_settings().0) } else { default }
    };
    let level = explicit.or_else(recorded).or(default).unwrap_or(ThinkingLevel::Medium);
    pi_ai::models::clamp_thinking_level(model, level)
}
