//! pi's lenient JSON text for `models.json` (`utils/json.js` `stripJsonComments`, `stripBom`): a
//! leading byte-order mark, `//` line comments and trailing commas before `}` or `]` are removed,
//! string literals are left as they are. Two passes, as pi's two regular expressions.

/// The text without a leading byte-order mark (pi's `stripBom`).
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// A JavaScript line terminator (what `.` in a regular expression does not match).
fn line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// A character of JavaScript's `\s`.
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// The end (byte index) of the string literal `"(?:\\.|[^"\\])*"` starting at `start`, if one
/// does.
fn string_end(text: &str, start: usize) -> Option<usize> {
    let mut chars = text[start + 1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some(start + 1 + i + 1),
            '\\' => match chars.next() {
                Some((_, next)) if !line_terminator(next) => {}
                _ => return None,
            },
            _ => {}
        }
    }
    None
}

/// Replaces, left to right, every match of "a string literal or `other`": string literals stay,
/// `other(text, at)` returns the length it matched and its replacement.
fn replace_outside_strings(text: &str, other: impl Fn(&str, usize) -> Option<(usize, String)>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        if c == '"'
            && let Some(end) = string_end(text, at)
        {
            out.push_str(&text[at..end]);
            at = end;
            continue;
        }
        if let Some((len, replacement)) = other(text, at) {
            out.push_str(&replacement);
            at += len;
            continue;
        }
        out.push(c);
        at += c.len_utf8();
    }
    out
}

/// `//` to the end of the line (the newline stays).
fn line_comment(text: &str, at: usize) -> Option<(usize, String)> {
    let rest = &text[at..];
    rest.starts_with("//").then(|| (rest.find('\n').unwrap_or(rest.len()), String::new()))
}

/// A comma followed by whitespace and `}` or `]`: the whitespace and bracket stay.
fn trailing_comma(text: &str, at: usize) -> Option<(usize, String)> {
    let rest = text[at..].strip_prefix(',')?;
    let tail_start = rest.find(|c: char| !js_space(c))?;
    let bracket = rest[tail_start..].chars().next()?;
    matches!(bracket, '}' | ']').then(|| (1 + tail_start + 1, rest[..tail_start + 1].to_owned()))
}

/// pi's `stripJsonComments`: `//` line comments, then trailing commas, removed outside string
/// literals.
///
/// ```
/// use pi_ai::models::strip_json_comments;
/// let text = "{\n  // note\n  \"a\": \"//x,}\", \"b\": [1, 2,],\n}";
/// assert_eq!(strip_json_comments(text), "{\n  \n  \"a\": \"//x,}\", \"b\": [1, 2]\n}");
/// ```
pub fn strip_json_comments(text: &str) -> String {
    let without_comments = replace_outside_strings(text, line_comment);
    replace_outside_strings(&without_comments, trailing_comma)
}

/// The `models.json` text as pi reads it: BOM, comments and trailing commas removed, then parsed.
pub fn parse_lenient_json(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str(&strip_json_comments(strip_bom(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_outside_strings_are_removed() {
        let text = "\u{feff}{ // top\n \"u\": \"http://h/v1\", // url\n \"l\": [1, 2 , ],\n \"s\": \"a,}\",\n}";
        let value = parse_lenient_json(text).expect("parses");
        assert_eq!(value, serde_json::json!({"u": "http://h/v1", "l": [1, 2], "s": "a,}"}));
        assert_eq!(strip_json_comments("[1,\n\t]"), "[1\n\t]");
        assert_eq!(strip_json_comments("{\"a\":1,}"), "{\"a\":1}");
    }

    #[test]
    fn escaped_quotes_stay_inside_strings() {
        let text = r#"{"a": "x\"//y", "b": "\\", "c": 1, }"#;
        assert_eq!(strip_json_comments(text), r#"{"a": "x\"//y", "b": "\\", "c": 1 }"#);
    }

    #[test]
    fn an_unterminated_string_does_not_protect_what_follows() {
        // pi's regular expression finds no string literal at an unpaired quote: the comment goes.
        assert_eq!(strip_json_comments("\"abc // c"), "\"abc ");
        // A backslash before a newline ends no string literal either.
        assert_eq!(strip_json_comments("\"a\\\n\" // c"), "\"a\\\n\" ");
    }

    #[test]
    fn commas_before_other_characters_stay() {
        assert_eq!(strip_json_comments("[1, 2]"), "[1, 2]");
        assert_eq!(strip_json_comments(",,]"), ",]");
        assert_eq!(strip_json_comments("a,  "), "a,  ");
    }
}
