//! pi's `DefaultPackageManager` operations: install, remove, update and list, with npm, git and
//! local sources in user or project scope.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::PackageError;
use super::commands::{capture, run};
use super::settings_file::{Scope, SettingsFile, entry_source};
use super::source::{GitSource, NpmSource, PackageSource, parse_source, relative_path, resolve_from};

/// A progress report (pi's `ProgressEvent`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// An operation starts (`Installing <source>...`).
    Start(String),
    /// A warning during an operation.
    Warning(String),
    /// A changed package after an update (`npm:foo 1.2.0 -> 1.3.0`).
    Updated(String),
}

/// A configured package (pi's `listConfiguredPackages` item).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfiguredPackage {
    /// The source as configured.
    pub source: String,
    /// Where it is configured.
    pub scope: Scope,
    /// Whether the entry is an object with filters.
    pub filtered: bool,
    /// Where it is installed, when it is.
    pub installed_path: Option<PathBuf>,
}

/// Whether `PI_OFFLINE` is set (`1`, `true`, `yes`): installs at startup and updates are skipped.
pub fn is_offline() -> bool {
    std::env::var("PI_OFFLINE")
        .is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("yes"))
}

/// The package manager of one working directory and agent dir.
pub struct PackageManager {
    /// Working directory (absolute).
    pub cwd: PathBuf,
    /// Agent directory (absolute).
    pub agent_dir: PathBuf,
    /// Whether project settings and project package storage may be used.
    pub project_trusted: bool,
    /// The user settings file.
    pub global: SettingsFile,
    /// The project settings file (empty when untrusted).
    pub project: SettingsFile,
    /// Send npm and git output to stderr (print modes own stdout).
    pub command_output_to_stderr: bool,
    progress: Box<dyn FnMut(Progress) + Send>,
}

impl PackageManager {
    /// Loads both settings files (the project one only when trusted).
    pub fn new(cwd: &Path, agent_dir: &Path, project_trusted: bool) -> Result<Self, PackageError> {
        let cwd = crate::session::resolve_path(cwd);
        let agent_dir = crate::session::resolve_path(agent_dir);
        let global = SettingsFile::load(SettingsFile::path_for(Scope::User, &cwd, &agent_dir))?;
        let project_path = SettingsFile::path_for(Scope::Project, &cwd, &agent_dir);
        let project = if project_trusted {
            SettingsFile::load(project_path)?
        } else {
            SettingsFile { path: project_path, values: Default::default() }
        };
        Ok(PackageManager {
            cwd,
            agent_dir,
            project_trusted,
            global,
            project,
            command_output_to_stderr: false,
            progress: Box::new(|_| {}),
        })
    }

    /// Like [`Self::new`], but a settings file that cannot be read counts as empty (the
    /// session reports it elsewhere, as pi's settings manager does, and keeps discovering).
    pub fn new_lenient(cwd: &Path, agent_dir: &Path, project_trusted: bool) -> Self {
        let cwd = crate::session::resolve_path(cwd);
        let agent_dir = crate::session::resolve_path(agent_dir);
        let load = |scope: Scope| {
            let path = SettingsFile::path_for(scope, &cwd, &agent_dir);
            let trusted = scope == Scope::User || project_trusted;
            let empty = SettingsFile { path: path.clone(), values: Default::default() };
            if trusted { SettingsFile::load(path).unwrap_or(empty) } else { empty }
        };
        let (global, project) = (load(Scope::User), load(Scope::Project));
        PackageManager {
            cwd,
            agent_dir,
            project_trusted,
            global,
            project,
            command_output_to_stderr: false,
            progress: Box::new(|_| {}),
        }
    }

    /// Receives progress reports.
    pub fn set_progress(&mut self, f: impl FnMut(Progress) + Send + 'static) {
        self.progress = Box::new(f);
    }

    fn emit(&mut self, p: Progress) {
        (self.progress)(p);
    }

    fn assert_trusted(&self, scope: Scope) -> Result<(), PackageError> {
        if scope == Scope::Project && !self.project_trusted {
            return Err(PackageError::Other(
                "Project is not trusted; refusing to access project package storage".into(),
            ));
        }
        Ok(())
    }

    /// The directory relative local sources of `scope` resolve against.
    pub fn base_dir(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::Project => self.cwd.join(".pi"),
            Scope::User => self.agent_dir.clone(),
            Scope::Temporary => self.cwd.clone(),
        }
    }

    pub(super) fn npm_command(&self) -> (String, Vec<String>) {
        let list = self.global.string_list("npmCommand");
        let project = self.project.string_list("npmCommand");
        let list = if project.is_empty() { list } else { project };
        match list.split_first() {
            Some((cmd, rest)) if !cmd.is_empty() => (cmd.clone(), rest.to_vec()),
            _ => ("npm".to_string(), Vec::new()),
        }
    }

    fn run_npm(&self, args: Vec<String>, cwd: Option<&Path>) -> Result<(), PackageError> {
        let (cmd, mut full) = self.npm_command();
        full.extend(args);
        run(&cmd, &full, cwd, self.command_output_to_stderr)
    }

    fn run_git(&self, args: &[&str], cwd: Option<&Path>) -> Result<(), PackageError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        run("git", &args, cwd, self.command_output_to_stderr)
    }

    /// `<root>/npm` of a scope; for `-e` sources (temporary scope) pi's cache folder
    /// `<agent dir>/tmp/extensions/npm/<hash>/`.
    pub fn npm_root(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::Project => self.cwd.join(".pi").join("npm"),
            Scope::User => self.agent_dir.join("npm"),
            Scope::Temporary => self.temporary_dir("npm", None, None),
        }
    }

    /// pi's `getTemporaryDir`: `<agent dir>/tmp/extensions/<prefix>/<sha256 of
    /// "<prefix>-<suffix>[@ref]", 8 hex digits>/<suffix>`, where `-e` npm and git sources are
    /// installed and reused by later runs.
    pub fn temporary_dir(&self, prefix: &str, suffix: Option<&str>, git_ref: Option<&str>) -> PathBuf {
        use sha2::{Digest, Sha256};
        let key = format!("{prefix}-{}{}", suffix.unwrap_or(""), git_ref.map(|r| format!("@{r}")).unwrap_or_default());
        let digest = Sha256::digest(key.as_bytes());
        let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        let dir = self.agent_dir.join("tmp").join("extensions").join(prefix).join(hash);
        match suffix {
            Some(s) if !s.is_empty() => dir.join(s),
            _ => dir,
        }
    }

    /// Where an npm package of `scope` is installed.
    pub fn npm_install_path(&self, source: &NpmSource, scope: Scope) -> PathBuf {
        self.npm_root(scope).join("node_modules").join(&source.name)
    }

    /// Where an npm package is found (pi's `getNpmInstallPath`): the managed install, else, for
    /// the user scope, a copy in npm's global root (`npm root -g`) left by older pi versions.
    pub fn npm_found_path(&self, source: &NpmSource, scope: Scope) -> PathBuf {
        let managed = self.npm_install_path(source, scope);
        if scope != Scope::User || managed.exists() {
            return managed;
        }
        let (command, mut args) = self.npm_command();
        args.extend(["root".to_string(), "-g".to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match capture(&command, &args, None, &[]) {
            Ok(root) if !root.is_empty() => {
                let legacy = PathBuf::from(root).join(&source.name);
                if legacy.exists() { legacy } else { managed }
            }
            _ => managed,
        }
    }

    /// Where a git package of `scope` is cloned (`<root>/git/<host>/<path>`).
    pub fn git_install_path(&self, source: &GitSource, scope: Scope) -> PathBuf {
        let root = match scope {
            Scope::Project => self.cwd.join(".pi").join("git"),
            Scope::User => self.agent_dir.join("git"),
            Scope::Temporary => {
                let prefix = format!("git-{}", source.host);
                return self.temporary_dir(&prefix, Some(&source.path), source.git_ref.as_deref());
            }
        };
        root.join(&source.host).join(&source.path)
    }

    /// Where a source is installed, if it is (pi's `getInstalledPath`).
    pub fn installed_path(&self, source: &str, scope: Scope) -> Option<PathBuf> {
        let path = match parse_source(source) {
            PackageSource::Npm(n) => self.npm_found_path(&n, scope),
            PackageSource::Git(g) => self.git_install_path(&g, scope),
            PackageSource::Local { path } => resolve_from(&path, &self.base_dir(scope)),
        };
        path.exists().then_some(path)
    }

    fn ensure_git_ignore(dir: &Path) -> Result<(), PackageError> {
        std::fs::create_dir_all(dir).map_err(|e| PackageError::Io(format!("{}: {e}", dir.display())))?;
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(&ignore, "*\n!.gitignore\n")
                .map_err(|e| PackageError::Io(format!("{}: {e}", ignore.display())))?;
        }
        Ok(())
    }

    fn ensure_npm_project(root: &Path) -> Result<(), PackageError> {
        Self::ensure_git_ignore(root)?;
        let pkg = root.join("package.json");
        if !pkg.exists() {
            std::fs::write(&pkg, "{\n  \"name\": \"pi-extensions\",\n  \"private\": true\n}")
                .map_err(|e| PackageError::Io(format!("{}: {e}", pkg.display())))?;
        }
        Ok(())
    }

    fn npm_install_args(specs: &[String], root: &Path) -> Vec<String> {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let mut args = vec!["install".to_string()];
        args.extend(specs.iter().cloned());
        args.extend(["--prefix".into(), root.display().to_string(), "--legacy-peer-deps".into()]);
        args.extend(["--no-audit".into(), "--no-fund".into()]);
        args
    }

    /// pi's `getExtensionTempFolder`: `<agent dir>/tmp/extensions`, private to the user.
    fn ensure_temporary_root(agent_dir: &Path) -> Result<(), PackageError> {
        let dir = agent_dir.join("tmp").join("extensions");
        std::fs::create_dir_all(&dir).map_err(|e| PackageError::Io(format!("{}: {e}", dir.display())))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| PackageError::Io(format!("{}: {e}", dir.display())))?;
        }
        Ok(())
    }

    /// `npm install <specs>` into a scope's npm root.
    pub fn install_npm_specs(&self, specs: &[String], scope: Scope) -> Result<(), PackageError> {
        self.assert_trusted(scope)?;
        if scope == Scope::Temporary {
            Self::ensure_temporary_root(&self.agent_dir)?;
        }
        let root = self.npm_root(scope);
        Self::ensure_npm_project(&root)?;
        self.run_npm(Self::npm_install_args(specs, &root), None)
    }

    fn git_dependency_args() -> Vec<String> {
        ["install", "--omit=dev", "--legacy-peer-deps", "--no-audit", "--no-fund"].map(String::from).to_vec()
    }

    /// Clones (or reconciles) a git source (pi's `installGit`).
    pub fn install_git(&self, source: &GitSource, scope: Scope) -> Result<(), PackageError> {
        self.assert_trusted(scope)?;
        let target = self.git_install_path(source, scope);
        if target.exists() {
            return self.reconcile_git(source, &target);
        }
        // Temporary (`-e`) checkouts have no install root of their own (pi's `getGitInstallRoot`).
        let root = (scope != Scope::Temporary)
            .then(|| target.ancestors().nth(source.path.split('/').count() + 1).map(Path::to_path_buf))
            .flatten();
        if scope == Scope::Temporary {
            Self::ensure_temporary_root(&self.agent_dir)?;
        }
        if let Some(root) = &root {
            Self::ensure_git_ignore(root)?;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| PackageError::Io(format!("{}: {e}", parent.display())))?;
        }
        let _ = std::fs::remove_file(marker_path(&target));
        let result = (|| {
            self.run_git(&["clone", &source.repo, &target.display().to_string()], None)?;
            if let Some(r) = &source.git_ref {
                self.run_git(&["checkout", r], Some(&target))?;
            }
            if target.join("package.json").exists() {
                self.run_npm(Self::git_dependency_args(), Some(&target))?;
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&target);
            prune_empty_parents(&target, root.as_deref());
        }
        result
    }

    fn reconcile_git(&self, source: &GitSource, target: &Path) -> Result<(), PackageError> {
        match &source.git_ref {
            Some(r) => self.ensure_git_ref(target, &["fetch", "origin", r], "FETCH_HEAD"),
            None => {
                let (fetch, r) = self.local_update_target(target);
                let fetch: Vec<&str> = fetch.iter().map(String::as_str).collect();
                self.ensure_git_ref(target, &fetch, &r)
            }
        }
    }

    fn local_update_target(&self, target: &Path) -> (Vec<String>, String) {
        let fetch = |branch: &str| {
            ["fetch", "--prune", "--no-tags", "origin"]
                .map(String::from)
                .into_iter()
                .chain([format!("+refs/heads/{branch}:refs/remotes/origin/{branch}")])
                .collect::<Vec<_>>()
        };
        if let Ok(upstream) = capture("git", &["rev-parse", "--abbrev-ref", "@{upstream}"], Some(target), &[])
            && let Some(branch) = upstream.strip_prefix("origin/").filter(|b| !b.is_empty())
        {
            return (fetch(branch), "@{upstream}".to_string());
        }
        let _ = capture("git", &["remote", "set-head", "origin", "-a"], Some(target), &[]);
        let head = capture("git", &["symbolic-ref", "refs/remotes/origin/HEAD"], Some(target), &[]).unwrap_or_default();
        let branch = head.trim().trim_start_matches("refs/remotes/origin/").to_string();
        if branch.is_empty() {
            let f = ["fetch", "--prune", "--no-tags", "origin", "+HEAD:refs/remotes/origin/HEAD"].map(String::from);
            return (f.to_vec(), "origin/HEAD".to_string());
        }
        (fetch(&branch), "origin/HEAD".to_string())
    }

    fn ensure_git_ref(&self, target: &Path, fetch: &[&str], r: &str) -> Result<(), PackageError> {
        self.run_git(fetch, Some(target))?;
        let local = capture("git", &["rev-parse", "HEAD"], Some(target), &[])?;
        let commit = format!("{r}^{{commit}}");
        let wanted = capture("git", &["rev-parse", &commit], Some(target), &[])?;
        let marker = marker_path(target);
        if local.trim() == wanted.trim() {
            if marker.exists() {
                return self.clean_and_install(target, &marker);
            }
            if has_missing_dependencies(target) {
                self.run_npm(Self::git_dependency_args(), Some(target))?;
            }
            return Ok(());
        }
        std::fs::write(&marker, "").map_err(|e| PackageError::Io(format!("{}: {e}", marker.display())))?;
        self.run_git(&["reset", "--hard", &commit], Some(target))?;
        self.clean_and_install(target, &marker)
    }

    fn clean_and_install(&self, target: &Path, marker: &Path) -> Result<(), PackageError> {
        self.run_git(&["clean", "-fdx"], Some(target))?;
        if target.join("package.json").exists() {
            self.run_npm(Self::git_dependency_args(), Some(target))?;
        }
        let _ = std::fs::remove_file(marker);
        Ok(())
    }

    /// pi's `install`: fetches the source (a local path must exist).
    pub fn install(&mut self, source: &str, scope: Scope) -> Result<(), PackageError> {
        self.assert_trusted(scope)?;
        self.emit(Progress::Start(format!("Installing {source}...")));
        match parse_source(source) {
            PackageSource::Npm(n) => self.install_npm_specs(std::slice::from_ref(&n.spec), scope),
            PackageSource::Git(g) => self.install_git(&g, scope),
            PackageSource::Local { path } => {
                let resolved = resolve_from(&path, &self.cwd);
                if resolved.exists() {
                    Ok(())
                } else {
                    Err(PackageError::Other(format!("Path does not exist: {}", resolved.display())))
                }
            }
        }
    }

    /// pi's `remove`: deletes what was installed (local sources are left alone).
    pub fn remove(&mut self, source: &str, scope: Scope) -> Result<(), PackageError> {
        self.assert_trusted(scope)?;
        self.emit(Progress::Start(format!("Removing {source}...")));
        match parse_source(source) {
            PackageSource::Npm(n) => {
                let root = self.npm_root(scope);
                if !root.exists() {
                    return Ok(());
                }
                let root = std::fs::canonicalize(&root).unwrap_or(root);
                let args = ["uninstall", &n.name, "--prefix", &root.display().to_string()]
                    .map(String::from)
                    .into_iter()
                    .chain(["--legacy-peer-deps", "--no-audit", "--no-fund"].map(String::from))
                    .collect();
                self.run_npm(args, None)
            }
            PackageSource::Git(g) => {
                let target = self.git_install_path(&g, scope);
                let _ = std::fs::remove_dir_all(&target);
                let _ = std::fs::remove_file(marker_path(&target));
                let root = target.ancestors().nth(g.path.split('/').count() + 1).map(Path::to_path_buf);
                prune_empty_parents(&target, root.as_deref());
                Ok(())
            }
            PackageSource::Local { .. } => Ok(()),
        }
    }

    fn settings_mut(&mut self, scope: Scope) -> &mut SettingsFile {
        if scope == Scope::Project { &mut self.project } else { &mut self.global }
    }

    /// The identity two entries share when they are the same package (pi's
    /// `getPackageIdentity`): npm name, git host/path, or the resolved local path.
    pub fn identity(&self, source: &str, scope: Option<Scope>) -> String {
        match parse_source(source) {
            PackageSource::Npm(n) => format!("npm:{}", n.name),
            PackageSource::Git(g) => format!("git:{}/{}", g.host, g.path),
            PackageSource::Local { path } => {
                let base = scope.map_or_else(|| self.cwd.clone(), |s| self.base_dir(s));
                format!("local:{}", resolve_from(&path, &base).display())
            }
        }
    }

    fn settings_form(&self, source: &str, scope: Scope) -> String {
        match parse_source(source) {
            PackageSource::Local { path } => {
                let rel = relative_path(&self.base_dir(scope), &resolve_from(&path, &self.cwd));
                if rel.is_empty() { ".".into() } else { rel }
            }
            _ => source.to_string(),
        }
    }

    /// Adds (or re-points) the source in the scope's `packages`; false when already there.
    pub fn add_to_settings(&mut self, source: &str, scope: Scope) -> Result<bool, PackageError> {
        let normalized = self.settings_form(source, scope);
        let wanted = self.identity(source, None);
        let packages = self.settings_mut(scope).packages();
        let index = packages.iter().position(|p| self.identity(entry_source(p), Some(scope)) == wanted);
        let mut next = packages.clone();
        match index {
            Some(i) if entry_source(&packages[i]) == normalized => return Ok(false),
            Some(i) => {
                next[i] = match &packages[i] {
                    Value::Object(o) => {
                        let mut o = o.clone();
                        o.insert("source".into(), Value::String(normalized));
                        Value::Object(o)
                    }
                    _ => Value::String(normalized),
                }
            }
            None => next.push(Value::String(normalized)),
        }
        self.settings_mut(scope).save_packages(next)?;
        Ok(true)
    }

    /// Removes the source from the scope's `packages`; false when it was not there.
    pub fn remove_from_settings(&mut self, source: &str, scope: Scope) -> Result<bool, PackageError> {
        let wanted = self.identity(source, None);
        let packages = self.settings_mut(scope).packages();
        let next: Vec<Value> =
            packages.iter().filter(|p| self.identity(entry_source(p), Some(scope)) != wanted).cloned().collect();
        if next.len() == packages.len() {
            return Ok(false);
        }
        self.settings_mut(scope).save_packages(next)?;
        Ok(true)
    }

    /// The configured packages, user then project.
    pub fn list(&self) -> Vec<ConfiguredPackage> {
        let mut out = Vec::new();
        for (scope, file) in [(Scope::User, &self.global), (Scope::Project, &self.project)] {
            for p in file.packages() {
                let source = entry_source(&p).to_string();
                out.push(ConfiguredPackage {
                    installed_path: self.installed_path(&source, scope),
                    filtered: p.is_object(),
                    source,
                    scope,
                });
            }
        }
        out
    }

    /// `pi update [source]`: reconciles unpinned npm packages and every git package.
    pub fn update(&mut self, source: Option<&str>) -> Result<(), PackageError> {
        let wanted = source.map(|s| self.identity(s, None));
        let mut targets = Vec::new();
        for (scope, file) in [(Scope::User, &self.global), (Scope::Project, &self.project)] {
            for p in file.packages() {
                let s = entry_source(&p).to_string();
                if wanted.as_ref().is_none_or(|w| *w == self.identity(&s, Some(scope))) {
                    targets.push((s, scope));
                }
            }
        }
        if let Some(s) = source
            && targets.is_empty()
        {
            return Err(PackageError::Other(self.no_match_message(s)));
        }
        if is_offline() {
            return Ok(());
        }
        super::update::update_sources(self, &targets)
    }

    fn no_match_message(&self, source: &str) -> String {
        let trimmed = source.trim();
        let all = self.global.packages().into_iter().chain(self.project.packages());
        let suggestion = all.map(|p| entry_source(&p).to_string()).find(|s| match parse_source(s) {
            PackageSource::Npm(n) => trimmed == n.name || trimmed == n.spec,
            PackageSource::Git(g) => {
                let short = format!("{}/{}", g.host, g.path);
                trimmed == short || g.git_ref.is_some_and(|r| trimmed == format!("{short}@{r}"))
            }
            PackageSource::Local { .. } => false,
        });
        match suggestion {
            Some(s) => format!("No matching package found for {source}. Did you mean {s}?"),
            None => format!("No matching package found for {source}"),
        }
    }

    pub(super) fn emit_progress(&mut self, p: Progress) {
        self.emit(p);
    }

    pub(super) fn reconcile_git_source(&self, source: &GitSource, scope: Scope) -> Result<(), PackageError> {
        let target = self.git_install_path(source, scope);
        if !target.exists() {
            return self.install_git(source, scope);
        }
        self.reconcile_git(source, &target)
    }
}

fn marker_path(target: &Path) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!(".{name}.pi-update-incomplete"))
}

fn prune_empty_parents(target: &Path, root: Option<&Path>) {
    let Some(root) = root else { return };
    let mut current = target.parent();
    while let Some(dir) = current {
        if !dir.starts_with(root) || dir == root {
            break;
        }
        if dir.exists() {
            let empty = std::fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(false);
            if !empty || std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
        current = dir.parent();
    }
}

fn has_missing_dependencies(target: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(target.join("package.json")) else { return false };
    let Ok(Value::Object(manifest)) = serde_json::from_str::<Value>(text.trim_start_matches('\u{feff}')) else {
        return false;
    };
    let Some(Value::Object(deps)) = manifest.get("dependencies") else { return false };
    deps.keys().any(|name| !target.join("node_modules").join(name).exists())
}
