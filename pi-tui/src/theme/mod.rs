//! Themes: pi's theme JSON format, its 56 colour tokens, and `fg`/`bg`/`style` helpers.
//!
//! The built-in `dark` and `light` themes are pi 1.6.0's files, embedded from `pi-tui/themes/`.
//! pi's third built-in, `system`, is generated from the terminal's reported colours ([`system`]).

pub mod auto;
mod color;
pub mod osc;
pub mod system;

pub use color::{Color, ColorMode, okhsl_to_rgb, parse_color};

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use crate::error::TuiError;

/// Which slot a token colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Foreground (`38`).
    Foreground,
    /// Background (`48`).
    Background,
}

use Slot::{Background as B, Foreground as F};

/// Every theme token, in pi's order, with its slot and optional fallback token.
pub const THEME_TOKENS: &[(&str, Slot, Option<&str>)] = &[
    ("accent", F, None),
    ("border", F, None),
    ("borderAccent", F, None),
    ("borderMuted", F, None),
    ("success", F, None),
    ("error", F, None),
    ("warning", F, None),
    ("muted", F, None),
    ("dim", F, None),
    ("text", F, None),
    ("thinkingText", F, None),
    ("scrollbarTrack", F, Some("muted")),
    ("scrollbarThumb", F, Some("text")),
    ("selectedBg", B, None),
    ("searchMatchBg", B, Some("selectedBg")),
    ("searchMatchText", F, Some("text")),
    ("userMessageBg", B, None),
    ("userMessageText", F, None),
    ("customMessageBg", B, None),
    ("customMessageText", F, None),
    ("customMessageLabel", F, None),
    ("toolPendingBg", B, None),
    ("toolSuccessBg", B, None),
    ("toolErrorBg", B, None),
    ("toolTitle", F, None),
    ("toolOutput", F, None),
    ("mdHeading", F, None),
    ("mdLink", F, None),
    ("mdLinkUrl", F, None),
    ("mdCode", F, None),
    ("mdCodeBlock", F, None),
    ("mdCodeBlockBorder", F, None),
    ("mdQuote", F, None),
    ("mdQuoteBorder", F, None),
    ("mdHr", F, None),
    ("mdListBullet", F, None),
    ("toolDiffAdded", F, None),
    ("toolDiffRemoved", F, None),
    ("toolDiffContext", F, None),
    ("syntaxComment", F, None),
    ("syntaxKeyword", F, None),
    ("syntaxFunction", F, None),
    ("syntaxVariable", F, None),
    ("syntaxString", F, None),
    ("syntaxNumber", F, None),
    ("syntaxType", F, None),
    ("syntaxOperator", F, None),
    ("syntaxPunctuation", F, None),
    ("thinkingOff", F, None),
    ("thinkingMinimal", F, None),
    ("thinkingLow", F, None),
    ("thinkingMedium", F, None),
    ("thinkingHigh", F, None),
    ("thinkingXhigh", F, None),
    ("thinkingMax", F, Some("thinkingXhigh")),
    ("bashMode", F, None),
];

const DARK_JSON: &str = include_str!("../../themes/dark.json");
const LIGHT_JSON: &str = include_str!("../../themes/light.json");

/// A colour value in a theme file: a string (hex, oklch, okhsl, var name, `""`) or a palette index.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum ColorValue {
    /// Palette index 0–255.
    Index(u8),
    /// Any string form.
    Text(String),
}

/// A theme file (`{ "$schema", "name", "appearance", "vars", "colors", "export" }`).
#[derive(Debug, Clone, Deserialize)]
pub struct ThemeFile {
    /// Theme name (no `/`, not `system`).
    pub name: String,
    /// `"dark"` or `"light"`.
    #[serde(default)]
    pub appearance: Option<String>,
    /// Named colours usable as values.
    #[serde(default)]
    pub vars: HashMap<String, ColorValue>,
    /// Token colours (strict: unknown tokens are errors).
    pub colors: HashMap<String, ColorValue>,
    /// Colours for HTML export.
    #[serde(default)]
    pub export: HashMap<String, ColorValue>,
}

/// Text attributes for [`Theme::style`].
#[derive(Debug, Clone, Copy, Default)]
pub struct StyleOptions<'a> {
    /// Foreground token.
    pub fg: Option<&'a str>,
    /// Background token.
    pub bg: Option<&'a str>,
    /// Bold.
    pub bold: bool,
    /// Faint.
    pub dim: bool,
    /// Italic.
    pub italic: bool,
    /// Underline.
    pub underline: bool,
    /// Reverse video.
    pub inverse: bool,
    /// Strikethrough.
    pub strikethrough: bool,
}

/// A loaded theme: precomputed escape sequences per token.
#[derive(Debug, Clone)]
pub struct Theme {
    name: String,
    appearance: Option<String>,
    mode: ColorMode,
    fg_ansi: HashMap<String, String>,
    bg_ansi: HashMap<String, String>,
    /// Foreground tokens drawn faint (SGR 2) on top of their colour (the `system` theme's).
    dim: HashSet<String>,
}

fn resolve_var(
    value: &ColorValue,
    vars: &HashMap<String, ColorValue>,
    seen: &mut Vec<String>,
) -> Result<ColorValue, TuiError> {
    let ColorValue::Text(s) = value else {
        return Ok(value.clone());
    };
    let lower = s.to_ascii_lowercase();
    if s.is_empty() || s.starts_with('#') || lower.starts_with("oklch(") || lower.starts_with("okhsl(") {
        return Ok(value.clone());
    }
    if seen.contains(s) {
        return Err(TuiError::Theme(format!("Circular variable reference detected: {s}")));
    }
    let next = vars.get(s).ok_or_else(|| TuiError::Theme(format!("Variable reference not found: {s}")))?;
    seen.push(s.clone());
    resolve_var(next, vars, seen)
}

impl Theme {
    /// The built-in dark theme.
    pub fn dark(mode: ColorMode) -> Result<Self, TuiError> {
        Self::from_json(DARK_JSON, mode)
    }

    /// The built-in light theme.
    pub fn light(mode: ColorMode) -> Result<Self, TuiError> {
        Self::from_json(LIGHT_JSON, mode)
    }

    /// A built-in theme by name (`dark` or `light`).
    pub fn builtin(name: &str, mode: ColorMode) -> Result<Self, TuiError> {
        match name {
            "dark" => Self::dark(mode),
            "light" => Self::light(mode),
            other => Err(TuiError::Theme(format!("Theme not found: {other}"))),
        }
    }

    /// Parse a theme file's JSON text.
    pub fn from_json(json: &str, mode: ColorMode) -> Result<Self, TuiError> {
        let json = json.strip_prefix('\u{feff}').unwrap_or(json);
        let file: ThemeFile =
            serde_json::from_str(json).map_err(|e| TuiError::Theme(format!("Failed to parse theme: {e}")))?;
        Self::from_file(&file, mode)
    }

    /// Build a theme from a parsed file.
    pub fn from_file(file: &ThemeFile, mode: ColorMode) -> Result<Self, TuiError> {
        if file.name.contains('/') || file.name == "system" {
            return Err(TuiError::Theme(format!("Invalid theme name \"{}\"", file.name)));
        }
        let mut values: HashMap<&str, ColorValue> = HashMap::new();
        for (key, value) in &file.colors {
            let Some((name, _, _)) = THEME_TOKENS.iter().find(|(n, _, _)| n == key) else {
                return Err(TuiError::Theme(format!("Unknown theme color: {key}")));
            };
            values.insert(name, resolve_var(value, &file.vars, &mut Vec::new())?);
        }
        Self::build(&file.name, file.appearance.clone(), &values, HashSet::new(), mode)
    }

    /// pi's `system` theme for what the terminal reported; grayscale while `pending` (the query is
    /// in flight); `hint` is the appearance without a reported background.
    pub fn system(
        colors: &system::TerminalColors,
        pending: bool,
        hint: auto::Appearance,
        mode: ColorMode,
    ) -> Result<Self, TuiError> {
        let generated = system::generate_system_theme_colors(&system::SystemThemeInput {
            colors: colors.clone(),
            saturation: if pending { 0.0 } else { 1.0 },
            appearance_hint: Some(hint),
        });
        let values: HashMap<&str, ColorValue> = generated
            .colors
            .iter()
            .map(|(token, value)| {
                let value = match value {
                    system::SystemColor::Default => ColorValue::Text(String::new()),
                    system::SystemColor::Hex(h) => ColorValue::Text(h.clone()),
                    system::SystemColor::Index(i) => ColorValue::Index(*i),
                };
                (*token, value)
            })
            .collect();
        let appearance = generated.appearance.map(|a| match a {
            auto::Appearance::Dark => "dark".to_owned(),
            auto::Appearance::Light => "light".to_owned(),
        });
        let dim = generated.dim.iter().map(|t| (*t).to_owned()).collect();
        Self::build(system::SYSTEM_THEME_NAME, appearance, &values, dim, mode)
    }

    fn build(
        name: &str,
        appearance: Option<String>,
        values: &HashMap<&str, ColorValue>,
        dim: HashSet<String>,
        mode: ColorMode,
    ) -> Result<Self, TuiError> {
        let mut theme =
            Theme { name: name.to_owned(), appearance, mode, fg_ansi: HashMap::new(), bg_ansi: HashMap::new(), dim };
        for (name, slot, fallback) in THEME_TOKENS {
            let value = match (values.get(name), fallback) {
                (Some(v), _) => v.clone(),
                (None, Some(f)) => values
                    .get(f)
                    .cloned()
                    .ok_or_else(|| TuiError::Theme(format!("Theme token {name} has unresolved fallback {f}")))?,
                (None, None) => return Err(TuiError::Theme(format!("Theme is missing color: {name}"))),
            };
            let background = *slot == Slot::Background;
            let mut ansi = match &value {
                ColorValue::Text(s) if s.is_empty() => (if background { "\x1b[49m" } else { "\x1b[39m" }).to_string(),
                ColorValue::Text(s) => parse_color(s)?.ansi(mode, background),
                ColorValue::Index(i) => Color::Indexed(*i).ansi(mode, background),
            };
            if !background && theme.dim.contains(*name) {
                ansi.push_str("\x1b[2m");
            }
            let map = if background { &mut theme.bg_ansi } else { &mut theme.fg_ansi };
            map.insert((*name).to_string(), ansi);
        }
        Ok(theme)
    }

    /// The theme's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `"dark"`/`"light"` as declared.
    pub fn appearance(&self) -> Option<&str> {
        self.appearance.as_deref()
    }

    /// The colour mode escapes were computed for.
    pub fn color_mode(&self) -> ColorMode {
        self.mode
    }

    /// The opening sequence of a foreground token.
    pub fn fg_ansi(&self, token: &str) -> Result<&str, TuiError> {
        self.fg_ansi.get(token).map(String::as_str).ok_or_else(|| TuiError::UnknownToken(token.into()))
    }

    /// The opening sequence of a background token.
    pub fn bg_ansi(&self, token: &str) -> Result<&str, TuiError> {
        self.bg_ansi.get(token).map(String::as_str).ok_or_else(|| TuiError::UnknownToken(token.into()))
    }

    /// `fgAnsi(token) + text + ESC[39m`. An unknown token renders the text unstyled and logs.
    pub fn fg(&self, token: &str, text: &str) -> String {
        match self.fg_ansi(token) {
            Ok(a) if self.dim.contains(token) => format!("{a}{text}\x1b[22;39m"),
            Ok(a) => format!("{a}{text}\x1b[39m"),
            Err(e) => {
                tracing::warn!(%e, "theme fg");
                text.to_string()
            }
        }
    }

    /// `bgAnsi(token) + text + ESC[49m`. An unknown token renders the text unstyled and logs.
    pub fn bg(&self, token: &str, text: &str) -> String {
        match self.bg_ansi(token) {
            Ok(a) => format!("{a}{text}\x1b[49m"),
            Err(e) => {
                tracing::warn!(%e, "theme bg");
                text.to_string()
            }
        }
    }

    /// Open fg, bg and attributes; close in reverse with the specific off codes.
    pub fn style(&self, text: &str, o: StyleOptions<'_>) -> Result<String, TuiError> {
        let mut prefix = String::new();
        let mut suffix = String::new();
        let mut o = o;
        if let Some(fg) = o.fg {
            // A faint token is styled as its colour plus `dim` (pi's `style`).
            let ansi = self.fg_ansi(fg)?;
            if self.dim.contains(fg) {
                o.dim = true;
            }
            prefix.push_str(ansi.strip_suffix("\x1b[2m").filter(|_| self.dim.contains(fg)).unwrap_or(ansi));
            suffix = "\x1b[39m".into();
        }
        if let Some(bg) = o.bg {
            prefix.push_str(self.bg_ansi(bg)?);
            suffix = format!("\x1b[49m{suffix}");
        }
        if o.bold {
            prefix.push_str("\x1b[1m");
        }
        if o.dim {
            prefix.push_str("\x1b[2m");
        }
        if o.bold || o.dim {
            suffix = format!("\x1b[22m{suffix}");
        }
        for (on, open, close) in [
            (o.italic, "\x1b[3m", "\x1b[23m"),
            (o.underline, "\x1b[4m", "\x1b[24m"),
            (o.inverse, "\x1b[7m", "\x1b[27m"),
            (o.strikethrough, "\x1b[9m", "\x1b[29m"),
        ] {
            if on {
                prefix.push_str(open);
                suffix = format!("{close}{suffix}");
            }
        }
        Ok(format!("{prefix}{text}{suffix}"))
    }
}

/// `ESC[1m … ESC[22m`.
pub fn bold(text: &str) -> String {
    format!("\x1b[1m{text}\x1b[22m")
}
/// `ESC[3m … ESC[23m`.
pub fn italic(text: &str) -> String {
    format!("\x1b[3m{text}\x1b[23m")
}
/// `ESC[4m … ESC[24m`.
pub fn underline(text: &str) -> String {
    format!("\x1b[4m{text}\x1b[24m")
}
/// `ESC[7m … ESC[27m`.
pub fn inverse(text: &str) -> String {
    format!("\x1b[7m{text}\x1b[27m")
}
/// `ESC[9m … ESC[29m`.
pub fn strikethrough(text: &str) -> String {
    format!("\x1b[9m{text}\x1b[29m")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_dark_theme() -> Result<(), TuiError> {
        let t = Theme::dark(ColorMode::Truecolor)?;
        assert_eq!(t.fg("accent", "X"), "\x1b[38;2;167;152;215mX\x1b[39m");
        assert_eq!(t.bg("customMessageBg", "X"), "\x1b[48;2;58;48;85mX\x1b[49m");
        let s = t.style(
            "Done",
            StyleOptions { fg: Some("success"), bg: Some("toolSuccessBg"), bold: true, ..Default::default() },
        )?;
        assert_eq!(s, "\x1b[38;2;104;183;141m\x1b[48;2;37;65;49m\x1b[1mDone\x1b[22m\x1b[49m\x1b[39m");
        let t256 = Theme::dark(ColorMode::Ansi256)?;
        assert_eq!(t256.fg_ansi("accent")?, "\x1b[38;5;140m");
        assert_eq!(t256.bg_ansi("customMessageBg")?, "\x1b[48;5;59m");
        assert!(t.fg_ansi("nope").is_err());
        Theme::light(ColorMode::Truecolor)?;
        Ok(())
    }

    #[test]
    fn rejects_bad_files() {
        let cyclic = r#"{"name":"x","vars":{"a":"b","b":"a"},"colors":{"accent":"a"}}"#;
        assert!(Theme::from_json(cyclic, ColorMode::Truecolor).is_err());
        let unknown = r##"{"name":"x","colors":{"nope":"#fff"}}"##;
        assert!(Theme::from_json(unknown, ColorMode::Truecolor).is_err());
    }
}
