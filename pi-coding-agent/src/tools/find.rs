//! The `find` tool: files and directories matching a glob, with the behaviour of pi's `fd
//! --hidden --glob` call (smart case, basename or anchored path matching, `.gitignore` respected)
//! and pi's output format, limits and notices. Results are in path order.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::args::{floor_at_least, optional_f64, optional_str, required_str};
use super::path::resolve_to_cwd;
use super::prologue::{check_cancelled, check_token, run_blocking};
use super::truncate::{DEFAULT_MAX_BYTES, NO_LINE_LIMIT, TruncationOptions, format_size, truncate_head_lines};
use super::walk::{inside_git_repo, walker};

const DEFAULT_LIMIT: usize = 1000;
const DESCRIPTION: &str = "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).";

/// The `find` tool. Build it with [`super::find_tool`].
pub struct FindTool {
    cwd: String,
    parameters: Value,
}

impl FindTool {
    /// A find tool resolving paths against `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"},
                "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
                "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"}
            }
        });
        FindTool { cwd: cwd.into(), parameters }
    }
}

/// Escapes glob metacharacters of a literal path.
fn escape_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '{' | '}') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// How a pattern is matched: against the file name, or against the absolute path.
struct Pattern {
    matcher: GlobMatcher,
    full_path: bool,
}

fn compile(pattern: &str, search_path: &str) -> Result<Pattern, ToolError> {
    let mut effective = pattern.to_owned();
    while let Some(rest) = effective.strip_prefix("./") {
        effective = rest.to_owned();
    }
    let full_path = effective.contains('/');
    // fd's smart case: an all-lowercase pattern matches case-insensitively.
    let ignore_case = effective == effective.to_lowercase();
    if full_path && !effective.starts_with('/') {
        effective = format!("{}/{effective}", escape_glob(search_path.trim_end_matches('/')));
    }
    let glob = GlobBuilder::new(&effective)
        .literal_separator(true)
        .case_insensitive(ignore_case)
        .backslash_escape(true)
        .build()
        .map_err(|e| ToolError::new(format!("[fd error]: {e}")))?;
    Ok(Pattern { matcher: glob.compile_matcher(), full_path })
}

/// Runs a find (blocking): the matches relative to `search_path`, at most `limit + 1` of them.
pub fn run_find(
    pattern: &str,
    search_path: &Path,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    let root = search_path.to_string_lossy().into_owned();
    if !search_path.is_dir() {
        return Err(ToolError::new(format!(
            "[fd error]: Search path '{root}' is not a directory.\n[fd error]: No valid search paths given."
        )));
    }
    let compiled = compile(pattern, &root)?;
    let require_git = inside_git_repo(search_path);
    let mut stored: Vec<String> = Vec::new();
    let mut count = 0usize;
    let mut output_bytes = 0usize;
    let mut limit_reached = false;
    for entry in walker(search_path, require_git, ".fdignore").build() {
        check_token(cancel)?;
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let path = entry.path();
        let matched = if compiled.full_path {
            compiled.matcher.is_match(path)
        } else {
            entry.path().file_name().is_some_and(|n| compiled.matcher.is_match(Path::new(n)))
        };
        if !matched {
            continue;
        }
        if count == limit {
            limit_reached = true;
            break;
        }
        let rel = path.strip_prefix(search_path).unwrap_or(path);
        let mut shown = rel.to_string_lossy().into_owned();
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            shown.push('/');
        }
        count += 1;
        if output_bytes.saturating_sub(1) <= DEFAULT_MAX_BYTES {
            output_bytes += shown.len() + 1;
            stored.push(shown);
        } else {
            output_bytes += shown.len() + 1;
        }
    }
    if count == 0 {
        return Ok(AgentToolResult::text("No files found matching pattern"));
    }
    let opts = TruncationOptions { max_lines: NO_LINE_LIMIT, max_bytes: DEFAULT_MAX_BYTES };
    let truncation = truncate_head_lines(&stored, count, output_bytes - 1, opts);
    let mut output = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if limit_reached {
        notices.push(format!(
            "{limit} results limit reached. Use limit={} for more, or refine pattern",
            limit.saturating_mul(2)
        ));
        details.insert("resultLimitReached".into(), json!(limit));
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

#[async_trait]
impl AgentTool for FindTool {
    fn name(&self) -> &str {
        "find"
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
        let pattern = required_str(&args, "pattern")?.to_owned();
        let dir = optional_str(&args, "path")?.filter(|p| !p.is_empty()).unwrap_or(".");
        let search_path = PathBuf::from(resolve_to_cwd(dir, &self.cwd));
        let limit = floor_at_least(optional_f64(&args, "limit")?.unwrap_or(DEFAULT_LIMIT as f64), 1);
        run_blocking(&ctx, "find", move |cancel| run_find(&pattern, &search_path, limit, &cancel)).await
    }
}
