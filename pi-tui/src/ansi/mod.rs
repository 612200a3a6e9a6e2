//! ANSI-aware string utilities, ported literally from pi-tui's `utils.ts`.
//!
//! pi's escape recognition is deliberately narrow (see [`ansi_code_len`]): it is part of the width
//! contract, so do not substitute a general VT parser here.

mod graphemes;
mod slice;
mod tracker;
mod width;
mod wrap;

pub use graphemes::graphemes;
pub use slice::{
    Segments, apply_background_to_line, composite_line, extract_segments, slice_by_column, slice_with_width,
    truncate_to_width, truncate_to_width_with,
};
pub use tracker::{AnsiCodeTracker, active_background_ansi};
pub use width::{grapheme_width, is_cjk_break, visible_width};
pub use wrap::wrap_text_with_ansi;

/// Reset appended after every composited segment and every output line: SGR reset plus OSC 8 close.
pub const SEGMENT_RESET: &str = "\x1b[0m\x1b]8;;\x07";

/// Length in bytes of the escape sequence starting at byte `pos` of `s`, or 0 if there is none.
///
/// `ESC [` counts as a code only if one of `m G K H J` appears later (the code runs up to it);
/// `ESC ]` and `ESC _` run to BEL or `ESC \`. Any other escape is not a code.
pub fn ansi_code_len(s: &str, pos: usize) -> usize {
    let b = s.as_bytes();
    if pos >= b.len() || b[pos] != 0x1b {
        return 0;
    }
    match b.get(pos + 1) {
        Some(b'[') => {
            for (j, &c) in b.iter().enumerate().skip(pos + 2) {
                if matches!(c, b'm' | b'G' | b'K' | b'H' | b'J') {
                    return j + 1 - pos;
                }
            }
            0
        }
        Some(b']') | Some(b'_') => {
            let mut j = pos + 2;
            while j < b.len() {
                if b[j] == 0x07 {
                    return j + 1 - pos;
                }
                if b[j] == 0x1b && b.get(j + 1) == Some(&b'\\') {
                    return j + 2 - pos;
                }
                j += 1;
            }
            0
        }
        _ => 0,
    }
}

/// The escape sequence starting at byte `pos`, if any (see [`ansi_code_len`]).
pub fn extract_ansi_code(s: &str, pos: usize) -> Option<&str> {
    let len = ansi_code_len(s, pos);
    (len > 0).then(|| &s[pos..pos + len])
}

/// Whether every byte of `s` is printable ASCII (0x20..=0x7e).
pub fn is_printable_ascii(s: &str) -> bool {
    s.bytes().all(|c| (0x20..=0x7e).contains(&c))
}

/// Byte index of the next recognised escape code at or after `from`, or `s.len()`.
pub(crate) fn next_code_start(s: &str, from: usize) -> usize {
    let b = s.as_bytes();
    let mut i = from;
    while i < b.len() {
        if b[i] == 0x1b && ansi_code_len(s, i) > 0 {
            return i;
        }
        i += 1;
    }
    b.len()
}

/// Remove ANSI, OSC and APC sequences while keeping the visible text.
pub fn strip_terminal_sequences(s: &str) -> String {
    if !s.contains('\x1b') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let len = ansi_code_len(s, i);
        if len > 0 {
            i += len;
            continue;
        }
        let end = next_code_start(s, i + 1);
        out.push_str(&s[i..end]);
        i = end;
    }
    out
}

/// Concatenate every recognised escape code in `s`, dropping the visible text.
pub(crate) fn extract_ansi_codes(s: &str) -> String {
    let mut out = String::new();
    let mut i = 0;
    while let Some(off) = s[i..].find('\x1b') {
        let at = i + off;
        let len = ansi_code_len(s, at);
        if len > 0 {
            out.push_str(&s[at..at + len]);
            i = at + len;
        } else {
            i = at + 1;
        }
    }
    out
}

/// Replace each run of C0/C1 control characters (ESC, BEL, newlines, ...) with one space.
pub fn replace_control_characters(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars() {
        let ctrl = (c as u32) < 0x20 || (0x7f..=0x9f).contains(&(c as u32));
        if ctrl {
            if !in_run {
                out.push(' ');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// Normalise a line for terminal output: decompose Thai/Lao AM (U+0E33, U+0EB3) and expand visible
/// tabs to three spaces (tabs inside escape sequences stay).
pub fn normalize_terminal_output(s: &str) -> String {
    let mut normalized = if s.contains(['\u{0e33}', '\u{0eb3}']) {
        s.replace('\u{0e33}', "\u{0e4d}\u{0e32}").replace('\u{0eb3}', "\u{0ecd}\u{0eb2}")
    } else {
        s.to_string()
    };
    if !normalized.contains('\t') {
        return normalized;
    }
    let mut out = String::with_capacity(normalized.len() + 8);
    let mut i = 0;
    while i < normalized.len() {
        let len = ansi_code_len(&normalized, i);
        if len > 0 {
            out.push_str(&normalized[i..i + len]);
            i += len;
            continue;
        }
        let end = next_code_start(&normalized, i + 1);
        out.push_str(&normalized[i..end].replace('\t', "   "));
        i = end;
    }
    normalized = out;
    normalized
}

/// An OSC 8 hyperlink parsed from its escape sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Osc8 {
    pub params: String,
    pub url: String,
    pub terminator: &'static str,
}

/// Parse an OSC 8 code: `None` if it is not OSC 8 (or malformed), `Some(None)` for a close,
/// `Some(Some(link))` for an open.
pub(crate) fn parse_osc8(code: &str) -> Option<Option<Osc8>> {
    let rest = code.strip_prefix("\x1b]8;")?;
    let (body, terminator) = if let Some(b) = rest.strip_suffix('\x07') {
        (b, "\x07")
    } else {
        (rest.strip_suffix("\x1b\\").unwrap_or(rest), "\x1b\\")
    };
    let sep = body.find(';')?;
    let url = &body[sep + 1..];
    if url.is_empty() {
        return Some(None);
    }
    Some(Some(Osc8 { params: body[..sep].to_string(), url: url.to_string(), terminator }))
}

/// The OSC 8 close needed at the end of `prefix` if a hyperlink is open there, else `""`.
pub(crate) fn active_osc8_close(prefix: &str) -> &'static str {
    if !prefix.contains("\x1b]8;") {
        return "";
    }
    let mut active: Option<Osc8> = None;
    let mut i = 0;
    while i < prefix.len() {
        let len = ansi_code_len(prefix, i);
        if len > 0 {
            if let Some(link) = parse_osc8(&prefix[i..i + len]) {
                active = link;
            }
            i += len;
        } else {
            i += 1;
        }
    }
    match active {
        Some(link) if link.terminator == "\x07" => "\x1b]8;;\x07",
        Some(_) => "\x1b]8;;\x1b\\",
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_recognition_is_narrow() {
        assert_eq!(ansi_code_len("\x1b[31mx", 0), 5);
        assert_eq!(ansi_code_len("\x1b[2A", 0), 0);
        assert_eq!(ansi_code_len("\x1b]8;;u\x07", 0), 7);
        assert_eq!(ansi_code_len("\x1b_pi:c\x1b\\", 0), 8);
        assert_eq!(ansi_code_len("\x1bb", 0), 0);
    }

    #[test]
    fn strips_and_normalises() {
        assert_eq!(strip_terminal_sequences("\x1b[1mA\x1b[0m\x1b[2Ab"), "A\x1b[2Ab");
        assert_eq!(normalize_terminal_output("a\tb\u{0e33}"), "a   b\u{0e4d}\u{0e32}");
        assert_eq!(replace_control_characters("a\x1b\x07b\nc"), "a b c");
        assert_eq!(active_osc8_close("\x1b]8;;http://x\x07ab"), "\x1b]8;;\x07");
        assert_eq!(active_osc8_close("\x1b]8;;http://x\x07ab\x1b]8;;\x07"), "");
    }
}
