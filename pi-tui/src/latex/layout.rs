//! Display mode's 2D layout: stacked fractions, limits above and below big operators, scripts
//! raised and lowered, and matrices, joined side by side on a shared baseline.
//!
//! The parser writes a marker (`LAYOUT_MARKER_START`, the node's index, `LAYOUT_MARKER_END`)
//! into its text for each node; [`render_layout`] replaces the markers by the nodes' blocks.

use super::format::{LAYOUT_MARKER_END, LAYOUT_MARKER_START};
use super::text::{ends_with_space, starts_with_space, trim_end, trim_start};
use crate::ansi::visible_width;

/// A block the text refers to by index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Node {
    /// A stacked fraction (both parts may hold markers).
    Fraction { numerator: String, denominator: String },
    /// A big operator or named operator with its limits above and below.
    Operator { operator: String, lower: Option<String>, upper: Option<String> },
    /// Scripts above and below the baseline.
    Script { lower: Option<String>, upper: Option<String> },
    /// Lines drawn as they are (matrices, cases), `baseline` being the row on the text's line.
    Matrix { lines: Vec<String>, baseline: usize },
}

impl Node {
    fn is_matrix(&self) -> bool {
        matches!(self, Node::Matrix { .. })
    }
}

/// Lines of equal width, one of them (`baseline`) lying on the text's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Layout {
    pub lines: Vec<String>,
    pub width: usize,
    pub baseline: usize,
}

impl Layout {
    fn text(text: String) -> Self {
        let width = visible_width(&text);
        Layout { lines: vec![text], width, baseline: 0 }
    }
}

fn pad_line(line: &str, width: usize, centered: bool) -> String {
    let padding = width.saturating_sub(visible_width(line));
    let left = if centered { padding / 2 } else { 0 };
    format!("{}{line}{}", " ".repeat(left), " ".repeat(padding - left))
}

fn join_layouts(layouts: &[Layout]) -> Layout {
    if layouts.is_empty() {
        return Layout { lines: vec![String::new()], width: 0, baseline: 0 };
    }
    let baseline = layouts.iter().map(|l| l.baseline).max().unwrap_or(0);
    let below = layouts.iter().map(|l| l.lines.len() as isize - l.baseline as isize - 1).max().unwrap_or(0);
    let mut lines = Vec::new();
    let mut row: isize = 0;
    while row <= baseline as isize + below {
        let mut line = String::new();
        for layout in layouts {
            let source_row = row - baseline as isize + layout.baseline as isize;
            match usize::try_from(source_row).ok().and_then(|r| layout.lines.get(r)) {
                Some(text) => line.push_str(&pad_line(text, layout.width, false)),
                None => line.push_str(&" ".repeat(layout.width)),
            }
        }
        lines.push(trim_end(&line).to_string());
        row += 1;
    }
    Layout { lines, width: layouts.iter().map(|l| l.width).sum(), baseline }
}

/// The markers of one line: (char index, char length, node index).
fn markers(line: &[char]) -> Vec<(usize, usize, usize)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < line.len() {
        if line[i] == LAYOUT_MARKER_START {
            let mut j = i + 1;
            while j < line.len() && line[j].is_ascii_digit() {
                j += 1;
            }
            if j > i + 1 && j < line.len() && line[j] == LAYOUT_MARKER_END {
                let digits: String = line[i + 1..j].iter().collect();
                // An index too large for usize names no node, as in pi.
                found.push((i, j + 1 - i, digits.parse().unwrap_or(usize::MAX)));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    found
}

fn node_layout(node: &Node, nodes: &[Node]) -> Layout {
    match node {
        Node::Fraction { numerator, denominator } => {
            let numerator = render_layout(numerator, nodes);
            let denominator = render_layout(denominator, nodes);
            let content = numerator.width.max(denominator.width).max(1);
            let width = content + 2;
            let mut lines: Vec<String> = numerator.lines.iter().map(|l| pad_line(l, width, true)).collect();
            lines.push(format!(" {} ", "─".repeat(content)));
            lines.extend(denominator.lines.iter().map(|l| pad_line(l, width, true)));
            Layout { lines, width, baseline: numerator.lines.len() }
        }
        Node::Operator { operator, lower, upper } => {
            let width_of = |v: &Option<String>| v.as_deref().map_or(0, visible_width);
            let content = visible_width(operator).max(width_of(lower)).max(width_of(upper));
            let mut lines = Vec::new();
            if let Some(upper) = upper {
                lines.push(format!("{} ", pad_line(upper, content, true)));
            }
            lines.push(format!("{} ", pad_line(operator, content, true)));
            if let Some(lower) = lower {
                lines.push(format!("{} ", pad_line(lower, content, true)));
            }
            Layout { lines, width: content + 1, baseline: usize::from(upper.is_some()) }
        }
        Node::Script { lower, upper } => {
            let upper = upper.as_deref().map(|u| render_layout(u, nodes));
            let lower = lower.as_deref().map(|l| render_layout(l, nodes));
            let width = upper.as_ref().map_or(0, |u| u.width).max(lower.as_ref().map_or(0, |l| l.width));
            let mut lines = Vec::new();
            if let Some(upper) = &upper {
                lines.extend(upper.lines.iter().map(|l| pad_line(l, width, false)));
            }
            lines.push(" ".repeat(width));
            if let Some(lower) = &lower {
                lines.extend(lower.lines.iter().map(|l| pad_line(l, width, false)));
            }
            Layout { lines, width, baseline: upper.map_or(0, |u| u.lines.len()) }
        }
        Node::Matrix { lines, baseline } => {
            let width = lines.iter().map(|l| visible_width(l)).max().unwrap_or(0);
            Layout { lines: lines.iter().map(|l| pad_line(l, width, false)).collect(), width, baseline: *baseline }
        }
    }
}

/// The text between two markers, trimmed next to nodes (a space kept next to a matrix).
fn between(sliced: &str, previous: Option<&Node>, next: &Node) -> String {
    let trimmed = trim_end(if previous.is_some() { trim_start(sliced) } else { sliced });
    let leading = previous.is_some_and(Node::is_matrix) && starts_with_space(sliced);
    let trailing = next.is_matrix() && ends_with_space(sliced);
    if !trimmed.is_empty() {
        format!("{}{trimmed}{}", if leading { " " } else { "" }, if trailing { " " } else { "" })
    } else if leading || trailing {
        " ".into()
    } else {
        String::new()
    }
}

/// Draws text holding layout markers: each line's text and nodes joined on their baselines.
pub(super) fn render_layout(source: &str, nodes: &[Node]) -> Layout {
    let mut rendered = Vec::new();
    let mut first_baseline = 0;
    for source_line in source.split('\n') {
        let line: Vec<char> = source_line.chars().collect();
        let mut layouts = Vec::new();
        let mut position = 0;
        let mut previous: Option<&Node> = None;
        for (index, length, node_index) in markers(&line) {
            let Some(node) = nodes.get(node_index) else { continue };
            if index > position {
                let sliced: String = line[position..index].iter().collect();
                layouts.push(Layout::text(between(&sliced, previous, node)));
            }
            layouts.push(node_layout(node, nodes));
            position = index + length;
            previous = Some(node);
        }
        if position < line.len() {
            let sliced: String = line[position..].iter().collect();
            let trimmed = if previous.is_some() { trim_start(&sliced) } else { &sliced };
            let text = if previous.is_some_and(Node::is_matrix) && starts_with_space(&sliced) {
                format!(" {trimmed}")
            } else {
                trimmed.to_string()
            };
            layouts.push(Layout::text(text));
        }
        let joined = join_layouts(&layouts);
        if rendered.is_empty() {
            first_baseline = joined.baseline;
        }
        rendered.extend(joined.lines);
    }
    let width = rendered.iter().map(|l: &String| visible_width(l)).max().unwrap_or(0);
    Layout { lines: rendered, width, baseline: first_baseline }
}
