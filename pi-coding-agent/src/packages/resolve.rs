//! Which extensions, skills, prompt templates and themes a session loads, and in what order
//! (pi's `DefaultPackageManager.resolve`): the `packages` of both settings files (installed when
//! missing), the settings arrays `extensions` / `skills` / `prompts` / `themes`, and the
//! auto-discovered folders (`.pi/…` of a trusted project, `<agent dir>/…`, `.agents/skills`).
//!
//! Every resource keeps where it came from; the lists are ordered by pi's precedence (project
//! settings entries, project auto-discovered, user settings entries, user auto-discovered,
//! package resources), so "first of a name wins" picks what pi picks.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::collect::{
    ResourceKind, SkillDirMode, apply_patterns, enabled_by_overrides, expand_glob, extension_entries, files_from_paths,
    flat_entries, is_override, is_pattern, resource_files, skill_entries,
};
use super::manager::{PackageManager, is_offline};
use super::settings_file::{Scope, SettingsFile, entry_source};
use super::source::{PackageSource, parse_source, resolve_from};

/// Where a resource was configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceOrigin {
    /// A settings array entry (pi's `source: "local"`).
    Settings,
    /// A conventional folder (pi's `source: "auto"`).
    Auto,
    /// A package (the configured source).
    Package(String),
    /// A built-in extension (`builtin:<name>`, pi's `source: "builtin"`).
    Builtin,
}

/// A resolved resource file (pi's `ResolvedResource`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedResource {
    /// The file (or, for a local package without resources, its folder).
    pub path: PathBuf,
    /// Whether filters leave it enabled.
    pub enabled: bool,
    /// Where it was configured.
    pub origin: ResourceOrigin,
    /// The settings scope.
    pub scope: Scope,
    /// The folder filter patterns of this resource are relative to (pi's `metadata.baseDir`):
    /// the package root, the conventional folder's parent; `None` for settings entries.
    pub base_dir: Option<PathBuf>,
}

impl ResolvedResource {
    fn rank(&self) -> u8 {
        let base = if self.scope == Scope::Project { 0 } else { 2 };
        match self.origin {
            ResourceOrigin::Package(_) => 4,
            ResourceOrigin::Builtin => 5,
            ResourceOrigin::Settings => base,
            ResourceOrigin::Auto => base + 1,
        }
    }
}

/// A configured package that could not be installed at startup (its resources are skipped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstallFailure {
    /// The source.
    pub source: String,
    /// Its scope.
    pub scope: Scope,
    /// Why.
    pub message: String,
}

impl InstallFailure {
    /// pi's startup warning: `Extension package "<source>": failed to install (<why>). Run "pi
    /// remove <source>[ --local]" to remove it from settings.json.`
    pub fn warning(&self) -> String {
        let hint = match self.scope {
            Scope::Temporary => "Check the source and try again.".to_string(),
            Scope::Project => format!("Run \"pi remove {} --local\" to remove it from settings.json.", self.source),
            Scope::User => format!("Run \"pi remove {}\" to remove it from settings.json.", self.source),
        };
        format!("Extension package \"{}\": failed to install ({}). {hint}", self.source, self.message)
    }
}

/// Everything [`resolve_resources`] found, each list in precedence order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolvedResources {
    /// Extension files.
    pub extensions: Vec<ResolvedResource>,
    /// Skill files.
    pub skills: Vec<ResolvedResource>,
    /// Prompt template files.
    pub prompts: Vec<ResolvedResource>,
    /// Theme files.
    pub themes: Vec<ResolvedResource>,
    /// Packages that could not be installed.
    pub install_failures: Vec<InstallFailure>,
}

impl ResolvedResources {
    /// The enabled paths of one kind, in order.
    pub fn enabled(&self, kind: ResourceKind) -> Vec<PathBuf> {
        let list = match kind {
            ResourceKind::Extensions => &self.extensions,
            ResourceKind::Skills => &self.skills,
            ResourceKind::Prompts => &self.prompts,
            ResourceKind::Themes => &self.themes,
        };
        list.iter().filter(|r| r.enabled && r.origin != ResourceOrigin::Builtin).map(|r| r.path.clone()).collect()
    }
}

/// How [`resolve_resources`] runs.
#[derive(Clone, Debug, Default)]
pub struct ResolveOptions {
    /// Install configured packages that are missing (skipped offline).
    pub install_missing: bool,
    /// The home directory for `~/.agents/skills` and `~` (default: the user's).
    pub home_dir: Option<PathBuf>,
    /// Send npm / git output to stderr.
    pub command_output_to_stderr: bool,
}

#[derive(Default)]
struct Accumulator {
    lists: HashMap<ResourceKind, Vec<ResolvedResource>>,
    seen: HashMap<ResourceKind, HashSet<PathBuf>>,
    /// The base dir of the resources added next.
    base: Option<PathBuf>,
}

impl Accumulator {
    fn add(&mut self, kind: ResourceKind, path: PathBuf, origin: &ResourceOrigin, scope: Scope, enabled: bool) {
        if self.seen.entry(kind).or_default().insert(path.clone()) {
            let base_dir = self.base.clone();
            self.lists.entry(kind).or_default().push(ResolvedResource {
                path,
                enabled,
                origin: origin.clone(),
                scope,
                base_dir,
            });
        }
    }

    fn finish(mut self) -> ResolvedResources {
        let mut take = |kind| {
            let mut list = self.lists.remove(&kind).unwrap_or_default();
            list.sort_by_key(ResolvedResource::rank);
            let mut keys = HashSet::new();
            list.retain(|r| keys.insert(std::fs::canonicalize(&r.path).unwrap_or_else(|_| r.path.clone())));
            list
        };
        ResolvedResources {
            extensions: take(ResourceKind::Extensions),
            skills: take(ResourceKind::Skills),
            prompts: take(ResourceKind::Prompts),
            themes: take(ResourceKind::Themes),
            install_failures: Vec::new(),
        }
    }
}

/// The resource lists of a package.json's `pi` object (pi's `readPiManifest`); `None` without
/// one. Lists that are not arrays of strings are left out.
pub fn read_manifest(package_json: &Path) -> Option<HashMap<ResourceKind, Vec<String>>> {
    let text = std::fs::read_to_string(package_json).ok()?;
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    let pi = value.get("pi")?.as_object()?;
    let mut out = HashMap::new();
    for kind in ResourceKind::ALL {
        if let Some(Value::Array(items)) = pi.get(kind.key())
            && items.iter().all(Value::is_string)
        {
            out.insert(kind, items.iter().filter_map(Value::as_str).map(str::to_owned).collect());
        }
    }
    Some(out)
}

fn manifest_files(entries: &[String], root: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    let resolved: Vec<PathBuf> = entries
        .iter()
        .filter(|e| !is_override(e))
        .flat_map(
            |e| if e.contains('*') || e.contains('?') { expand_glob(e, root) } else { vec![resolve_from(e, root)] },
        )
        .collect();
    files_from_paths(&resolved, kind)
}

/// The files a package offers for `kind`, after its own manifest patterns.
fn package_files(root: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    let manifest = read_manifest(&root.join("package.json"));
    if let Some(entries) = manifest.as_ref().and_then(|m| m.get(&kind)).filter(|e| !e.is_empty()) {
        let all = manifest_files(entries, root, kind);
        let own: Vec<String> = entries.iter().filter(|e| is_override(e)).cloned().collect();
        return if own.is_empty() { all } else { apply_patterns(&all, &own, root) };
    }
    let dir = root.join(kind.key());
    if dir.exists() { resource_files(&dir, kind) } else { Vec::new() }
}

fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

/// pi's `collectPackageResources`; false when the package offers nothing at all.
fn collect_package(
    acc: &mut Accumulator,
    root: &Path,
    filter: Option<&Map<String, Value>>,
    origin: &ResourceOrigin,
    scope: Scope,
) -> bool {
    acc.base = Some(root.to_path_buf());
    if let Some(filter) = filter {
        let delta = filter.get("autoload") == Some(&Value::Bool(false));
        for kind in ResourceKind::ALL {
            let patterns = string_list(filter.get(kind.key()));
            let all = package_files(root, kind);
            match (delta, patterns) {
                (true, Some(p)) => {
                    for (f, enabled) in delta_overrides(&all, &p, root) {
                        acc.add(kind, f, origin, scope, enabled);
                    }
                }
                (true, None) => {}
                (false, Some(p)) if p.is_empty() => {
                    all.into_iter().for_each(|f| acc.add(kind, f, origin, scope, false))
                }
                (false, Some(p)) => {
                    let enabled = apply_patterns(&all, &p, root);
                    for f in all {
                        let on = enabled.contains(&f);
                        acc.add(kind, f, origin, scope, on);
                    }
                }
                (false, None) => all.into_iter().for_each(|f| acc.add(kind, f, origin, scope, true)),
            }
        }
        return true;
    }
    let manifest = read_manifest(&root.join("package.json"));
    if let Some(m) = manifest.filter(|m| !m.is_empty()) {
        for kind in ResourceKind::ALL {
            if let Some(entries) = m.get(&kind) {
                let all = manifest_files(entries, root, kind);
                let own: Vec<String> = entries.iter().filter(|e| is_override(e)).cloned().collect();
                for f in apply_patterns(&all, &own, root) {
                    acc.add(kind, f, origin, scope, true);
                }
            }
        }
        return true;
    }
    let mut any = false;
    for kind in ResourceKind::ALL {
        let dir = root.join(kind.key());
        if dir.exists() {
            any = true;
            resource_files(&dir, kind).into_iter().for_each(|f| acc.add(kind, f, origin, scope, true));
        }
    }
    any
}

/// pi's `applyAutoloadDisabledPatterns`: only the files a pattern names, enabled or not.
fn delta_overrides(all: &[PathBuf], patterns: &[String], base: &Path) -> Vec<(PathBuf, bool)> {
    let mut out: Vec<(PathBuf, bool)> = Vec::new();
    for p in patterns {
        let target = p.trim_start_matches(['+', '-', '!']);
        let enabled = !p.starts_with('-') && !p.starts_with('!');
        let exact = p.starts_with('+') || p.starts_with('-');
        for f in all {
            let hit = if exact {
                super::collect::matches_any_exact(f, &[target], base)
            } else {
                super::collect::matches_any(f, &[target], base)
            };
            if hit {
                match out.iter_mut().find(|(g, _)| g == f) {
                    Some(e) => e.1 = enabled,
                    None => out.push((f.clone(), enabled)),
                }
            }
        }
    }
    out
}

/// Resolves every resource of `cwd` for a session or a command.
pub fn resolve_resources(
    cwd: &Path,
    agent_dir: &Path,
    project_trusted: bool,
    options: &ResolveOptions,
) -> ResolvedResources {
    let mut pm = PackageManager::new_lenient(cwd, agent_dir, project_trusted);
    pm.command_output_to_stderr = options.command_output_to_stderr;
    let mut acc = Accumulator::default();
    let failures = resolve_packages(&mut pm, &mut acc, options.install_missing);
    let project_base = pm.cwd.join(".pi");
    let global_base = pm.agent_dir.clone();
    for kind in ResourceKind::ALL {
        for (file, scope, base) in
            [(&pm.project, Scope::Project, &project_base), (&pm.global, Scope::User, &global_base)]
        {
            let entries = file.string_list(kind.key());
            if entries.is_empty() {
                continue;
            }
            let plain: Vec<PathBuf> =
                entries.iter().filter(|e| !is_pattern(e)).map(|e| resolve_from(e, base)).collect();
            let patterns: Vec<String> = entries.iter().filter(|e| is_pattern(e)).cloned().collect();
            let all = files_from_paths(&plain, kind);
            let enabled = apply_patterns(&all, &patterns, base);
            acc.base = None;
            for f in all {
                let on = enabled.contains(&f);
                acc.add(kind, f, &ResourceOrigin::Settings, scope, on);
            }
        }
    }
    add_auto_discovered(&mut acc, &pm, options.home_dir.clone().or_else(crate::trust::home_dir));
    let mut resolved = acc.finish();
    resolved.extensions.extend(super::builtins::builtin_resources(
        &pm.cwd,
        &pm.agent_dir,
        pm.project_trusted,
        crate::builtin_extensions::BUILTIN_EXTENSION_NAMES,
    ));
    resolved.install_failures = failures;
    resolved
}

/// The resources of `-e` sources (pi's `resolveExtensionSources(…, { temporary: true })`): a
/// file is one extension; a folder is a package (its manifest or conventional folders), or one
/// extension when it offers nothing else. Local paths resolve against `cwd`. npm and git
/// sources are installed for the run into pi's cache (`<agent dir>/tmp/extensions/…`, see
/// [`PackageManager::temporary_dir`]), reused by later runs, refreshed on load when unpinned
/// (skipped offline); a source that cannot be installed is an install failure and its resources
/// are skipped.
pub fn resolve_temporary_sources(cwd: &Path, agent_dir: &Path, sources: &[String]) -> ResolvedResources {
    let mut pm = PackageManager::new_lenient(cwd, agent_dir, false);
    pm.command_output_to_stderr = true;
    let mut acc = Accumulator::default();
    let mut failures = Vec::new();
    for source in sources.iter().filter(|s| !s.starts_with("builtin:")) {
        let origin = ResourceOrigin::Package(source.clone());
        let root = match parse_source(source) {
            PackageSource::Local { path } => {
                let resolved = resolve_from(&path, &pm.cwd);
                match std::fs::metadata(&resolved) {
                    Ok(m) if m.is_file() => {
                        acc.base = resolved.parent().map(Path::to_path_buf);
                        acc.add(ResourceKind::Extensions, resolved, &origin, Scope::Temporary, true);
                    }
                    Ok(m) if m.is_dir() && !collect_package(&mut acc, &resolved, None, &origin, Scope::Temporary) => {
                        acc.add(ResourceKind::Extensions, resolved, &origin, Scope::Temporary, true)
                    }
                    _ => {}
                }
                continue;
            }
            PackageSource::Npm(n) => {
                let path = pm.npm_install_path(&n, Scope::Temporary);
                if path.exists() {
                    super::update::refresh_temporary_npm(&pm, &n, &path);
                }
                path
            }
            PackageSource::Git(g) => {
                let path = pm.git_install_path(&g, Scope::Temporary);
                if path.exists() {
                    super::update::refresh_temporary_git(&pm, &g, &path);
                }
                path
            }
        };
        if !root.exists() {
            if is_offline() {
                continue;
            }
            if let Err(e) = pm.install(source, Scope::Temporary) {
                failures.push(InstallFailure {
                    source: source.clone(),
                    scope: Scope::Temporary,
                    message: e.to_string(),
                });
                continue;
            }
        }
        collect_package(&mut acc, &root, None, &origin, Scope::Temporary);
    }
    let mut resolved = acc.finish();
    resolved.install_failures = failures;
    resolved
}

/// The enabled extensions of the `-e` npm and git packages in `cli` (the result of
/// [`resolve_temporary_sources`]); local `-e` paths are expanded by the extension loader itself.
pub fn temporary_package_extensions(cli: &ResolvedResources) -> impl Iterator<Item = PathBuf> + '_ {
    cli.extensions
        .iter()
        .filter(|r| r.enabled && matches!(&r.origin, ResourceOrigin::Package(s) if !super::source::is_local_path(s)))
        .map(|r| r.path.clone())
}

fn resolve_packages(pm: &mut PackageManager, acc: &mut Accumulator, install_missing: bool) -> Vec<InstallFailure> {
    let mut all: Vec<(Value, Scope)> = pm.project.packages().into_iter().map(|p| (p, Scope::Project)).collect();
    all.extend(pm.global.packages().into_iter().map(|p| (p, Scope::User)));
    // Project entries win over user entries of the same identity; a project `autoload: false`
    // entry is a delta over the user entry, so both stay (delta first).
    let mut deduped: Vec<(Value, Scope)> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (pkg, scope) in all {
        let id = pm.identity(entry_source(&pkg), Some(scope));
        match seen.get(&id) {
            None => {
                seen.insert(id, deduped.len());
                deduped.push((pkg, scope));
            }
            Some(&i) => {
                if deduped[i].1 == Scope::Project
                    && scope == Scope::User
                    && deduped[i].0.get("autoload") == Some(&Value::Bool(false))
                {
                    deduped.push((pkg, scope));
                }
            }
        }
    }
    let mut failures = Vec::new();
    for (pkg, scope) in &deduped {
        let source = entry_source(pkg).to_string();
        let filter = pkg.as_object();
        let delta_base = (*scope == Scope::Project && pkg.get("autoload") == Some(&Value::Bool(false)))
            .then(|| {
                let id = pm.identity(&source, Some(*scope));
                deduped
                    .iter()
                    .find(|(p, s)| *s == Scope::User && pm.identity(entry_source(p), Some(Scope::User)) == id)
                    .map(|(p, _)| entry_source(p).to_string())
            })
            .flatten();
        let (resolved_source, resolved_scope) = match &delta_base {
            Some(s) => (s.clone(), Scope::User),
            None => (source.clone(), *scope),
        };
        let origin = ResourceOrigin::Package(source.clone());
        let root = match parse_source(&resolved_source) {
            PackageSource::Local { path } => {
                let resolved = resolve_from(&path, &pm.base_dir(resolved_scope));
                match std::fs::metadata(&resolved) {
                    Ok(m) if m.is_file() => {
                        acc.base = resolved.parent().map(Path::to_path_buf);
                        acc.add(ResourceKind::Extensions, resolved, &origin, *scope, true)
                    }
                    Ok(m) if m.is_dir() && !collect_package(acc, &resolved, filter, &origin, *scope) => {
                        acc.add(ResourceKind::Extensions, resolved, &origin, *scope, true)
                    }
                    _ => {}
                }
                continue;
            }
            PackageSource::Npm(n) => pm.npm_found_path(&n, resolved_scope),
            PackageSource::Git(g) => pm.git_install_path(&g, resolved_scope),
        };
        if !root.exists() {
            if !install_missing || is_offline() {
                continue;
            }
            if let Err(e) = pm.install(&resolved_source, resolved_scope) {
                failures.push(InstallFailure {
                    source: resolved_source,
                    scope: resolved_scope,
                    message: e.to_string(),
                });
                continue;
            }
        }
        collect_package(acc, &root, filter, &origin, *scope);
    }
    failures
}

fn add_auto_discovered(acc: &mut Accumulator, pm: &PackageManager, home: Option<PathBuf>) {
    let project_base = pm.cwd.join(".pi");
    let global_base = pm.agent_dir.clone();
    let user_agents = home.map(|h| h.join(".agents").join("skills"));
    let auto = ResourceOrigin::Auto;
    let mut add = |kind: ResourceKind, paths: Vec<PathBuf>, scope: Scope, file: &SettingsFile, base: &Path| {
        let overrides = file.string_list(kind.key());
        acc.base = Some(base.to_path_buf());
        for p in paths {
            let on = enabled_by_overrides(&p, &overrides, base);
            acc.add(kind, p, &auto, scope, on);
        }
    };
    let trusted = pm.project_trusted;
    if trusted {
        add(
            ResourceKind::Extensions,
            extension_entries(&project_base.join("extensions")),
            Scope::Project,
            &pm.project,
            &project_base,
        );
        add(
            ResourceKind::Skills,
            skill_entries(&project_base.join("skills"), SkillDirMode::Pi),
            Scope::Project,
            &pm.project,
            &project_base,
        );
        for dir in crate::sdk::discovery::ancestor_agents_skill_dirs(&pm.cwd) {
            if Some(&dir) == user_agents.as_ref() {
                continue;
            }
            let base = dir.parent().map(Path::to_path_buf).unwrap_or_default();
            add(ResourceKind::Skills, skill_entries(&dir, SkillDirMode::Agents), Scope::Project, &pm.project, &base);
        }
        add(
            ResourceKind::Prompts,
            crate::sdk::discovery::collect_prompt_entries(&project_base.join("prompts")),
            Scope::Project,
            &pm.project,
            &project_base,
        );
        add(
            ResourceKind::Themes,
            flat_entries(&project_base.join("themes"), ResourceKind::Themes),
            Scope::Project,
            &pm.project,
            &project_base,
        );
    }
    add(
        ResourceKind::Extensions,
        extension_entries(&global_base.join("extensions")),
        Scope::User,
        &pm.global,
        &global_base,
    );
    add(
        ResourceKind::Skills,
        skill_entries(&global_base.join("skills"), SkillDirMode::Pi),
        Scope::User,
        &pm.global,
        &global_base,
    );
    if let Some(dir) = &user_agents {
        let base = dir.parent().map(Path::to_path_buf).unwrap_or_default();
        add(ResourceKind::Skills, skill_entries(dir, SkillDirMode::Agents), Scope::User, &pm.global, &base);
    }
    add(
        ResourceKind::Prompts,
        crate::sdk::discovery::collect_prompt_entries(&global_base.join("prompts")),
        Scope::User,
        &pm.global,
        &global_base,
    );
    add(
        ResourceKind::Themes,
        flat_entries(&global_base.join("themes"), ResourceKind::Themes),
        Scope::User,
        &pm.global,
        &global_base,
    );
}
