//! One-line forms: Unicode sub- and superscripts, `a/b` fractions, roots, and the final
//! clean-up of a rendered expression (operator spacing, whitespace runs, blank lines).

use super::symbols::{subscript, superscript};
use super::text::{is_letter_or_number, is_number, is_space, trim};

/// Marks the start of a named operator (`sin`), so spacing can be added next to a letter.
pub(super) const NAMED_OPERATOR_START: char = '\u{f0004}';
/// Marks the end of a named operator.
pub(super) const NAMED_OPERATOR_END: char = '\u{f0005}';
/// Starts a reference to a 2D layout node (`<start><index><end>`).
pub(super) const LAYOUT_MARKER_START: char = '\u{f0000}';
/// Ends a reference to a 2D layout node.
pub(super) const LAYOUT_MARKER_END: char = '\u{f0001}';
/// A space that survives whitespace clean-up (cell padding), drawn as a space at the end.
pub(super) const PROTECTED_SPACE: char = '\u{f0002}';
/// What a negative spacing command returns: it removes the space before it.
pub(super) const NEGATIVE_SPACE: &str = "\u{0}";

/// Which script a value is drawn as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScriptKind {
    /// `_`
    Sub,
    /// `^`
    Sup,
}

/// Trims the value and removes spaces around `=`, `+` and `-`.
pub(super) fn normalize_script_value(value: &str) -> String {
    let chars: Vec<char> = trim(value).chars().collect();
    let is_op = |c: char| matches!(c, '=' | '+' | '-');
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_space(c) {
            let mut j = i;
            while j < chars.len() && is_space(chars[j]) {
                j += 1;
            }
            if j < chars.len() && is_op(chars[j]) {
                i = j;
                continue;
            }
            out.extend(&chars[i..j]);
            i = j;
        } else if is_op(c) {
            out.push(c);
            i += 1;
            while i < chars.len() && is_space(chars[i]) {
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The value in Unicode sub- or superscript characters, if every character has one.
pub(super) fn format_unicode_script(value: &str, kind: ScriptKind) -> Option<String> {
    let table = match kind {
        ScriptKind::Sub => subscript,
        ScriptKind::Sup => superscript,
    };
    normalize_script_value(value).chars().map(table).collect()
}

/// A script: Unicode where possible, else `_x`, `^x`, `_abc` or `^(…)`.
pub(super) fn format_script(value: &str, kind: ScriptKind) -> String {
    let value = normalize_script_value(value);
    if let Some(unicode) = format_unicode_script(&value, kind) {
        return unicode;
    }
    let prefix = if kind == ScriptKind::Sub { '_' } else { '^' };
    let letters = !value.is_empty() && value.chars().all(|c| c.is_ascii_alphabetic());
    if value.chars().count() == 1 || (kind == ScriptKind::Sub && letters) {
        return format!("{prefix}{value}");
    }
    format!("{prefix}({value})")
}

fn is_simple_word(value: &str) -> bool {
    !value.is_empty() && value.chars().all(|c| is_letter_or_number(c) || c == '.')
}

/// An inline fraction `a/b`, with parentheses around parts that are not simple.
pub(super) fn format_fraction(numerator: &str, denominator: &str) -> String {
    let numerator = trim(numerator);
    let denominator = trim(denominator);
    let simple_denominator = (!denominator.is_empty() && denominator.chars().all(|c| is_number(c) || c == '.'))
        || denominator.chars().count() == 1;
    let numerator = if is_simple_word(numerator) { numerator.to_string() } else { format!("({numerator})") };
    let denominator = if simple_denominator { denominator.to_string() } else { format!("({denominator})") };
    format!("{numerator}/{denominator}")
}

/// A root: `√x` or `√(…)`.
pub(super) fn format_root(value: &str, symbol: &str) -> String {
    let value = trim(value);
    if is_simple_word(value) { format!("{symbol}{value}") } else { format!("{symbol}({value})") }
}

/// Spaces named operators from the words around them, then collapses whitespace runs, trims
/// every line and drops blank first and last lines.
pub(super) fn normalize_output(value: &str) -> String {
    let mut spaced = String::with_capacity(value.len());
    let mut previous: Option<char> = None;
    for c in value.chars() {
        if c == NAMED_OPERATOR_START {
            if previous.is_some_and(|p| is_letter_or_number(p) || matches!(p, ')' | ']' | '}' | LAYOUT_MARKER_END)) {
                spaced.push(' ');
            }
        } else {
            spaced.push(c);
        }
        previous = Some(c);
    }
    let chars: Vec<char> = spaced.chars().collect();
    let mut joined = String::with_capacity(spaced.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == NAMED_OPERATOR_END {
            let next = chars.get(i + 1).copied();
            if next.is_some_and(|n| is_letter_or_number(n) || n == '√' || n == LAYOUT_MARKER_START) {
                joined.push(' ');
            }
        } else {
            joined.push(c);
        }
    }
    let lines: Vec<String> = joined.split('\n').map(collapse_line).collect();
    let last = lines.len().saturating_sub(1);
    let kept: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, line)| !line.is_empty() || (*i > 0 && *i < last))
        .map(|(_, line)| line.as_str())
        .collect();
    trim(&kept.join("\n")).to_string()
}

/// `[ \t]+` → one space, then `trim()`.
fn collapse_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_run = false;
    for c in line.chars() {
        if c == ' ' || c == '\t' {
            if !in_run {
                out.push(' ');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    trim(&out).to_string()
}
