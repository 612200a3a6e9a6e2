//! pi packages (pi 1.6.0's `docs/packages.md`): `pi install | remove | uninstall | update |
//! list | config`, package sources (npm, git, local) in user or project scope, the `packages`
//! settings with their resource filters, the `pi` manifest of a package.json and the
//! conventional folders, and the resolution of every extension, skill, prompt template and theme
//! a session loads ([`resolve_resources`]), including the settings arrays `extensions`,
//! `skills`, `prompts` and `themes`.
//!
//! npm and git run as the system's `npm` and `git`, as pi runs them; a missing program is
//! reported by name. Installs go where pi puts them (`<agent dir>/npm`, `<agent dir>/git/<host>/
//! <path>`, or `.pi/npm` and `.pi/git` for project scope), so a Rust and a TypeScript pi share
//! their packages.

mod builtins;
pub mod cli;
mod collect;
mod commands;
pub mod config;
pub mod config_project;
pub mod config_screen;
mod manager;
mod resolve;
mod settings_file;
mod source;
mod update;

pub use builtins::{BUILTIN_PATH_PREFIX, builtin_extension_enabled};
pub use cli::run_package_command;
pub use collect::ResourceKind;
pub(crate) use collect::extension_entries;
pub use manager::{ConfiguredPackage, PackageManager, Progress, is_offline};
pub use resolve::{
    InstallFailure, ResolveOptions, ResolvedResource, ResolvedResources, ResourceOrigin, read_manifest,
    resolve_resources, resolve_temporary_sources, temporary_package_extensions,
};
pub use settings_file::{Scope, SettingsFile};
pub use source::{GitSource, NpmSource, PackageSource, is_local_path, parse_git_url, parse_source};

/// A package operation failed.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// `npm` or `git` is not installed.
    #[error("{0} is not installed or not on PATH (spawn {0} ENOENT)")]
    MissingProgram(String),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// Anything else, with pi's wording.
    #[error("{0}")]
    Other(String),
}
