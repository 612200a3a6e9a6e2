//! Expansion of user input before it is sent, as pi 1.6.0's `AgentSession` does it:
//! `/skill:name args` becomes a `<skill>` block with the skill's body, then `/template args`
//! becomes the template's text.

use super::frontmatter::strip_frontmatter;
use super::prompt_templates::{PromptTemplate, expand_prompt_template};
use super::skills::Skill;

/// Reading a skill's file failed while expanding `/skill:name`; the input is sent unchanged.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SkillExpansionError {
    /// The skill file.
    pub path: std::path::PathBuf,
    /// What went wrong.
    pub message: String,
}

/// Expands `/skill:name args` (pi's `_expandSkillCommand`). Unknown skills and other text pass
/// through (`Ok` with the input); an unreadable skill file is an error and the caller keeps the
/// input as it was.
pub fn expand_skill_command(text: &str, skills: &[Skill]) -> Result<String, SkillExpansionError> {
    let Some(rest) = text.strip_prefix("/skill:") else { return Ok(text.to_owned()) };
    let (name, args) = match rest.find(' ') {
        Some(i) => (&rest[..i], rest[i + 1..].trim()),
        None => (rest, ""),
    };
    let Some(skill) = skills.iter().find(|s| s.name == name) else { return Ok(text.to_owned()) };
    let failed = |message: String| SkillExpansionError { path: skill.file_path.clone(), message };
    let content = super::discovery::read_text(&skill.file_path).map_err(failed)?;
    let body = strip_frontmatter(&content).map_err(|e| failed(e.0))?;
    let block = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    Ok(if args.is_empty() { block } else { format!("{block}\n\n{args}") })
}

/// Skill command first, then prompt template. A skill file that cannot be read is logged and the
/// text goes on unexpanded, as in pi (which reports it through the extension error channel).
pub fn expand_input(text: &str, skills: &[Skill], templates: &[PromptTemplate]) -> String {
    let text = match expand_skill_command(text, skills) {
        Ok(expanded) => expanded,
        Err(e) => {
            tracing::warn!(path = %e.path.display(), error = %e.message, "skill expansion failed");
            text.to_owned()
        }
    };
    expand_prompt_template(&text, templates)
}

/// A `<skill>` block of a user message, split up (pi's `parseSkillBlock`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillBlock {
    /// The skill name.
    pub name: String,
    /// The skill file.
    pub location: String,
    /// The block's content.
    pub content: String,
    /// The user's text after the block, if any.
    pub user_message: Option<String>,
}

/// Parses text that is exactly a skill block, optionally followed by `\n\n` and the user's text.
pub fn parse_skill_block(text: &str) -> Option<SkillBlock> {
    let rest = text.strip_prefix("<skill name=\"")?;
    let name_end = rest.find('"')?;
    let name = &rest[..name_end];
    let rest = rest[name_end..].strip_prefix("\" location=\"")?;
    let loc_end = rest.find('"')?;
    let location = &rest[..loc_end];
    let rest = rest[loc_end..].strip_prefix("\">\n")?;
    if name.is_empty() || location.is_empty() {
        return None;
    }
    // The content is the shortest run that leaves a valid tail: end of text, or "\n\n" + user text.
    let mut search = 0;
    while let Some(pos) = rest[search..].find("\n</skill>") {
        let at = search + pos;
        let tail = &rest[at + "\n</skill>".len()..];
        let user = if tail.is_empty() {
            Some(None)
        } else {
            tail.strip_prefix("\n\n")
                .filter(|u| !u.is_empty())
                .map(|u| Some(u.trim().to_owned()).filter(|u| !u.is_empty()))
        };
        if let Some(user_message) = user {
            return Some(SkillBlock {
                name: name.to_owned(),
                location: location.to_owned(),
                content: rest[..at].to_owned(),
                user_message,
            });
        }
        search = at + 1;
    }
    None
}
