//! pi's `system` theme against the reference: `fixtures/system_theme/system_theme.json` holds pi
//! 1.6.0's own `generateSystemThemeColors` and `terminalAppearance` results for fifteen terminals
//! (regenerate with `generate.mjs` there), and ours must produce every token exactly.

use pi_tui::theme::auto::Appearance;
use pi_tui::theme::system::{
    Rgb, SystemColor, SystemThemeInput, TerminalColors, generate_system_theme_colors, terminal_appearance,
};
use pi_tui::{ColorMode, Theme};
use serde_json::Value;

const FIXTURE: &str = include_str!("fixtures/system_theme/system_theme.json");

fn rgb(v: &Value) -> Rgb {
    let s = v.as_str().expect("hex colour");
    let ch = |i: usize| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digits");
    Rgb { r: ch(1), g: ch(3), b: ch(5) }
}

fn appearance(v: &Value) -> Option<Appearance> {
    match v.as_str() {
        Some("dark") => Some(Appearance::Dark),
        Some("light") => Some(Appearance::Light),
        _ => None,
    }
}

fn input(v: &Value) -> SystemThemeInput {
    SystemThemeInput {
        colors: TerminalColors {
            foreground: v.get("foreground").map(rgb),
            background: v.get("background").map(rgb),
            palette: v.get("palette").and_then(Value::as_array).map(|p| p.iter().map(rgb).collect()),
        },
        saturation: v.get("saturation").and_then(Value::as_f64).unwrap_or(1.0),
        appearance_hint: appearance(v.get("appearanceHint").unwrap_or(&Value::Null)),
    }
}

fn expected(v: &Value) -> SystemColor {
    match v {
        Value::String(s) if s.is_empty() => SystemColor::Default,
        Value::String(s) => SystemColor::Hex(s.clone()),
        Value::Number(n) => SystemColor::Index(n.as_u64().expect("index") as u8),
        other => panic!("unexpected colour {other}"),
    }
}

#[test]
fn every_token_matches_the_reference_generator() {
    let cases: Vec<Value> = serde_json::from_str(FIXTURE).expect("fixture");
    assert_eq!(cases.len(), 15);
    let mut mismatches = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().expect("name");
        let ours = generate_system_theme_colors(&input(&case["input"]));
        let reference = case["result"]["colors"].as_object().expect("colors");
        let order: Vec<&str> = reference.keys().map(String::as_str).collect();
        let our_order: Vec<&str> = ours.colors.iter().map(|(t, _)| *t).collect();
        assert_eq!(our_order, order, "{name}: token order");
        for (token, value) in &ours.colors {
            let want = expected(&reference[*token]);
            if *value != want {
                mismatches.push(format!("{name}.{token}: ours {value:?}, pi {want:?}"));
            }
        }
        let dim: Vec<&str> =
            case["result"]["dim"].as_array().expect("dim").iter().map(|d| d.as_str().expect("token")).collect();
        assert_eq!(ours.dim, dim, "{name}: faint tokens");
        assert_eq!(ours.appearance, appearance(&case["result"]["appearance"]), "{name}: appearance");
        if let Some(bg) = case["input"].get("background") {
            let fg = case["input"].get("foreground").map(rgb);
            assert_eq!(
                Some(terminal_appearance(rgb(bg), fg)),
                appearance(&case["terminalAppearance"]),
                "{name}: terminalAppearance"
            );
        }
    }
    assert!(mismatches.is_empty(), "{} tokens differ:\n{}", mismatches.len(), mismatches.join("\n"));
}

#[test]
fn the_system_theme_draws_faint_tokens_and_default_colours_as_pi() {
    let nothing = Theme::system(&TerminalColors::default(), false, Appearance::Light, ColorMode::Truecolor)
        .expect("system theme");
    assert_eq!(nothing.name(), "system");
    assert_eq!(nothing.appearance(), Some("light"));
    // pi's `fg` for a faint token: its colour, SGR 2, the text, then `22;39`.
    assert_eq!(nothing.fg("muted", "x"), "\x1b[39m\x1b[2mx\x1b[22;39m");
    assert_eq!(nothing.fg("text", "x"), "\x1b[39mx\x1b[39m");
    assert_eq!(nothing.fg("accent", "x"), "\x1b[38;5;5mx\x1b[39m");
    assert_eq!(nothing.bg("userMessageBg", "x"), "\x1b[49mx\x1b[49m");
    let black = TerminalColors { background: Some(Rgb { r: 0, g: 0, b: 0 }), ..TerminalColors::default() };
    let dark = Theme::system(&black, false, Appearance::Light, ColorMode::Truecolor).expect("system theme");
    assert_eq!(dark.appearance(), Some("dark"));
    assert!(dark.fg_ansi("accent").expect("accent").starts_with("\x1b[38;2;"));
    // While the query is in flight the theme is grayscale: every colour has equal channels.
    let pending = Theme::system(&black, true, Appearance::Dark, ColorMode::Truecolor).expect("system theme");
    let accent = pending.fg_ansi("accent").expect("accent").to_owned();
    let channels: Vec<&str> = accent.trim_start_matches("\x1b[38;2;").trim_end_matches('m').split(';').collect();
    assert!(channels.windows(2).all(|w| w[0] == w[1]), "grayscale accent: {accent:?}");
}
