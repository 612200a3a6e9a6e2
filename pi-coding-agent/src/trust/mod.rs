//! Project trust (pi 1.6.0's `docs/security.md`, "Understand project trust"): the trust store in
//! the agent dir, `defaultProjectTrust`, the startup question, the `project_trust` extension
//! event, the `/trust` command, and which project resources wait for a decision.
//!
//! # What waits for trust
//!
//! A project needs a decision when it has any of `.pi/settings.json`, `.pi/mcp.json`,
//! `.pi/extensions`, `.pi/skills`, `.pi/prompts`, `.pi/themes`, `.pi/SYSTEM.md`,
//! `.pi/APPEND_SYSTEM.md`, or an `.agents/skills` directory in the cwd or an ancestor
//! ([`has_trust_requiring_project_resources`]). Until it is trusted, none of those load: no
//! project settings (so no project `packages`, `extensions`, `skills`, … arrays), no project MCP
//! servers, no `.pi` extensions, skills, prompt templates, themes or system-prompt files, no
//! `.agents/skills`, and project package commands (`pi install -l`) are refused. Context files
//! (`AGENTS.md`, `CLAUDE.md`) load whatever the decision. A project without any of these is
//! trusted unless a saved decision says otherwise.
//!
//! # The API other parts call
//!
//! - [`is_project_trusted`]`(agent_dir, cwd, trust_override)`: the decision without a UI and
//!   without extensions (override, saved decision, `defaultProjectTrust`). Use it when the
//!   session's own decision was not handed to you.
//! - [`resolve_project_trusted`]: the full decision as the CLI makes it at startup: extensions'
//!   `project_trust` handlers ([`ProjectTrustHandlers`]) and the question through a
//!   [`UiHost`](crate::ui::UiHost).
//! - [`run_trust_command`] / [`trust_selector`] + [`save_trust_selection`]: `/trust`.
//! - [`ProjectTrustStore`]: `<agent dir>/trust.json` itself.

mod event;
mod resolve;
mod resources;
mod selector_screen;
mod startup;
mod store;

pub use resolve::{
    DefaultProjectTrust, ProjectTrustContext, ProjectTrustDecision, ProjectTrustEvent, ProjectTrustEventResult,
    ProjectTrustHandlerError, ProjectTrustHandlers, ResolveTrustOptions, TrustOption, TrustResolution, TrustSelector,
    UNTRUSTED_PROJECT_WARNING, is_project_trusted, project_trust_options, project_trust_prompt,
    resolve_project_trusted, run_trust_command, save_implicit_trust_after_reload, save_trust_selection,
    startup_project_trusted, trust_selector,
};
pub(crate) use resources::home_dir;
pub use resources::{TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES, has_trust_requiring_project_resources};
pub use selector_screen::{TrustChoice, TrustSelectorComponent};
pub use startup::{StartupTrustOptions, project_trust_extension_paths, startup_project_trust};
pub use store::{ProjectTrustStore, TrustEntry, TrustUpdate, normalize_cwd};

use std::path::PathBuf;

/// The trust store could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// `trust.json` is not valid (pi's `Failed to read trust store …` / `Invalid trust store …`).
    #[error("{0}")]
    Invalid(String),
    /// Reading or writing failed.
    #[error("{path}: {message}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Another process holds the lock.
    #[error("Lock file is already being held: {}", .0.display())]
    Locked(PathBuf),
}
