//! The `mcp_servers` system-prompt section (pi's `renderServersSection`): every enabled server
//! with `codemode` or `deferred` tools, how its tools are reached, and a one-line summary.

use super::config::{Exposure, McpServerEntry};
use super::naming::{mcp_namespace, mcp_server_summary};

/// The section's name.
pub const MCP_SERVERS_SECTION: &str = "mcp_servers";
/// Characters of a server description in the section.
const MAX_SERVER_DESCRIPTION_CHARS: usize = 250;
/// Characters of the whole section.
pub const MAX_SERVERS_SECTION_CHARS: usize = 4096;

/// A server as the section sees it: its entry and, once connected, its instructions.
#[derive(Clone, Copy, Debug)]
pub struct SectionServer<'a> {
    /// The entry.
    pub entry: &'a McpServerEntry,
    /// Server instructions from `initialize`.
    pub instructions: Option<&'a str>,
}

fn has_indirect_tools(entry: &McpServerEntry) -> bool {
    entry.configured_exposures().iter().any(|e| matches!(e, Exposure::Codemode | Exposure::Deferred))
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    if max <= 1 {
        return String::new();
    }
    let head: String = text.chars().take(max - 1).collect();
    format!("{}…", head.trim_end())
}

fn locale_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase().cmp(&b.to_lowercase()).then_with(|| b.cmp(a))
}

/// The section text, or `None` when no server has tools reached through codemode or tool_search.
pub fn render_servers_section(servers: &[SectionServer<'_>]) -> Option<String> {
    let mut listed: Vec<&SectionServer<'_>> =
        servers.iter().filter(|s| s.entry.enabled() && has_indirect_tools(s.entry)).collect();
    if listed.is_empty() {
        return None;
    }
    listed.sort_by(|a, b| locale_order(&a.entry.name, &b.entry.name));
    let reaches: Vec<&str> = listed
        .iter()
        .map(|s| if s.entry.configured_exposures().contains(&Exposure::Codemode) { "codemode" } else { "tool_search" })
        .collect();
    let mut intro = "MCP servers whose tools are not declared to you.".to_owned();
    if reaches.contains(&"codemode") {
        intro.push_str(" Call the tools of `codemode` servers from codemode scripts.");
    }
    if reaches.contains(&"tool_search") {
        intro.push_str(" Load the tools of `tool_search` servers with `tool_search`.");
    }
    let heads: Vec<String> =
        listed.iter().zip(&reaches).map(|(s, r)| format!("- {} ({r})", mcp_namespace(&s.entry.name))).collect();
    let omitted = |count: usize| -> Vec<String> {
        if count == 0 {
            return Vec::new();
        }
        vec![format!(
            "- … {count} more server{}; find their tools with searchTools()",
            if count == 1 { "" } else { "s" }
        )]
    };
    let size = |kept: usize| -> usize {
        let mut lines = vec![intro.clone()];
        lines.extend(heads[..kept].iter().cloned());
        lines.extend(omitted(listed.len() - kept));
        lines.join("\n").chars().count()
    };
    let mut kept = listed.len();
    while kept > 0 && size(kept) > MAX_SERVERS_SECTION_CHARS {
        kept -= 1;
    }
    let per_server: i64 = if kept == 0 {
        0
    } else {
        let room = (MAX_SERVERS_SECTION_CHARS as i64 - size(kept) as i64).div_euclid(kept as i64) - 2;
        room.min(MAX_SERVER_DESCRIPTION_CHARS as i64)
    };
    let mut lines = vec![intro.clone()];
    for (server, head) in listed.iter().zip(&heads).take(kept) {
        let summary = if per_server > 0 {
            truncate(&mcp_server_summary(server.entry.description(), server.instructions), per_server as usize)
        } else {
            String::new()
        };
        lines.push(if summary.is_empty() { head.clone() } else { format!("{head}: {summary}") });
    }
    lines.extend(omitted(listed.len() - kept));
    Some(lines.join("\n"))
}
