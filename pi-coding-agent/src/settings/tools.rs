//! pi's rules for tool selections (`defaultTools`, `--tools`, the SDK's `tools` option): a list is
//! either plain names and glob patterns, which replace the selection, or only `+name` / `-name`
//! entries with exact names, which change it in order.
//!
//! ```
//! use pi_coding_agent::settings::tools::{apply_tool_modifiers, resolve_default_tools, tool_list_error};
//! let base = ["read", "bash"].map(String::from).to_vec();
//! assert_eq!(apply_tool_modifiers(&base, &["-bash".into(), "+grep".into()]), ["read", "grep"]);
//! assert_eq!(resolve_default_tools(&["+ls".into()]), ["read", "bash", "edit", "write", "ls"]);
//! assert_eq!(tool_list_error(&["read".into(), "+ls".into()]).unwrap(), "tool names cannot be mixed with +name or -name entries");
//! ```

/// Tools active at startup when nothing changes them (pi's `DEFAULT_TOOL_NAMES`).
pub const DEFAULT_TOOL_NAMES: [&str; 4] = ["read", "bash", "edit", "write"];

/// Whether an entry is a `+name` or `-name` modifier.
pub fn is_tool_modifier(entry: &str) -> bool {
    entry.starts_with('+') || entry.starts_with('-')
}

/// pi's `getToolListError`: a list mixing plain names and modifiers, or a modifier with a `*`
/// pattern, is refused with this text.
pub fn tool_list_error(entries: &[String]) -> Option<String> {
    let modifiers: Vec<&String> = entries.iter().filter(|e| is_tool_modifier(e)).collect();
    if modifiers.is_empty() {
        return None;
    }
    if modifiers.len() < entries.len() {
        return Some("tool names cannot be mixed with +name or -name entries".to_owned());
    }
    modifiers
        .iter()
        .find(|e| e.contains('*'))
        .map(|p| format!("+name and -name entries take exact tool names, not patterns: {p}"))
}

/// pi's `applyToolModifiers`: `+name` adds a tool (once), `-name` removes it, in list order;
/// other entries are ignored.
pub fn apply_tool_modifiers(base: &[String], entries: &[String]) -> Vec<String> {
    let mut tools = base.to_vec();
    for entry in entries.iter().filter(|e| is_tool_modifier(e)) {
        let name = &entry[1..];
        let index = tools.iter().position(|t| t == name);
        match (entry.starts_with('+'), index) {
            (true, None) if !name.is_empty() => tools.push(name.to_owned()),
            (false, Some(i)) => {
                tools.remove(i);
            }
            _ => {}
        }
    }
    tools
}

/// pi's `resolveDefaultTools`: plain names replace [`DEFAULT_TOOL_NAMES`] (an empty list means no
/// tools), then the modifiers apply in order.
pub fn resolve_default_tools(entries: &[String]) -> Vec<String> {
    let plain: Vec<String> = entries.iter().filter(|e| !is_tool_modifier(e)).cloned().collect();
    let base =
        if !plain.is_empty() || entries.is_empty() { plain } else { DEFAULT_TOOL_NAMES.map(str::to_owned).to_vec() };
    apply_tool_modifiers(&base, entries)
}

/// Whether a selection entry matches a tool name (pi's `createToolNameMatcher`): an exact name,
/// or a pattern where `*` stands for any run of characters (no other wildcard).
pub fn tool_pattern_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether any of `entries` matches `name` (see [`tool_pattern_matches`]).
pub fn tool_list_matches(entries: &[String], name: &str) -> bool {
    entries.iter().any(|e| tool_pattern_matches(e, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn modifiers_apply_in_order_and_plain_names_replace() {
        assert_eq!(resolve_default_tools(&v(&["grep", "+ls", "-grep"])), v(&["ls"]));
        assert_eq!(resolve_default_tools(&[]), Vec::<String>::new());
        assert_eq!(resolve_default_tools(&v(&["-bash", "+bash"])), v(&["read", "edit", "write", "bash"]));
        assert_eq!(
            tool_list_error(&v(&["+gr*"])).unwrap(),
            "+name and -name entries take exact tool names, not patterns: +gr*"
        );
        assert!(tool_pattern_matches("gr*", "grep") && !tool_pattern_matches("gr*", "read"));
        assert!(tool_pattern_matches("mcp__*__read", "mcp__fs__read") && !tool_pattern_matches("a*a", "a"));
        assert!(tool_pattern_matches("*", "") && !tool_pattern_matches("g?ep", "grep"));
    }
}
