//! The seed's entry renderer (pi-tui/examples/entry_renderer.rs) against pi 1.6.0's output, and the
//! built-in themes against every token's escape sequence.

mod common;

#[allow(dead_code)]
#[path = "../examples/entry_renderer.rs"]
mod example;

use std::rc::Rc;

use common::fixture;
use pi_tui::theme::{ColorMode, Theme};
use pi_tui::{Box, Component, StyleFn, Text, shared};

#[test]
fn audit_entry_matches_reference() -> Result<(), pi_tui::TuiError> {
    let theme = Rc::new(Theme::dark(ColorMode::Truecolor)?);
    for case in fixture("entry_renderer.json").as_array().into_iter().flatten() {
        let expanded = case["expanded"].as_bool().unwrap_or(false);
        let width = case["width"].as_u64().unwrap_or(0) as usize;
        let mut entry = example::audit_entry(&theme, "bash", "2026-01-05 14:03:27", expanded);
        let expected: Vec<String> = serde_json::from_value(case["expected"].clone()).unwrap_or_default();
        assert_eq!(entry.render(width).to_vec(), expected, "expanded={expanded} width={width}");
    }
    Ok(())
}

#[test]
fn spec_status_renderer_example() -> Result<(), pi_tui::TuiError> {
    let theme = Rc::new(Theme::dark(ColorMode::Truecolor)?);
    let t = theme.clone();
    let bg: StyleFn = Rc::new(move |s: &str| t.bg("customMessageBg", s));
    let mut b = Box::new(1, 1, Some(bg));
    b.add_child(shared(Text::new(format!("{} hello", theme.fg("accent", "[status]")), 0, 0)));
    assert_eq!(
        b.render(24).to_vec(),
        [
            format!("\x1b[48;2;58;48;85m{}\x1b[49m", " ".repeat(24)),
            format!("\x1b[48;2;58;48;85m \x1b[38;2;167;152;215m[status]\x1b[39m hello{}\x1b[49m", " ".repeat(9)),
            format!("\x1b[48;2;58;48;85m{}\x1b[49m", " ".repeat(24)),
        ]
    );
    Ok(())
}

#[test]
fn audit_entry_screen_snapshot() -> Result<(), pi_tui::TuiError> {
    let theme = Rc::new(Theme::dark(ColorMode::Truecolor)?);
    let mut entry = example::audit_entry(&theme, "bash", "2026-01-05 14:03:27", true);
    let mut vt = common::parser(6, 30);
    let lines = entry.render(30);
    vt.process(lines.join("\r\n").as_bytes());
    let bg = vt.screen().cell(0, 0).map(|c| format!("{:?}", c.bgcolor()));
    insta::assert_snapshot!(format!("{}background: {bg:?}\n", common::screen_dump(&mut vt)));
    Ok(())
}

#[test]
fn builtin_themes_match_reference() -> Result<(), pi_tui::TuiError> {
    let f = fixture("themes.json");
    let mut failures = Vec::new();
    for (key, tokens) in f.as_object().into_iter().flatten() {
        let (name, mode) = key.split_once('/').unwrap_or((key, ""));
        let mode = if mode == "truecolor" { ColorMode::Truecolor } else { ColorMode::Ansi256 };
        let theme = Theme::builtin(name, mode)?;
        for (token, expected) in tokens["fg"].as_object().into_iter().flatten() {
            let got = theme.fg(token, "X");
            if Some(got.as_str()) != expected.as_str() {
                failures.push(format!("{key} fg {token}: got {got:?}, pi {expected}"));
            }
        }
        for (token, expected) in tokens["bg"].as_object().into_iter().flatten() {
            let got = theme.bg(token, "X");
            if Some(got.as_str()) != expected.as_str() {
                failures.push(format!("{key} bg {token}: got {got:?}, pi {expected}"));
            }
        }
    }
    assert!(failures.is_empty(), "theme mismatches:\n{}", failures.join("\n"));
    Ok(())
}
