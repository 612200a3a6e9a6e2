//! Which tools a session registers and activates at start (pi's `createAgentSession` with
//! `tools` / `noTools` / `excludeTools`, and `AgentSession._refreshToolRegistry`), for built-in,
//! SDK and extension tools alike.
//!
//! - `tools` of plain names and `*` patterns is an allowlist: only matching tools are registered,
//!   and every registered tool that matches is active (`--tools read,gr*`).
//! - `tools` of only `+name` / `-name` entries changes the default selection (`defaultTools`, else
//!   read, bash, edit, write); extension tools stay (`--tools +ls`).
//! - [`NoTools::All`] (`-nt`) is an empty allowlist: no tool at all, extension tools included,
//!   unless `+name` entries add some; [`NoTools::Builtin`] (`-nbt`) starts from no built-in tool.
//! - `exclude` (`-xt`) removes matching tools from the registry, extension tools too.
//! - Without an allowlist, SDK and extension tools are active from registration.

use crate::settings::tools::{
    DEFAULT_TOOL_NAMES, apply_tool_modifiers, is_tool_modifier, tool_list_error, tool_list_matches,
};

/// pi's `noTools` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoTools {
    /// `-nt`: no tools at all.
    All,
    /// `-nbt`: no built-in tools by default; SDK and extension tools stay.
    Builtin,
}

/// The resolved selection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolSelection {
    allowed: Option<Vec<String>>,
    excluded: Option<Vec<String>>,
    initial: Vec<String>,
}

impl ToolSelection {
    /// Resolves the options; `default_tools` is the settings' resolved `defaultTools`. A list
    /// mixing names and modifiers is refused with pi's message (`Invalid tools option: …`).
    pub fn resolve(
        tools: Option<&[String]>,
        no_tools: Option<NoTools>,
        exclude: Option<&[String]>,
        default_tools: Option<Vec<String>>,
    ) -> Result<Self, String> {
        if let Some(e) = tools.and_then(tool_list_error) {
            return Err(format!("Invalid tools option: {e}"));
        }
        let defaults = if no_tools.is_some() {
            Vec::new()
        } else {
            default_tools.unwrap_or_else(|| DEFAULT_TOOL_NAMES.map(str::to_owned).to_vec())
        };
        let modifiers = tools.filter(|t| t.iter().any(|e| is_tool_modifier(e)));
        let selected = match (modifiers, tools) {
            (Some(m), _) => Some(apply_tool_modifiers(&defaults, m)),
            (None, t) => t.map(<[String]>::to_vec),
        };
        let allowed = match modifiers {
            Some(_) => (no_tools == Some(NoTools::All)).then(|| selected.clone().unwrap_or_default()),
            None => tools.map(<[String]>::to_vec).or_else(|| (no_tools == Some(NoTools::All)).then(Vec::new)),
        };
        let excluded = exclude.map(<[String]>::to_vec);
        let initial = selected
            .unwrap_or(defaults)
            .into_iter()
            .filter(|n| !excluded.as_deref().is_some_and(|x| tool_list_matches(x, n)))
            .collect();
        Ok(ToolSelection { allowed, excluded, initial })
    }

    /// Whether a tool stays registered (pi's `_isAllowedTool`).
    pub fn is_allowed(&self, name: &str) -> bool {
        if self.excluded.as_deref().is_some_and(|x| tool_list_matches(x, name)) {
            return false;
        }
        self.allowed.as_deref().is_none_or(|a| tool_list_matches(a, name))
    }

    /// The tools active at start, in pi's order: the selection as listed, then (with an
    /// allowlist) every registered tool it matches, else the SDK and extension tools.
    /// `registered` is the registry in order (built-ins first); `added` names its SDK and
    /// extension tools.
    pub fn initial_active(&self, registered: &[String], added: &[String]) -> Vec<String> {
        let mut active: Vec<String> =
            self.initial.iter().filter(|n| registered.contains(n) && self.is_allowed(n)).cloned().collect();
        let more: Vec<&String> = match &self.allowed {
            Some(allowed) => registered.iter().filter(|n| tool_list_matches(allowed, n)).collect(),
            None => added.iter().filter(|n| registered.contains(n)).collect(),
        };
        for name in more {
            if !active.contains(name) {
                active.push(name.clone());
            }
        }
        active
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn globs_select_built_in_and_extension_tools() {
        let registry = v(&["read", "bash", "edit", "write", "grep", "find", "ls", "greet"]);
        let s = ToolSelection::resolve(Some(&v(&["gr*", "greet"])), None, None, None).unwrap();
        let registered: Vec<String> = registry.iter().filter(|n| s.is_allowed(n)).cloned().collect();
        assert_eq!(s.initial_active(&registered, &v(&["greet"])), v(&["greet", "grep"]));
        let s = ToolSelection::resolve(Some(&v(&["+ls"])), Some(NoTools::All), None, None).unwrap();
        assert!(!s.is_allowed("greet"));
        assert_eq!(s.initial_active(&registry, &v(&["greet"])), v(&["ls"]));
        assert!(ToolSelection::resolve(Some(&v(&["read", "-bash"])), None, None, None).is_err());
    }
}
