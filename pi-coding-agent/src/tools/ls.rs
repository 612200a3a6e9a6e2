//! The `ls` tool: a directory's entries sorted case-insensitively, directories suffixed with `/`.

use std::cmp::Ordering;

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde_json::{Map, Value, json};
use unicode_normalization::UnicodeNormalization;

use super::args::{floor_at_least, optional_f64, optional_str};
use super::path::resolve_to_cwd;
use super::prologue::{check_cancelled, run_blocking};
use super::truncate::{DEFAULT_MAX_BYTES, NO_LINE_LIMIT, TruncationOptions, format_size, truncate_head};

const DEFAULT_LIMIT: usize = 500;
const DESCRIPTION: &str = "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).";

/// The `ls` tool. Build it with [`super::ls_tool`].
pub struct LsTool {
    cwd: String,
    parameters: Value,
}

impl LsTool {
    /// An ls tool resolving paths against `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: current directory)"},
                "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"}
            }
        });
        LsTool { cwd: cwd.into(), parameters }
    }
}

/// Primary weight of an ASCII character in the root collation (ICU/CLDR) that JavaScript's
/// `localeCompare` uses: punctuation and symbols first, then digits, then letters.
fn ascii_weight(c: char) -> Option<u32> {
    const ORDER: &str = "\t\n\u{b}\u{c}\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";
    ORDER.find(c).map(|i| i as u32)
}

/// Collation key: base characters (accents dropped) weighted like `localeCompare`; non-ASCII
/// characters after ASCII by code point.
fn primary_key(s: &str) -> Vec<u32> {
    s.nfd()
        .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
        .map(|c| {
            let lower = c.to_lowercase().next().unwrap_or(c);
            ascii_weight(lower).unwrap_or(1000 + lower as u32)
        })
        .collect()
}

/// pi's `a.toLowerCase().localeCompare(b.toLowerCase())`, approximated for non-ASCII names.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    let (la, lb) = (a.to_lowercase(), b.to_lowercase());
    primary_key(&la).cmp(&primary_key(&lb)).then_with(|| la.nfd().cmp(lb.nfd()))
}

#[async_trait]
impl AgentTool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(
        &self,
        _id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        check_cancelled(&ctx)?;
        let path = optional_str(&args, "path")?.filter(|p| !p.is_empty()).unwrap_or(".");
        let limit = floor_at_least(optional_f64(&args, "limit")?.unwrap_or(DEFAULT_LIMIT as f64), 1);
        let dir = resolve_to_cwd(path, &self.cwd);
        run_blocking(&ctx, "ls", move |_| list(&dir, limit)).await
    }
}

fn list(dir: &str, limit: usize) -> Result<AgentToolResult, ToolError> {
    let meta = std::fs::metadata(dir).map_err(|_| ToolError::new(format!("Path not found: {dir}")))?;
    if !meta.is_dir() {
        return Err(ToolError::new(format!("Not a directory: {dir}")));
    }
    let reader = std::fs::read_dir(dir).map_err(|e| {
        ToolError::new(format!("Cannot read directory: {}", super::fs_error::node_message(&e, "scandir", Some(dir))))
    })?;
    let mut names: Vec<String> =
        reader.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort_by(|a, b| locale_compare(a, b));
    let mut results = Vec::new();
    let mut limit_reached = false;
    for name in names {
        if results.len() >= limit {
            limit_reached = true;
            break;
        }
        // Entries that cannot be stat'ed (dangling symlinks) are skipped, as in pi.
        let Ok(m) = std::fs::metadata(std::path::Path::new(dir).join(&name)) else { continue };
        results.push(if m.is_dir() { format!("{name}/") } else { name });
    }
    if results.is_empty() {
        return Ok(AgentToolResult::text("(empty directory)"));
    }
    let raw = results.join("\n");
    let truncation = truncate_head(&raw, TruncationOptions { max_lines: NO_LINE_LIMIT, max_bytes: DEFAULT_MAX_BYTES });
    let mut output = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if limit_reached {
        notices.push(format!("{limit} entries limit reached. Use limit={} for more", limit.saturating_mul(2)));
        details.insert("entryLimitReached".into(), json!(limit));
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert("truncation".into(), json!(truncation));
    }
    if !notices.is_empty() {
        output += &format!("\n\n[{}]", notices.join(". "));
    }
    Ok(AgentToolResult::text(output).with_details(super::details_or_undefined(details)))
}
