//! `pi update` for packages (pi's `updateConfiguredSources`): unpinned npm packages are
//! reinstalled when the registry has a newer matching version, every git package is fetched
//! and reset to its branch or ref, and each changed package is reported as
//! `<source>[ (project)] <from> -> <to>`.

use std::path::Path;

use serde_json::Value;

use super::PackageError;
use super::commands::capture;
use super::manager::{PackageManager, Progress};
use super::settings_file::Scope;
use super::source::{NpmSource, PackageSource, parse_source};

fn installed_version(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path.join("package.json")).ok()?;
    let v: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()?;
    v.get("version")?.as_str().map(str::to_owned)
}

fn parse_version(v: &str) -> Option<semver::Version> {
    semver::Version::parse(v.trim().trim_start_matches('=').trim_start_matches('v')).ok()
}

/// An npm range as a `semver::VersionReq` (npm's space-separated comparators become commas).
fn parse_range(range: &str) -> Option<semver::VersionReq> {
    let joined = range.split_whitespace().collect::<Vec<_>>().join(", ");
    semver::VersionReq::parse(&joined).ok()
}

fn latest_npm_version(pm: &PackageManager, source: &NpmSource) -> Result<String, PackageError> {
    let spec = if source.version.is_some() { source.spec.as_str() } else { source.name.as_str() };
    let (command, mut args) = pm.npm_command();
    args.extend(["view", spec, "version", "--json"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let raw = capture(&command, &args, Some(&pm.cwd), &[])?;
    match serde_json::from_str::<Value>(&raw) {
        Ok(Value::String(s)) => Ok(s),
        Ok(Value::Array(items)) => {
            let range = source.version.as_deref().and_then(parse_range);
            let mut versions: Vec<semver::Version> =
                items.iter().filter_map(Value::as_str).filter_map(parse_version).collect();
            if let Some(r) = range {
                versions.retain(|v| r.matches(v));
            }
            versions.sort();
            versions
                .pop()
                .map(|v| v.to_string())
                .ok_or_else(|| PackageError::Other("Unexpected response from npm view".into()))
        }
        _ => Err(PackageError::Other("Unexpected response from npm view".into())),
    }
}

/// pi's refresh of an unpinned `-e` npm source on load: when the registry has a newer matching
/// version, installs `<name>@latest` (or the configured range) into the temporary npm root; a
/// failed check or install keeps the cached copy.
pub(super) fn refresh_temporary_npm(pm: &PackageManager, source: &NpmSource, installed: &Path) {
    if source.pinned || super::manager::is_offline() {
        return;
    }
    let (Some(current), Ok(latest)) = (installed_version(installed), latest_npm_version(pm, source)) else { return };
    if matches!((parse_version(&latest), parse_version(&current)), (Some(l), Some(c)) if l > c) {
        let spec = if source.version.is_some() { source.spec.clone() } else { format!("{}@latest", source.name) };
        if let Err(e) = pm.install_npm_specs(&[spec], Scope::Temporary) {
            tracing::debug!(source = %source.spec, error = %e, "keeping the cached -e package");
        }
    }
}

/// pi's `refreshTemporaryGitSource`: a cached `-e` git checkout is fetched and reset to its
/// branch or ref on load, unless its ref is a commit hash already checked out; a failure keeps
/// the cached checkout.
pub(super) fn refresh_temporary_git(pm: &PackageManager, source: &super::source::GitSource, installed: &Path) {
    if super::manager::is_offline() {
        return;
    }
    if let Some(r) = &source.git_ref
        && (7..=64).contains(&r.len())
        && r.chars().all(|c| c.is_ascii_hexdigit())
        && git_head(installed).is_some_and(|head| head.to_ascii_lowercase().starts_with(&r.to_ascii_lowercase()))
    {
        return;
    }
    if let Err(e) = pm.reconcile_git_source(source, Scope::Temporary) {
        tracing::debug!(source = %source.repo, error = %e, "keeping the cached -e checkout");
    }
}

fn git_head(target: &Path) -> Option<String> {
    if !target.exists() {
        return None;
    }
    capture("git", &["rev-parse", "HEAD"], Some(target), &[]).ok().filter(|h| !h.is_empty())
}

struct NpmUpdate {
    source: String,
    parsed: NpmSource,
    scope: Scope,
    from: Option<String>,
}

fn format_change(source: &str, scope: Scope, from: Option<&str>, to: Option<&str>, git: bool) -> String {
    let fmt = |v: Option<&str>| match v {
        None => "(none)".to_string(),
        Some(v) if git => v.chars().take(7).collect(),
        Some(v) => v.to_string(),
    };
    let scope = if scope == Scope::Project { " (project)" } else { "" };
    format!("{source}{scope} {} -> {}", fmt(from), fmt(to))
}

/// Updates `targets` (source, scope) and reports changes through the manager's progress.
pub(super) fn update_sources(pm: &mut PackageManager, targets: &[(String, Scope)]) -> Result<(), PackageError> {
    let mut npm = Vec::new();
    let mut git = Vec::new();
    for (source, scope) in targets {
        match parse_source(source) {
            PackageSource::Npm(n) if !n.pinned => {
                let path = pm.npm_install_path(&n, *scope);
                let from = if path.exists() { installed_version(&path) } else { None };
                let should = match &from {
                    None => true,
                    Some(installed) => match latest_npm_version(pm, &n) {
                        Ok(latest) => match (parse_version(&latest), parse_version(installed)) {
                            (Some(l), Some(i)) => l > i,
                            _ => true,
                        },
                        Err(_) => true,
                    },
                };
                if should {
                    npm.push(NpmUpdate { source: source.clone(), parsed: n, scope: *scope, from });
                }
            }
            PackageSource::Git(g) => git.push((source.clone(), g, *scope)),
            _ => {}
        }
    }
    let mut changes = Vec::new();
    for scope in [Scope::User, Scope::Project] {
        let batch: Vec<&NpmUpdate> = npm.iter().filter(|u| u.scope == scope).collect();
        if batch.is_empty() {
            continue;
        }
        let message = match batch.as_slice() {
            [one] => format!("Updating {}...", one.source),
            _ => format!("Updating {} npm packages...", scope.as_str()),
        };
        pm.emit_progress(Progress::Start(message));
        let specs: Vec<String> =
            batch
                .iter()
                .map(|u| {
                    if u.parsed.version.is_some() { u.parsed.spec.clone() } else { format!("{}@latest", u.parsed.name) }
                })
                .collect();
        pm.install_npm_specs(&specs, scope)?;
    }
    for u in &npm {
        let path = pm.npm_install_path(&u.parsed, u.scope);
        let to = if path.exists() { installed_version(&path) } else { None };
        if to != u.from {
            changes.push(format_change(&u.source, u.scope, u.from.as_deref(), to.as_deref(), false));
        }
    }
    for (source, g, scope) in &git {
        pm.emit_progress(Progress::Start(format!("Updating {source}...")));
        let target = pm.git_install_path(g, *scope);
        let from = git_head(&target);
        pm.reconcile_git_source(g, *scope)?;
        let to = git_head(&target);
        if from != to {
            changes.push(format_change(source, *scope, from.as_deref(), to.as_deref(), true));
        }
    }
    for c in changes {
        pm.emit_progress(Progress::Updated(c));
    }
    Ok(())
}
