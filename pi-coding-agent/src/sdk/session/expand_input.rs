//! The session's input expansion (pi's `_expandSkillCommand` and `expandPromptTemplate` on the
//! session's skills and templates), by the free functions of [`crate::sdk::expand`].

use super::{AgentSession, lock};
use crate::sdk::expand::expand_skill_command;
use crate::sdk::prompt_templates::{PromptTemplate, expand_prompt_template};
use crate::sdk::skills::Skill;

impl AgentSession {
    /// The skills and prompt templates this session expands input with.
    pub fn skills(&self) -> Vec<Skill> {
        lock(&self.shared.prompt_options).skills.clone()
    }

    /// The prompt templates of this session (pi's `promptTemplates`).
    pub fn prompt_templates(&self) -> Vec<PromptTemplate> {
        lock(&self.shared.prompt_templates).clone()
    }

    /// What a prompt sends for `text`: skill command and template expanded when `expand` is set
    /// (pi's `expandPromptTemplates`), the text as is otherwise.
    /// A skill file that cannot be read is reported to the extensions' error listeners (event
    /// `skill_expansion`, as pi does) and the text goes on unexpanded.
    pub fn expand_user_input(&self, text: &str, expand: bool) -> String {
        if !expand || !text.starts_with('/') {
            return text.to_owned();
        }
        let text = match expand_skill_command(text, &self.skills()) {
            Ok(expanded) => expanded,
            Err(e) => {
                tracing::warn!(path = %e.path.display(), error = %e.message, "skill expansion failed");
                if let Some(runner) = &self.shared.runner {
                    let path = e.path.display().to_string();
                    runner.emit_error(crate::extensions::ExtensionError::new(path, "skill_expansion", e.message));
                }
                text.to_owned()
            }
        };
        expand_prompt_template(&text, &self.prompt_templates())
    }
}
