//! The SDK: build a complete coding agent in one call with [`SessionBuilder`] (an agent dir's
//! settings, models.json, credentials and resources, as the `pi` binary does), or piece by piece
//! with [`create_agent_session`].
//!
//! Events reach listeners as typed [`SessionEvent`]s; [`wire`] writes pi's JSON of them (the
//! json and rpc modes use it too). Settings come from a [`SettingsManager`](crate::settings::SettingsManager).
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
//! println!("entries: {}", session.with_session_manager(|sm| sm.get_branch(None).len()));
//! session.dispose().await;
//! # Ok(()) }
//! ```

mod agent_wire;
mod builder;
pub mod cache_warmer;
mod create;
pub mod default_models;
pub mod diagnostics;
pub(crate) mod discovery;
mod error;
pub mod expand;
mod extension_bridge;
mod extension_ctx;
pub mod frontmatter;
pub mod model_choice;
mod model_registry;
pub mod prompt_templates;
mod registered_providers;
pub mod request_options;
pub mod resources;
mod session;
pub mod skills;
pub mod system_prompt;
mod tool_selection;
pub mod wire;
mod yaml_keys;

pub use builder::{BuiltSession, SessionBuilder};
pub use create::{
    CreateAgentSessionOptions, CreateAgentSessionResult, create_agent_session, default_stream_fn, load_extension_runner,
};
pub use diagnostics::{DiagnosticKind, ResourceCollision, ResourceDiagnostic};
pub use discovery::resolve_path;
pub use error::SdkError;
pub use expand::{SkillBlock, expand_input, expand_skill_command, parse_skill_block};
pub use model_registry::{CredentialSource, EnvCredentials, ModelRegistry, StoredCredentials};
pub use prompt_templates::{PromptTemplate, expand_prompt_template, parse_command_args, substitute_args};
pub use resources::{DefaultResourceLoader, LoadedResources, ResourceError};
pub use session::{
    AgentSession, BashResult, CompactOutcome, CompactionEnd, CompactionReason, ContextUsage, ExtensionTheme,
    ForkMessage, ForkOutcome, NavigateTreeOptions, NavigateTreeOutcome, PreflightCallback, PromptAuthCheck,
    PromptDisposition, PromptOptions, QueueDisposition, RetrySettings, SessionEvent, SessionSettings, SessionStats,
    ShellSettings, SwitchOutcome, TokenStats, extension_themes, is_context_overflow, is_retryable_assistant_error,
};
pub use skills::{Skill, SkillReader, format_skills_for_prompt};
pub use system_prompt::{ContextFile, SystemPromptOptions};
pub use tool_selection::{NoTools, ToolSelection};
