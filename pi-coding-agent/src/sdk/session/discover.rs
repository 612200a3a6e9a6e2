//! `resources_discover` after `session_start` (pi's `extendResourcesFromExtensions`): the skill
//! and prompt template paths extensions return are loaded and added after the session's own
//! (a name the session already has keeps its resource); the next system prompt lists the skills.

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
        paths(&found.theme_paths)
    }
}
