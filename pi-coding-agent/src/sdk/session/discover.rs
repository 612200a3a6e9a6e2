//! `resources_discover` after `session_start` (pi's `extendResourcesFromExtensions`): the skill
//! and prompt template paths extensions return are loaded and added after the session's own
//! (a name the session already has keeps its resource); the next system prompt lists the skills.
//! Theme paths (files, or folders of `.json` files) are kept by the session: the interactive mode
//! offers their themes by the name in their JSON (`/settings`, `ctx.ui.setTheme`), as pi's theme
//! registry does.

use std::path::{Path, PathBuf};

use super::{AgentSession, lock};
use crate::extensions::DiscoveredPath;

/// A returned path resolved as pi resolves it: relative to the extension's folder (the session's
/// cwd for a synthetic `<inline>` extension).
fn resolve(entry: &DiscoveredPath, cwd: &str) -> PathBuf {
    let path = Path::new(&entry.path);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let base = if entry.extension_path.starts_with('<') {
        PathBuf::from(cwd)
    } else {
        Path::new(&entry.extension_path).parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(cwd))
    };
    base.join(path)
}

impl AgentSession {
    /// Emits `resources_discover` (`reason`: `startup` or `reload`) when a handler listens, and
    /// adds what the handlers return. Returns the theme paths (the interactive mode loads them).
    pub async fn extend_resources_from_extensions(&self, reason: &str) -> Vec<PathBuf> {
        let Some(runner) = self.shared.runner.clone().filter(|r| r.has_handlers("resources_discover")) else {
            return Vec::new();
        };
        let found = runner.emit_resources_discover(&self.cwd, reason).await;
        if found.is_empty() {
            return Vec::new();
        }
        let cwd = Path::new(&self.cwd);
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let paths = |list: &[DiscoveredPath]| list.iter().map(|e| resolve(e, &self.cwd)).collect::<Vec<_>>();
        let skills = super::super::skills::load_skills(&paths(&found.skill_paths), cwd, home.as_deref()).skills;
        let templates =
            super::super::prompt_templates::load_prompt_templates(&paths(&found.prompt_paths), cwd, home.as_deref())
                .templates;
        {
            let mut options = lock(&self.shared.prompt_options);
            for skill in skills {
                if !options.skills.iter().any(|s| s.name == skill.name) {
                    options.skills.push(skill);
                }
            }
        }
        {
            let mut known = lock(&self.shared.prompt_templates);
            for template in templates {
                if !known.iter().any(|t| t.name == template.name) {
                    known.push(template);
                }
            }
        }
        let themes = paths(&found.theme_paths);
        {
            let mut known = lock(&self.shared.extension_themes);
            for theme in &themes {
                if !known.contains(theme) {
                    known.push(theme.clone());
                }
            }
        }
        themes
    }

    /// The theme files `resources_discover` handlers returned, as [`ExtensionTheme`]s.
    pub fn extension_themes(&self) -> Vec<ExtensionTheme> {
        let paths = lock(&self.shared.extension_themes).clone();
        extension_themes(&paths)
    }
}

/// A theme an extension provided: the name in its JSON and its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionTheme {
    /// The theme's `name` (the file's stem when it has none).
    pub name: String,
    /// The theme file.
    pub path: PathBuf,
}

/// The themes of `paths`: each `.json` file, and the `.json` files of each folder (sorted);
/// the first of a name wins. Unreadable files are left out (loading one names the problem).
pub fn extension_themes(paths: &[PathBuf]) -> Vec<ExtensionTheme> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let Ok(entries) = std::fs::read_dir(path) else { continue };
            let mut found: Vec<PathBuf> =
                entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    let mut out: Vec<ExtensionTheme> = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let named = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("name").and_then(serde_json::Value::as_str).map(str::to_owned));
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let name = named.unwrap_or(stem);
        if !out.iter().any(|t| t.name == name) {
            out.push(ExtensionTheme { name, path });
        }
    }
    out
}
