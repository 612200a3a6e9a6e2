//! pi's `system` theme (`system-theme.js`): the 56 token colours generated from the terminal's own
//! colours (default foreground and background, ANSI palette 0–15).
//!
//! Every token belongs to a colour family (a hue and an ANSI slot) and has contrast rules: the OKLab
//! lightness it needs on each surface it is drawn on, from fitted target-lightness curves. Three
//! tiers, by what the terminal reported: background and palette (hues from the palette), background
//! only (the families' own hues), nothing (ANSI indices and the terminal's default colours).
//! The constants are pi's, digit for digit, so the results round the same way.
#![allow(clippy::excessive_precision)]

use std::collections::HashMap;

use super::auto::Appearance;
use super::color::{okhsl_to_rgb, oklab_to_okhsl_lightness, oklch_rgb, rgb_oklab, rgb_to_okhsl};

/// The reserved name of the generated theme.
pub const SYSTEM_THEME_NAME: &str = "system";

/// An sRGB colour the terminal reported (channels 0–255).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
}

impl Rgb {
    fn f(self) -> [f64; 3] {
        [self.r as f64, self.g as f64, self.b as f64]
    }
}

/// What the terminal reported: each part absent when it did not answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalColors {
    /// OSC 10.
    pub foreground: Option<Rgb>,
    /// OSC 11.
    pub background: Option<Rgb>,
    /// OSC 4, indices 0–15 (only when all 16 arrived).
    pub palette: Option<Vec<Rgb>>,
}

/// One generated token colour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemColor {
    /// The terminal's default colour (`""`).
    Default,
    /// `#rrggbb`.
    Hex(String),
    /// An ANSI palette index.
    Index(u8),
}

/// The generator's result (pi's `{ colors, dim, appearance }`).
#[derive(Debug, Clone, PartialEq)]
pub struct SystemColors {
    /// Every token of pi's family table, in its order.
    pub colors: Vec<(&'static str, SystemColor)>,
    /// Tokens drawn faint (SGR 2) on top of their colour.
    pub dim: Vec<&'static str>,
    /// The appearance the colours were made for (`None`: the caller's hint was absent).
    pub appearance: Option<Appearance>,
}

struct Family {
    hue: f64,
    min: f64,
    max: f64,
    slot: u8,
}

const fn fam(hue: f64, min: f64, max: f64, slot: u8) -> Family {
    Family { hue, min, max, slot }
}

fn family(name: &str) -> Family {
    match name {
        "blue" => fam(231.49, 0.1, 0.68, 4),
        "green" => fam(158.68, 0.1, 0.76, 2),
        "red" => fam(20.0, 0.1, 0.92, 1),
        "yellow" => fam(82.36, 0.5, 1.0, 3),
        "orange" => fam(52.0, 0.12, 0.85, 3),
        "violet" => fam(295.0, 0.2, 0.6, 5),
        "calamine" => fam(202.43, 0.1, 0.74, 6),
        "thinkingSlate" => fam(231.49, 0.08, 0.2, 4),
        "thinkingBlue" => fam(231.49, 0.2, 0.45, 4),
        "thinkingPeriwinkle" => fam(263.25, 0.3, 0.6, 6),
        "thinkingViolet" => fam(295.0, 0.4, 0.75, 5),
        "thinkingMagenta" => fam(337.5, 0.5, 0.85, 13),
        "thinkingRed" => fam(20.0, 0.95, 1.0, 1),
        _ => fam(231.49, 0.02, 0.08, 8),
    }
}

/// pi's `TOKEN_FAMILIES`, in its order.
const TOKEN_FAMILIES: &[(&str, &str)] = &[
    ("selectedBg", "blue"),
    ("searchMatchBg", "orange"),
    ("userMessageBg", "blue"),
    ("customMessageBg", "violet"),
    ("toolPendingBg", "neutral"),
    ("toolSuccessBg", "green"),
    ("toolErrorBg", "red"),
    ("text", "neutral"),
    ("userMessageText", "neutral"),
    ("customMessageText", "neutral"),
    ("toolTitle", "neutral"),
    ("syntaxOperator", "neutral"),
    ("syntaxPunctuation", "neutral"),
    ("muted", "neutral"),
    ("dim", "neutral"),
    ("thinkingText", "neutral"),
    ("toolOutput", "neutral"),
    ("mdLinkUrl", "neutral"),
    ("mdQuote", "neutral"),
    ("mdQuoteBorder", "neutral"),
    ("mdHr", "neutral"),
    ("mdCodeBlockBorder", "neutral"),
    ("toolDiffContext", "neutral"),
    ("syntaxComment", "neutral"),
    ("scrollbarTrack", "neutral"),
    ("scrollbarThumb", "neutral"),
    ("searchMatchText", "neutral"),
    ("borderMuted", "neutral"),
    ("accent", "violet"),
    ("borderAccent", "violet"),
    ("customMessageLabel", "violet"),
    ("mdCode", "violet"),
    ("mdListBullet", "violet"),
    ("syntaxType", "violet"),
    ("border", "blue"),
    ("mdLink", "blue"),
    ("syntaxKeyword", "blue"),
    ("syntaxVariable", "calamine"),
    ("success", "green"),
    ("mdCodeBlock", "green"),
    ("toolDiffAdded", "green"),
    ("bashMode", "green"),
    ("syntaxNumber", "green"),
    ("error", "red"),
    ("toolDiffRemoved", "red"),
    ("warning", "yellow"),
    ("mdHeading", "yellow"),
    ("syntaxFunction", "yellow"),
    ("syntaxString", "orange"),
    ("thinkingOff", "neutral"),
    ("thinkingMinimal", "thinkingSlate"),
    ("thinkingLow", "thinkingBlue"),
    ("thinkingMedium", "thinkingPeriwinkle"),
    ("thinkingHigh", "thinkingViolet"),
    ("thinkingXhigh", "thinkingMagenta"),
    ("thinkingMax", "thinkingRed"),
];

fn token_family(token: &str) -> Family {
    family(TOKEN_FAMILIES.iter().find(|(t, _)| *t == token).map_or("neutral", |(_, f)| f))
}

/// pi's `TOKEN_SLOTS`: palette slots for tokens that would share a hue with a similar token.
fn token_slot(token: &str) -> Option<u8> {
    match token {
        "syntaxString" => Some(2),
        "syntaxNumber" => Some(5),
        "searchMatchBg" => Some(3),
        _ => None,
    }
}

type Curve = ([f64; 6], [f64; 2]);

/// pi's `LEVELS`: the (dark, light) target-lightness curves of a contrast level.
fn level(name: &str) -> (Curve, Curve) {
    match name {
        "panel" => (
            ([0.29131, -0.39746, 2.33185, -0.85524, -1.2076, 0.86276], [0.0, 0.979]),
            ([-3.74073, 27.94549, -78.44258, 112.6798, -79.60015, 22.11277], [0.348, 1.0]),
        ),
        "track" => (
            ([0.39028, -0.23015, 0.83573, 2.43829, -4.38292, 2.01582], [0.0, 0.946]),
            ([-5.24921, 38.37322, -107.28833, 152.10005, -106.17127, 29.18061], [0.368, 1.0]),
        ),
        "thinking0" => (
            ([0.52988, -0.05809, -0.30924, 4.63567, -6.52933, 2.89108], [0.0, 0.873]),
            ([-28.27749, 182.85284, -469.62416, 603.15916, -384.59976, 97.35147], [0.51, 1.0]),
        ),
        "thinking1" => (
            ([0.55278, -0.03667, -0.45659, 4.95347, -6.90265, 3.0706], [0.0, 0.858]),
            ([-37.10484, 235.86282, -596.62344, 754.3633, -474.00763, 118.3551], [0.535, 1.0]),
        ),
        "thinking2" => (
            ([0.57486, -0.01765, -0.58987, 5.25227, -7.27175, 3.25532], [0.0, 0.842]),
            ([-59.89653, 377.05024, -945.07843, 1182.03145, -734.96375, 181.68658], [0.556, 1.0]),
        ),
        "thinking3" => (
            ([0.59621, -0.00062, -0.71148, 5.53588, -7.6392, 3.44606], [0.0, 0.827]),
            ([-72.07122, 445.84082, -1099.57352, 1353.88793, -829.53392, 202.26164], [0.58, 1.0]),
        ),
        "thinking4" => (
            ([0.61691, 0.01462, -0.82288, 5.80651, -8.00641, 3.64333], [0.0, 0.811]),
            ([-110.14338, 674.21488, -1645.75941, 2004.32367, -1215.15899, 293.3183], [0.6, 1.0]),
        ),
        "thinking5" => (
            ([0.63702, 0.02826, -0.92498, 6.06465, -8.37246, 3.84651], [0.0, 0.795]),
            ([-175.47701, 1063.54495, -2570.70594, 3098.80776, -1860.15527, 444.76392], [0.62, 1.0]),
        ),
        "thinking6" => (
            ([0.65658, 0.04044, -1.01835, 6.30989, -8.73529, 4.05439], [0.0, 0.779]),
            ([-183.81712, 1094.70055, -2602.68539, 3088.71276, -1826.91131, 430.75931], [0.643, 1.0]),
        ),
        "subtle" => (
            ([0.56762, -0.02475, -0.5383, 5.12628, -7.10931, 3.17324], [0.0, 0.848]),
            ([-232.85459, 1376.54473, -3249.11801, 3827.91186, -2248.29472, 526.55751], [0.657, 1.0]),
        ),
        "thumb" => (
            ([0.60323, 0.00278, -0.73328, 5.57157, -7.68067, 3.46933], [0.0, 0.823]),
            ([-82.89897, 511.01355, -1255.98095, 1540.76821, -940.68087, 228.58523], [0.586, 1.0]),
        ),
        "readable" => (
            ([0.66937, 0.04704, -1.06871, 6.43941, -8.9332, 4.17229], [0.0, 0.77]),
            ([-1554.52576, 8733.56817, -19604.93507, 21977.72696, -12300.99599, 2749.81288], [0.751, 1.0]),
        ),
        "emphasis" => (
            ([0.7303, 0.07695, -1.31626, 7.1681, -10.14436, 4.92846], [0.0, 0.712]),
            ([-4948.31942, 26870.91986, -58334.48399, 63280.17197, -34298.01053, 7430.30146], [0.811, 1.0]),
        ),
        "textOnPanel" => (
            ([0.86713, 0.05232, -0.89428, 4.79014, -5.5432, 1.75023], [0.0, 0.542]),
            ([-8570.89457, 43954.60805, -90084.00702, 92220.6791, -47152.15802, 9632.27113], [0.867, 1.0]),
        ),
        _ => (
            ([0.89242, 0.02311, -0.44862, 2.34417, -0.06084, -2.63844], [0.0, 0.5]),
            ([-2004.67048, 6664.47299, -6060.70202, -1792.61209, 5133.82359, -1939.85583], [0.894, 1.0]),
        ),
    }
}

const TOOL_PANELS: [&str; 3] = ["toolPendingBg", "toolSuccessBg", "toolErrorBg"];
const PANELS: [&str; 7] = [
    "userMessageBg",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "selectedBg",
    "searchMatchBg",
    "customMessageBg",
];
const THINKING: [&str; 7] =
    ["thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium", "thinkingHigh", "thinkingXhigh", "thinkingMax"];
const THINKING_LEVELS: [&str; 7] =
    ["thinking0", "thinking1", "thinking2", "thinking3", "thinking4", "thinking5", "thinking6"];
/// Text-level tokens that take the terminal's foreground.
const FOREGROUND_TOKENS: [&str; 3] = ["text", "userMessageText", "toolTitle"];
/// WCAG 2 contrast ratio body text must reach on its surfaces.
const TEXT_MINIMUM_WCAG_CONTRAST: f64 = 4.5;

struct Rule {
    token: &'static str,
    on: Vec<&'static str>,
    level: &'static str,
}

fn cat(parts: &[&[&'static str]]) -> Vec<&'static str> {
    parts.iter().flat_map(|p| p.iter().copied()).collect()
}

/// pi's `RULES`, in its order.
fn rules() -> Vec<Rule> {
    let mut rules = Vec::new();
    let mut each = |tokens: &[&'static str], on: Vec<&'static str>, level: &'static str| {
        for token in tokens {
            rules.push(Rule { token, on: on.clone(), level });
        }
    };
    let bg: &[&str] = &["background"];
    let msg: &[&str] = &["userMessageBg", "customMessageBg"];
    let tools: &[&str] = &TOOL_PANELS;
    each(&PANELS, cat(&[bg]), "panel");
    each(&["text"], cat(&[bg]), "text");
    each(&["text"], cat(&[&["selectedBg"]]), "textOnPanel");
    each(&["userMessageText"], cat(&[&["userMessageBg"]]), "textOnPanel");
    each(&["toolTitle"], cat(&[tools]), "textOnPanel");
    each(&["accent", "success", "error", "warning"], cat(&[bg, &["selectedBg"], tools]), "readable");
    each(&["muted"], cat(&[bg, &["selectedBg", "customMessageBg"], tools]), "readable");
    each(&["dim"], cat(&[bg, &["selectedBg", "customMessageBg"], tools]), "subtle");
    each(&["thinkingText"], cat(&[bg]), "readable");
    each(&["customMessageText"], cat(&[&["customMessageBg"], tools]), "readable");
    each(&["customMessageLabel"], cat(&[bg, &["customMessageBg", "selectedBg"], tools]), "readable");
    each(&["toolOutput"], cat(&[bg, tools]), "readable");
    each(
        &["mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdQuote", "mdCodeBlockBorder", "mdListBullet"],
        cat(&[bg, msg]),
        "readable",
    );
    each(&["mdCodeBlock"], cat(&[bg, msg, tools]), "readable");
    each(&["toolDiffAdded", "toolDiffRemoved", "toolDiffContext"], cat(&[bg, tools]), "readable");
    each(
        &[
            "syntaxComment",
            "syntaxKeyword",
            "syntaxFunction",
            "syntaxVariable",
            "syntaxString",
            "syntaxNumber",
            "syntaxType",
            "syntaxOperator",
            "syntaxPunctuation",
        ],
        cat(&[bg, msg, tools]),
        "readable",
    );
    each(&["searchMatchText"], cat(&[&["searchMatchBg"]]), "readable");
    each(&["bashMode", "border", "borderAccent"], cat(&[bg]), "readable");
    each(&["borderMuted"], cat(&[bg]), "subtle");
    each(&["mdQuoteBorder", "mdHr"], cat(&[bg, msg, tools]), "readable");
    each(&["scrollbarTrack"], cat(&[bg]), "track");
    each(&["scrollbarThumb"], cat(&[&["scrollbarTrack"]]), "thumb");
    for (token, level) in THINKING.iter().zip(THINKING_LEVELS) {
        each(&[token], cat(&[bg]), level);
    }
    rules
}

/// Tokens in dependency order: every surface before the tokens drawn on it.
fn solve_order(rules: &[Rule]) -> Vec<&'static str> {
    fn visit(token: &'static str, rules: &[Rule], order: &mut Vec<&'static str>) {
        if order.contains(&token) {
            return;
        }
        for rule in rules.iter().filter(|r| r.token == token) {
            for surface in rule.on.iter().filter(|s| **s != "background") {
                visit(surface, rules, order);
            }
        }
        order.push(token);
    }
    let mut order = Vec::new();
    for rule in rules {
        visit(rule.token, rules, &mut order);
    }
    order
}

type C = [f64; 3];

fn oklab_lightness(color: C) -> f64 {
    rgb_oklab(color)[0]
}

fn oklch_of(color: C) -> (f64, f64, f64) {
    let [l, a, b] = rgb_oklab(color);
    (l, a.hypot(b), (b.atan2(a) * 180.0 / std::f64::consts::PI + 360.0) % 360.0)
}

/// WCAG 2 relative luminance.
fn relative_luminance(c: C) -> f64 {
    let linear = |channel: f64| {
        let v = channel / 255.0;
        if v <= 0.04045 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) }
    };
    0.2126 * linear(c[0]) + 0.7152 * linear(c[1]) + 0.0722 * linear(c[2])
}

/// WCAG 2 contrast ratio, 1–21.
fn wcag_contrast(first: C, second: C) -> f64 {
    let (a, b) = (relative_luminance(first), relative_luminance(second));
    (a.max(b) + 0.05) / (a.min(b) + 0.05)
}

/// pi's `terminalAppearance`: the direction of the terminal's own foreground when text can be
/// readable that way, otherwise dark when white text has more contrast on the background.
pub fn terminal_appearance(background: Rgb, foreground: Option<Rgb>) -> Appearance {
    let bg = background.f();
    let white = wcag_contrast([255.0; 3], bg);
    let black = wcag_contrast([0.0; 3], bg);
    if let Some(fg) = foreground {
        let (fl, bl) = (oklab_lightness(fg.f()), oklab_lightness(bg));
        if (fl - bl).abs() > 0.05 {
            let appearance = if fl > bl { Appearance::Dark } else { Appearance::Light };
            let best = if appearance == Appearance::Dark { white } else { black };
            if best >= TEXT_MINIMUM_WCAG_CONTRAST {
                return appearance;
            }
        }
    }
    if white >= black { Appearance::Dark } else { Appearance::Light }
}

fn hex_of(c: C) -> String {
    let ch = |v: f64| (v + 0.5).floor() as u8;
    format!("#{:02x}{:02x}{:02x}", ch(c[0]), ch(c[1]), ch(c[2]))
}

fn bell_weight(lightness: f64) -> f64 {
    let gaussian = |x: f64| (-((x - 0.5).powi(2)) / (2.0 * 0.25f64.powi(2))).exp();
    (gaussian(lightness) - gaussian(0.0)) / (1.0 - gaussian(0.0))
}

fn saturation_curve(f: &Family, lightness: f64) -> f64 {
    let floor = if f.max > 0.0 { f.min / f.max } else { 1.0 };
    floor + (1.0 - floor) * bell_weight(lightness)
}

fn level_target(name: &str, appearance: Appearance, surface_l: f64) -> Option<f64> {
    let (dark, light) = level(name);
    let (coefficients, reachable) = if appearance == Appearance::Dark { dark } else { light };
    if surface_l < reachable[0] || surface_l > reachable[1] {
        return None;
    }
    Some(coefficients.iter().enumerate().map(|(power, c)| c * surface_l.powi(power as i32)).sum())
}

fn okhsl_color(h: f64, s: f64, l: f64) -> C {
    let (r, g, b) = okhsl_to_rgb(h, s, l);
    [r as f64, g as f64, b as f64]
}

/// A palette colour in OKHSL plus its OKLCH chroma (pi's `sourceOf`).
#[derive(Clone, Copy)]
struct Source {
    h: f64,
    s: f64,
    l: f64,
    chroma: f64,
}

fn source_of(c: C) -> Source {
    let (h, s, l) = rgb_to_okhsl(c);
    Source { h, s, l, chroma: oklch_of(c).1 }
}

/// A source colour's hue at another OKHSL lightness, its saturation and chroma falling off along the
/// family's curve (pi's `anchored`).
fn anchored(source: Source, f: &Family, lightness: f64, saturation: f64) -> C {
    let anchor = saturation_curve(f, source.l);
    let falloff = if anchor > 0.0 { (saturation_curve(f, lightness) / anchor).min(1.0) } else { 1.0 };
    let color = okhsl_color(source.h, source.s * falloff * saturation, lightness);
    let cap = source.chroma * falloff * saturation;
    let (l, c, _) = oklch_of(color);
    if c <= cap { color } else { oklch_rgb(l, cap, source.h) }
}

/// Moves a text colour toward white or black until it reaches 4.5:1 on every surface.
fn with_text_contrast(color: C, surfaces: &[C], lighter: bool) -> C {
    let meets = |c: C| surfaces.iter().all(|s| wcag_contrast(c, *s) >= TEXT_MINIMUM_WCAG_CONTRAST);
    if meets(color) {
        return color;
    }
    let (h, s, l) = rgb_to_okhsl(color);
    let at = |lightness: f64| okhsl_color(h, s, lightness);
    let extreme = if lighter { 1.0 } else { 0.0 };
    if !meets(at(extreme)) {
        return at(extreme);
    }
    let (mut low, mut high) = (l, extreme);
    for _ in 0..20 {
        let middle = (low + high) / 2.0;
        if meets(at(middle)) {
            high = middle;
        } else {
            low = middle;
        }
    }
    at(high)
}

/// Colours for terminals that reported nothing: ANSI indices and default colours; neutral tokens
/// below body text faint; panels without a background.
fn indexed_colors(saturation: f64, appearance: Option<Appearance>) -> SystemColors {
    let mut colors = Vec::new();
    let mut dim = Vec::new();
    for (token, family_name) in TOKEN_FAMILIES {
        if PANELS.contains(token) {
            colors.push((*token, SystemColor::Default));
            continue;
        }
        let neutral = *family_name == "neutral";
        let value = if !neutral && saturation > 0.0 {
            SystemColor::Index(token_slot(token).unwrap_or(family(family_name).slot))
        } else {
            SystemColor::Default
        };
        colors.push((*token, value));
        if neutral && !FOREGROUND_TOKENS.contains(token) {
            dim.push(*token);
        }
    }
    SystemColors { colors, dim, appearance }
}

/// The generator's input (pi's `SystemThemeInput`).
#[derive(Debug, Clone, Default)]
pub struct SystemThemeInput {
    /// What the terminal reported.
    pub colors: TerminalColors,
    /// 0 renders grayscale (the query is in flight), 1 full colour.
    pub saturation: f64,
    /// The appearance to report when the terminal gave no background.
    pub appearance_hint: Option<Appearance>,
}

/// pi's `generateSystemThemeColors`.
pub fn generate_system_theme_colors(input: &SystemThemeInput) -> SystemColors {
    let saturation = input.saturation.clamp(0.0, 1.0);
    let Some(background) = input.colors.background else {
        return indexed_colors(saturation, input.appearance_hint);
    };
    Generator::new(input, background.f(), saturation).run()
}

struct Generator {
    background: C,
    foreground: Option<C>,
    palette: Option<Vec<Source>>,
    appearance: Appearance,
    lighter: bool,
    background_l: f64,
    saturation: f64,
    rules: Vec<Rule>,
    order: Vec<&'static str>,
}

impl Generator {
    fn new(input: &SystemThemeInput, background: C, saturation: f64) -> Self {
        let palette = input
            .colors
            .palette
            .as_ref()
            .filter(|p| p.len() == 16)
            .map(|p| p.iter().map(|c| source_of(c.f())).collect::<Vec<_>>());
        let bg = input.colors.background.unwrap_or(Rgb { r: 0, g: 0, b: 0 });
        let appearance = terminal_appearance(bg, input.colors.foreground);
        let rules = rules();
        let order = solve_order(&rules);
        Generator {
            background,
            foreground: input.colors.foreground.map(Rgb::f),
            palette,
            appearance,
            lighter: appearance == Appearance::Dark,
            background_l: oklab_lightness(background),
            saturation,
            rules,
            order,
        }
    }

    fn extreme(&self) -> f64 {
        if self.lighter { 1.0 } else { 0.0 }
    }

    /// A token's colour at an OKLab lightness.
    fn paint(&self, token: &str, oklab_l: f64) -> C {
        let lightness = oklab_to_okhsl_lightness(oklab_l);
        let f = token_family(token);
        match &self.palette {
            None => okhsl_color(f.hue, (f.min + (f.max - f.min) * bell_weight(lightness)) * self.saturation, lightness),
            Some(palette) => {
                let slot = token_slot(token).unwrap_or(f.slot) as usize;
                anchored(palette[slot], &f, lightness, self.saturation)
            }
        }
    }

    /// The lightness a level needs on a surface, relaxed by `t` (0–1: strong levels move toward the
    /// readable floor; 1–2: all levels move toward the surface).
    fn target(&self, level: &str, surface_l: f64, t: f64) -> Option<f64> {
        let reached = level_target(level, self.appearance, surface_l);
        if reached.is_none() && t == 0.0 {
            return None;
        }
        let floor_level = if self.appearance == Appearance::Dark { "readable" } else { "subtle" };
        let distance = reached.unwrap_or(self.extreme()) - surface_l;
        let floor = level_target(floor_level, self.appearance, surface_l).unwrap_or(self.extreme()) - surface_l;
        let compressed =
            if distance.abs() > floor.abs() { distance - (distance - floor) * t.min(1.0) } else { distance };
        Some(surface_l + compressed * (1.0 - (t - 1.0).max(0.0)))
    }

    fn readable(&self, color: C) -> bool {
        let extreme = if self.lighter { [255.0; 3] } else { [0.0; 3] };
        wcag_contrast(extreme, color) >= TEXT_MINIMUM_WCAG_CONTRAST
    }

    /// Keeps a panel light (dark) enough that white (black) text still reaches 4.5:1 on it.
    fn limit_panel(&self, token: &str, l: f64) -> C {
        let color = self.paint(token, l);
        if self.readable(color) {
            return color;
        }
        let (mut low, mut high) = (self.background_l, l);
        for _ in 0..20 {
            let middle = (low + high) / 2.0;
            if self.readable(self.paint(token, middle)) {
                low = middle;
            } else {
                high = middle;
            }
        }
        self.paint(token, low)
    }

    fn solve(&self, t: f64) -> Option<HashMap<&'static str, C>> {
        let mut colors: HashMap<&'static str, C> = HashMap::from([("background", self.background)]);
        for token in &self.order {
            let mut targets = Vec::new();
            for rule in self.rules.iter().filter(|r| r.token == *token) {
                for surface in &rule.on {
                    let surface_l = oklab_lightness(colors.get(surface).copied().unwrap_or(self.background));
                    let value = self.target(rule.level, surface_l, t)?;
                    if !(0.0..=1.0).contains(&value) {
                        return None;
                    }
                    targets.push(value);
                }
            }
            let l = if self.lighter {
                targets.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            } else {
                targets.iter().copied().fold(f64::INFINITY, f64::min)
            };
            let color = if PANELS.contains(token) { self.limit_panel(token, l) } else { self.paint(token, l) };
            colors.insert(token, color);
        }
        Some(colors)
    }

    /// Solves, relaxing as little as possible when the background cannot fit every level.
    fn solve_relaxed(&self) -> (HashMap<&'static str, C>, f64) {
        if let Some(colors) = self.solve(0.0) {
            return (colors, 0.0);
        }
        let (mut low, mut high) = (0.0, 2.0);
        let mut colors = self.solve(high);
        for _ in 0..20 {
            let middle = (low + high) / 2.0;
            match self.solve(middle) {
                Some(attempt) => {
                    high = middle;
                    colors = Some(attempt);
                }
                None => low = middle,
            }
        }
        (colors.unwrap_or_default(), high)
    }

    fn run(&self) -> SystemColors {
        let (solved, relaxation) = self.solve_relaxed();
        let mut result: Vec<(&'static str, SystemColor)> = TOKEN_FAMILIES
            .iter()
            .map(|(token, _)| {
                (*token, solved.get(token).map_or(SystemColor::Default, |c| SystemColor::Hex(hex_of(*c))))
            })
            .collect();
        for token in FOREGROUND_TOKENS {
            let value = self.foreground_token(token, &solved, relaxation);
            if let (Some(value), Some(slot)) = (value, result.iter_mut().find(|(t, _)| *t == token)) {
                slot.1 = value;
            }
        }
        SystemColors { colors: result, dim: Vec::new(), appearance: Some(self.appearance) }
    }

    /// Body text: the terminal's foreground where it is clearly stronger than muted text, else the
    /// foreground's hue at just enough lightness, kept at 4.5:1 on its surfaces.
    fn foreground_token(&self, token: &str, solved: &HashMap<&'static str, C>, relaxation: f64) -> Option<SystemColor> {
        let surfaces: Vec<C> = self
            .rules
            .iter()
            .filter(|r| r.token == token)
            .flat_map(|r| r.on.iter().map(|s| solved.get(s).copied().unwrap_or(self.background)))
            .collect();
        let mut text = solved.get(token).copied();
        if let Some(foreground) = self.foreground {
            let targets: Vec<Option<f64>> =
                surfaces.iter().map(|s| self.target("emphasis", oklab_lightness(*s), relaxation)).collect();
            if targets.iter().all(|v| v.is_some_and(|v| (0.0..=1.0).contains(&v))) {
                let values = targets.into_iter().flatten();
                let needed = if self.lighter {
                    values.fold(f64::NEG_INFINITY, f64::max)
                } else {
                    values.fold(f64::INFINITY, f64::min)
                };
                let foreground_l = oklab_lightness(foreground);
                if if self.lighter { foreground_l >= needed } else { foreground_l <= needed } {
                    return Some(SystemColor::Default);
                }
                text = Some(anchored(
                    source_of(foreground),
                    &family("neutral"),
                    oklab_to_okhsl_lightness(needed),
                    self.saturation,
                ));
            }
        }
        text.map(|t| SystemColor::Hex(hex_of(with_text_contrast(t, &surfaces, self.lighter))))
    }
}
