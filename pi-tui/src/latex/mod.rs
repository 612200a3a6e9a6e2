//! LaTeX math as terminal text (pi-tui's `renderLatex`): Greek letters, operators, relations
//! and arrows as Unicode; scripts as Unicode sub-/superscripts where they exist; inline
//! fractions as `a/b`. In display mode fractions stack, big operators take their limits above
//! and below, and matrices and cases are drawn over several lines.
//!
//! Unsupported or malformed input gives `None`, so callers can show the source instead.

mod commands;
mod environments;
mod format;
mod layout;
mod parser;
mod symbols;
pub(crate) mod text;

use format::PROTECTED_SPACE;
use parser::Parser;

/// Renders a LaTeX math expression as Unicode text, over several lines in display mode.
/// `None` when the expression holds unsupported or malformed syntax.
pub fn render_latex(source: &str, display: bool) -> Option<String> {
    let mut nodes = Vec::new();
    let rendered = Parser::new(source, &mut nodes, display, 0).render()?;
    if nodes.is_empty() {
        return Some(rendered.replace(PROTECTED_SPACE, " "));
    }
    let lines = layout::render_layout(&rendered, &nodes).lines;
    let leading = |line: &str| line.chars().count() - text::trim_start(line).chars().count();
    let indentation = lines.iter().filter(|l| !text::trim(l).is_empty()).map(|l| leading(l)).min();
    let sliced: Vec<String> = lines
        .iter()
        .map(|line| match indentation {
            Some(indent) => text::trim_end(&line.chars().skip(indent).collect::<String>()).to_string(),
            None => String::new(),
        })
        .collect();
    Some(text::trim_end(&sliced.join("\n")).replace(PROTECTED_SPACE, " "))
}
