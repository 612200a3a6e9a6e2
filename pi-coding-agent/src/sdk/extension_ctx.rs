//! The session side of `ctx.sessionManager`, `ctx.signal`, `getSystemPromptOptions()` and
//! `newSession({setup})` (the [`ExtensionActions`](crate::extensions::ExtensionActions) methods
//! `read_session`, `signal`, `get_system_prompt_options` and `setup_session` of the session).

use serde_json::{Map, Value, json};

use super::session::SessionShared;
use super::system_prompt::SystemPromptOptions;
use crate::session::SessionManager;

/// Runs `read` on the session's manager. The manager is locked only in short synchronous
/// sections; if it stays busy (a handler called from inside one), nothing is read.
pub(crate) fn read_session(shared: &SessionShared, read: &mut dyn FnMut(&SessionManager)) -> bool {
    for _ in 0..1000 {
        match shared.session_manager.try_lock() {
            Ok(sm) => {
                read(&sm);
                return true;
            }
            Err(std::sync::TryLockError::Poisoned(poisoned)) => {
                read(&poisoned.into_inner());
                return true;
            }
            Err(std::sync::TryLockError::WouldBlock) => std::thread::yield_now(),
        }
    }
    false
}

/// `getSystemPromptOptions()` as pi's `normalizeBuildSystemPromptOptions` shapes it.
pub(crate) fn system_prompt_options_json(o: &SystemPromptOptions) -> Value {
    let mut out = Map::new();
    if let Some(custom) = &o.custom_prompt {
        out.insert("customPrompt".into(), json!(custom));
    }
    if let Some(forced) = &o.force_system_prompt {
        out.insert("forceSystemPrompt".into(), json!(forced));
    }
    let selected = o
        .selected_tools
        .clone()
        .unwrap_or_else(|| ["read", "bash", "edit", "write"].iter().map(|s| (*s).to_owned()).collect::<Vec<String>>());
    out.insert("selectedTools".into(), json!(selected));
    out.insert("hiddenTools".into(), json!(o.hidden_tools));
    let snippets: Map<String, Value> = o.tool_snippets.iter().map(|(n, s)| (n.clone(), json!(s))).collect();
    out.insert("toolSnippets".into(), Value::Object(snippets));
    // pi keeps guidelines only for the tools that have some.
    let guidelines: Map<String, Value> =
        o.tool_guidelines.iter().filter(|(_, g)| !g.is_empty()).map(|(n, g)| (n.clone(), json!(g))).collect();
    out.insert("toolGuidelines".into(), Value::Object(guidelines));
    out.insert("promptGuidelines".into(), json!(o.prompt_guidelines));
    out.insert("appendSystemPrompt".into(), json!(o.append_system_prompt));
    let sections: Map<String, Value> = o.sections.iter().map(|(n, s)| (n.clone(), json!(s))).collect();
    out.insert("sections".into(), Value::Object(sections));
    out.insert("cwd".into(), json!(o.cwd));
    let files: Vec<Value> = o.context_files.iter().map(|f| json!({"path": f.path, "content": f.content})).collect();
    out.insert("contextFiles".into(), Value::Array(files));
    let skills: Vec<Value> = o
        .skills
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "description": s.description,
                "filePath": s.file_path,
                "baseDir": s.base_dir,
                "disableModelInvocation": s.disable_model_invocation,
            })
        })
        .collect();
    out.insert("skills".into(), Value::Array(skills));
    Value::Object(out)
}
