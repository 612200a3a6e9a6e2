//! `DefaultResourceLoader`: context files, `SYSTEM.md` / `APPEND_SYSTEM.md`, skills, prompt
//! templates and the extension paths a session uses. As in pi, the SDK does not reload it for you:
//! call [`DefaultResourceLoader::reload`].
//!
//! Skills and templates are discovered as pi 1.6.0 discovers them (highest precedence first):
//! the trusted project's `.pi/skills`, the `.agents/skills` of the cwd and its ancestors up to the
//! git root, then `<agent dir>/skills` and `~/.agents/skills`; templates from the trusted
//! project's `.pi/prompts`, then `<agent dir>/prompts`. Additional paths come last. The
//! discovery, with the settings arrays and pi packages, is [`crate::packages::resolve_resources`].

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::diagnostics::ResourceDiagnostic;
use super::discovery::{path_key, resolve_path};
use super::prompt_templates::{PromptTemplate, load_prompt_templates};
use super::skills::{Skill, load_skills};
use super::system_prompt::ContextFile;
use crate::packages::{ResolveOptions, ResolvedResources, ResourceKind, resolve_resources, resolve_temporary_sources};

/// The context-file names looked for in each directory, first match wins.
pub const CONTEXT_FILE_NAMES: [&str; 5] = ["AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

/// Loading resources failed.
#[derive(Debug, Error)]
pub enum ResourceError {
    /// A resource was used before `reload()`.
    #[error("Resources are not loaded: call reload() first")]
    NotLoaded,
    /// A file could not be read.
    #[error("Could not read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// What `reload()` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadedResources {
    /// Context files: the agent dir's first, then ancestors from the root down to the cwd.
    pub context_files: Vec<ContextFile>,
    /// The custom system prompt (option, else `SYSTEM.md`).
    pub system_prompt: Option<String>,
    /// Text appended to the prompt (option, else `APPEND_SYSTEM.md`).
    pub append_system_prompt: Option<String>,
    /// Skills, in precedence order (the first of a name won).
    pub skills: Vec<Skill>,
    /// Problems found loading skills (warnings, missing paths, collisions).
    pub skill_diagnostics: Vec<ResourceDiagnostic>,
    /// Prompt templates, in precedence order (the first of a name won).
    pub prompt_templates: Vec<PromptTemplate>,
    /// Problems found loading prompt templates.
    pub prompt_diagnostics: Vec<ResourceDiagnostic>,
    /// Enabled extension files of packages, settings and the `extensions` folders, in pi's
    /// load order (the extension host loads them; `additional_extension_paths` come first).
    pub extension_paths: Vec<PathBuf>,
    /// Enabled theme files, in pi's precedence order.
    pub theme_paths: Vec<PathBuf>,
    /// Warnings of packages that could not be installed.
    pub package_warnings: Vec<String>,
}

impl LoadedResources {
    /// The skills (pi's `getSkills().skills`).
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The prompt templates (pi's `getPrompts().prompts`).
    pub fn prompt_templates(&self) -> &[PromptTemplate] {
        &self.prompt_templates
    }

    /// Expands `/skill:name args` and `/template args` as a prompt would.
    pub fn expand_input(&self, text: &str) -> String {
        super::expand::expand_input(text, &self.skills, &self.prompt_templates)
    }
}

/// Discovers the resources of a session.
///
/// ```no_run
/// # async fn demo() -> Result<(), pi_coding_agent::sdk::ResourceError> {
/// use pi_coding_agent::sdk::DefaultResourceLoader;
/// let mut loader = DefaultResourceLoader::new(".", pi_coding_agent::session::get_agent_dir());
/// loader.additional_extension_paths.push("./audit_extension.py".into());
/// loader.reload().await?; // required: the SDK only reloads loaders it creates itself
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct DefaultResourceLoader {
    /// Working directory.
    pub cwd: PathBuf,
    /// Agent directory (`~/.pi/agent`).
    pub agent_dir: PathBuf,
    /// Extension executables (JSON-RPC over stdio) loaded besides discovered ones.
    pub additional_extension_paths: Vec<PathBuf>,
    /// Skip discovered and in-process extensions; `additional_extension_paths` still load (pi: explicit
    /// `-e` paths still work).
    pub no_extensions: bool,
    /// Skip context files.
    pub no_context_files: bool,
    /// A custom system prompt (overrides `SYSTEM.md`).
    pub system_prompt: Option<String>,
    /// Appended to the prompt (overrides `APPEND_SYSTEM.md`).
    pub append_system_prompt: Option<String>,
    /// Whether project-level `.pi/` files are trusted.
    pub project_trusted: bool,
    /// Skill files or directories loaded besides discovered ones (pi's `additionalSkillPaths`).
    pub additional_skill_paths: Vec<PathBuf>,
    /// Template files or directories loaded besides discovered ones.
    pub additional_prompt_template_paths: Vec<PathBuf>,
    /// Skip skill discovery; additional skill paths still load (pi's `noSkills`).
    pub no_skills: bool,
    /// Skip template discovery; additional template paths still load (pi's `noPromptTemplates`).
    pub no_prompt_templates: bool,
    /// The home directory `~` and `~/.agents/skills` resolve against (default: the user's).
    pub home_dir: Option<PathBuf>,
    loaded: Option<LoadedResources>,
}

impl DefaultResourceLoader {
    /// A loader for `cwd` and `agent_dir`; nothing is read until [`Self::reload`].
    pub fn new(cwd: impl Into<PathBuf>, agent_dir: impl Into<PathBuf>) -> Self {
        DefaultResourceLoader {
            cwd: cwd.into(),
            agent_dir: agent_dir.into(),
            additional_extension_paths: Vec::new(),
            no_extensions: false,
            no_context_files: false,
            system_prompt: None,
            append_system_prompt: None,
            project_trusted: false,
            additional_skill_paths: Vec::new(),
            additional_prompt_template_paths: Vec::new(),
            no_skills: false,
            no_prompt_templates: false,
            home_dir: dirs::home_dir(),
            loaded: None,
        }
    }

    /// Reads everything from disk again.
    pub async fn reload(&mut self) -> Result<(), ResourceError> {
        let cwd = absolute(&self.cwd);
        let agent_dir = absolute(&self.agent_dir);
        let context_files =
            if self.no_context_files { Vec::new() } else { load_project_context_files(&cwd, &agent_dir)? };
        let system_prompt = match &self.system_prompt {
            Some(p) => Some(p.clone()),
            None => read_optional(self.discover(&cwd, &agent_dir, "SYSTEM.md"))?,
        };
        let append_system_prompt = match &self.append_system_prompt {
            Some(p) => Some(p.clone()),
            None => read_optional(self.discover(&cwd, &agent_dir, "APPEND_SYSTEM.md"))?,
        };
        // Packages, the settings arrays and the conventional folders, as pi's package manager
        // resolves them (missing packages are installed unless offline).
        let options =
            ResolveOptions { install_missing: true, home_dir: self.home_dir.clone(), command_output_to_stderr: true };
        let packages = resolve_resources(&cwd, &agent_dir, self.project_trusted, &options);
        // `-e` packages' skills, templates and themes come first and load even with -ns / -np.
        let sources: Vec<String> =
            self.additional_extension_paths.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let cli = resolve_temporary_sources(&cwd, &agent_dir, &sources);
        let (skills, skill_diagnostics) = self.load_skills(&cwd, &cli, &packages);
        let (prompt_templates, prompt_diagnostics) = self.load_prompt_templates(&cwd, &cli, &packages);
        let extension_paths = crate::packages::temporary_package_extensions(&cli)
            .chain(if self.no_extensions { Vec::new() } else { packages.enabled(ResourceKind::Extensions) })
            .collect();
        self.loaded = Some(LoadedResources {
            context_files,
            system_prompt,
            append_system_prompt,
            skills,
            skill_diagnostics,
            prompt_templates,
            prompt_diagnostics,
            extension_paths,
            theme_paths: merge_enabled(&cli, &packages, ResourceKind::Themes, false),
            package_warnings: packages
                .install_failures
                .iter()
                .chain(&cli.install_failures)
                .map(|f| f.warning())
                .collect(),
        });
        Ok(())
    }

    /// Discovered paths then additional ones, resolved against the cwd, each file once.
    fn merge_paths(&self, discovered: Vec<PathBuf>, additional: &[PathBuf], cwd: &Path) -> Vec<PathBuf> {
        let mut seen = std::collections::HashSet::new();
        discovered
            .into_iter()
            .chain(additional.iter().map(|p| resolve_path(&p.to_string_lossy(), cwd, self.home_dir.as_deref())))
            .filter(|p| seen.insert(path_key(p)))
            .collect()
    }

    fn load_skills(
        &self,
        cwd: &Path,
        cli: &ResolvedResources,
        packages: &ResolvedResources,
    ) -> (Vec<Skill>, Vec<ResourceDiagnostic>) {
        let discovered = merge_enabled(cli, packages, ResourceKind::Skills, self.no_skills);
        let paths = self.merge_paths(discovered, &self.additional_skill_paths, cwd);
        if paths.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let mut result = load_skills(&paths, cwd, self.home_dir.as_deref());
        for p in &self.additional_skill_paths {
            let resolved = resolve_path(&p.to_string_lossy(), cwd, self.home_dir.as_deref());
            if !resolved.exists() && !result.diagnostics.iter().any(|d| d.path == resolved) {
                result.diagnostics.push(ResourceDiagnostic::error("Skill path does not exist", resolved));
            }
        }
        for d in &result.diagnostics {
            tracing::debug!(kind = d.kind.as_str(), path = %d.path.display(), message = %d.message, "skill diagnostic");
        }
        (result.skills, result.diagnostics)
    }

    fn load_prompt_templates(
        &self,
        cwd: &Path,
        cli: &ResolvedResources,
        packages: &ResolvedResources,
    ) -> (Vec<PromptTemplate>, Vec<ResourceDiagnostic>) {
        let discovered = merge_enabled(cli, packages, ResourceKind::Prompts, self.no_prompt_templates);
        let paths = self.merge_paths(discovered, &self.additional_prompt_template_paths, cwd);
        if paths.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let mut result = load_prompt_templates(&paths, cwd, self.home_dir.as_deref());
        for p in &self.additional_prompt_template_paths {
            let resolved = resolve_path(&p.to_string_lossy(), cwd, self.home_dir.as_deref());
            if !resolved.exists() && !result.diagnostics.iter().any(|d| d.path == resolved) {
                result.diagnostics.push(ResourceDiagnostic::error("Prompt template path does not exist", resolved));
            }
        }
        (result.templates, result.diagnostics)
    }

    fn discover(&self, cwd: &Path, agent_dir: &Path, name: &str) -> Option<PathBuf> {
        let project = cwd.join(".pi").join(name);
        if self.project_trusted && project.is_file() {
            return Some(project);
        }
        let global = agent_dir.join(name);
        global.is_file().then_some(global)
    }

    /// What the last `reload()` found.
    pub fn resources(&self) -> Result<&LoadedResources, ResourceError> {
        self.loaded.as_ref().ok_or(ResourceError::NotLoaded)
    }

    /// Whether `reload()` ran.
    pub fn is_loaded(&self) -> bool {
        self.loaded.is_some()
    }
}

/// The `-e` packages' enabled resources, then (unless `skip_discovered`) the discovered ones.
fn merge_enabled(
    cli: &ResolvedResources,
    packages: &ResolvedResources,
    kind: ResourceKind,
    skip_discovered: bool,
) -> Vec<PathBuf> {
    let mut paths = cli.enabled(kind);
    if !skip_discovered {
        paths.extend(packages.enabled(kind));
    }
    paths
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn read_optional(path: Option<PathBuf>) -> Result<Option<String>, ResourceError> {
    match path {
        None => Ok(None),
        Some(path) => std::fs::read_to_string(&path)
            .map(|s| Some(strip_bom(s)))
            .map_err(|source| ResourceError::Read { path, source }),
    }
}

fn strip_bom(s: String) -> String {
    match s.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => s,
    }
}

fn context_file_in(dir: &Path) -> Result<Option<ContextFile>, ResourceError> {
    for name in CONTEXT_FILE_NAMES {
        let path = dir.join(name);
        if path.is_file() {
            let content =
                std::fs::read_to_string(&path).map_err(|source| ResourceError::Read { path: path.clone(), source })?;
            return Ok(Some(ContextFile { path: path.display().to_string(), content: strip_bom(content) }));
        }
    }
    Ok(None)
}

/// pi's `loadProjectContextFiles`: the agent dir's context file, then one per ancestor directory
/// from the filesystem root down to `cwd` (each path once).
pub fn load_project_context_files(cwd: &Path, agent_dir: &Path) -> Result<Vec<ContextFile>, ResourceError> {
    let mut files = Vec::new();
    if let Some(global) = context_file_in(agent_dir)? {
        files.push(global);
    }
    let mut ancestors = Vec::new();
    for dir in cwd.ancestors() {
        if let Some(file) = context_file_in(dir)?
            && !files.iter().chain(ancestors.iter()).any(|f: &ContextFile| f.path == file.path)
        {
            ancestors.push(file);
        }
    }
    ancestors.reverse();
    files.extend(ancestors);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn context_files_are_global_first_then_root_to_cwd() {
        let root = tempfile::tempdir().unwrap();
        let agent = root.path().join("agent");
        let proj = root.path().join("a").join("b");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::write(agent.join("AGENTS.md"), "global").unwrap();
        std::fs::write(root.path().join("a").join("CLAUDE.md"), "\u{feff}outer").unwrap();
        std::fs::write(proj.join("AGENTS.md"), "inner").unwrap();
        std::fs::write(proj.join("CLAUDE.md"), "ignored: AGENTS.md wins").unwrap();
        std::fs::write(agent.join("APPEND_SYSTEM.md"), "appended").unwrap();
        let mut loader = DefaultResourceLoader::new(&proj, &agent);
        assert!(matches!(loader.resources(), Err(ResourceError::NotLoaded)));
        loader.reload().await.unwrap();
        let r = loader.resources().unwrap();
        let contents: Vec<&str> = r.context_files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, ["global", "outer", "inner"]);
        assert_eq!(r.append_system_prompt.as_deref(), Some("appended"));
        assert_eq!(r.system_prompt, None);
        loader.no_context_files = true;
        loader.reload().await.unwrap();
        assert!(loader.resources().unwrap().context_files.is_empty());
    }
}
