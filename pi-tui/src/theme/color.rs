//! Colours: parsing (`#rgb`, `#rrggbb`, `oklch(...)`, `okhsl(...)`, palette index), OKLab/OKHSL
//! conversion, mixing and SGR output in truecolor or 256-colour mode (pi's `colors.ts`/`oklab.ts`).
//!
//! The matrix constants are pi's, digit for digit, so results round the same way.
#![allow(clippy::excessive_precision)]

use crate::error::TuiError;

/// How colours are emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    /// `38;2;r;g;b`.
    Truecolor,
    /// `38;5;n`, nearest of the 6×6×6 cube or the grey ramp.
    Ansi256,
}

impl ColorMode {
    /// Truecolor when `COLORTERM` says so, else 256 colours.
    pub fn detect() -> Self {
        match std::env::var("COLORTERM").as_deref() {
            Ok("truecolor") | Ok("24bit") => ColorMode::Truecolor,
            _ => ColorMode::Ansi256,
        }
    }
}

/// A colour value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Color {
    /// A palette index, emitted as `38;5;n` in every mode.
    Indexed(u8),
    /// sRGB channels 0–255 (may be fractional after mixing).
    Rgb(f64, f64, f64),
    /// OKLCH: lightness 0–1, chroma, hue in degrees.
    Oklch(f64, f64, f64),
}

type Vec3 = [f64; 3];

const LINEAR_SRGB_TO_LMS: [Vec3; 3] = [
    [0.4122214694707629, 0.5363325372617349, 0.0514459932675022],
    [0.2119034958178251, 0.6806995506452344, 0.1073969535369405],
    [0.0883024591900564, 0.2817188391361215, 0.6299787016738222],
];
const LMS_TO_LAB: [Vec3; 3] = [
    [0.210454268309314, 0.793617774702305, -0.0040720430116193],
    [1.9779985324311684, -2.42859224204858, 0.450593709617411],
    [0.0259040424655478, 0.7827717124575296, -0.8086757549230774],
];
const LAB_TO_LMS: [Vec3; 3] = [
    [1.0, 0.3963377773761749, 0.2158037573099136],
    [1.0, -0.1055613458156586, -0.0638541728258133],
    [1.0, -0.0894841775298119, -1.2914855480194092],
];
const LMS_TO_LINEAR_SRGB: [Vec3; 3] = [
    [4.0767416360759583, -3.3077115392580629, 0.2309699031821043],
    [-1.2684379732850315, 2.6097573492876882, -0.341319376002657],
    [-0.0041960761386756, -0.7034186179359362, 1.7076146940746117],
];
const SATURATION_FIT: [([f64; 2], [f64; 5]); 3] = [
    ([-1.8817031, -0.80936501], [1.19086277, 1.76576728, 0.59662641, 0.75515197, 0.56771245]),
    ([1.8144408, -1.19445267], [0.73956515, -0.45954404, 0.08285427, 0.12541073, -0.14503204]),
    ([0.13110758, 1.81333971], [1.35733652, -0.00915799, -1.1513021, -0.50559606, 0.00692167]),
];
const K1: f64 = 0.206;
const K2: f64 = 0.03;
const K3: f64 = (1.0 + K1) / (1.0 + K2);

fn mul(m: &[Vec3; 3], v: Vec3) -> Vec3 {
    [0, 1, 2].map(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

fn okhsl_to_oklab_lightness(x: f64) -> f64 {
    (x * x + K1 * x) / (K3 * (x + K2))
}

fn linear_to_srgb(v: f64) -> f64 {
    if v > 0.0031308 { 1.055 * v.powf(1.0 / 2.4) - 0.055 } else { 12.92 * v }
}

fn srgb_to_linear(v: f64) -> f64 {
    if v <= 0.04045 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) }
}

fn oklab_to_linear_srgb(lab: Vec3) -> Vec3 {
    mul(&LMS_TO_LINEAR_SRGB, mul(&LAB_TO_LMS, lab).map(|v| v.powi(3)))
}

fn rgb_to_oklab(rgb: Vec3) -> Vec3 {
    let lin = rgb.map(|v| srgb_to_linear(v / 255.0));
    mul(&LMS_TO_LAB, mul(&LINEAR_SRGB_TO_LMS, lin).map(f64::cbrt))
}

/// JavaScript `Math.round` (half rounds up).
fn js_round(v: f64) -> f64 {
    (v + 0.5).floor()
}

fn linear_srgb_to_rgb(lin: Vec3) -> Vec3 {
    lin.map(|v| js_round(linear_to_srgb(v).clamp(0.0, 1.0) * 255.0))
}

fn lms_slopes(a: f64, b: f64) -> Vec3 {
    [0, 1, 2].map(|i| LAB_TO_LMS[i][1] * a + LAB_TO_LMS[i][2] * b)
}

fn max_saturation(a: f64, b: f64) -> f64 {
    let channel =
        (0..3).find(|&i| i == 2 || SATURATION_FIT[i].0[0] * a + SATURATION_FIT[i].0[1] * b > 1.0).unwrap_or(2);
    let [k0, k1, k2, k3, k4] = SATURATION_FIT[channel].1;
    let w = LMS_TO_LINEAR_SRGB[channel];
    let s = k0 + k1 * a + k2 * b + k3 * a * a + k4 * a * b;
    let slopes = lms_slopes(a, b);
    let base = slopes.map(|k| 1.0 + s * k);
    let dot = |v: Vec3| w[0] * v[0] + w[1] * v[1] + w[2] * v[2];
    let f = dot(base.map(|v| v.powi(3)));
    let f1 = dot([0, 1, 2].map(|i| 3.0 * slopes[i] * base[i].powi(2)));
    let f2 = dot([0, 1, 2].map(|i| 6.0 * slopes[i].powi(2) * base[i]));
    s - (f * f1) / (f1 * f1 - 0.5 * f * f2)
}

fn cusp(a: f64, b: f64) -> (f64, f64) {
    let s = max_saturation(a, b);
    let rgb = oklab_to_linear_srgb([1.0, s * a, s * b]);
    let l = (1.0 / rgb[0].max(rgb[1]).max(rgb[2])).cbrt();
    (l, l * s)
}

fn max_chroma(a: f64, b: f64, l: f64, (cl, cc): (f64, f64)) -> f64 {
    if l <= cl {
        return cc * l / cl;
    }
    let t = cc * (l - 1.0) / (cl - 1.0);
    let slopes = lms_slopes(a, b);
    let lms = slopes.map(|k| l + t * k);
    let cubes = lms.map(|v| v.powi(3));
    let first = [0, 1, 2].map(|i| 3.0 * slopes[i] * lms[i].powi(2));
    let second = [0, 1, 2].map(|i| 6.0 * slopes[i].powi(2) * lms[i]);
    let dot = |r: Vec3, v: Vec3| r[0] * v[0] + r[1] * v[1] + r[2] * v[2];
    let step = LMS_TO_LINEAR_SRGB
        .iter()
        .map(|row| {
            let f = dot(*row, cubes) - 1.0;
            let f1 = dot(*row, first);
            let f2 = dot(*row, second);
            let u = f1 / (f1 * f1 - 0.5 * f * f2);
            if u >= 0.0 { -f * u } else { f64::MAX }
        })
        .fold(f64::MAX, f64::min);
    t + step
}

fn chroma_stops(l: f64, a: f64, b: f64) -> (f64, f64, f64) {
    let peak = cusp(a, b);
    let c_max = max_chroma(a, b, l, peak);
    let k = c_max / (l * (peak.1 / peak.0)).min((1.0 - l) * (peak.1 / (1.0 - peak.0)));
    let mid_s = 0.11516993
        + 1.0
            / (7.4477897
                + 4.1590124 * b
                + a * (-2.19557347
                    + 1.75198401 * b
                    + a * (-2.13704948 - 10.02301043 * b + a * (-4.24894561 + 5.38770819 * b + 4.69891013 * a))));
    let mid_t = 0.11239642
        + 1.0
            / (1.6132032 - 0.68124379 * b
                + a * (0.40370612
                    + 0.90148123 * b
                    + a * (-0.27087943 + 0.6122399 * b + a * (0.00299215 - 0.45399568 * b - 0.14661872 * a))));
    let c_mid = 0.9 * k * (1.0 / (1.0 / (l * mid_s).powi(4) + 1.0 / ((1.0 - l) * mid_t).powi(4))).sqrt().sqrt();
    let c0 = (1.0 / (1.0 / (l * 0.4).powi(2) + 1.0 / ((1.0 - l) * 0.8).powi(2))).sqrt();
    (c0, c_mid, c_max)
}

/// OKHSL (hue degrees, saturation 0–1, lightness 0–1) to rounded sRGB.
pub fn okhsl_to_rgb(hue: f64, saturation: f64, lightness: f64) -> (u8, u8, u8) {
    let l = okhsl_to_oklab_lightness(lightness);
    let mut lab = [l, 0.0, 0.0];
    if l > 0.0 && l < 1.0 && saturation > 0.0 {
        let angle = 2.0 * std::f64::consts::PI * hue.rem_euclid(360.0) / 360.0;
        let (a, b) = (angle.cos(), angle.sin());
        let (c0, c_mid, c_max) = chroma_stops(l, a, b);
        let chroma = if saturation < 0.8 {
            let t = 1.25 * saturation;
            let k1 = 0.8 * c0;
            t * k1 / (1.0 - (1.0 - k1 / c_mid) * t)
        } else {
            let t = 5.0 * (saturation - 0.8);
            let k1 = 0.2 * c_mid.powi(2) * 1.25f64.powi(2) / c0;
            c_mid + t * k1 / (1.0 - (1.0 - k1 / (c_max - c_mid)) * t)
        };
        lab = [l, chroma * a, chroma * b];
    }
    let [r, g, b] = linear_srgb_to_rgb(oklab_to_linear_srgb(lab));
    (r as u8, g as u8, b as u8)
}

/// pi's `oklabToOkhslLightness`: OKLab lightness to OKHSL lightness.
pub(crate) fn oklab_to_okhsl_lightness(x: f64) -> f64 {
    0.5 * (K3 * x - K1 + ((K3 * x - K1).powi(2) + 4.0 * K2 * K3 * x).sqrt())
}

/// OKLab `[L, a, b]` of sRGB channels (0–255).
pub(crate) fn rgb_oklab(rgb: [f64; 3]) -> [f64; 3] {
    rgb_to_oklab(rgb)
}

/// pi's `rgbToOkhsl`: hue degrees (0 for greys), saturation and lightness 0–1.
pub(crate) fn rgb_to_okhsl(rgb: [f64; 3]) -> (f64, f64, f64) {
    let [l, a, b] = rgb_to_oklab(rgb);
    let chroma = a.hypot(b);
    let lightness = oklab_to_okhsl_lightness(l);
    if chroma < 1e-9 || lightness <= 0.0 || lightness >= 1.0 {
        return (0.0, 0.0, lightness);
    }
    let hue = (b.atan2(a) * 180.0 / std::f64::consts::PI + 360.0) % 360.0;
    let (c0, c_mid, c_max) = chroma_stops(l, a / chroma, b / chroma);
    let saturation = if chroma < c_mid {
        let k1 = 0.8 * c0;
        0.8 * (chroma / (k1 + (1.0 - k1 / c_mid) * chroma))
    } else {
        let k1 = 0.2 * c_mid.powi(2) * 1.25f64.powi(2) / c0;
        let offset = chroma - c_mid;
        0.8 + 0.2 * (offset / (k1 + (1.0 - k1 / (c_max - c_mid)) * offset))
    };
    (hue, saturation.clamp(0.0, 1.0), lightness)
}

/// pi's `colorToRgb(oklchColor(l, c, h))`: gamut-mapped, rounded sRGB.
pub(crate) fn oklch_rgb(l: f64, c: f64, h: f64) -> [f64; 3] {
    oklch_to_rgb(l, c, ((h % 360.0) + 360.0) % 360.0)
}

fn in_gamut(v: Vec3) -> bool {
    v.iter().all(|c| *c >= -1e-7 && *c <= 1.0 + 1e-7)
}

fn oklch_to_rgb(l: f64, c: f64, h: f64) -> Vec3 {
    let r = h * std::f64::consts::PI / 180.0;
    let (cos, sin) = (r.cos(), r.sin());
    let at = |chroma: f64| oklab_to_linear_srgb([l, chroma * cos, chroma * sin]);
    let direct = at(c);
    if in_gamut(direct) {
        return linear_srgb_to_rgb(direct);
    }
    let mut linear = at(0.0);
    let (mut low, mut high) = (0.0, c);
    for _ in 0..20 {
        let chroma = (low + high) / 2.0;
        let cand = at(chroma);
        if in_gamut(cand) {
            low = chroma;
            linear = cand;
        } else {
            high = chroma;
        }
    }
    linear_srgb_to_rgb(linear)
}

const BASIC: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (128, 0, 0),
    (0, 128, 0),
    (128, 128, 0),
    (0, 0, 128),
    (128, 0, 128),
    (0, 128, 128),
    (192, 192, 192),
    (128, 128, 128),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (0, 0, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
];
const CUBE: [f64; 6] = [0.0, 95.0, 135.0, 175.0, 215.0, 255.0];

impl Color {
    /// sRGB channels (0–255).
    pub fn to_rgb(self) -> (f64, f64, f64) {
        match self {
            Color::Indexed(i) => {
                let i = i as usize;
                if i < 16 {
                    let (r, g, b) = BASIC[i];
                    (r as f64, g as f64, b as f64)
                } else if i < 232 {
                    let c = i - 16;
                    (CUBE[c / 36], CUBE[(c % 36) / 6], CUBE[c % 6])
                } else {
                    let g = 8.0 + (i - 232) as f64 * 10.0;
                    (g, g, g)
                }
            }
            Color::Rgb(r, g, b) => (r, g, b),
            Color::Oklch(l, c, h) => {
                let [r, g, b] = oklch_to_rgb(l, c, h);
                (r, g, b)
            }
        }
    }

    /// `#rrggbb`.
    pub fn to_hex(self) -> String {
        let (r, g, b) = self.to_rgb();
        format!("#{:02x}{:02x}{:02x}", js_round(r) as u8, js_round(g) as u8, js_round(b) as u8)
    }

    fn to_oklch(self) -> (f64, f64, f64) {
        if let Color::Oklch(l, c, h) = self {
            return (l, c, h);
        }
        let (r, g, b) = self.to_rgb();
        let [l, a, bb] = rgb_to_oklab([r, g, b]);
        (l, a.hypot(bb), (bb.atan2(a).to_degrees() + 360.0) % 360.0)
    }

    /// Mix towards `other` by `amount` (0–1), in OKLCH (`srgb = false`, pi's default) or sRGB.
    pub fn mix(self, other: Color, amount: f64, srgb: bool) -> Color {
        if srgb {
            let (ar, ag, ab) = self.to_rgb();
            let (br, bg, bb) = other.to_rgb();
            return Color::Rgb(ar + (br - ar) * amount, ag + (bg - ag) * amount, ab + (bb - ab) * amount);
        }
        let a = self.to_oklch();
        let b = other.to_oklch();
        let h1 = if a.1 < 1e-7 { b.2 } else { a.2 };
        let h2 = if b.1 < 1e-7 { h1 } else { b.2 };
        let delta = ((h2 - h1 + 540.0) % 360.0) - 180.0;
        let h = h1 + delta * amount;
        Color::Oklch(a.0 + (b.0 - a.0) * amount, a.1 + (b.1 - a.1) * amount, ((h % 360.0) + 360.0) % 360.0)
    }

    /// The SGR sequence for this colour as foreground or background.
    pub fn ansi(self, mode: ColorMode, background: bool) -> String {
        let base = if background { 48 } else { 38 };
        if let Color::Indexed(i) = self {
            return format!("\x1b[{base};5;{i}m");
        }
        let (r, g, b) = self.to_rgb();
        match mode {
            ColorMode::Truecolor => format!("\x1b[{base};2;{};{};{}m", js_round(r), js_round(g), js_round(b)),
            ColorMode::Ansi256 => format!("\x1b[{base};5;{}m", rgb_to_ansi256(r, g, b)),
        }
    }
}

fn closest(values: &[f64], target: f64) -> usize {
    let mut best = 0;
    let mut dist = f64::INFINITY;
    for (i, v) in values.iter().enumerate() {
        let d = (target - v).abs();
        if d < dist {
            best = i;
            dist = d;
        }
    }
    best
}

fn distance(a: (f64, f64, f64), b: (f64, f64, f64)) -> f64 {
    let (dr, dg, db) = (a.0 - b.0, a.1 - b.1, a.2 - b.2);
    dr * dr * 0.299 + dg * dg * 0.587 + db * db * 0.114
}

fn rgb_to_ansi256(r: f64, g: f64, b: f64) -> usize {
    let (ri, gi, bi) = (closest(&CUBE, r), closest(&CUBE, g), closest(&CUBE, b));
    let cube = (CUBE[ri], CUBE[gi], CUBE[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let gray = js_round(0.299 * r + 0.587 * g + 0.114 * b);
    let grays: Vec<f64> = (0..24).map(|i| 8.0 + i as f64 * 10.0).collect();
    let off = closest(&grays, gray);
    let gv = grays[off];
    let spread = r.max(g).max(b) - r.min(g).min(b);
    if spread < 10.0 && distance((r, g, b), (gv, gv, gv)) < distance((r, g, b), cube) {
        return 232 + off;
    }
    cube_index
}

/// Parse a JS-style number (`[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?`).
fn number(s: &str) -> Option<f64> {
    let ok = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
    if ok { s.parse().ok() } else { None }
}

/// Split `name(args)` into whitespace-separated arguments.
fn function_args<'a>(value: &'a str, name: &str) -> Option<Vec<&'a str>> {
    let lower = value.to_ascii_lowercase();
    if !lower.starts_with(&format!("{name}(")) || !value.ends_with(')') {
        return None;
    }
    Some(value[name.len() + 1..value.len() - 1].split_whitespace().collect())
}

fn strip_suffix_ci<'a>(s: &'a str, suffix: &str) -> (&'a str, bool) {
    if s.len() >= suffix.len() && s[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix) {
        (&s[..s.len() - suffix.len()], true)
    } else {
        (s, false)
    }
}

/// Parse a colour string (`#rgb`, `#rrggbb`, `oklch(L% C H)`, `okhsl(H S% L%)`).
pub fn parse_color(value: &str) -> Result<Color, TuiError> {
    let err = || TuiError::Theme(format!("Invalid color value: {value}"));
    if let Some(hex) = value.strip_prefix('#') {
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) || !(hex.len() == 3 || hex.len() == 6) {
            return Err(err());
        }
        let full: String = if hex.len() == 3 { hex.chars().flat_map(|c| [c, c]).collect() } else { hex.to_string() };
        let ch = |i: usize| u8::from_str_radix(&full[i..i + 2], 16).map(f64::from).map_err(|_| err());
        return Ok(Color::Rgb(ch(0)?, ch(2)?, ch(4)?));
    }
    if let Some(args) = function_args(value, "oklch") {
        let [l, c, h] = args[..] else { return Err(err()) };
        let (l, pct) = strip_suffix_ci(l, "%");
        let l = number(l).ok_or_else(err)? / if pct { 100.0 } else { 1.0 };
        let c = number(c).ok_or_else(err)?;
        let h = number(strip_suffix_ci(h, "deg").0).ok_or_else(err)?;
        if !(0.0..=1.0).contains(&l) || c < 0.0 {
            return Err(err());
        }
        return Ok(Color::Oklch(l, c, h.rem_euclid(360.0)));
    }
    if let Some(args) = function_args(value, "okhsl") {
        let [h, s, l] = args[..] else { return Err(err()) };
        let h = number(strip_suffix_ci(h, "deg").0).ok_or_else(err)?;
        let (s, sp) = strip_suffix_ci(s, "%");
        let s = number(s).ok_or_else(err)? / if sp { 100.0 } else { 1.0 };
        let (l, lp) = strip_suffix_ci(l, "%");
        let l = number(l).ok_or_else(err)? / if lp { 100.0 } else { 1.0 };
        if !(0.0..=1.0).contains(&s) || !(0.0..=1.0).contains(&l) {
            return Err(err());
        }
        let (r, g, b) = okhsl_to_rgb(h, s, l);
        return Ok(Color::Rgb(r as f64, g as f64, b as f64));
    }
    Err(err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_colour_vectors() -> Result<(), TuiError> {
        assert_eq!(okhsl_to_rgb(295.0, 0.5, 0.67), (167, 152, 215));
        let c = parse_color("okhsl(233 41% 24%)")?;
        assert_eq!(c.to_rgb(), (33.0, 59.0, 73.0));
        assert_eq!(c.ansi(ColorMode::Ansi256, false), "\x1b[38;5;23m");
        assert_eq!(parse_color("oklch(70% 0.12 220)")?.to_hex(), "#25afd2");
        assert_eq!(Color::Indexed(39).to_hex(), "#00afff");
        let red = parse_color("#ff0000")?;
        let blue = parse_color("#00f")?;
        assert_eq!(red.mix(blue, 0.5, false).to_hex(), "#b200b8");
        assert_eq!(red.mix(blue, 0.5, true).to_hex(), "#800080");
        assert!(parse_color("nope").is_err());
        Ok(())
    }
}
