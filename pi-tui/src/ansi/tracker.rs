//! `AnsiCodeTracker`: the SGR and OSC 8 state that wrapping carries across line breaks.

use super::{Osc8, ansi_code_len, parse_osc8};

/// Tracks active SGR attributes, colours and the open OSC 8 hyperlink, so styles can be re-opened
/// after a line break. SGR `0` resets attributes and colours but not the hyperlink.
#[derive(Debug, Clone, Default)]
pub struct AnsiCodeTracker {
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    blink: bool,
    inverse: bool,
    hidden: bool,
    strikethrough: bool,
    fg: Option<String>,
    bg: Option<String>,
    link: Option<Osc8>,
}

/// Find the parameters of the first `ESC [ [0-9;]* m` inside `code` (the regex pi uses).
fn sgr_params(code: &str) -> Option<&str> {
    let b = code.as_bytes();
    let mut start = 0;
    while let Some(off) = code[start..].find("\x1b[") {
        let p = start + off + 2;
        let mut j = p;
        while j < b.len() && (b[j].is_ascii_digit() || b[j] == b';') {
            j += 1;
        }
        if j < b.len() && b[j] == b'm' {
            return Some(&code[p..j]);
        }
        start = start + off + 1;
    }
    None
}

impl AnsiCodeTracker {
    /// A tracker with no active state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed one escape code (as recognised by [`super::ansi_code_len`]).
    pub fn process(&mut self, code: &str) {
        if let Some(link) = parse_osc8(code) {
            self.link = link;
            return;
        }
        if !code.ends_with('m') {
            return;
        }
        let Some(params) = sgr_params(code) else {
            return;
        };
        if params.is_empty() || params == "0" {
            self.reset();
            return;
        }
        let parts: Vec<&str> = params.split(';').collect();
        let mut i = 0;
        while i < parts.len() {
            let code = parse_js_int(parts[i]);
            if code == Some(38) || code == Some(48) {
                let is_fg = code == Some(38);
                if parts.get(i + 1) == Some(&"5") && i + 2 < parts.len() {
                    let c = format!("{};{};{}", parts[i], parts[i + 1], parts[i + 2]);
                    self.set_colour(is_fg, c);
                    i += 3;
                    continue;
                } else if parts.get(i + 1) == Some(&"2") && i + 4 < parts.len() {
                    let c = parts[i..i + 5].join(";");
                    self.set_colour(is_fg, c);
                    i += 5;
                    continue;
                }
            }
            match code {
                Some(0) => self.reset(),
                Some(1) => self.bold = true,
                Some(2) => self.dim = true,
                Some(3) => self.italic = true,
                Some(4) => self.underline = true,
                Some(5) => self.blink = true,
                Some(7) => self.inverse = true,
                Some(8) => self.hidden = true,
                Some(9) => self.strikethrough = true,
                Some(21) => self.bold = false,
                Some(22) => {
                    self.bold = false;
                    self.dim = false;
                }
                Some(23) => self.italic = false,
                Some(24) => self.underline = false,
                Some(25) => self.blink = false,
                Some(27) => self.inverse = false,
                Some(28) => self.hidden = false,
                Some(29) => self.strikethrough = false,
                Some(39) => self.fg = None,
                Some(49) => self.bg = None,
                Some(n) if (30..=37).contains(&n) || (90..=97).contains(&n) => self.fg = Some(n.to_string()),
                Some(n) if (40..=47).contains(&n) || (100..=107).contains(&n) => self.bg = Some(n.to_string()),
                _ => {}
            }
            i += 1;
        }
    }

    fn set_colour(&mut self, fg: bool, c: String) {
        if fg {
            self.fg = Some(c);
        } else {
            self.bg = Some(c);
        }
    }

    /// Reset SGR state (the hyperlink stays open).
    pub fn reset(&mut self) {
        let link = self.link.take();
        *self = Self::default();
        self.link = link;
    }

    /// Clear all state, hyperlink included.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Feed every escape code found in `text`.
    pub fn update_from_text(&mut self, text: &str) {
        let mut i = 0;
        while let Some(off) = text[i..].find('\x1b') {
            let at = i + off;
            let len = ansi_code_len(text, at);
            if len > 0 {
                self.process(&text[at..at + len]);
                i = at + len;
            } else {
                i = at + 1;
            }
        }
    }

    /// The codes that re-open the current state: one `ESC[…m` plus the open hyperlink.
    pub fn active_codes(&self) -> String {
        let mut codes: Vec<&str> = Vec::new();
        for (on, c) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.blink, "5"),
            (self.inverse, "7"),
            (self.hidden, "8"),
            (self.strikethrough, "9"),
        ] {
            if on {
                codes.push(c);
            }
        }
        if let Some(fg) = &self.fg {
            codes.push(fg);
        }
        if let Some(bg) = &self.bg {
            codes.push(bg);
        }
        let mut out = if codes.is_empty() { String::new() } else { format!("\x1b[{}m", codes.join(";")) };
        if let Some(link) = &self.link {
            out.push_str(&format!("\x1b]8;{};{}{}", link.params, link.url, link.terminator));
        }
        out
    }

    /// The background code active now, or `""`.
    pub fn active_background(&self) -> String {
        self.bg.as_ref().map(|b| format!("\x1b[{b}m")).unwrap_or_default()
    }

    /// Whether any attribute, colour or hyperlink is active.
    pub fn has_active_codes(&self) -> bool {
        self.bold
            || self.dim
            || self.italic
            || self.underline
            || self.blink
            || self.inverse
            || self.hidden
            || self.strikethrough
            || self.fg.is_some()
            || self.bg.is_some()
            || self.link.is_some()
    }

    /// The partial close used at a wrap: underline off, strikethrough off, hyperlink close.
    /// Never a full reset, so backgrounds survive.
    pub fn line_end_reset(&self) -> String {
        let mut out = String::new();
        if self.underline {
            out.push_str("\x1b[24m");
        }
        if self.strikethrough {
            out.push_str("\x1b[29m");
        }
        if let Some(link) = &self.link {
            out.push_str("\x1b]8;;");
            out.push_str(link.terminator);
        }
        out
    }
}

/// `Number.parseInt(s, 10)`: leading digits, `None` when there are none.
fn parse_js_int(s: &str) -> Option<u32> {
    let digits: &str = &s[..s.bytes().take_while(u8::is_ascii_digit).count()];
    digits.parse().ok()
}

/// The background colour active at the end of an ANSI-styled string.
pub fn active_background_ansi(text: &str) -> String {
    let mut t = AnsiCodeTracker::new();
    t.update_from_text(text);
    t.active_background()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reopens_state() {
        let mut t = AnsiCodeTracker::new();
        t.update_from_text("\x1b[1;3m\x1b[38;2;1;2;3m\x1b[44m\x1b]8;;http://a\x07");
        assert_eq!(t.active_codes(), "\x1b[1;3;38;2;1;2;3;44m\x1b]8;;http://a\x07");
        t.process("\x1b[0m");
        assert_eq!(t.active_codes(), "\x1b]8;;http://a\x07");
        assert_eq!(t.line_end_reset(), "\x1b]8;;\x07");
        assert_eq!(active_background_ansi("\x1b[41mx\x1b[49m\x1b[42m"), "\x1b[42m");
    }
}
