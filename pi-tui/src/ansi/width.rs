//! Terminal cell width of strings: graphemes plus pi's overrides.
//!
//! pi measures with `Intl.Segmenter` graphemes, string-width's zero-width classes, an RGI emoji
//! test and East Asian Width. Here graphemes come from `unicode-segmentation`, character classes
//! from `unicode-properties` and East Asian Width from `unicode-width`. The RGI emoji test is a
//! structural check (presentation characters, VS16, keycaps, flags, modifiers, ZWJ and tag
//! sequences) rather than the full RGI list.

use unicode_properties::{EmojiStatus, GeneralCategory, UnicodeEmoji, UnicodeGeneralCategory};
use unicode_width::UnicodeWidthChar;

use super::ansi_code_len;

fn is_default_ignorable(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F..=0x1160 | 0x17B4..=0x17B5 | 0x180B..=0x180F
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
        | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFF8 | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A
        | 0xE0000..=0xE0FFF)
}

fn is_mark(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::NonspacingMark | GeneralCategory::SpacingMark | GeneralCategory::EnclosingMark
    )
}

fn is_control(c: char) -> bool {
    c.general_category() == GeneralCategory::Control
}

fn is_format(c: char) -> bool {
    c.general_category() == GeneralCategory::Format
}

/// `\p{Default_Ignorable_Code_Point}|\p{Control}|\p{Mark}`
fn is_zero_width_char(c: char) -> bool {
    is_default_ignorable(c) || is_control(c) || is_mark(c)
}

/// Also `\p{Format}`: what pi strips before the base character.
fn is_non_printing(c: char) -> bool {
    is_zero_width_char(c) || is_format(c)
}

/// Marks that terminals give a cell even without a base character.
fn is_terminal_spacing_mark(c: char) -> bool {
    let cp = c as u32;
    (c.general_category() == GeneralCategory::SpacingMark && !matches!(cp, 0x1734 | 0x302E | 0x302F))
        || matches!(cp, 0x065F | 0x0F7F | 0x102B | 0x102C | 0x1031 | 0x1033..=0x1035 | 0x1038 | 0x103A..=0x103E)
}

/// East Asian Width as `get-east-asian-width` reports it: 2 for Wide/Fullwidth, else 1.
fn east_asian_width(c: char) -> usize {
    if c.width() == Some(2) { 2 } else { 1 }
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

fn could_be_emoji(seg: &str) -> bool {
    let Some(c) = seg.chars().next() else {
        return false;
    };
    let cp = c as u32;
    (0x1f000..=0x1fbff).contains(&cp)
        || (0x2300..=0x23ff).contains(&cp)
        || (0x2600..=0x27bf).contains(&cp)
        || (0x2b50..=0x2b55).contains(&cp)
        || seg.contains('\u{FE0F}')
        || utf16_len(seg) > 2
}

fn is_emoji_presentation(c: char) -> bool {
    matches!(
        c.emoji_status(),
        EmojiStatus::EmojiPresentation
            | EmojiStatus::EmojiPresentationAndModifierBase
            | EmojiStatus::EmojiPresentationAndEmojiComponent
            | EmojiStatus::EmojiPresentationAndModifierAndEmojiComponent
    )
}

fn is_modifier(c: char) -> bool {
    matches!(c as u32, 0x1F3FB..=0x1F3FF)
}

fn is_ri(c: char) -> bool {
    matches!(c as u32, 0x1F1E6..=0x1F1FF)
}

/// One element of a ZWJ sequence: an emoji with optional VS16 / modifier, or a keycap / flag.
fn is_emoji_element(chars: &[char]) -> bool {
    match chars {
        [] => false,
        [c] => is_emoji_presentation(*c),
        [c, '\u{FE0F}'] => c.is_emoji_char(),
        [c, '\u{FE0F}', '\u{20E3}'] => matches!(c, '0'..='9' | '#' | '*'),
        [a, b] if is_ri(*a) && is_ri(*b) => true,
        [c, m] if is_modifier(*m) => c.is_emoji_char(),
        [c, rest @ ..] if *c == '\u{1F3F4}' => {
            rest.last() == Some(&'\u{E007F}')
                && rest[..rest.len() - 1].iter().all(|t| matches!(*t as u32, 0xE0020..=0xE007E))
        }
        _ => false,
    }
}

/// Structural approximation of `\p{RGI_Emoji}` for one grapheme cluster.
fn is_rgi_emoji(seg: &str) -> bool {
    let chars: Vec<char> = seg.chars().collect();
    if chars.len() == 1 && is_ri(chars[0]) {
        return false;
    }
    chars.split(|c| *c == '\u{200D}').all(is_emoji_element)
}

fn cluster_width(seg: &str) -> usize {
    if !seg.is_empty() && seg.chars().all(is_terminal_spacing_mark) {
        return seg.chars().count();
    }
    if !seg.is_empty() && seg.chars().all(is_zero_width_char) {
        return 0;
    }
    if could_be_emoji(seg) && is_rgi_emoji(seg) {
        return 2;
    }
    let base = seg.trim_start_matches(is_non_printing);
    let mut chars = base.chars();
    let Some(first) = chars.next() else {
        return 0;
    };
    if is_ri(first) {
        return 2;
    }
    let mut width = east_asian_width(first);
    let mut follows_mark = false;
    for c in chars {
        if is_terminal_spacing_mark(c) {
            width += 1;
            follows_mark = false;
        } else if is_mark(c) {
            follows_mark = true;
        } else if !is_non_printing(c) {
            let cp = c as u32;
            if follows_mark || (0xff00..=0xffef).contains(&cp) {
                width += east_asian_width(c);
            } else if cp == 0x0e33 || cp == 0x0eb3 {
                width += 1;
            }
            follows_mark = false;
        }
    }
    width
}

thread_local! {
    /// Widths of single non-ASCII characters (pi keeps the same cache for single UTF-16 units).
    static SINGLE_CHAR_WIDTHS: std::cell::RefCell<std::collections::HashMap<char, u8>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Width of one grapheme cluster (tab = 3).
pub fn grapheme_width(seg: &str) -> usize {
    let b = seg.as_bytes();
    if b.len() == 1 {
        let c = b[0];
        if (0x20..=0x7e).contains(&c) {
            return 1;
        }
        if c == b'\t' {
            return 3;
        }
    }
    let mut chars = seg.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && (c as u32) <= 0xffff
    {
        return SINGLE_CHAR_WIDTHS
            .with(|m| *m.borrow_mut().entry(c).or_insert_with(|| cluster_width(seg) as u8) as usize);
    }
    cluster_width(seg)
}

/// Width of printable ASCII, tabs and escape codes, or `None` if `s` holds anything else.
fn ascii_visible_width(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut width = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if (0x20..=0x7e).contains(&c) {
            width += 1;
            i += 1;
        } else if c == b'\t' {
            width += 3;
            i += 1;
        } else if c == 0x1b {
            let len = ansi_code_len(s, i);
            if len == 0 {
                return None;
            }
            i += len;
        } else {
            return None;
        }
    }
    Some(width)
}

/// Visible width of `s` in terminal cells: escape codes are zero-width, a tab is 3 cells,
/// graphemes are measured with pi's rules.
pub fn visible_width(s: &str) -> usize {
    if s.is_empty() {
        return 0;
    }
    if let Some(w) = ascii_visible_width(s) {
        return w;
    }
    let mut i = 0;
    // Strip the codes first, as pi does, so a grapheme split by a code is measured like pi.
    let mut clean = String::new();
    let stripped: &str = if s.contains('\x1b') {
        while i < s.len() {
            let len = ansi_code_len(s, i);
            if len > 0 {
                i += len;
                continue;
            }
            let end = super::next_code_start(s, i + 1);
            clean.push_str(&s[i..end]);
            i = end;
        }
        &clean
    } else {
        s
    };
    text_width(stripped)
}

/// Width of text without escape codes: printable ASCII runs are counted directly, other stretches
/// are segmented into graphemes.
fn text_width(s: &str) -> usize {
    let b = s.as_bytes();
    let mut width = 0;
    let mut i = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && (0x20..=0x7e).contains(&b[i]) {
            i += 1;
        }
        if i == b.len() {
            return width + (i - start);
        }
        // The last ASCII byte may take a combining mark: measure it with what follows.
        let keep = if i > start { i - 1 } else { i };
        width += keep - start;
        let end = super::graphemes::complex_end(s, keep);
        for (_, g) in super::graphemes(&s[keep..end]) {
            width += if g == "\t" { 3 } else { grapheme_width(g) };
        }
        i = end;
    }
    width
}

/// Whether a grapheme is CJK (Han, Hiragana, Katakana, Hangul, Bopomofo by script extension),
/// which wrapping treats as its own word.
pub fn is_cjk_break(seg: &str) -> bool {
    seg.chars().any(|c| {
        matches!(c as u32,
            0x1100..=0x11FF | 0x2E80..=0x2FDF | 0x2FF0..=0x2FFF | 0x3001..=0x303F
            | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xA960..=0xA97F
            | 0xAC00..=0xD7FF | 0xF900..=0xFAFF | 0xFE45..=0xFE46 | 0xFF61..=0xFFDC
            | 0x16FE0..=0x16FFF | 0x1B000..=0x1B16F | 0x1F200 | 0x20000..=0x3FFFF)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_widths() {
        let cases: &[(&str, usize)] = &[
            ("hello", 5),
            ("\x1b[31mhi\x1b[0m", 2),
            ("日本語", 6),
            ("👍", 2),
            ("👨‍👩‍👧", 2),
            ("🇺🇸", 2),
            ("🇺", 2),
            ("e\u{301}", 1),
            ("\t", 3),
            ("\x1b]8;;http://x\x07ab\x1b]8;;\x07", 2),
            ("\x1b_pi:c\x07x", 1),
            ("ｱ", 1),
            ("Ａ", 2),
            ("❤", 1),
            ("❤️", 2),
            ("⚠", 1),
            ("⚠️", 2),
            ("✅", 2),
            ("👍🏽", 2),
            ("1️⃣", 2),
            ("한", 2),
            ("नमस्ते", 4),
            ("\u{200b}", 0),
            ("\u{ad}", 0),
            ("\u{7}", 0),
            ("\x1b[2A", 3),
        ];
        for (s, w) in cases {
            assert_eq!(visible_width(s), *w, "width of {s:?}");
        }
    }
}
