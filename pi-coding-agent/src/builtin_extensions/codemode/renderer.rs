//! How a `codemode` row draws in the interactive transcript (pi's `extensions/codemode/renderer.js`).
//!
//! The call shows the script, highlighted as JavaScript (ten visual lines when collapsed); the
//! result lists the nested tool calls with their status icon, arguments, duration and cost (the
//! last eight when collapsed), the total cost of model calls, the script output without the
//! `Script completed` header (five visual lines when collapsed, with the spill file named), and the
//! time the script took, like bash rows. Nested calls are not separate rows because they never
//! reach the model as tool calls.

use pi_tui::ansi::truncate_to_width;
use pi_tui::components::markdown::highlight_code;
use pi_tui::theme::bold;
use pi_tui::{Component, ComponentRef, Lines, Spacer, Text, Theme, shared};

/// A component as a shared trait object.
fn rc<T: Component + 'static>(component: T) -> ComponentRef {
    shared(component)
}
use serde_json::{Map, Value};

const CODE_PREVIEW_LINES: usize = 10;
const CALL_PREVIEW_COUNT: usize = 8;
const OUTPUT_PREVIEW_LINES: usize = 5;
const COLLAPSED_ARGS_CHARS: usize = 80;
/// The default key of `app.tools.expand`, named in hints.
const EXPAND_KEY: &str = "ctrl+o";

/// pi's `keyHint("app.tools.expand", "to expand")`.
fn expand_key_hint(theme: &Theme) -> String {
    format!("{}{}", theme.fg("dim", EXPAND_KEY), theme.fg("muted", " to expand"))
}

fn expand_hint(theme: &Theme, hidden: usize, noun: &str) -> String {
    format!(
        "{} {}{}",
        theme.fg("muted", &format!("... ({hidden} more {noun},")),
        expand_key_hint(theme),
        theme.fg("muted", ")")
    )
}

/// A nested call's duration: `42ms` under a second, else `1.5s`.
fn format_duration(ms: f64) -> String {
    if ms < 1000.0 { format!("{}ms", ms.round()) } else { format!("{:.1}s", ms / 1000.0) }
}

/// Cents for larger amounts, two significant digits for the fractions of a cent.
fn format_cost(cost: f64) -> String {
    if cost >= 0.01 {
        return format!("${cost:.2}");
    }
    if cost <= 0.0 {
        return "$0.0".into();
    }
    // JavaScript's `toPrecision(2)` for 0 < cost < 0.01: fixed notation with two significant digits.
    let scale = 10f64.powi(1 - cost.log10().floor() as i32);
    let rounded = (cost * scale).round() / scale;
    let decimals = (1 - rounded.log10().floor() as i32).max(0) as usize;
    format!("${rounded:.decimals$}")
}

/// Text wrapped to the width, cut to its first `max` visual lines, then a hint naming how many
/// were left out (pi's `VisualLinePreview` keeping the start).
struct VisualLinePreview {
    text: String,
    max: usize,
    hint: Box<dyn Fn(usize) -> String>,
    cache: Option<(usize, Lines)>,
}

impl Component for VisualLinePreview {
    fn render(&mut self, width: usize) -> Lines {
        if let Some((w, lines)) = &self.cache
            && *w == width
        {
            return lines.clone();
        }
        let all = Text::new(self.text.clone(), 0, 0).render(width);
        let mut lines: Vec<String> = all.iter().take(self.max).cloned().collect();
        if all.len() > self.max {
            lines.push(truncate_to_width(&(self.hint)(all.len() - self.max), width));
        }
        let lines: Lines = lines.into();
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

fn preview(text: String, max: usize, theme: &Theme) -> ComponentRef {
    let theme = theme.clone();
    rc(VisualLinePreview { text, max, hint: Box::new(move |hidden| expand_hint(&theme, hidden, "lines")), cache: None })
}

/// The call: the title, then the script (with its `// @options:` line) highlighted.
pub fn render_call(args: &Map<String, Value>, expanded: bool, theme: &Theme) -> Vec<ComponentRef> {
    let title = theme.fg("toolTitle", &bold("codemode"));
    let code = match args.get("code") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return vec![rc(Text::new(format!("{title} {}", theme.fg("error", "[invalid arg]")), 0, 0))],
    };
    let mut out = vec![rc(Text::new(title, 0, 0))];
    if !code.is_empty() {
        let source = code.replace('\r', "").trim_end().replace('\t', "   ");
        let highlighted = highlight_code(theme, &source, Some("javascript")).join("\n");
        out.push(if expanded {
            rc(Text::new(highlighted, 0, 0))
        } else {
            preview(highlighted, CODE_PREVIEW_LINES, theme)
        });
    }
    out
}

fn status_icon(status: &str, theme: &Theme) -> String {
    match status {
        "running" => theme.fg("warning", "…"),
        "ok" => theme.fg("success", "✓"),
        "error" => theme.fg("error", "✗"),
        _ => theme.fg("muted", "⊘"),
    }
}

fn format_call(call: &Value, theme: &Theme, expanded: bool) -> String {
    let field = |k: &str| call.get(k).and_then(Value::as_str).unwrap_or("");
    let args = field("args");
    let args = if !expanded && args.chars().count() > COLLAPSED_ARGS_CHARS {
        format!("{}...", args.chars().take(COLLAPSED_ARGS_CHARS - 3).collect::<String>())
    } else {
        args.to_owned()
    };
    let mut line = format!("{} {}", status_icon(field("status"), theme), theme.fg("toolTitle", field("name")));
    if !args.is_empty() {
        line.push_str(&format!(" {}", theme.fg("muted", &args)));
    }
    if let Some(ms) = call.get("durationMs").and_then(Value::as_f64) {
        line.push_str(&format!(" {}", theme.fg("dim", &format_duration(ms))));
    }
    if let Some(cost) = call.get("cost").and_then(Value::as_f64).filter(|c| *c != 0.0) {
        line.push_str(&format!(" {}", theme.fg("dim", &format_cost(cost))));
    }
    if expanded && let Some(error) = call.get("error").and_then(Value::as_str).filter(|e| !e.is_empty()) {
        line.push_str(&format!("\n    {}", theme.fg("error", &error.split('\n').collect::<Vec<_>>().join("\n    "))));
    }
    line
}

/// The nested calls' lines (the last eight when collapsed) and the total cost of model calls.
fn calls_text(calls: &[Value], theme: &Theme, expanded: bool) -> String {
    let shown = if expanded { calls } else { &calls[calls.len().saturating_sub(CALL_PREVIEW_COUNT)..] };
    let mut lines: Vec<String> = shown.iter().map(|c| format_call(c, theme, expanded)).collect();
    if shown.len() < calls.len() {
        let hidden = calls.len() - shown.len();
        lines.insert(
            0,
            format!(
                "{} {}{}",
                theme.fg("muted", &format!("... ({hidden} earlier calls,")),
                expand_key_hint(theme),
                theme.fg("muted", ")")
            ),
        );
    }
    let priced: Vec<f64> =
        calls.iter().filter_map(|c| c.get("cost").and_then(Value::as_f64)).filter(|c| *c != 0.0).collect();
    if priced.len() > 1 {
        lines.push(theme.fg("muted", &format!("Model calls: {}", format_cost(priced.iter().sum()))));
    }
    lines.join("\n")
}

/// The output without the `Script completed|failed\nWall time N seconds\nOutput:\n` header
/// (rejected input has none), trimmed.
fn strip_header(text: &str) -> &str {
    let stripped = (|| {
        let rest = text.strip_prefix("Script completed\n").or_else(|| text.strip_prefix("Script failed\n"))?;
        let (wall, rest) = rest.split_once('\n')?;
        let seconds = wall.strip_prefix("Wall time ")?.strip_suffix(" seconds")?;
        if seconds.is_empty() || !seconds.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return None;
        }
        rest.strip_prefix("Output:\n")
    })();
    stripped.unwrap_or(text).trim()
}

/// One `codemode` result as the row shows it.
#[derive(Clone, Copy, Debug)]
pub struct CodemodeResult<'a> {
    /// The result's text blocks joined by newlines.
    pub text: &'a str,
    /// The result's `details` (`calls`, `fullOutputPath`).
    pub details: Option<&'a Value>,
    /// Whether the script failed.
    pub is_error: bool,
    /// Whether the script still runs.
    pub partial: bool,
    /// Whether the user expanded tool output.
    pub expanded: bool,
}

/// The result: nested calls, the output, then `timer` (`Took 0.5s`) when given.
pub fn render_result(result: &CodemodeResult<'_>, timer: Option<String>, theme: &Theme) -> Vec<ComponentRef> {
    let mut out = Vec::new();
    let calls = result.details.and_then(|d| d.get("calls")).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if !calls.is_empty() {
        out.push(rc(Spacer::new(1)));
        out.push(rc(Text::new(calls_text(calls, theme, result.expanded), 0, 0)));
    }
    let output = if result.partial { "" } else { strip_header(result.text) };
    if !output.is_empty() {
        let color = if result.is_error { "error" } else { "toolOutput" };
        let styled = output.replace('\t', "   ").split('\n').map(|l| theme.fg(color, l)).collect::<Vec<_>>().join("\n");
        out.push(rc(Spacer::new(1)));
        if result.expanded {
            out.push(rc(Text::new(styled, 0, 0)));
        } else {
            out.push(preview(styled, OUTPUT_PREVIEW_LINES, theme));
            let path = result.details.and_then(|d| d.get("fullOutputPath")).and_then(Value::as_str);
            if let Some(path) = path.filter(|p| !p.is_empty()) {
                out.push(rc(Text::new(theme.fg("muted", &format!("Full output: {path}")), 0, 0)));
            }
        }
    }
    if let Some(timer) = timer {
        out.push(rc(Spacer::new(1)));
        out.push(rc(Text::new(theme.fg("muted", &timer), 0, 0)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_dropped_only_when_it_is_the_script_header() {
        assert_eq!(strip_header("Script completed\nWall time 0.1 seconds\nOutput:\n\nline one\n"), "line one");
        assert_eq!(
            strip_header("Script failed\nWall time 12 seconds\nOutput:\n\nScript error:\nx"),
            "Script error:\nx"
        );
        assert_eq!(strip_header("Invalid options line"), "Invalid options line");
        assert_eq!(
            strip_header("Script completed\nWall time soon seconds\nOutput:\nx"),
            "Script completed\nWall time soon seconds\nOutput:\nx"
        );
    }

    #[test]
    fn durations_and_costs_format_as_pi() {
        assert_eq!(format_duration(57.4), "57ms");
        assert_eq!(format_duration(1500.0), "1.5s");
        assert_eq!(format_cost(0.25), "$0.25");
        assert_eq!(format_cost(0.0012), "$0.0012");
        assert_eq!(format_cost(0.005), "$0.0050");
        assert_eq!(format_cost(0.00999), "$0.010");
        assert_eq!(format_cost(0.000123), "$0.00012");
    }

    #[test]
    fn collapsed_calls_keep_the_last_eight_and_cut_long_arguments() {
        let theme = Theme::dark(pi_tui::ColorMode::Truecolor).expect("the dark theme loads");
        let long = "x".repeat(100);
        let calls: Vec<Value> = (0..10)
            .map(|i| serde_json::json!({"name": format!("t{i}"), "args": long, "status": "error", "error": "boom"}))
            .collect();
        let text = pi_tui::ansi::strip_terminal_sequences(&calls_text(&calls, &theme, false));
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines.len(), 9);
        assert_eq!(lines[0], "... (2 earlier calls, ctrl+o to expand)");
        assert_eq!(lines[1], format!("✗ t2 {}...", "x".repeat(77)));
        let expanded = pi_tui::ansi::strip_terminal_sequences(&calls_text(&calls, &theme, true));
        assert!(expanded.starts_with(&format!("✗ t0 {long}\n    boom")), "{expanded}");
    }
}
