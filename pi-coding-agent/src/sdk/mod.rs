//! The SDK: build a complete coding agent in a few lines with [`create_agent_session`].
//!
//! Resources come from a [`DefaultResourceLoader`]: context files, `SYSTEM.md`, skills
//! ([`skills`], listed in the prompt's `skills` section) and prompt templates
//! ([`prompt_templates`]); a prompt's `/skill:name args` and `/template args` are expanded
//! ([`expand`]) unless [`PromptOptions::expand_prompt_templates`] is off.
//!
//! ```no_run
//! # async fn demo(model: pi_ai::Model) -> Result<(), pi_coding_agent::sdk::SdkError> {
//! use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
//! use pi_coding_agent::session::{SessionManager, get_agent_dir};
//!
//! let mut loader = DefaultResourceLoader::new(".", get_agent_dir());
//! loader.reload().await?; // the SDK does not reload a loader you pass in
//! let created = create_agent_session(CreateAgentSessionOptions {
//!     model: Some(model),
//!     resource_loader: Some(loader),
//!     session_manager: Some(SessionManager::in_memory(".")),
//!     ..Default::default()
//! })
//! .await?;
//! let session = created.session;
//! session.prompt("跑一下检查").await?;
//! println!("entries: {}", session.session_manager().get_branch(None).len());
//! session.dispose().await;
//! # Ok(()) }
//! ```

mod agent_wire;
pub mod diagnostics;
mod discovery;
mod error;
pub mod expand;
mod extension_bridge;
pub mod frontmatter;
pub mod prompt_templates;
pub mod resources;
mod session;
pub mod skills;
pub mod system_prompt;
pub mod wire;
mod yaml_keys;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::{Agent, AgentTool, StreamFn};
use pi_ai::options::StreamOptions;
use pi_ai::registry::Models;
use pi_ai::{Context, Model, ThinkingLevel};

pub use diagnostics::{DiagnosticKind, ResourceCollision, ResourceDiagnostic};
pub use discovery::resolve_path;
pub use error::SdkError;
pub use expand::{SkillBlock, expand_input, expand_skill_command, parse_skill_block};
pub use prompt_templates::{PromptTemplate, expand_prompt_template, parse_command_args, substitute_args};
pub use resources::{DefaultResourceLoader, LoadedResources, ResourceError};
pub use session::{
    AgentSession, BashResult, CompactOutcome, CompactionEnd, CompactionReason, ContextUsage, ForkMessage, ForkOutcome,
    NavigateTreeOptions, NavigateTreeOutcome, PreflightCallback, PromptDisposition, PromptOptions, QueueDisposition,
    RetrySettings, SessionEvent, SessionSettings, SessionStats, ShellSettings, SwitchOutcome, TokenStats,
    is_context_overflow, is_retryable_assistant_error,
};
pub use skills::{Skill, SkillReader, format_skills_for_prompt};
pub use system_prompt::{ContextFile, SystemPromptOptions};

use crate::extensions::subprocess::SubprocessExtension;
use crate::extensions::{Extension, ExtensionRunner};
use crate::messages::CodingMessage;
use crate::session::{SessionManager, get_agent_dir};
use crate::settings::SettingsManager;

/// Options of [`create_agent_session`] (pi's `CreateAgentSessionOptions`).
#[derive(Default)]
pub struct CreateAgentSessionOptions {
    /// Working directory (default: the session manager's, else the process cwd).
    pub cwd: Option<PathBuf>,
    /// Agent directory (default: [`get_agent_dir`]).
    pub agent_dir: Option<PathBuf>,
    /// The model (default: the first catalog model with an API key in the environment).
    pub model: Option<Model>,
    /// Thinking level (default: off).
    pub thinking_level: Option<ThinkingLevel>,
    /// Active built-in tool names (default: read, bash, edit, write).
    pub tools: Option<Vec<String>>,
    /// Extra tools, active from the start.
    pub custom_tools: Vec<Arc<dyn AgentTool>>,
    /// Resources (default: a `DefaultResourceLoader` for cwd and agent dir, reloaded here).
    pub resource_loader: Option<DefaultResourceLoader>,
    /// The session (default: a new persisted session for the cwd).
    pub session_manager: Option<SessionManager>,
    /// How requests are streamed (default: pi-ai's built-in HTTP providers).
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
}

/// What [`create_agent_session`] returns.
pub struct CreateAgentSessionResult {
    /// The session.
    pub session: AgentSession,
}

/// A stream function over pi-ai's built-in catalog and HTTP providers.
pub fn default_stream_fn() -> StreamFn {
    let mut models = Models::from_catalog();
    for api in pi_ai::providers::http_apis() {
        models.register_api(api);
    }
    let models = Arc::new(models);
    Arc::new(move |model: &Model, transcript, options| {
        models.stream_simple(
            model,
            Context { system_prompt: None, messages: transcript.into_messages(), tools: None },
            options,
        )
    })
}

fn first_model_with_key() -> Option<Model> {
    pi_ai::models::get_providers()
        .into_iter()
        .find(|p| pi_ai::models::env_api_key(p).is_some())
        .and_then(|p| pi_ai::models::get_models(p).first().cloned())
}

/// Builds an [`AgentSession`]: model, tools, resources, session and the coding agent's hooks.
pub async fn create_agent_session(options: CreateAgentSessionOptions) -> Result<CreateAgentSessionResult, SdkError> {
    let session_manager = match options.session_manager {
        Some(sm) => sm,
        None => {
            let cwd = options.cwd.clone().unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
            SessionManager::create(&cwd, None, Default::default())?
        }
    };
    let cwd = options.cwd.clone().map(|p| p.display().to_string()).unwrap_or_else(|| session_manager.cwd().to_owned());
    let agent_dir = options.agent_dir.clone().unwrap_or_else(get_agent_dir);
    let loader = match options.resource_loader {
        Some(loader) => loader,
        None => {
            let mut loader = DefaultResourceLoader::new(&cwd, &agent_dir);
            loader.reload().await?;
            loader
        }
    };
    let resources = loader.resources()?.clone();
    let model = options.model.or_else(first_model_with_key).ok_or(SdkError::NoModel)?;
    let thinking_level = options.thinking_level.unwrap_or(ThinkingLevel::Off);

    let settings_manager =
        options.settings_manager.unwrap_or_else(|| Arc::new(SettingsManager::create(Path::new(&cwd), &agent_dir)));
    let file_settings = settings_manager.settings();
    // The shell settings reach both the user's `!cmd`s and the bash tool (pi's `_buildRuntime`).
    let shell = options.shell.unwrap_or_else(|| ShellSettings::from_settings(&file_settings));
    let tool_options = crate::tools::ToolsOptions {
        bash: crate::tools::BashToolOptions {
            command_prefix: shell.command_prefix.clone(),
            shell_path: shell.shell_path.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut all_tools = crate::tools::all_tools(&cwd, &tool_options);
    let mut active: Vec<String> =
        options.tools.unwrap_or_else(|| system_prompt::DEFAULT_TOOLS.iter().map(|s| (*s).to_owned()).collect());
    for tool in options.custom_tools {
        active.push(tool.name().to_owned());
        all_tools.retain(|t| t.name() != tool.name());
        all_tools.push(tool);
    }

    let mut prompt_options = SystemPromptOptions::with_builtin_tools(cwd.clone());
    prompt_options.custom_prompt = resources.system_prompt.clone();
    prompt_options.append_system_prompt = resources.append_system_prompt.clone().unwrap_or_default();
    prompt_options.context_files = resources.context_files.clone();
    prompt_options.skills = resources.skills.clone();

    // Runtime-loaded extensions (JSON-RPC over stdio) first, as pi loads `-e` paths first, then
    // the in-process ones.
    let mut extensions: Vec<Arc<dyn Extension>> = Vec::new();
    // Explicit paths load even with `no_extensions` (pi: "explicit -e paths still work").
    for path in &loader.additional_extension_paths {
        extensions.push(Arc::new(SubprocessExtension::new(path.display().to_string())));
    }
    if !loader.no_extensions {
        extensions.extend(options.extensions);
    }
    let runner =
        if extensions.is_empty() { None } else { Some(Arc::new(ExtensionRunner::load(extensions, cwd.clone()).await)) };
    if let Some(runner) = &runner {
        for load_error in runner.load_errors() {
            tracing::warn!(path = %load_error.path, error = %load_error.error, "extension failed to load");
        }
        for registered in runner.registered_tools() {
            let tool = registered.definition.tool.clone();
            active.retain(|n| n != tool.name());
            active.push(tool.name().to_owned());
            all_tools.retain(|t| t.name() != tool.name());
            all_tools.push(tool);
        }
    }

    let is_new = session_manager.entries().is_empty();
    let stream_fn = options.stream_fn.unwrap_or_else(default_stream_fn);
    // pi hands the agent the session id, which providers use as their cache key (openai-responses
    // sends it as `prompt_cache_key`).
    let mut stream_options = options.stream_options;
    if stream_options.session_id.is_none() {
        stream_options.session_id = Some(session_manager.session_id().to_owned());
    }
    if let Some(runner) = &runner {
        stream_options.on_payload = Some(extension_bridge::payload_hook(runner.clone()));
    }
    let shared = Arc::new(session::SessionShared::new(session::SharedParts {
        session_manager,
        all_tools,
        prompt_options,
        runner: runner.clone(),
        stream_fn: stream_fn.clone(),
        stream_options: stream_options.clone(),
        models: options.models,
        settings: options.settings.unwrap_or_else(|| SessionSettings::from_settings(&file_settings)),
        settings_manager,
        shell,
    }));
    *shared.prompt_templates.lock().unwrap_or_else(|e| e.into_inner()) = resources.prompt_templates.clone();
    let mut builder = Agent::builder(model.clone(), stream_fn)
        .thinking_level(thinking_level)
        .steering_mode(file_settings.steering_mode())
        .follow_up_mode(file_settings.follow_up_mode())
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
    let session = AgentSession::new(agent, shared, cwd);
    if is_new {
        let mut sm = session.session_manager();
        sm.append_model_change(&model.provider, &model.id)?;
        sm.append_thinking_level_change(thinking_level.as_str())?;
    }
    let messages = session.session_manager().build_session_context().messages;
    session.agent.set_messages(messages);
    session.agent.set_tools(session.shared.tools_named(&active));
    Ok(CreateAgentSessionResult { session })
}
