//! The footer (pi's `FooterComponent`): the working directory with git branch and session name,
//! then token usage, cost, context-window use and the model with its thinking level, then the
//! extensions' status texts.

use std::collections::BTreeMap;
use std::rc::Rc;

use pi_tui::ansi::{truncate_to_width_with as truncate_to_width, visible_width};
use pi_tui::{Component, Lines, Theme};

/// What the footer shows, gathered from the session once per frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FooterData {
    pub(crate) cwd: String,
    pub(crate) git_branch: Option<String>,
    pub(crate) session_name: Option<String>,
    pub(crate) input: u64,
    pub(crate) output: u64,
    pub(crate) cache_read: u64,
    pub(crate) cache_write: u64,
    pub(crate) cache_hit_rate: Option<f64>,
    pub(crate) cost: f64,
    pub(crate) context_percent: Option<f64>,
    pub(crate) context_window: u64,
    pub(crate) auto_compact: bool,
    pub(crate) model_id: Option<String>,
    pub(crate) provider: Option<String>,
    pub(crate) reasoning: bool,
    pub(crate) thinking_level: String,
    /// Under a virtual selection, the model the latest response was routed to and its level.
    pub(crate) routed: Option<(String, Option<String>)>,
    pub(crate) provider_count: usize,
    pub(crate) statuses: BTreeMap<String, String>,
}

/// pi's `formatTokens`.
pub(crate) fn format_tokens(count: u64) -> String {
    let c = count as f64;
    if count < 1000 {
        count.to_string()
    } else if count < 10_000 {
        format!("{:.1}k", c / 1000.0)
    } else if count < 1_000_000 {
        format!("{}k", (c / 1000.0).round())
    } else if count < 10_000_000 {
        format!("{:.1}M", c / 1_000_000.0)
    } else {
        format!("{}M", (c / 1_000_000.0).round())
    }
}

/// pi's `formatCwdForFooter`: `~` for the home directory and paths inside it.
pub(crate) fn format_cwd(cwd: &str, home: Option<&str>) -> String {
    let Some(home) = home.filter(|h| !h.is_empty()) else { return cwd.to_owned() };
    let home = home.trim_end_matches('/');
    if cwd == home {
        return "~".to_owned();
    }
    match cwd.strip_prefix(home).filter(|rest| rest.starts_with('/')) {
        Some(rest) => format!("~{rest}"),
        None => cwd.to_owned(),
    }
}

/// Single-line status text (pi's `sanitizeStatusText`).
fn sanitize_status(text: &str) -> String {
    let t = text.replace(['\r', '\n', '\t'], " ");
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        if c == ' ' && out.ends_with(' ') {
            continue;
        }
        out.push(c);
    }
    out.trim().to_owned()
}

/// The footer's lines at `width`.
pub(crate) fn footer_lines(d: &FooterData, theme: &Theme, width: usize) -> Vec<String> {
    let mut pwd = d.cwd.clone();
    if let Some(branch) = &d.git_branch {
        pwd = format!("{pwd} ({branch})");
    }
    if let Some(name) = &d.session_name {
        pwd = format!("{pwd} • {name}");
    }
    let mut parts = Vec::new();
    if d.input > 0 {
        parts.push(format!("↑{}", format_tokens(d.input)));
    }
    if d.output > 0 {
        parts.push(format!("↓{}", format_tokens(d.output)));
    }
    if d.cache_read > 0 {
        parts.push(format!("R{}", format_tokens(d.cache_read)));
    }
    if d.cache_write > 0 {
        parts.push(format!("W{}", format_tokens(d.cache_write)));
    }
    if (d.cache_read > 0 || d.cache_write > 0)
        && let Some(rate) = d.cache_hit_rate
    {
        parts.push(format!("CH{rate:.1}%"));
    }
    if d.cost > 0.0 {
        parts.push(format!("${:.3}", d.cost));
    }
    let auto = if d.auto_compact { " (auto)" } else { "" };
    let value = d.context_percent.unwrap_or(0.0);
    let display = match d.context_percent {
        None => format!("?/{}{auto}", format_tokens(d.context_window)),
        Some(p) => format!("{p:.1}%/{}{auto}", format_tokens(d.context_window)),
    };
    parts.push(if value > 90.0 {
        theme.fg("error", &display)
    } else if value > 70.0 {
        theme.fg("warning", &display)
    } else {
        display
    });
    let mut left = parts.join(" ");
    let mut left_width = visible_width(&left);
    if left_width > width {
        left = truncate_to_width(&left, width, "...", false);
        left_width = visible_width(&left);
    }
    let model = d.model_id.clone().unwrap_or_else(|| "no-model".to_owned());
    let mut right_plain = model.clone();
    if d.reasoning {
        right_plain = if d.thinking_level == "off" {
            format!("{model} • thinking off")
        } else {
            format!("{model} • {}", d.thinking_level)
        };
    }
    // A virtual model routes each request; show where the latest response went.
    if let Some((id, level)) = &d.routed {
        let level = level.as_ref().map(|l| format!(" • {l}")).unwrap_or_default();
        right_plain = format!("{right_plain} → {id}{level}");
    }
    let mut right = right_plain.clone();
    if d.provider_count > 1
        && let Some(p) = &d.provider
    {
        right = format!("({p}) {right_plain}");
        if left_width + 2 + visible_width(&right) > width {
            right = right_plain;
        }
    }
    let right_width = visible_width(&right);
    let stats = if left_width + 2 + right_width <= width {
        format!("{left}{}{right}", " ".repeat(width - left_width - right_width))
    } else if width > left_width + 2 {
        let r = truncate_to_width(&right, width - left_width - 2, "", false);
        format!("{left}{}{r}", " ".repeat(width.saturating_sub(left_width + visible_width(&r))))
    } else {
        left.clone()
    };
    let remainder = &stats[left.len()..];
    let mut lines = vec![
        truncate_to_width(&theme.fg("dim", &pwd), width, &theme.fg("dim", "..."), false),
        format!("{}{}", theme.fg("dim", &left), theme.fg("dim", remainder)),
    ];
    if !d.statuses.is_empty() {
        let line = d.statuses.values().map(|t| sanitize_status(t)).collect::<Vec<_>>().join(" ");
        lines.push(truncate_to_width(&line, width, &theme.fg("dim", "..."), false));
    }
    lines
}

/// The footer component: [`FooterData`] is refreshed by the app before each frame.
pub(crate) struct Footer {
    pub(crate) data: FooterData,
    pub(crate) theme: Rc<Theme>,
    cache: Option<(FooterData, usize, Lines)>,
}

impl Footer {
    pub(crate) fn new(theme: Rc<Theme>) -> Self {
        Footer { data: FooterData::default(), theme, cache: None }
    }
}

impl Component for Footer {
    fn render(&mut self, width: usize) -> Lines {
        if let Some((d, w, lines)) = &self.cache
            && *w == width
            && *d == self.data
        {
            return lines.clone();
        }
        let lines: Lines = footer_lines(&self.data, &self.theme, width).into();
        self.cache = Some((self.data.clone(), width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_cwd_format_as_pi() {
        assert_eq!(format_tokens(999), "999");
        assert_eq!(format_tokens(8192), "8.2k");
        assert_eq!(format_tokens(128_000), "128k");
        assert_eq!(format_tokens(1_500_000), "1.5M");
        assert_eq!(format_cwd("/home/u/p", Some("/home/u")), "~/p");
        assert_eq!(format_cwd("/home/u", Some("/home/u/")), "~");
        assert_eq!(format_cwd("/home/uv", Some("/home/u")), "/home/uv");
    }

    #[test]
    fn stats_line_right_aligns_the_model() {
        let theme = Theme::dark(pi_tui::ColorMode::Truecolor).expect("theme");
        let d = FooterData {
            cwd: "/p".into(),
            input: 10,
            output: 3,
            context_percent: Some(0.2),
            context_window: 8192,
            auto_compact: true,
            model_id: Some("m".into()),
            ..Default::default()
        };
        let lines = footer_lines(&d, &theme, 40);
        let plain = pi_tui::ansi::strip_terminal_sequences(&lines[1]);
        assert_eq!(plain, format!("↑10 ↓3 0.2%/8.2k (auto){}m", " ".repeat(16)));
    }
}
