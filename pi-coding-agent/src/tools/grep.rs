//! The `grep` tool: ripgrep's engine in-process (`ignore`, `grep-regex`, `grep-searcher`) with the
//! behaviour of pi's `rg --json --line-number --hidden` call and pi's output format, limits and
//! notices. Files are searched in path order.

use std::path::PathBuf;

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::args::{floor_at_least, optional_bool, optional_f64, optional_str, required_str};
use super::path::resolve_to_cwd;
use super::prologue::{check_cancelled, check_token, run_blocking};
use super::truncate::{
    DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, NO_LINE_LIMIT, TruncationOptions, format_size, truncate_head_lines,
    truncate_line,
};
use super::walk::walker;

const DEFAULT_LIMIT: usize = 100;
const DESCRIPTION: &str = "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.";

/// The `grep` tool. Build it with [`super::grep_tool`].
pub struct GrepTool {
    cwd: String,
    parameters: Value,
}

impl GrepTool {
    /// A grep tool resolving paths against `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
                "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
                "glob": {"type": "string", "description": "Filter files by glob pattern relative to path, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"},
                "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
                "literal": {"type": "boolean", "description": "Treat pattern as literal string instead of regex (default: false)"},
                "context": {"type": "number", "description": "Number of lines to show before and after each match (default: 0)"},
                "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"}
            }
        });
        GrepTool { cwd: cwd.into(), parameters }
    }
}

/// A grep request, resolved.
#[derive(Clone, Debug)]
pub struct GrepRequest {
    /// The pattern.
    pub pattern: String,
    /// Absolute directory or file to search.
    pub search_path: PathBuf,
    /// File filter glob (already without a leading `./`).
    pub glob: Option<String>,
    /// Case-insensitive.
    pub ignore_case: bool,
    /// Pattern is a literal string.
    pub literal: bool,
    /// Context lines before and after.
    pub context: usize,
    /// Most matches shown.
    pub limit: usize,
}

/// Output collection with pi's limit state machine (see pi's grep `rl.on("line")`).
struct Collector {
    limit: usize,
    context: usize,
    lines: Vec<String>,
    output_bytes: usize,
    output_line_count: usize,
    match_count: usize,
    limit_hit: bool,
    trailing_context_end: u64,
    match_limit_reached: bool,
    lines_truncated: bool,
    last_file: Option<usize>,
    done: bool,
}

impl Collector {
    fn push_line(&mut self, file: usize, shown: &str, line_no: u64, bytes: &[u8], is_match: bool) {
        self.last_file = Some(file);
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let (text, cut) = truncate_line(text, GREP_MAX_LINE_LENGTH);
        self.lines_truncated |= cut;
        let line = if is_match { format!("{shown}:{line_no}: {text}") } else { format!("{shown}-{line_no}- {text}") };
        // Lines past the byte cap are counted, not stored.
        if self.output_bytes.saturating_sub(1) <= DEFAULT_MAX_BYTES {
            self.lines.push(line.clone());
        }
        self.output_bytes += line.len() + 1;
        self.output_line_count += 1;
    }

    fn event(&mut self, file: usize, shown: &str, line_no: u64, bytes: &[u8], is_match: bool) {
        if self.done {
            return;
        }
        if !self.limit_hit {
            self.push_line(file, shown, line_no, bytes, is_match);
            if is_match {
                self.match_count += 1;
                if self.match_count >= self.limit {
                    self.limit_hit = true;
                    self.trailing_context_end = line_no + self.context as u64;
                }
            }
            return;
        }
        let in_window = self.last_file == Some(file) && line_no <= self.trailing_context_end;
        if in_window {
            self.push_line(file, shown, line_no, bytes, false);
        }
        if is_match {
            self.match_limit_reached = true;
        }
        if self.match_limit_reached && !(in_window && line_no < self.trailing_context_end) {
            self.done = true;
        }
    }
}

struct FileSink<'a> {
    collector: &'a mut Collector,
    file: usize,
    shown: &'a str,
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let start = m.line_number().unwrap_or(0);
        // A match spanning lines (never with a line terminator set) still reports each line.
        for (i, line) in m.lines().enumerate() {
            self.collector.event(self.file, self.shown, start + i as u64, line, true);
        }
        Ok(!self.collector.done)
    }

    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.collector.event(self.file, self.shown, c.line_number().unwrap_or(0), c.bytes(), false);
        Ok(!self.collector.done)
    }
}

fn build_matcher(req: &GrepRequest) -> Result<RegexMatcher, ToolError> {
    if !req.literal {
        // ripgrep reports the pattern as written; grep-regex's own error shows it wrapped.
        if let Err(e) = regex::RegexBuilder::new(&req.pattern).case_insensitive(req.ignore_case).build() {
            return Err(ToolError::new(e.to_string().trim().to_owned()));
        }
    }
    let mut b = RegexMatcherBuilder::new();
    b.case_insensitive(req.ignore_case).fixed_strings(req.literal).line_terminator(Some(b'\n'));
    b.build(&req.pattern).map_err(|e| ToolError::new(e.to_string().trim().to_owned()))
}

/// Runs a grep request (blocking); `cancel` is checked between files.
pub fn run_grep(req: &GrepRequest, cancel: &CancellationToken) -> Result<AgentToolResult, ToolError> {
    let is_dir = match std::fs::metadata(&req.search_path) {
        Ok(m) => m.is_dir(),
        Err(_) => return Err(ToolError::new(format!("Path not found: {}", req.search_path.display()))),
    };
    let matcher = build_matcher(req)?;
    let mut collector = Collector {
        limit: req.limit,
        context: req.context,
        lines: Vec::new(),
        output_bytes: 0,
        output_line_count: 0,
        match_count: 0,
        limit_hit: false,
        trailing_context_end: 0,
        match_limit_reached: false,
        lines_truncated: false,
        last_file: None,
        done: false,
    };
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(req.context)
        .after_context(req.context)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build();
    if is_dir {
        let mut walk = walker(&req.search_path, true, ".rgignore");
        if let Some(glob) = &req.glob {
            let mut ob = OverrideBuilder::new(&req.search_path);
            ob.add(glob).map_err(|e| ToolError::new(e.to_string()))?;
            walk.overrides(ob.build().map_err(|e| ToolError::new(e.to_string()))?);
        }
        let mut file_index = 0usize;
        for entry in walk.build() {
            check_token(cancel)?;
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let path = entry.path();
            let rel = path.strip_prefix(&req.search_path).unwrap_or(path);
            let shown = rel.to_string_lossy().into_owned();
            file_index += 1;
            let sink = FileSink { collector: &mut collector, file: file_index, shown: &shown };
            if let Err(e) = searcher.search_path(&matcher, path, sink) {
                tracing::debug!("grep: skipping {}: {e}", path.display());
            }
            if collector.done {
                break;
            }
        }
    } else {
        searcher.set_binary_detection(BinaryDetection::convert(b'\x00'));
        let shown = req.search_path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let sink = FileSink { collector: &mut collector, file: 1, shown: &shown };
        searcher.search_path(&matcher, &req.search_path, sink).map_err(|e| ToolError::new(e.to_string()))?;
    }
    Ok(format_result(collector))
}

fn format_result(c: Collector) -> AgentToolResult {
    if c.match_count == 0 {
        return AgentToolResult::text("No matches found");
    }
    let opts = TruncationOptions { max_lines: NO_LINE_LIMIT, max_bytes: DEFAULT_MAX_BYTES };
    let truncation = truncate_head_lines(&c.lines, c.output_line_count, c.output_bytes.saturating_sub(1), opts);
    let mut output = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if c.match_limit_reached {
        notices.push(format!(
            "{} matches limit reached. Use limit={} for more, or refine pattern",
            c.limit,
            c.limit.saturating_mul(2)
        ));
        details.insert("matchLimitReached".into(), json!(c.limit));
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert("truncation".into(), json!(truncation));
    }
    if c.lines_truncated {
        notices.push(format!("Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"));
        details.insert("linesTruncated".into(), json!(true));
    }
    if !notices.is_empty() {
        output += &format!("\n\n[{}]", notices.join(". "));
    }
    AgentToolResult::text(output).with_details(super::details_or_undefined(details))
}

/// Drops leading `./` from a glob, keeping a leading `!` (rg never matches `./`).
fn clean_glob(glob: &str) -> String {
    let (neg, mut rest) = match glob.strip_prefix('!') {
        Some(r) => ("!", r),
        None => ("", glob),
    };
    while let Some(r) = rest.strip_prefix("./") {
        rest = r;
    }
    format!("{neg}{rest}")
}

#[async_trait]
impl AgentTool for GrepTool {
    fn name(&self) -> &str {
        "grep"
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
        let context = optional_f64(&args, "context")?.filter(|c| *c > 0.0).map_or(0, |c| floor_at_least(c, 0));
        let req = GrepRequest {
            pattern,
            search_path: PathBuf::from(resolve_to_cwd(dir, &self.cwd)),
            glob: optional_str(&args, "glob")?.filter(|g| !g.is_empty()).map(clean_glob),
            ignore_case: optional_bool(&args, "ignoreCase")?.unwrap_or(false),
            literal: optional_bool(&args, "literal")?.unwrap_or(false),
            context,
            limit: floor_at_least(optional_f64(&args, "limit")?.unwrap_or(DEFAULT_LIMIT as f64), 1),
        };
        run_blocking(&ctx, "grep", move |cancel| run_grep(&req, &cancel)).await
    }
}
