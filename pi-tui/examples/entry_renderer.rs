//! The seed's entry renderer, rendered: an `[audit] bash` entry in a padded box with the
//! `customMessageBg` background and, when expanded, a dim time line.
//!
//! Run with `cargo run -p pi-tui --example entry_renderer [width]`.

use std::rc::Rc;

use pi_tui::{Box, ColorMode, Component, StyleFn, Text, Theme, TuiError, shared};

/// Build the entry component as pi's typical renderer does:
/// `Box(1, 1, t => theme.bg("customMessageBg", t))` holding the label line and, when expanded,
/// the time line.
pub fn audit_entry(theme: &Rc<Theme>, command: &str, time: &str, expanded: bool) -> Box {
    let bg_theme = theme.clone();
    let bg: StyleFn = Rc::new(move |t: &str| bg_theme.bg("customMessageBg", t));
    let mut entry = Box::new(1, 1, Some(bg));
    let label = format!("{} {command}", theme.fg("accent", "[audit]"));
    entry.add_child(shared(Text::new(label, 0, 0)));
    if expanded {
        entry.add_child(shared(Text::new(theme.fg("dim", time), 0, 0)));
    }
    entry
}

fn main() -> Result<(), TuiError> {
    let width = std::env::args().nth(1).and_then(|w| w.parse().ok()).unwrap_or(40);
    let theme = Rc::new(Theme::dark(ColorMode::Truecolor)?);
    for expanded in [false, true] {
        let mut entry = audit_entry(&theme, "bash", "2026-01-05 14:03:27", expanded);
        println!("expanded = {expanded}:");
        for line in entry.render(width).iter() {
            println!("{line}\x1b[0m");
        }
        println!();
    }
    Ok(())
}
