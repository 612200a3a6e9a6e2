//! Skills (pi 1.6.0's Agent Skills support): `SKILL.md` files with `name` / `description`
//! frontmatter, validated with warnings, de-duplicated by name (first wins, the loser is reported
//! as a collision), and listed in the system prompt for the model to load on demand.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::diagnostics::ResourceDiagnostic;
use super::discovery::{IgnoreRules, path_key, read_dir_sorted, read_text, resolve_path};
use super::frontmatter::parse_frontmatter;
use crate::compaction::js_len;

const MAX_NAME_LENGTH: usize = 64;
const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// A loaded skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// Its name (frontmatter `name`, else the parent directory's name).
    pub name: String,
    /// What it is for (frontmatter `description`, required).
    pub description: String,
    /// The skill file.
    pub file_path: PathBuf,
    /// The directory relative references resolve against (the file's parent).
    pub base_dir: PathBuf,
    /// `disable-model-invocation: true`: only `/skill:name` can use it; the prompt does not list it.
    pub disable_model_invocation: bool,
}

/// Skills plus what went wrong finding them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadSkillsResult {
    /// The skills, in discovery order.
    pub skills: Vec<Skill>,
    /// Warnings, then collisions.
    pub diagnostics: Vec<ResourceDiagnostic>,
}

fn validate_name(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let len = js_len(name);
    if len > MAX_NAME_LENGTH {
        errors.push(format!("name exceeds {MAX_NAME_LENGTH} characters ({len})"));
    }
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        errors.push("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)".to_owned());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("name must not start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        errors.push("name must not contain consecutive hyphens".to_owned());
    }
    errors
}

/// Loads one skill file (pi's `loadSkillFromFile`). A file other than `SKILL.md` without a
/// description is not a skill and is skipped silently; a skill with an invalid name still loads.
pub fn load_skill_from_file(path: &Path) -> (Option<Skill>, Vec<ResourceDiagnostic>) {
    let mut diagnostics = Vec::new();
    let declared = path.file_name().is_some_and(|n| n == "SKILL.md");
    let raw = match read_text(path) {
        Ok(text) => text,
        Err(message) => {
            diagnostics.push(ResourceDiagnostic::warning(message, path));
            return (None, diagnostics);
        }
    };
    let frontmatter = match parse_frontmatter(&raw) {
        Ok((fm, _)) => fm,
        Err(e) => {
            if declared {
                diagnostics.push(ResourceDiagnostic::warning(e.0, path));
            }
            return (None, diagnostics);
        }
    };
    let description = frontmatter.string("description").filter(|d| !d.trim().is_empty());
    if !declared && description.is_none() {
        return (None, diagnostics);
    }
    match frontmatter.string("description") {
        Some(d) if !d.trim().is_empty() => {
            let len = js_len(d);
            if len > MAX_DESCRIPTION_LENGTH {
                let msg = format!("description exceeds {MAX_DESCRIPTION_LENGTH} characters ({len})");
                diagnostics.push(ResourceDiagnostic::warning(msg, path));
            }
        }
        _ => diagnostics.push(ResourceDiagnostic::warning("description is required", path)),
    }
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let parent_name = base_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = frontmatter.string("name").filter(|n| !n.is_empty()).map_or(parent_name, str::to_owned);
    for error in validate_name(&name) {
        diagnostics.push(ResourceDiagnostic::warning(error, path));
    }
    let Some(description) = description else { return (None, diagnostics) };
    let skill = Skill {
        name,
        description: description.to_owned(),
        file_path: path.to_path_buf(),
        base_dir,
        disable_model_invocation: frontmatter.is_true("disable-model-invocation"),
    };
    (Some(skill), diagnostics)
}

/// Loads the skills under `dir` (pi's `loadSkillsFromDir`): a directory containing `SKILL.md` is
/// a skill root and is not searched further; markdown files directly in `dir` are skills too;
/// hidden entries, `node_modules` and ignored paths are skipped.
pub fn load_skills_from_dir(dir: &Path) -> LoadSkillsResult {
    let mut result = LoadSkillsResult::default();
    let mut rules = IgnoreRules::new(dir);
    load_dir(dir, true, &mut rules, &mut result);
    result
}

fn load_dir(dir: &Path, include_root_files: bool, rules: &mut IgnoreRules, out: &mut LoadSkillsResult) {
    if !dir.exists() {
        return;
    }
    rules.add_dir(dir);
    let Some(entries) = read_dir_sorted(dir) else { return };
    if let Some(entry) = entries.iter().find(|e| e.name == "SKILL.md" && e.is_file && !rules.ignores(&e.path, false)) {
        let (skill, diagnostics) = load_skill_from_file(&entry.path);
        out.skills.extend(skill);
        out.diagnostics.extend(diagnostics);
        return;
    }
    for entry in &entries {
        if entry.name.starts_with('.') || entry.name == "node_modules" || rules.ignores(&entry.path, entry.is_dir) {
            continue;
        }
        if entry.is_dir {
            load_dir(&entry.path, false, rules, out);
        } else if entry.is_file && include_root_files && entry.name.ends_with(".md") {
            let (skill, diagnostics) = load_skill_from_file(&entry.path);
            out.skills.extend(skill);
            out.diagnostics.extend(diagnostics);
        }
    }
}

/// Loads skills from explicit paths (pi's `loadSkills` without defaults): directories are
/// searched, `.md` files loaded directly; the first skill of a name wins.
pub fn load_skills(paths: &[PathBuf], cwd: &Path, home: Option<&Path>) -> LoadSkillsResult {
    let mut skills: Vec<Skill> = Vec::new();
    let mut seen_files: HashSet<PathBuf> = HashSet::new();
    let mut diagnostics = Vec::new();
    let mut collisions = Vec::new();
    let mut add = |found: LoadSkillsResult, diagnostics: &mut Vec<ResourceDiagnostic>| {
        diagnostics.extend(found.diagnostics);
        for skill in found.skills {
            let key = path_key(&skill.file_path);
            if seen_files.contains(&key) {
                continue;
            }
            if let Some(existing) = skills.iter().find(|s| s.name == skill.name) {
                collisions.push(ResourceDiagnostic::collision(
                    "skill",
                    skill.name.clone(),
                    &skill.name,
                    existing.file_path.clone(),
                    skill.file_path.clone(),
                ));
            } else {
                seen_files.insert(key);
                skills.push(skill);
            }
        }
    };
    for raw in paths {
        let path = resolve_path(&raw.to_string_lossy(), cwd, home);
        let Ok(meta) = std::fs::metadata(&path) else {
            diagnostics.push(ResourceDiagnostic::warning("skill path does not exist", path));
            continue;
        };
        if meta.is_dir() {
            add(load_skills_from_dir(&path), &mut diagnostics);
        } else if meta.is_file() && path.to_string_lossy().ends_with(".md") {
            let (skill, found) = load_skill_from_file(&path);
            add(LoadSkillsResult { skills: skill.into_iter().collect(), diagnostics: found }, &mut diagnostics);
        } else {
            diagnostics.push(ResourceDiagnostic::warning("skill path is not a markdown file", path));
        }
    }
    diagnostics.extend(collisions);
    LoadSkillsResult { skills, diagnostics }
}

/// Which tool the skills listing tells the model to load skill files with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkillReader {
    /// The `read` tool.
    Read,
    /// The `bash` tool.
    Bash,
    /// A reader reachable only through another tool: the hint names none.
    Indirect,
}

fn escape_xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&apos;")
}

/// The skills listing (pi's `formatSkillsForPrompt`, trimmed as the `skills` section uses it):
/// empty when no skill may be invoked by the model.
pub fn format_skills_for_prompt(skills: &[Skill], reader: SkillReader) -> String {
    let visible: Vec<&Skill> = skills.iter().filter(|s| !s.disable_model_invocation).collect();
    if visible.is_empty() {
        return String::new();
    }
    let hint = match reader {
        SkillReader::Read => "Use the read tool to load a skill's file when the task matches its description.",
        SkillReader::Bash => "Use bash to load a skill's file when the task matches its description.",
        SkillReader::Indirect => "Load a skill's file when the task matches its description.",
    };
    let mut lines = vec![
        "The following skills provide specialized instructions for specific tasks.".to_owned(),
        hint.to_owned(),
        "Resolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls."
            .to_owned(),
        String::new(),
        "<available_skills>".to_owned(),
    ];
    for skill in visible {
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!("    <description>{}</description>", escape_xml(&skill.description)));
        lines.push(format!("    <location>{}</location>", escape_xml(&skill.file_path.to_string_lossy())));
        lines.push("  </skill>".to_owned());
    }
    lines.push("</available_skills>".to_owned());
    lines.join("\n").trim().to_owned()
}

/// The reader the listing names for these tools (pi's rule): `read`, else `bash`, among the
/// declared tools; `Indirect` when one of them is active but hidden; `None` hides the listing.
pub fn skill_reader(selected: &[String], hidden: &[String]) -> Option<SkillReader> {
    let declared = |n: &str| selected.iter().any(|s| s == n) && !hidden.iter().any(|h| h == n);
    if declared("read") {
        Some(SkillReader::Read)
    } else if declared("bash") {
        Some(SkillReader::Bash)
    } else if selected.iter().any(|s| s == "read" || s == "bash") {
        Some(SkillReader::Indirect)
    } else {
        None
    }
}
