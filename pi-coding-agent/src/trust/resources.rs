//! Which project resources wait for project trust (pi's `hasTrustRequiringProjectResources`).

use std::path::{Path, PathBuf};

use super::store::normalize_cwd;

/// The entries of `<cwd>/.pi` that need a trust decision before they load (pi's
/// `TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES`). A bare `.pi` directory does not.
pub const TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES: [&str; 8] =
    ["settings.json", "mcp.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md"];

/// The user's home directory as pi reads it (`$HOME`, else the system's).
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).or_else(dirs::home_dir)
}

/// Whether `cwd` has project resources that wait for trust: an entry of
/// [`TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES`] under `<cwd>/.pi`, or an `.agents/skills`
/// directory in `cwd` or any ancestor. The user's own `~/.agents/skills` never counts.
///
/// Context files (`AGENTS.md`, `CLAUDE.md`) load whatever the decision, so they do not count.
pub fn has_trust_requiring_project_resources(cwd: &Path) -> bool {
    let user_agents_skills = home_dir().map(|h| normalize_cwd(&h).join(".agents").join("skills"));
    let current = normalize_cwd(cwd);
    let config_dir = current.join(".pi");
    if TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES.iter().any(|entry| config_dir.join(entry).exists()) {
        return true;
    }
    current.ancestors().any(|dir| {
        let skills = dir.join(".agents").join("skills");
        Some(&skills) != user_agents_skills.as_ref() && skills.exists()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_pi_dir_needs_no_trust_but_its_settings_do() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        assert!(!has_trust_requiring_project_resources(&project));
        std::fs::write(project.join(".pi/settings.json"), "{}").unwrap();
        assert!(has_trust_requiring_project_resources(&project));
    }

    #[test]
    fn ancestor_agents_skills_need_trust() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("a/b");
        std::fs::create_dir_all(&project).unwrap();
        assert!(!has_trust_requiring_project_resources(&project));
        std::fs::create_dir_all(dir.path().join("a/.agents/skills")).unwrap();
        assert!(has_trust_requiring_project_resources(&project));
    }
}
