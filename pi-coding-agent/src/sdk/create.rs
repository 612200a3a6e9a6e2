//! [`create_agent_session`]: options in, a ready [`AgentSession`] out (pi's `createAgentSession`).

use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::{Agent, AgentTool, StreamFn};
use pi_ai::options::StreamOptions;
use pi_ai::{Model, ThinkingLevel};

use super::error::SdkError;
use super::extension_bridge;
use super::model_choice::{ExtensionModels, ModelChoice, ModelResolver, initial_thinking_level, restore_model};
use super::model_registry::ModelRegistry;
use super::resources::DefaultResourceLoader;
use super::session::{self, AgentSession, SessionSettings, ShellSettings};
use super::system_prompt::SystemPromptOptions;
use super::tool_selection::{NoTools, ToolSelection};
use crate::extensions::subprocess::SubprocessExtension;
use crate::extensions::{Extension, ExtensionRunner};
use crate::messages::CodingMessage;
use crate::session::{SessionManager, get_agent_dir};
use crate::settings::{Settings, SettingsManager};

/// Options of [`create_agent_session`] (pi's `CreateAgentSessionOptions`).
#[derive(Default)]
pub struct CreateAgentSessionOptions {
    /// Working directory (default: the session manager's, else the process cwd).
    pub cwd: Option<PathBuf>,
    /// Agent directory (default: [`get_agent_dir`]).
    pub agent_dir: Option<PathBuf>,
    /// The model (default: the settings' `defaultProvider`/`defaultModel` when it has
    /// credentials, else the first model of the agent dir's registry that has them).
    pub model: Option<Model>,
    /// Thinking level (default: the settings' `defaultThinkingLevel`, else off).
    pub thinking_level: Option<ThinkingLevel>,
    /// pi's `tools`: plain names and `*` patterns (an allowlist, extension tools included), or
    /// only `+name` / `-name` entries changing the default selection (default: the settings'
    /// `defaultTools`, else read, bash, edit, write).
    pub tools: Option<Vec<String>>,
    /// pi's `noTools`.
    pub no_tools: Option<NoTools>,
    /// pi's `excludeTools`: names and `*` patterns removed from every source.
    pub exclude_tools: Option<Vec<String>>,
    /// Extra tools, active from the start.
    pub custom_tools: Vec<Arc<dyn AgentTool>>,
    /// Resources (default: a `DefaultResourceLoader` for cwd and agent dir, reloaded here).
    pub resource_loader: Option<DefaultResourceLoader>,
    /// The session (default: a new persisted session for the cwd, in the settings' `sessionDir`
    /// when set).
    pub session_manager: Option<SessionManager>,
    /// How requests are streamed (default: the agent dir's [`ModelRegistry`]: models.json and
    /// the environment's keys).
    pub stream_fn: Option<StreamFn>,
    /// Base stream options (API key, session id, retries, …).
    pub stream_options: StreamOptions,
    /// In-process extensions (pi's `extensionFactories`), loaded in order.
    pub extensions: Vec<Arc<dyn Extension>>,
    /// The models with configured auth a switched or forked session may restore (pi's
    /// `modelRuntime` with `hasConfiguredAuth`). Empty: the built-in catalog's models whose
    /// provider has an API key in the environment. The session's own model always counts.
    pub models: Vec<Model>,
    /// The settings (pi's `settingsManager`; default: `SettingsManager::create(cwd, agent_dir)`,
    /// the agent dir's and the project's `settings.json`; SDK users who want no files pass
    /// [`SettingsManager::in_memory`]).
    pub settings_manager: Option<Arc<SettingsManager>>,
    /// Automatic compaction and retry, overriding the settings manager's (default: as it says,
    /// with pi's defaults — both on — where it is silent; [`SessionSettings::default`] is the
    /// same as no settings, [`SessionSettings::manual`] turns both off).
    pub settings: Option<SessionSettings>,
    /// The shell of user `!cmd`s and the bash tool, overriding the settings manager's.
    pub shell: Option<ShellSettings>,
    /// Chooses the model once extensions are loaded (instead of `model` and `thinking_level`),
    /// so models extensions register can be chosen (the CLI's `--model`, `--models`).
    pub model_resolver: Option<ModelResolver>,
}

/// What [`create_agent_session`] returns.
pub struct CreateAgentSessionResult {
    /// The session.
    pub session: AgentSession,
}

/// A stream function over pi-ai's built-in catalog and HTTP providers (no models.json; keys from
/// the environment). [`ModelRegistry::stream_fn`] is the one with an agent dir's models.
pub fn default_stream_fn() -> StreamFn {
    let mut models = pi_ai::registry::Models::from_catalog();
    for api in pi_ai::providers::http_apis() {
        models.register_api(api);
    }
    let models = Arc::new(models);
    Arc::new(move |model: &Model, transcript, options| {
        let context = pi_ai::Context { system_prompt: None, messages: transcript.into_messages(), tools: None };
        models.stream_simple(model, context, options)
    })
}

/// pi's `findInitialModel` without a scope: the saved default when its provider has
/// credentials, else the first provider's default model with credentials, else the first
/// available model.
pub(crate) fn initial_model(registry: &ModelRegistry, settings: &Settings) -> Option<Model> {
    let saved = settings
        .default_provider()
        .zip(settings.default_model())
        .and_then(|(p, m)| registry.find(p, m))
        .filter(|m| registry.has_auth(&m.provider));
    saved.or_else(|| super::default_models::initial_available_model(&registry.available_models()).cloned())
}

/// The tools of a new session: the registry (built-in, SDK, extension; filtered by the
/// selection) and the names active at start.
fn select_tools(
    mut all_tools: Vec<Arc<dyn AgentTool>>,
    custom: Vec<Arc<dyn AgentTool>>,
    runner: Option<&ExtensionRunner>,
    selection: &ToolSelection,
) -> (Vec<Arc<dyn AgentTool>>, Vec<String>) {
    let mut added: Vec<String> = Vec::new();
    let extension_tools = runner.map(|r| r.registered_tools()).unwrap_or_default();
    let extra = extension_tools.into_iter().map(|t| t.definition.tool.clone()).chain(custom);
    for tool in extra {
        all_tools.retain(|t| t.name() != tool.name());
        added.retain(|n| n != tool.name());
        added.push(tool.name().to_owned());
        all_tools.push(tool);
    }
    all_tools.retain(|t| selection.is_allowed(t.name()));
    let registered: Vec<String> = all_tools.iter().map(|t| t.name().to_owned()).collect();
    let active = selection.initial_active(&registered, &added);
    (all_tools, active)
}

/// The built-in tools' options: the bash tool follows the shell settings.
fn tool_options(shell: &ShellSettings) -> crate::tools::ToolsOptions {
    crate::tools::ToolsOptions {
        bash: crate::tools::BashToolOptions {
            command_prefix: shell.command_prefix.clone(),
            shell_path: shell.shell_path.clone(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The system prompt's options from the loaded resources.
fn prompt_options(cwd: &str, resources: &super::resources::LoadedResources) -> SystemPromptOptions {
    let mut options = SystemPromptOptions::with_builtin_tools(cwd.to_owned());
    options.custom_prompt = resources.system_prompt.clone();
    options.append_system_prompt = resources.append_system_prompt.clone().unwrap_or_default();
    options.context_files = resources.context_files.clone();
    options.skills = resources.skills.clone();
    options
}

/// Loads the extensions: runtime-loaded ones (JSON-RPC over stdio) first, as pi loads `-e` paths
/// first, then the in-process ones.
async fn load_extensions(
    loader: &DefaultResourceLoader,
    resources: &super::resources::LoadedResources,
    in_process: Vec<Arc<dyn Extension>>,
    cwd: &str,
) -> Option<Arc<ExtensionRunner>> {
    let mut extensions: Vec<Arc<dyn Extension>> = Vec::new();
    // Explicit paths load even with `no_extensions` (pi: "explicit -e paths still work"); the
    // package resolver already applied `no_extensions` and project trust to `extension_paths`.
    let paths = crate::extensions::discovery::extension_load_order(
        std::path::Path::new(cwd),
        &loader.additional_extension_paths,
        &resources.extension_paths,
    );
    for path in paths {
        extensions.push(Arc::new(SubprocessExtension::new(path.display().to_string())));
    }
    if !loader.no_extensions {
        extensions.extend(in_process);
    }
    if extensions.is_empty() {
        return None;
    }
    // Load errors stay on the runner (`load_errors`), where the caller reports them.
    Some(Arc::new(ExtensionRunner::load_in(extensions, cwd.to_owned(), Some(loader.agent_dir.clone())).await))
}

/// Loads the extensions a reloaded `loader` names (its `-e` paths and discovered ones), without a
/// session: what they register while loading (providers, virtual models, flags) can be read, as
/// `pi --list-models` does. Their load errors stay on the runner.
pub async fn load_extension_runner(
    loader: &DefaultResourceLoader,
    cwd: &std::path::Path,
) -> Result<Option<Arc<ExtensionRunner>>, SdkError> {
    let resources = loader.resources()?.clone();
    Ok(load_extensions(loader, &resources, Vec::new(), &cwd.display().to_string()).await)
}

/// Builds an [`AgentSession`]: model, tools, resources, session and the coding agent's hooks.
pub async fn create_agent_session(options: CreateAgentSessionOptions) -> Result<CreateAgentSessionResult, SdkError> {
    let agent_dir = options.agent_dir.clone().unwrap_or_else(get_agent_dir);
    let process_cwd = || options.cwd.clone().unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
    let settings_cwd = options.session_manager.as_ref().map(|sm| PathBuf::from(sm.cwd())).unwrap_or_else(process_cwd);
    let settings_cwd = options.cwd.clone().unwrap_or(settings_cwd);
    let settings_manager =
        options.settings_manager.unwrap_or_else(|| Arc::new(SettingsManager::create(&settings_cwd, &agent_dir)));
    let settings = settings_manager.settings();
    let session_manager = match options.session_manager {
        Some(sm) => sm,
        None => {
            let dir = settings.session_dir().map(|d| crate::session::resolve_path(settings_cwd.join(d)));
            SessionManager::create(&settings_cwd, dir.as_deref(), Default::default())?
        }
    };
    let cwd = options.cwd.clone().map(|p| p.display().to_string()).unwrap_or_else(|| session_manager.cwd().to_owned());
    let loader = match options.resource_loader {
        Some(loader) => loader,
        None => {
            let mut loader = DefaultResourceLoader::new(&cwd, &agent_dir);
            loader.reload().await?;
            loader
        }
    };
    let resources = loader.resources()?.clone();
    // Extensions load before the model is chosen: the models they register can be chosen.
    let runner = load_extensions(&loader, &resources, options.extensions, &cwd).await;
    if let Some(runner) = &runner {
        runner.set_agent_dir(agent_dir.clone());
    }
    let extension_models = runner.as_deref().map(ExtensionModels::of).unwrap_or_default();
    let choice = match options.model_resolver {
        Some(resolve) => resolve(&extension_models)?,
        None => ModelChoice { model: options.model, fallback: None, thinking_level: options.thinking_level },
    };
    let registry = (options.stream_fn.is_none() || choice.model.is_none()).then(|| ModelRegistry::load(&agent_dir).0);
    let (model, model_fallback_message) = match choice.model {
        Some(m) => (m, None),
        None => {
            let fallback = choice.fallback.or_else(|| registry.as_ref().and_then(|r| initial_model(r, &settings)));
            let mut known = options.models.clone();
            known.extend(extension_models.all.iter().cloned());
            let known = crate::extensions::with_virtual_models(
                known,
                &runner.as_deref().map(|r| r.virtual_models()).unwrap_or_default(),
            );
            let configured = options.models.clone();
            let available = |m: &Model| {
                extension_models.available.iter().any(|e| e.provider == m.provider && e.id == m.id)
                    || configured.iter().any(|e| e.provider == m.provider && e.id == m.id)
                    || (configured.is_empty() && pi_ai::models::env_api_key(&m.provider).is_some())
            };
            let restored = restore_model(&session_manager, &known, available, fallback);
            (restored.model.ok_or(SdkError::NoModel)?, restored.fallback_message)
        }
    };
    // pi's `createAgentSession`: the option, else the level a session with messages recorded,
    // else the settings' default, else "medium" (`DEFAULT_THINKING_LEVEL`), clamped to what the
    // model supports ("off" without reasoning).
    let default_level = settings.default_thinking_level().and_then(ThinkingLevel::parse);
    let thinking_level = initial_thinking_level(&session_manager, &model, choice.thinking_level, default_level);

    // The shell settings reach both the user's `!cmd`s and the bash tool (pi's `_buildRuntime`).
    let shell = options.shell.unwrap_or_else(|| ShellSettings::from_settings(&settings));
    let selection = ToolSelection::resolve(
        options.tools.as_deref(),
        options.no_tools,
        options.exclude_tools.as_deref(),
        settings.default_tools(),
    )
    .map_err(SdkError::Failed)?;
    let builtin = crate::tools::all_tools(&cwd, &tool_options(&shell));
    let (all_tools, active) = select_tools(builtin, options.custom_tools, runner.as_deref(), &selection);

    let mut prompt_options = prompt_options(&cwd, &resources);
    // Extension tools' one-line snippets reach the system prompt's tool list.
    for registered in runner.as_deref().map(|r| r.registered_tools()).unwrap_or_default() {
        if let Some(snippet) = &registered.definition.prompt_snippet {
            prompt_options.tool_snippets.push((registered.definition.tool.name().to_owned(), snippet.clone()));
        }
        // And their guideline bullets, while the tool is active (pi's `promptGuidelines`).
        if let Some(guidelines) = &registered.definition.prompt_guidelines {
            prompt_options.tool_guidelines.push((registered.definition.tool.name().to_owned(), guidelines.clone()));
        }
    }

    let is_new = session_manager.entries().is_empty();
    let stream_fn = match (options.stream_fn, &registry) {
        (Some(f), _) => f,
        (None, Some(r)) => r.stream_fn(),
        (None, None) => default_stream_fn(),
    };
    let stream_fn = match &runner {
        Some(runner) => super::registered_providers::with_registered_providers(runner.clone(), stream_fn),
        None => stream_fn,
    };
    // pi hands the agent the session id, which providers use as their cache key (openai-responses
    // sends it as `prompt_cache_key`).
    let mut stream_options = options.stream_options;
    if stream_options.session_id.is_none() {
        stream_options.session_id = Some(session_manager.session_id().to_owned());
    }
    if let Some(runner) = &runner {
        stream_options.on_payload = Some(extension_bridge::payload_hook(runner.clone()));
        // Without a `before_provider_request` handler the body is sent as built, never parsed back.
        let handlers = runner.clone();
        stream_options.on_payload_wanted = Some(Arc::new(move || handlers.has_handlers("before_provider_request")));
        // `before_provider_headers`, `after_provider_response`, `provider_stream_event`.
        stream_options.request_observer =
            Some(Arc::new(crate::extensions::ExtensionRequestObserver::new(runner.clone())));
    }
    let retry_after = session::RetryAfter::default();
    stream_options.on_error_response = Some(retry_after.hook(stream_options.on_error_response.take()));
    let shared = Arc::new(session::SessionShared::new(session::SharedParts {
        session_manager,
        all_tools,
        prompt_options,
        runner: runner.clone(),
        stream_fn: stream_fn.clone(),
        stream_options: stream_options.clone(),
        models: options.models,
        settings: options.settings.unwrap_or_else(|| SessionSettings::from_settings(&settings)),
        settings_manager,
        shell,
        retry_after,
    }));
    *shared.prompt_templates.lock().unwrap_or_else(|e| e.into_inner()) = resources.prompt_templates.clone();
    // The agent's requests (not summaries) are kept for `AgentSession::last_request`.
    let captured = shared.last_request.clone();
    let warming = Arc::downgrade(&shared);
    session::cache_warming::bind_warmer(&shared);
    let agent_stream_fn: StreamFn =
        Arc::new(move |m: &Model, context: pi_ai::transcript::TranscriptContext, o: StreamOptions| {
            *captured.lock().unwrap_or_else(|e| e.into_inner()) = Some(context.clone());
            if let Some(shared) = warming.upgrade() {
                session::cache_warming::start_for_request(&shared, m, &context, &o);
            }
            stream_fn(m, context, o)
        });
    let mut builder = Agent::builder(model.clone(), agent_stream_fn)
        .thinking_level(thinking_level)
        .steering_mode(settings.steering_mode())
        .follow_up_mode(settings.follow_up_mode())
        .convert_to_llm(crate::messages::CodingConvertToLlm)
        .turn_hooks(AgentSession::context_hook(&shared))
        .stream_options(stream_options);
    if let Some(runner) = &runner {
        let session = Arc::downgrade(&shared);
        let hooks = Arc::new(extension_bridge::ExtensionHooks { runner: runner.clone(), session: session.clone() });
        builder = builder
            .transform_context(extension_bridge::ExtensionHooks { runner: runner.clone(), session })
            .tool_hooks(hooks);
    }
    let agent: Agent<CodingMessage> = builder.build();
    let _ = shared.agent.set(agent.downgrade());
    *session::lock(&shared.model_fallback_message) = model_fallback_message;
    let session = AgentSession::new(agent, shared, cwd);
    if is_new {
        session.with_session_manager(|sm| {
            // The placeholder of a terminal start without credentials is no model to record.
            if !super::default_models::is_unknown_model(&model) {
                sm.append_model_change(&model.provider, &model.id)?;
            }
            sm.append_thinking_level_change(thinking_level.as_str())
        })?;
    }
    session.refresh_context();
    session.agent.set_tools(session.shared.declare_tools(&active));
    Ok(CreateAgentSessionResult { session })
}
