//! Tool names (`mcp__<server>__<tool>`), namespaces and one-line server summaries (pi-mcp's
//! `naming.ts`).

use sha2::{Digest, Sha256};

/// Provider tool names are limited to 64 characters of `[A-Za-z0-9_-]`.
const MAX_TOOL_NAME_LENGTH: usize = 64;

/// `mcp__<server>__<tool>` with everything but `[A-Za-z0-9_]` replaced by `_`; a name longer than
/// 64 characters, or one `is_taken` reports, is cut and gets an 8-character hash suffix of
/// `server\0tool`.
pub fn create_mcp_tool_name(server: &str, tool: &str, is_taken: impl Fn(&str) -> bool) -> String {
    let name: String = format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    if name.chars().count() <= MAX_TOOL_NAME_LENGTH && !is_taken(&name) {
        return name;
    }
    let digest = Sha256::digest(format!("{server}\0{tool}").as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let keep: String = name.chars().take(MAX_TOOL_NAME_LENGTH - hash.len() - 1).collect();
    format!("{keep}_{hash}")
}

/// Assigns names to a server's tools as pi does: every tool whose plain name collides with another
/// tool's (after sanitising), or with a name `taken_elsewhere` reports, gets the hash suffix.
pub fn assign_tool_names(server: &str, tools: &[String], taken_elsewhere: impl Fn(&str) -> bool) -> Vec<String> {
    let plain: Vec<String> = tools.iter().map(|t| create_mcp_tool_name(server, t, |_| false)).collect();
    let mut current: Vec<String> = Vec::new();
    for tool in tools {
        let name = create_mcp_tool_name(server, tool, |candidate| {
            taken_elsewhere(candidate)
                || current.iter().any(|c| c == candidate)
                || plain.iter().filter(|p| p.as_str() == candidate).count() > 1
        });
        current.push(name);
    }
    current
}

/// A server's namespace: `mcp__<server>` with `-` replaced by `_`.
pub fn mcp_namespace(server: &str) -> String {
    format!("mcp__{}", server.replace('-', "_"))
}

/// A server's one-line summary: the first line of its `description`, else of its instructions.
pub fn mcp_server_summary(description: Option<&str>, instructions: Option<&str>) -> String {
    let description = description.map(str::trim).filter(|d| !d.is_empty());
    let text = description.or(instructions.map(str::trim)).unwrap_or("");
    text.split('\n').next().unwrap_or("").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_and_collisions_hashed() {
        assert_eq!(create_mcp_tool_name("dev-radius", "get.item", |_| false), "mcp__dev_radius__get_item");
        let names = assign_tool_names("s", &["a-b".into(), "a_b".into(), "c".into()], |_| false);
        assert_eq!(names[2], "mcp__s__c");
        assert!(names[0].starts_with("mcp__s__a_b_") && names[0].len() == "mcp__s__a_b_".len() + 8);
        assert_ne!(names[0], names[1]);
        let long = create_mcp_tool_name("server", &"x".repeat(80), |_| false);
        assert_eq!(long.len(), 64);
        assert_eq!(mcp_namespace("dev-radius"), "mcp__dev_radius");
        assert_eq!(mcp_server_summary(Some("  "), Some("Line one\nLine two")), "Line one");
    }
}
