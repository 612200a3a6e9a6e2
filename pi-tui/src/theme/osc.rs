//! The terminal's colour replies (pi-tui's `terminal-colors.js`): OSC 10/11/4 answers, the DA1
//! reply that ends a colour query, and mode-2031 light/dark reports.

use super::auto::Appearance;
use super::system::Rgb;

/// What pi writes to ask for the colours: OSC 10, OSC 11, OSC 4 for 0–15, then DA1.
pub fn terminal_color_query() -> String {
    let mut q = String::from("\x1b]10;?\x07\x1b]11;?\x07");
    for i in 0..16 {
        q.push_str(&format!("\x1b]4;{i};?\x07"));
    }
    q.push_str("\x1b[c");
    q
}

/// Which colour a reply reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OscTarget {
    /// OSC 10.
    Foreground,
    /// OSC 11.
    Background,
    /// OSC 4 with this index.
    Palette(u16),
}

/// A parsed colour reply: `rgb` is `None` for a reply whose colour cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OscColor {
    /// The colour replied to.
    pub target: OscTarget,
    /// Its value.
    pub rgb: Option<Rgb>,
}

/// pi's `parseOscColorResponse`: `ESC ] 10|11 ; value (BEL | ST)` or `ESC ] 4 ; n ; value …`.
pub fn parse_osc_color_response(data: &str) -> Option<OscColor> {
    let body = data.strip_prefix("\x1b]")?;
    let body = body.strip_suffix('\x07').or_else(|| body.strip_suffix("\x1b\\"))?;
    let (target, value) = if let Some(rest) = body.strip_prefix("4;") {
        let (index, value) = rest.split_once(';')?;
        if index.is_empty() || index.len() > 3 || !index.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        (OscTarget::Palette(index.parse().ok()?), value)
    } else if let Some(value) = body.strip_prefix("10;") {
        (OscTarget::Foreground, value)
    } else if let Some(value) = body.strip_prefix("11;") {
        (OscTarget::Background, value)
    } else {
        return None;
    };
    if value.contains(['\x07', '\x1b']) {
        return None;
    }
    Some(OscColor { target, rgb: parse_osc_color_value(value) })
}

fn channel(hex: &str) -> Option<u8> {
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let max = 16f64.powi(hex.len() as i32) - 1.0;
    let value = u64::from_str_radix(hex, 16).ok()? as f64;
    Some((value / max * 255.0 + 0.5).floor() as u8)
}

fn parse_osc_color_value(raw: &str) -> Option<Rgb> {
    let value = raw.trim();
    if let Some(hex) = value.strip_prefix('#') {
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        return match hex.len() {
            6 => Some(Rgb { r: channel(&hex[0..2])?, g: channel(&hex[2..4])?, b: channel(&hex[4..6])? }),
            12 => Some(Rgb { r: channel(&hex[0..4])?, g: channel(&hex[4..8])?, b: channel(&hex[8..12])? }),
            _ => None,
        };
    }
    let lower = value.to_ascii_lowercase();
    let rgb = lower.strip_prefix("rgba:").or_else(|| lower.strip_prefix("rgb:")).unwrap_or(&lower);
    let mut parts = rgb.split('/');
    let (r, g, b) = (parts.next()?, parts.next()?, parts.next()?);
    Some(Rgb { r: channel(r)?, g: channel(g)?, b: channel(b)? })
}

/// The DA1 reply (`ESC [ ? … c`) that ends a colour query.
pub fn is_device_attributes_reply(data: &str) -> bool {
    data.strip_prefix("\x1b[?")
        .and_then(|r| r.strip_suffix('c'))
        .is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit() || b == b';'))
}

/// pi's `parseTerminalColorSchemeReport`: one or more `ESC [ ? 997 ; 1|2 n` (1 dark, 2 light).
pub fn parse_color_scheme_report(data: &str) -> Option<Appearance> {
    let mut rest = data;
    // Like pi's repeated regex group, the last report decides.
    let mut last = None;
    while !rest.is_empty() {
        let tail = rest.strip_prefix("\x1b[?997;")?;
        let (kind, tail) = tail.split_at_checked(1)?;
        rest = tail.strip_prefix('n')?;
        if kind != "1" && kind != "2" {
            return None;
        }
        last = Some(kind.to_owned());
    }
    last.map(|k| if k == "2" { Appearance::Light } else { Appearance::Dark })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_as_pi_does() {
        let rgb = |r, g, b| Some(Rgb { r, g, b });
        let bg = parse_osc_color_response("\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\");
        assert_eq!(bg, Some(OscColor { target: OscTarget::Background, rgb: rgb(30, 30, 46) }));
        let fg = parse_osc_color_response("\x1b]10;#c0caf5\x07");
        assert_eq!(fg, Some(OscColor { target: OscTarget::Foreground, rgb: rgb(192, 202, 245) }));
        let p = parse_osc_color_response("\x1b]4;13;rgb:f/0/f\x07");
        assert_eq!(p, Some(OscColor { target: OscTarget::Palette(13), rgb: rgb(255, 0, 255) }));
        let bad = parse_osc_color_response("\x1b]11;nonsense\x07");
        assert_eq!(bad, Some(OscColor { target: OscTarget::Background, rgb: None }));
        assert_eq!(parse_osc_color_response("\x1b]12;#000000\x07"), None);
        assert_eq!(parse_osc_color_response("\x1b]11;#000000"), None);
        assert!(is_device_attributes_reply("\x1b[?62;22c"));
        assert!(!is_device_attributes_reply("\x1b[62c"));
        assert_eq!(parse_color_scheme_report("\x1b[?997;2n"), Some(Appearance::Light));
        assert_eq!(parse_color_scheme_report("\x1b[?997;2n\x1b[?997;1n"), Some(Appearance::Dark));
        assert_eq!(parse_color_scheme_report("\x1b[?997;3n"), None);
    }
}
