//! Tool calls and their results as pi's interactive tool rows: a box on the pending, success or
//! error background holding the call line (pi's per-tool `renderCall`) and the result
//! (`renderResult`): bash output with a five-line tail preview and its timing, read contents when
//! expanded, edit diffs, write previews, grep / find / ls listings, and `key=value` arguments for
//! other tools.

use std::rc::Rc;

use pi_tui::theme::bold;
use pi_tui::{ComponentRef, Spacer, Text, Theme, shared};
use serde_json::{Map, Value};

use super::TranscriptRenderer;
use crate::builtin_extensions::codemode;

/// The default key of `app.tools.expand`, named in hints.
const EXPAND_KEY: &str = "ctrl+o";

/// A tool result as the row shows it.
#[derive(Clone, Debug, Default)]
pub struct ToolOutput {
    /// The text blocks joined by newlines.
    pub text: String,
    /// Whether the tool failed.
    pub is_error: bool,
    /// The result's `details`.
    pub details: Option<Value>,
    /// Execution time, when known.
    pub duration_ms: Option<u64>,
}

/// One tool row: the call and, once there is one, its (partial or final) result.
#[derive(Clone, Debug)]
pub struct ToolRow<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// The call's arguments.
    pub args: &'a Map<String, Value>,
    /// The result so far.
    pub output: Option<&'a ToolOutput>,
    /// Whether `output` is a partial (streaming) result.
    pub partial: bool,
}

fn arg<'a>(args: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// pi's `formatToolDuration`.
pub fn format_duration(ms: u64) -> String {
    let seconds = ms as f64 / 1000.0;
    if seconds < 60.0 {
        return format!("{seconds:.1}s");
    }
    let total = ms / 1000;
    let (minutes, rest) = (total / 60, total % 60);
    if minutes < 60 {
        return format!("{minutes}m {rest}s");
    }
    format!("{}h {}m {rest}s", minutes / 60, minutes % 60)
}

fn expand_hint(theme: &Theme) -> String {
    format!("{}{}", theme.fg("dim", EXPAND_KEY), theme.fg("muted", " to expand"))
}

fn more_lines(theme: &Theme, remaining: usize, total: Option<usize>) -> String {
    let total = total.map(|t| format!(" {t} total,")).unwrap_or_default();
    format!(
        "{} {}{}",
        theme.fg("muted", &format!("\n... ({remaining} more lines,{total}")),
        expand_hint(theme),
        theme.fg("muted", ")")
    )
}

fn trim_trailing_empty(lines: &mut Vec<&str>) {
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
}

impl TranscriptRenderer {
    fn path_text(&self, path: Option<&str>) -> String {
        match path.filter(|p| !p.is_empty()) {
            Some(p) => self.theme.fg("accent", &shorten_home(p)),
            None => self.theme.fg("toolOutput", "..."),
        }
    }

    /// The call line of a tool (pi's `renderCall` of the built-in tools).
    fn tool_call_text(&self, name: &str, args: &Map<String, Value>) -> String {
        let t = &self.theme;
        let title = |s: &str| t.fg("toolTitle", &bold(s));
        match name {
            // pi's shell renderers, shared by bash and powershell (which differ in their prompt).
            "bash" | "powershell" => {
                let prompt = if name == "bash" { "$" } else { "PS>" };
                let command = arg(args, &["command"]).unwrap_or("");
                let shown = if command.is_empty() { t.fg("toolOutput", "...") } else { command.to_owned() };
                let timeout = args
                    .get("timeout")
                    .filter(|v| !v.is_null())
                    .map(|v| t.fg("muted", &format!(" (timeout {v}s)")))
                    .unwrap_or_default();
                format!("{}{timeout}", title(&format!("{prompt} {shown}")))
            }
            "read" => {
                let range = read_range(args.get("offset"), args.get("limit"));
                let range = if range.is_empty() { range } else { t.fg("warning", &range) };
                format!("{} {}{range}", title("read"), self.path_text(arg(args, &["file_path", "path"])))
            }
            "edit" | "write" => format!("{} {}", title(name), self.path_text(arg(args, &["file_path", "path"]))),
            "ls" => {
                let path = arg(args, &["path"]).filter(|p| !p.is_empty()).unwrap_or(".");
                let mut s = format!("{} {}", title("ls"), self.path_text(Some(path)));
                if let Some(l) = args.get("limit").filter(|v| !v.is_null()) {
                    s.push_str(&t.fg("toolOutput", &format!(" (limit {l})")));
                }
                s
            }
            "grep" | "find" => {
                let pattern = arg(args, &["pattern"]).unwrap_or("");
                let path = shorten_home(arg(args, &["path"]).filter(|p| !p.is_empty()).unwrap_or("."));
                let shown = if name == "grep" { format!("/{pattern}/") } else { pattern.to_owned() };
                let mut s =
                    format!("{} {}{}", title(name), t.fg("accent", &shown), t.fg("toolOutput", &format!(" in {path}")));
                if name == "grep"
                    && let Some(g) = arg(args, &["glob"]).filter(|g| !g.is_empty())
                {
                    s.push_str(&t.fg("toolOutput", &format!(" ({g})")));
                }
                if let Some(l) = args.get("limit").filter(|v| !v.is_null()) {
                    let l = if name == "grep" { format!(" limit {l}") } else { format!(" (limit {l})") };
                    s.push_str(&t.fg("toolOutput", &l));
                }
                s
            }
            _ => generic_call(t, name, args),
        }
    }

    /// The result text of a tool (pi's `renderResult`), or `None` for nothing below the call.
    fn tool_result_text(&self, row: &ToolRow<'_>, out: &ToolOutput) -> Option<String> {
        let t = &self.theme;
        let expanded = self.options.expanded;
        let styled =
            |lines: &[&str]| lines.iter().map(|l| t.fg("toolOutput", &l.replace('\t', "   "))).collect::<Vec<_>>();
        match row.name {
            "read" if !expanded && !out.is_error => None,
            "read" => {
                let mut lines: Vec<&str> = out.text.split('\n').collect();
                trim_trailing_empty(&mut lines);
                let max = if expanded { lines.len() } else { 10 };
                let shown = lines.len().min(max);
                let mut s = format!("\n{}", styled(&lines[..shown]).join("\n"));
                if lines.len() > max {
                    s.push_str(&more_lines(t, lines.len() - max, None));
                }
                Some(s)
            }
            "write" | "edit" if out.is_error => {
                (!out.text.is_empty()).then(|| format!("\n{}", t.fg("error", &out.text)))
            }
            "write" => None,
            "edit" => {
                let diff = out.details.as_ref().and_then(|d| d.get("diff")).and_then(Value::as_str)?;
                Some(format!("\n{}", render_diff(t, diff)))
            }
            "grep" | "find" | "ls" => {
                let text = out.text.trim();
                if text.is_empty() {
                    return None;
                }
                let lines: Vec<&str> = text.split('\n').collect();
                let max = if expanded {
                    lines.len()
                } else if row.name == "grep" {
                    15
                } else {
                    20
                };
                let shown = lines.len().min(max);
                let mut s = format!("\n{}", styled(&lines[..shown]).join("\n"));
                if lines.len() > max {
                    s.push_str(&more_lines(t, lines.len() - max, None));
                }
                Some(s)
            }
            _ => {
                let text = out.text.trim();
                if text.is_empty() {
                    return None;
                }
                let color = if out.is_error { "error" } else { "toolOutput" };
                let lines: Vec<&str> = text.split('\n').collect();
                let max = if expanded { lines.len() } else { 10 };
                let shown = lines.len().min(max);
                let body = lines[..shown].iter().map(|l| t.fg(color, l)).collect::<Vec<_>>().join("\n");
                let mut s = format!("\n{body}");
                if lines.len() > max {
                    s.push_str(&more_lines(t, lines.len() - max, None));
                }
                Some(s)
            }
        }
    }

    /// The bash result: the output (a five-line tail when collapsed), then the timing line.
    fn bash_result(&self, out: &ToolOutput, partial: bool, children: &mut Vec<ComponentRef>) {
        let t = &self.theme;
        let text = out.text.trim();
        if !text.is_empty() {
            let lines: Vec<&str> = text.split('\n').collect();
            let styled: Vec<String> = lines.iter().map(|l| t.fg("toolOutput", l)).collect();
            if self.options.expanded {
                children.push(shared(Text::new(format!("\n{}", styled.join("\n")), 0, 0)));
            } else {
                children.push(shared(Spacer::new(1)));
                let keep = 5;
                let mut body = String::new();
                if styled.len() > keep {
                    body.push_str(&format!(
                        "{} {}{}\n",
                        t.fg("muted", &format!("... ({} earlier lines,", styled.len() - keep)),
                        expand_hint(t),
                        t.fg("muted", ")")
                    ));
                }
                body.push_str(&styled[styled.len().saturating_sub(keep)..].join("\n"));
                children.push(shared(Text::new(body, 0, 0)));
            }
        }
        if let Some(ms) = out.duration_ms.filter(|_| !partial) {
            children.push(shared(Text::new(
                format!("\n{}", t.fg("muted", &format!("Took {}", format_duration(ms)))),
                0,
                0,
            )));
        }
    }

    /// A tool row (pi's `ToolExecutionComponent`).
    pub fn tool_row(&self, row: &ToolRow<'_>) -> ComponentRef {
        let bg = match row.output {
            None => "toolPendingBg",
            Some(_) if row.partial => "toolPendingBg",
            Some(o) if o.is_error => "toolErrorBg",
            Some(_) => "toolSuccessBg",
        };
        let theme = self.theme.clone();
        let mut b = pi_tui::Box::new(self.options.output_pad, 1, Some(Rc::new(move |s: &str| theme.bg(bg, s))));
        match self.extension_tool_call(row) {
            Some(call) => b.add_child(call),
            None if row.name == codemode::CODEMODE_TOOL_NAME => {
                for c in codemode::renderer::render_call(row.args, self.options.expanded, &self.theme) {
                    b.add_child(c);
                }
            }
            None => b.add_child(shared(Text::new(self.tool_call_text(row.name, row.args), 0, 0))),
        }
        if let Some(out) = row.output {
            let mut children = Vec::new();
            if let Some(result) = self.extension_tool_result(row, out) {
                children.push(result);
            } else if row.name == codemode::CODEMODE_TOOL_NAME {
                children.extend(self.codemode_result(out, row.partial));
            } else if row.name == "bash" || row.name == "powershell" {
                self.bash_result(out, row.partial, &mut children);
            } else if let Some(text) = self.tool_result_text(row, out) {
                children.push(shared(Text::new(text, 0, 0)));
            }
            for c in children {
                b.add_child(c);
            }
        }
        shared(b)
    }
}

impl TranscriptRenderer {
    /// The `codemode` result (see `builtin_extensions/codemode/renderer.rs`), with `Took` as bash.
    fn codemode_result(&self, out: &ToolOutput, partial: bool) -> Vec<ComponentRef> {
        let result = codemode::renderer::CodemodeResult {
            text: &out.text,
            details: out.details.as_ref(),
            is_error: out.is_error,
            partial,
            expanded: self.options.expanded,
        };
        let timer = out.duration_ms.filter(|_| !partial).map(|ms| format!("Took {}", format_duration(ms)));
        codemode::renderer::render_result(&result, timer, &self.theme)
    }

    /// The call line an extension's tool renderer draws (pi's `renderCall`), if any.
    fn extension_tool_call(&self, row: &ToolRow<'_>) -> Option<ComponentRef> {
        let runner = self.runner.as_ref()?;
        let drawn = super::custom::isolate(|| runner.render_tool_call(row.name, row.args, &self.theme)).ok()??;
        Some(shared(super::custom::ExtensionComponent(drawn)))
    }

    /// The result an extension's tool renderer draws (pi's `renderResult`), if any.
    fn extension_tool_result(&self, row: &ToolRow<'_>, out: &ToolOutput) -> Option<ComponentRef> {
        let runner = self.runner.as_ref()?;
        let result = serde_json::json!({"content": [{"type": "text", "text": out.text}],
            "details": out.details.clone().unwrap_or(Value::Null), "isError": out.is_error});
        let options = crate::extensions::ToolRenderOptions { expanded: self.options.expanded, is_partial: row.partial };
        let drawn =
            super::custom::isolate(|| runner.render_tool_result(row.name, row.args, &result, options, &self.theme))
                .ok()??;
        Some(shared(super::custom::ExtensionComponent(drawn)))
    }
}

/// `~` for paths in the home directory (pi's `shortenHomePath`).
fn shorten_home(path: &str) -> String {
    match std::env::var("HOME").ok().filter(|h| !h.is_empty()) {
        Some(home) if path == home => "~".to_owned(),
        Some(home) => match path.strip_prefix(&home).filter(|r| r.starts_with('/')) {
            Some(rest) => format!("~{rest}"),
            None => path.to_owned(),
        },
        None => path.to_owned(),
    }
}

/// pi's `formatReadLineRange`: `:start` or `:start-end`.
fn read_range(offset: Option<&Value>, limit: Option<&Value>) -> String {
    let num = |v: &Value| v.as_f64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()));
    let offset = offset.filter(|v| !v.is_null());
    let limit = limit.filter(|v| !v.is_null());
    if offset.is_none() && limit.is_none() {
        return String::new();
    }
    let Some(start) = offset.map_or(Some(1.0), num) else { return String::new() };
    let Some(limit) = limit else { return format!(":{start}") };
    let Some(count) = num(limit) else { return String::new() };
    let end = start + count - 1.0;
    if end == 0.0 { format!(":{start}") } else { format!(":{start}-{end}") }
}

/// pi's `formatToolCallWithArgs` (collapsed): the title, then `key=value` pairs cut at 100 chars.
fn generic_call(t: &Theme, name: &str, args: &Map<String, Value>) -> String {
    let header = t.fg("toolTitle", &bold(name));
    if args.is_empty() {
        return header;
    }
    let pairs = args.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
    let preview =
        if pairs.chars().count() > 100 { format!("{}...", pairs.chars().take(97).collect::<String>()) } else { pairs };
    format!("{header} {}", t.fg("muted", &preview))
}

/// pi's `renderDiff`: removed, added and context lines with their colours.
fn render_diff(t: &Theme, diff: &str) -> String {
    diff.split('\n')
        .map(|line| {
            let token = match line.chars().next() {
                Some('-') => "toolDiffRemoved",
                Some('+') => "toolDiffAdded",
                _ => "toolDiffContext",
            };
            t.fg(token, &line.replace('\t', "   "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_ranges_format_as_pi() {
        assert_eq!(format_duration(0), "0.0s");
        assert_eq!(format_duration(4200), "4.2s");
        assert_eq!(format_duration(90_000), "1m 30s");
        assert_eq!(read_range(Some(&Value::from(5)), Some(&Value::from(10))), ":5-14");
        assert_eq!(read_range(None, None), "");
        assert_eq!(read_range(Some(&Value::from(3)), None), ":3");
    }
}
