//! The startup decision as pi's CLI makes it (`createRuntime` with `resolveProjectTrust`): when
//! no `--approve` / `--no-approve` decides and the project has protected resources, the
//! extensions that do not depend on the project (the user's, the user packages', `-e`) load
//! first (pi's `loadProjectTrustExtensions`) and answer `project_trust`; then the saved decision,
//! `defaultProjectTrust` and the question through the UI, as [`resolve_project_trusted`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::TrustError;
use super::resolve::{DefaultProjectTrust, ResolveTrustOptions, TrustResolution, resolve_project_trusted};
use super::resources::has_trust_requiring_project_resources;
use super::store::ProjectTrustStore;
use crate::extensions::subprocess::SubprocessExtension;
use crate::extensions::{Extension, ExtensionRunner};
use crate::packages::{ResolveOptions, ResourceKind, resolve_resources, resolve_temporary_sources};
use crate::ui::UiHost;

/// What the startup decision weighs besides the folders.
pub struct StartupTrustOptions<'a> {
    /// `--approve` / `--no-approve`.
    pub trust_override: Option<bool>,
    /// The `-e` sources (paths resolved against the cwd, or npm / git sources).
    pub extension_sources: &'a [PathBuf],
    /// `--no-extensions`: only the `-e` extensions answer.
    pub no_extensions: bool,
    /// `"tui"`, `"print"`, `"json"` or `"rpc"`.
    pub mode: &'a str,
    /// Where the question is asked (and what extension handlers' `ctx.ui` reaches).
    pub ui: Arc<dyn UiHost>,
}

/// The extensions that may answer `project_trust`: the project-independent ones, in load order.
pub fn project_trust_extension_paths(
    cwd: &Path,
    agent_dir: &Path,
    sources: &[PathBuf],
    no_extensions: bool,
) -> Vec<PathBuf> {
    let options = ResolveOptions { install_missing: true, home_dir: None, command_output_to_stderr: true };
    let resolved = if no_extensions {
        Vec::new()
    } else {
        resolve_resources(cwd, agent_dir, false, &options).enabled(ResourceKind::Extensions)
    };
    let texts: Vec<String> = sources.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let cli = resolve_temporary_sources(cwd, agent_dir, &texts);
    let mut from_packages: Vec<PathBuf> = crate::packages::temporary_package_extensions(&cli).collect();
    from_packages.extend(resolved);
    crate::extensions::discovery::extension_load_order(cwd, sources, &from_packages)
}

/// pi's startup trust decision with the pre-trust extensions; their load failures and failing
/// handlers come back as warnings.
pub async fn startup_project_trust(
    agent_dir: &Path,
    cwd: &Path,
    options: StartupTrustOptions<'_>,
) -> Result<TrustResolution, TrustError> {
    let store = ProjectTrustStore::new(agent_dir);
    let needs_handlers = options.trust_override.is_none() && has_trust_requiring_project_resources(cwd);
    let mut load_warnings = Vec::new();
    let runner = if needs_handlers {
        let paths = project_trust_extension_paths(cwd, agent_dir, options.extension_sources, options.no_extensions);
        if paths.is_empty() {
            None
        } else {
            let extensions: Vec<Arc<dyn Extension>> = paths
                .iter()
                .map(|p| Arc::new(SubprocessExtension::new(p.display().to_string())) as Arc<dyn Extension>)
                .collect();
            let runner = ExtensionRunner::load(extensions, cwd.display().to_string()).await;
            for e in runner.load_errors() {
                load_warnings.push(format!("Failed to load extension \"{}\": {}", e.path, e.error));
            }
            runner.set_ui(options.ui.clone());
            Some(runner)
        }
    } else {
        None
    };
    let opts = ResolveTrustOptions {
        cwd,
        store: &store,
        trust_override: options.trust_override,
        default_project_trust: DefaultProjectTrust::load(agent_dir),
        handlers: runner.as_ref().map(|r| r as &dyn super::ProjectTrustHandlers),
        mode: options.mode,
        ui: options.ui.as_ref(),
    };
    let mut resolution = resolve_project_trusted(&opts).await?;
    load_warnings.append(&mut resolution.warnings);
    resolution.warnings = load_warnings;
    Ok(resolution)
}
