//! JavaScript value semantics the validator needs: `JSON.stringify` (compact and 2-space), the key order of
//! `Object.keys`, `Number(string)`, `String(value)`, strict and deep equality, and type names.

use serde_json::{Map, Number, Value};

use crate::json::js_number_to_string;

const MAX_SAFE: f64 = 9_007_199_254_740_992.0;

/// A JS number as a JSON value: integral values within ±2^53 become integers, others stay floats. Non-finite
/// values (never produced by the validator) become `null`, as `JSON.stringify` writes them.
pub(crate) fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        // `-0` becomes `0`, which is how JSON.stringify writes it.
        #[allow(clippy::cast_possible_truncation)]
        return Value::Number(Number::from(value as i64));
    }
    Number::from_f64(value).map_or(Value::Null, Value::Number)
}

/// The value of a JSON number as a JS number.
pub(crate) fn f64_of(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

/// Whether a key is an array index, which JS objects list first, in ascending order.
fn array_index(key: &str) -> Option<u32> {
    if key == "0" {
        return Some(0);
    }
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || bytes[0] == b'0' || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    u32::try_from(n).ok().filter(|n| *n != u32::MAX)
}

/// The keys of `map` in the order JS's `Object.keys` gives them: array indexes ascending, then the others in
/// insertion order.
pub(crate) fn keys(map: &Map<String, Value>) -> Vec<&String> {
    let mut indexes: Vec<(u32, &String)> = Vec::new();
    let mut others = Vec::with_capacity(map.len());
    for key in map.keys() {
        match array_index(key) {
            Some(i) => indexes.push((i, key)),
            None => others.push(key),
        }
    }
    if indexes.is_empty() {
        return others;
    }
    indexes.sort_by_key(|(i, _)| *i);
    indexes.into_iter().map(|(_, k)| k).chain(others).collect()
}

/// `map` with its keys in JS order (a no-op for maps without array-index keys).
pub(crate) fn reorder(map: Map<String, Value>) -> Map<String, Value> {
    if !map.keys().any(|k| array_index(k).is_some()) {
        return map;
    }
    let order: Vec<String> = keys(&map).into_iter().cloned().collect();
    let mut map = map;
    let mut out = Map::with_capacity(map.len());
    for key in order {
        if let Some(v) = map.remove(&key) {
            out.insert(key, v);
        }
    }
    out
}

/// `JSON.stringify(value)`.
pub(crate) fn stringify(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, None, 0);
    out
}

/// `JSON.stringify(value, null, 2)`.
pub(crate) fn stringify_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, Some(2), 0);
    out
}

fn newline(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(step) = indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', step * level));
    }
}

fn write_json(out: &mut String, value: &Value, indent: Option<usize>, level: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let f = f64_of(n);
            if f.is_finite() {
                out.push_str(&js_number_to_string(f));
            } else {
                out.push_str("null");
            }
        }
        Value::String(s) => quote(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, level + 1);
                write_json(out, item, indent, level + 1);
            }
            newline(out, indent, level);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, key) in keys(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, level + 1);
                quote(out, key);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                if let Some(v) = map.get(key) {
                    write_json(out, v, indent, level + 1);
                }
            }
            newline(out, indent, level);
            out.push('}');
        }
    }
}

/// A JSON string literal as JS writes it.
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// JS's `String(value)` as `Array.prototype.join` uses it for the members of a list.
pub(crate) fn join_string(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => js_number_to_string(f64_of(n)),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(join_string).collect::<Vec<_>>().join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// JS's `String(value)` of a primitive.
pub(crate) fn to_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        other => join_string(other),
    }
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// JS's `String.prototype.trim`.
pub(crate) fn trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// JS's `Number(string)`: `None` for `NaN`. Infinite results are returned as such.
pub(crate) fn string_to_number(s: &str) -> Option<f64> {
    let t = trim(s);
    if t.is_empty() {
        return Some(0.0);
    }
    let radix = match t.get(..2) {
        Some("0x" | "0X") => Some(16),
        Some("0o" | "0O") => Some(8),
        Some("0b" | "0B") => Some(2),
        _ => None,
    };
    if let Some(radix) = radix {
        let digits = &t[2..];
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        return Some(
            digits.chars().fold(0.0, |acc, c| acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))),
        );
    }
    let (sign, body) = match t.as_bytes()[0] {
        b'+' => (1.0, &t[1..]),
        b'-' => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if body == "Infinity" {
        return Some(sign * f64::INFINITY);
    }
    decimal_literal(body).then(|| body.parse::<f64>().ok().map(|v| sign * v)).flatten()
}

/// Whether `s` is an unsigned StrDecimalLiteral without `Infinity`: digits, an optional fraction, an exponent.
fn decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let int = digits(&mut i);
    let mut frac = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        frac = digits(&mut i);
    }
    if int + frac == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Whether `v` is a number with an integral value (JS's `Number.isInteger`).
pub(crate) fn is_integer(v: &Value) -> bool {
    v.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// The name pi-schema gives a value's type in `expected X, got <name>`.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Array(_) => "array",
        Value::Number(_) if is_integer(v) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Object(_) => "object",
    }
}

/// JSON equality as `const`, `enum` and `uniqueItems` compare (numbers by value, object keys in any order). For
/// the values the coercer builds it also stands in for JS reference identity: a copy is made only when a member
/// changes, so a copy never equals its original.
pub(crate) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => f64_of(x) == f64_of(y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// JS's `===` between a schema literal and a value: primitives by value, objects and arrays never (they are
/// distinct objects).
pub(crate) fn strict_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        _ => equal(a, b),
    }
}

/// The number of UTF-16 code units of `s` (JS's `length`).
pub(crate) fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn number_parsing_follows_js() {
        assert_eq!(string_to_number(""), Some(0.0));
        assert_eq!(string_to_number("  7 "), Some(7.0));
        assert_eq!(string_to_number("0x1A"), Some(26.0));
        assert_eq!(string_to_number("1e3"), Some(1000.0));
        assert_eq!(string_to_number(".5"), Some(0.5));
        assert_eq!(string_to_number("5."), Some(5.0));
        assert_eq!(string_to_number("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(string_to_number("inf"), None);
        assert_eq!(string_to_number("1_000"), None);
        assert_eq!(string_to_number("-0x1"), None);
        assert_eq!(string_to_number("12n"), None);
    }

    #[test]
    fn stringify_matches_js() {
        let v = json!({"b": 1, "2": [], "1": {}, "x": [1.5, null, "q\"\u{1}"]});
        assert_eq!(stringify(&v), r#"{"1":{},"2":[],"b":1,"x":[1.5,null,"q\"\u0001"]}"#);
        assert_eq!(stringify_pretty(&json!({"a": [1, {}]})), "{\n  \"a\": [\n    1,\n    {}\n  ]\n}");
    }
}
