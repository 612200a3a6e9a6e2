//! `JSON.parse` as V8 (Node 22) reports it: the value comes from `serde_json`, and when the text is
//! not valid JSON a small scanner finds the first error and words it exactly as V8 does, because
//! pi copies that message into a tool call's `argumentsError`, which the model then reads.

use serde_json::{Number, Value};

/// Parses `text` like JavaScript's `JSON.parse`, returning V8's error message on failure.
///
/// Numbers follow JavaScript: an integral value within ±2^53 is stored as an integer (`1.0`
/// becomes `1`), anything else as a double.
///
/// ```
/// use pi_ai::tool_args::js_json_parse;
/// assert_eq!(js_json_parse(r#"{"a":1.0}"#).unwrap(), serde_json::json!({"a": 1}));
/// assert_eq!(
///     js_json_parse(r#"{"a":1"#).unwrap_err(),
///     "Expected ',' or '}' after property value in JSON at position 6 (line 1 column 7)"
/// );
/// ```
pub fn js_json_parse(text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(mut value) => {
            normalize_numbers(&mut value);
            Ok(value)
        }
        Err(serde_error) => Err(v8_error(text).unwrap_or_else(|| serde_error.to_string())),
    }
}

/// Rewrites numbers the way a JavaScript round trip would store them.
fn normalize_numbers(value: &mut Value) {
    const SAFE: f64 = 9_007_199_254_740_992.0;
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64() {
                if n.is_f64() && f.fract() == 0.0 && f.abs() <= SAFE {
                    *n = Number::from(f as i64);
                } else if !n.is_f64()
                    && f.abs() > SAFE
                    && let Some(d) = Number::from_f64(f)
                {
                    *n = d;
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_numbers),
        Value::Object(map) => map.values_mut().for_each(normalize_numbers),
        _ => {}
    }
}

/// The first syntax error of `text` in V8's words, or `None` when the scanner accepts it.
fn v8_error(text: &str) -> Option<String> {
    let mut scanner = Scanner { s: text.as_bytes(), i: 0 };
    let result = scanner.document();
    result.err().map(|e| e.message(text))
}

enum Fault {
    End,
    Token(usize),
    At(&'static str, usize),
}

impl Fault {
    fn message(self, text: &str) -> String {
        match self {
            Fault::End => "Unexpected end of JSON input".to_owned(),
            Fault::At(what, byte) => {
                let pos = utf16_len(&text[..byte]);
                let (line, column) = line_column(&text[..byte]);
                // "…after JSON at position" is the one message without "in JSON".
                let place = if what.ends_with("JSON") { "" } else { " in JSON" };
                format!("{what}{place} at position {pos} (line {line} column {column})")
            }
            Fault::Token(byte) => {
                let token = text[byte..].chars().next().unwrap_or('?');
                let units: Vec<u16> = text.encode_utf16().collect();
                let pos = utf16_len(&text[..byte]);
                let len = units.len();
                let slice = |a: usize, b: usize| String::from_utf16_lossy(&units[a..b.min(len)]);
                const CONTEXT: usize = 10;
                let context = if len <= 2 * CONTEXT {
                    format!("\"{text}\"")
                } else if pos < CONTEXT {
                    format!("\"{}\"...", slice(0, pos + CONTEXT))
                } else if pos + CONTEXT < len {
                    format!("...\"{}\"...", slice(pos - CONTEXT, pos + CONTEXT))
                } else {
                    format!("...\"{}\"", slice(pos - CONTEXT, len))
                };
                format!("Unexpected token '{token}', {context} is not valid JSON")
            }
        }
    }
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// V8's line and column of the end of `before`: `\r\n`, `\n` and `\r` each end a line.
fn line_column(before: &str) -> (usize, usize) {
    let bytes = before.as_bytes();
    let mut line = 1;
    let mut line_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                line += 1;
                i += 2;
                line_start = i;
                continue;
            }
            b'\r' | b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    (line, utf16_len(&before[line_start..]) + 1)
}

struct Scanner<'a> {
    s: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn document(&mut self) -> Result<(), Fault> {
        self.skip_ws();
        self.value()?;
        self.skip_ws();
        if self.i < self.s.len() {
            return Err(Fault::At("Unexpected non-whitespace character after JSON", self.i));
        }
        Ok(())
    }

    fn value(&mut self) -> Result<(), Fault> {
        match self.peek() {
            None => Err(Fault::End),
            Some(b'"') => self.string(),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(_) => Err(Fault::Token(self.i)),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Fault> {
        for &expected in word {
            match self.peek() {
                None => return Err(Fault::End),
                Some(c) if c == expected => self.i += 1,
                Some(_) => return Err(Fault::Token(self.i)),
            }
        }
        Ok(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
    }

    fn number(&mut self) -> Result<(), Fault> {
        if self.peek() == Some(b'-') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(Fault::At("No number after minus sign", self.i));
            }
        }
        if self.peek() == Some(b'0') {
            self.i += 1;
            if matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(Fault::At("Unexpected number", self.i));
            }
        } else {
            self.digits();
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(Fault::At("Unterminated fractional number", self.i));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(Fault::At("Exponent part is missing a number", self.i));
            }
            self.digits();
        }
        Ok(())
    }

    fn string(&mut self) -> Result<(), Fault> {
        self.i += 1;
        loop {
            let Some(c) = self.peek() else {
                return Err(Fault::At("Unterminated string", self.s.len()));
            };
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.i += 1;
                    match self.peek() {
                        None => return Err(Fault::End),
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.i += 1,
                        Some(b'u') => {
                            self.i += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|h| h.is_ascii_hexdigit()) {
                                    return Err(Fault::At("Bad Unicode escape", self.i));
                                }
                                self.i += 1;
                            }
                        }
                        Some(_) => return Err(Fault::At("Bad escaped character", self.i)),
                    }
                }
                0..=0x1f => return Err(Fault::At("Bad control character in string literal", self.i)),
                _ => self.i += 1,
            }
        }
    }

    fn object(&mut self) -> Result<(), Fault> {
        self.i += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        if self.peek() != Some(b'"') {
            return Err(Fault::At("Expected property name or '}'", self.i));
        }
        loop {
            self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(Fault::At("Expected ':' after property name", self.i));
            }
            self.i += 1;
            self.skip_ws();
            self.value()?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws();
                    if self.peek() != Some(b'"') {
                        return Err(Fault::At("Expected double-quoted property name", self.i));
                    }
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Fault::At("Expected ',' or '}' after property value", self.i)),
            }
        }
    }

    fn array(&mut self) -> Result<(), Fault> {
        self.i += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            self.value()?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Fault::At("Expected ',' or ']' after array element", self.i)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v8_messages() {
        let cases = [
            ("{\"a\":}", "Unexpected token '}', \"{\"a\":}\" is not valid JSON"),
            ("tru", "Unexpected end of JSON input"),
            ("{\"a\":01}", "Unexpected number in JSON at position 6 (line 1 column 7)"),
            ("{\"a\":\n1 2}", "Expected ',' or '}' after property value in JSON at position 8 (line 2 column 3)"),
            ("{\"a\":\r\n1 2}", "Expected ',' or '}' after property value in JSON at position 9 (line 2 column 3)"),
            ("{\"aaaaaaaaaaaaaaaaaaaaaaa\":x}", "Unexpected token 'x', ...\"aaaaaaaa\":x}\" is not valid JSON"),
            ("\"\\u12", "Bad Unicode escape in JSON at position 5 (line 1 column 6)"),
            ("{\"a\":\"\\", "Unexpected end of JSON input"),
        ];
        for (text, message) in cases {
            assert_eq!(js_json_parse(text).unwrap_err(), message, "{text:?}");
        }
    }

    #[test]
    fn numbers_follow_javascript() {
        assert_eq!(js_json_parse("[1.0, 2.5, 1e2, -0]").unwrap().to_string(), "[1,2.5,100,0]");
    }
}
