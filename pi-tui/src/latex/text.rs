//! JavaScript's string rules where the output depends on them: what `\s` and `trim()` call
//! whitespace, and what `\p{L}` / `\p{N}` call letters and numbers.

use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

/// JavaScript's `\s`: its WhiteSpace and LineTerminator characters.
pub(crate) fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// `String.prototype.trim`.
pub(crate) fn trim(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// `String.prototype.trimStart`.
pub(crate) fn trim_start(s: &str) -> &str {
    s.trim_start_matches(is_space)
}

/// `String.prototype.trimEnd`.
pub(crate) fn trim_end(s: &str) -> &str {
    s.trim_end_matches(is_space)
}

/// `\p{L}` or `\p{N}`.
pub(crate) fn is_letter_or_number(c: char) -> bool {
    matches!(c.general_category_group(), GeneralCategoryGroup::Letter | GeneralCategoryGroup::Number)
}

/// `\p{N}`.
pub(crate) fn is_number(c: char) -> bool {
    c.general_category_group() == GeneralCategoryGroup::Number
}

/// The first index at or after `from` where `needle` starts in `chars`.
pub(crate) fn index_of(chars: &[char], needle: &[char], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from.min(chars.len()));
    }
    if chars.len() < needle.len() {
        return None;
    }
    (from..=chars.len() - needle.len()).find(|&i| chars[i..i + needle.len()] == *needle)
}

/// Whether `s` starts with a `\s` character.
pub(crate) fn starts_with_space(s: &str) -> bool {
    s.chars().next().is_some_and(is_space)
}

/// Whether `s` ends with a `\s` character.
pub(crate) fn ends_with_space(s: &str) -> bool {
    s.chars().next_back().is_some_and(is_space)
}
