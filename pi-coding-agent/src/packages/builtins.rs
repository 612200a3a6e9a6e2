//! The built-in extensions as resources (pi's `builtin:<name>` paths): listed by `pi config`
//! and enabled unless the user `extensions` setting says otherwise (`-builtin:mcp`), where a
//! matching `+` / `-` / `!` entry of a trusted project's setting wins.

use std::path::{Path, PathBuf};

use super::resolve::{ResolvedResource, ResourceOrigin};
use super::settings_file::{Scope, SettingsFile};

/// The prefix of a built-in extension's path (pi's `BUILTIN_PATH_PREFIX`).
pub const BUILTIN_PATH_PREFIX: &str = "builtin:";

fn glob_matches(pattern: &str, path: &str) -> bool {
    globset::Glob::new(pattern).map(|g| g.compile_matcher().is_match(path)).unwrap_or(false) || pattern == path
}

/// pi's `isEnabledByOverrides` for a `builtin:` path: `!` globs exclude, `+` includes, `-`
/// excludes, in that order of strength.
fn enabled_by_overrides(path: &str, entries: &[String]) -> bool {
    let with = |prefix: char| entries.iter().filter_map(move |e| e.strip_prefix(prefix));
    let mut enabled = true;
    if with('!').any(|p| glob_matches(p, path)) {
        enabled = false;
    }
    if with('+').any(|p| p == path) {
        enabled = true;
    }
    if with('-').any(|p| p == path) {
        enabled = false;
    }
    enabled
}

/// pi's `applyAutoloadDisabledPatterns` for one path: the last matching override entry decides.
fn project_override(path: &str, entries: &[String]) -> Option<bool> {
    let mut result = None;
    for entry in entries {
        let Some(target) = entry.strip_prefix(['+', '-', '!']) else { continue };
        let exact = entry.starts_with(['+', '-']);
        if if exact { target == path } else { glob_matches(target, path) } {
            result = Some(!entry.starts_with(['-', '!']));
        }
    }
    result
}

fn extensions_setting(scope: Scope, cwd: &Path, agent_dir: &Path) -> Vec<String> {
    SettingsFile::load(SettingsFile::path_for(scope, cwd, agent_dir))
        .map(|f| f.string_list("extensions"))
        .unwrap_or_default()
}

/// The built-in extensions `names` as resources, with pi's enabled state and scope (`project`
/// when a trusted project's setting decides).
pub fn builtin_resources(cwd: &Path, agent_dir: &Path, project_trusted: bool, names: &[&str]) -> Vec<ResolvedResource> {
    let global = extensions_setting(Scope::User, cwd, agent_dir);
    let project = if project_trusted { extensions_setting(Scope::Project, cwd, agent_dir) } else { Vec::new() };
    names
        .iter()
        .map(|name| {
            let path = format!("{BUILTIN_PATH_PREFIX}{name}");
            let decided = project_override(&path, &project);
            ResolvedResource {
                enabled: decided.unwrap_or_else(|| enabled_by_overrides(&path, &global)),
                path: PathBuf::from(path),
                origin: ResourceOrigin::Builtin,
                scope: if decided.is_some() { Scope::Project } else { Scope::User },
                base_dir: None,
            }
        })
        .collect()
}

/// Whether the built-in extension `name` is enabled by the settings of `agent_dir` and (when
/// trusted) the project of `cwd`.
pub fn builtin_extension_enabled(cwd: &Path, agent_dir: &Path, project_trusted: bool, name: &str) -> bool {
    builtin_resources(cwd, agent_dir, project_trusted, &[name]).first().is_none_or(|r| r.enabled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_setting_disables_and_a_trusted_project_decides() {
        let dir = tempfile::tempdir().unwrap();
        let (cwd, agent) = (dir.path().join("p"), dir.path().join("a"));
        std::fs::create_dir_all(cwd.join(".pi")).unwrap();
        std::fs::create_dir_all(&agent).unwrap();
        assert!(builtin_extension_enabled(&cwd, &agent, true, "mcp"));
        std::fs::write(agent.join("settings.json"), r#"{"extensions":["-builtin:mcp"]}"#).unwrap();
        assert!(!builtin_extension_enabled(&cwd, &agent, true, "mcp"));
        assert!(builtin_extension_enabled(&cwd, &agent, true, "tool-search"));
        std::fs::write(cwd.join(".pi/settings.json"), r#"{"extensions":["+builtin:mcp"]}"#).unwrap();
        assert!(builtin_extension_enabled(&cwd, &agent, true, "mcp"));
        assert!(!builtin_extension_enabled(&cwd, &agent, false, "mcp"));
        let r = builtin_resources(&cwd, &agent, true, &["mcp", "tool-search"]);
        assert_eq!((r[0].scope, r[1].scope), (Scope::Project, Scope::User));
        std::fs::write(agent.join("settings.json"), r#"{"extensions":["!builtin:*"]}"#).unwrap();
        assert!(!builtin_extension_enabled(&cwd, &agent, false, "tool-search"));
    }
}
