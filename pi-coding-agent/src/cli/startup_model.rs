//! The model `pi` starts with (pi's `buildSessionOptions` after `createAgentSessionServices`):
//! chosen once the extensions are loaded, so `--model`, `--models` (and `enabledModels`) and the
//! saved default resolve models registered by extensions (`registerProvider`,
//! `registerVirtualModel`) as well as the catalog's. A session with messages restores its
//! recorded selection unless `--model` is given (the SDK's [`ModelChoice::fallback`]).

use pi_ai::{Model, ThinkingLevel};

use super::model_resolver::{CliModelRequest, resolve_cli_model};
use super::model_scope::{ModelScope, resolve_model_scope};
use super::registry::CliRegistry;
use super::{no_api_key_message, no_models_message};
use crate::sdk::PromptAuthCheck;
use crate::sdk::default_models::{initial_available_model, is_unknown_model, unknown_model};
use crate::sdk::model_choice::ModelChoice;

/// What the choice needs besides the extensions' models.
pub struct StartupModelInputs {
    /// The catalog, models.json and credentials.
    pub registry: CliRegistry,
    /// `--provider`.
    pub provider: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--thinking`.
    pub thinking: Option<String>,
    /// Whether `--api-key` was given.
    pub inline_api_key: bool,
    /// `--models`, else the `enabledModels` setting.
    pub patterns: Option<Vec<String>>,
    /// The saved `defaultProvider` / `defaultModel`.
    pub saved: Option<(String, String)>,
    /// Models of a built-in provider known before its extension registers it (llama.cpp's
    /// stored catalog): selectable, their provider counts as authenticated.
    pub local_models: Vec<Model>,
    /// The local provider's id and whether it has credentials for a request.
    pub local_provider: (String, bool),
    /// Whether the session already has messages (the scope does not choose then).
    pub has_existing_session: bool,
    /// Whether the interactive screen opens (it starts without a model, to `/login`).
    pub opens_interactive: bool,
}

/// The outcome: the choice for the SDK, the scope, what the user is warned about.
#[derive(Clone, Debug, Default)]
pub struct StartupModel {
    /// For [`crate::sdk::CreateAgentSessionOptions::model_resolver`].
    pub choice: ModelChoice,
    /// The models with credentials, extension models included (`/model`, RPC's model list).
    pub available: Vec<Model>,
    /// The `--models` scope.
    pub scope: ModelScope,
    /// Lines printed as `Warning: <line>` (scope and `--model` warnings).
    pub warnings: Vec<String>,
    /// The interactive screen's warning when no model is available.
    pub startup_warnings: Vec<String>,
}

/// Why pi stops before the session starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartupStop {
    /// `Error: <message>`, exit 1.
    Fail(String),
}

fn same(a: &Model, b: &Model) -> bool {
    a.provider == b.provider && a.id == b.id
}

/// The check every prompt passes before it reaches the model, in every mode (pi's preflight, see
/// [`PromptAuthCheck`]): the placeholder model fails with `No API key found for the selected
/// model.`, a model whose provider has no configured credentials with `No API key found for
/// <provider>.` (each with pi's login guidance), unless `--api-key` gave one or the local
/// provider (`local_provider`: its id and whether it has credentials) is ready.
pub fn prompt_auth_check(
    registry: CliRegistry,
    inline_api_key: bool,
    local_provider: (String, bool),
) -> PromptAuthCheck {
    std::sync::Arc::new(move |model: &Model| {
        if is_unknown_model(model) {
            return Some(no_api_key_message(None));
        }
        let local_ready = local_provider.1 && model.provider == local_provider.0;
        let authed = inline_api_key || local_ready || registry.has_auth(&model.provider);
        (!authed).then(|| no_api_key_message(Some(&model.provider)))
    })
}

/// Chooses the startup model from the catalog and `extension_models`.
pub fn choose_startup_model(
    inputs: &StartupModelInputs,
    extension: &crate::sdk::model_choice::ExtensionModels,
) -> Result<StartupModel, StartupStop> {
    let registry = &inputs.registry;
    let extension_models = extension.all.as_slice();
    // pi's `hasConfiguredAuth` of the providers extensions registered.
    let ext_provider = |p: &str| extension.available.iter().any(|m| m.provider == p);
    let local_provider = |p: &str| inputs.local_models.iter().any(|m| m.provider == p);
    let has_auth = |p: &str| registry.has_auth(p) || local_provider(p) || ext_provider(p);
    // A virtual model hides a physical model with its provider and id.
    let mut available: Vec<Model> = registry
        .available_models()
        .into_iter()
        .filter(|m| !extension_models.iter().any(|e| same(e, m)))
        .cloned()
        .collect();
    available.extend(extension.available.iter().cloned());
    let scope = match &inputs.patterns {
        Some(p) if !p.is_empty() => resolve_model_scope(p, &available),
        _ => ModelScope::default(),
    };
    let mut out = StartupModel { scope, ..Default::default() };
    out.warnings.extend(out.scope.warnings.iter().cloned());
    let mut thinking = inputs.thinking.clone();
    let mut explicit = None;
    let mut fallback = None;
    if let Some(pattern) = &inputs.model {
        let request = CliModelRequest {
            provider: inputs.provider.as_deref(),
            model: pattern,
            thinking: inputs.thinking.as_deref(),
            inline_api_key: inputs.inline_api_key,
        };
        // Only the providers the pattern can name or match are parsed from the built-in catalog.
        let mut candidates: Vec<&Model> = super::model_candidates::cli_model_candidates(registry.models(), &request)
            .into_iter()
            .filter(|m| !extension_models.iter().any(|e| same(e, m)))
            .collect();
        candidates.extend(inputs.local_models.iter());
        candidates.extend(extension_models.iter());
        let resolved = resolve_cli_model(&request, &candidates, &has_auth).map_err(StartupStop::Fail)?;
        out.warnings.extend(resolved.warning.clone());
        thinking = thinking.or(resolved.thinking_level.clone());
        explicit = Some(resolved.model);
    } else {
        let saved = inputs.saved.as_ref().and_then(|(p, m)| {
            let find = |list: &[Model]| list.iter().find(|x| x.provider == *p && x.id == *m).cloned();
            find(extension_models)
                .or_else(|| registry.models().get_model(p, m).cloned())
                .or_else(|| find(&inputs.local_models))
        });
        if !inputs.has_existing_session
            && let Some(first) = out.scope.models.first()
        {
            let pick =
                saved.as_ref().and_then(|s| out.scope.models.iter().find(|m| same(&m.model, s))).unwrap_or(first);
            thinking = thinking.or(pick.thinking_level.clone());
            explicit = Some(pick.model.clone());
        }
        fallback = saved
            .filter(|m| has_auth(&m.provider))
            .or_else(|| initial_available_model(&available.iter().collect::<Vec<_>>()).cloned());
    }
    if explicit.is_none() && fallback.is_none() {
        // pi starts on its placeholder model and warns (on stderr, or on the interactive screen);
        // a prompt then fails with "No API key found for the selected model." while an
        // extension's command still runs ([`prompt_auth_check`]).
        if inputs.opens_interactive {
            out.startup_warnings.push(no_models_message());
        } else {
            out.warnings.push(no_models_message());
        }
        fallback = Some(unknown_model());
    }
    out.choice =
        ModelChoice { model: explicit, fallback, thinking_level: thinking.as_deref().and_then(ThinkingLevel::parse) };
    out.available = available;
    Ok(out)
}
