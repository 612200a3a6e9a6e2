//! Incremental, tolerant parsing of JSON text that arrives in pieces (pi's `StreamingJsonParser`).
//!
//! [`StreamingJsonParser::append`] reads each piece once and updates a live value in place, so a
//! stream costs time linear in its length; [`StreamingJsonParser::snapshot`] lends that value out.
//! The rules for incomplete and malformed text are pi's:
//!
//! - an unterminated string shows the characters read so far; an unterminated escape is held back;
//! - an unterminated container shows the members and elements read so far;
//! - a member whose key or value has not started is omitted;
//! - an unterminated literal shows its value once it is a prefix of `true`, `false` or `null`; an
//!   unterminated number shows when its digits form a number (an exponent without digits is ignored);
//! - raw control characters in strings are kept, an invalid escape such as `\d` stays literal text,
//!   missing commas and colons are tolerated, values in invalid positions and unknown words are
//!   dropped, and text after the root value is ignored. The parser never fails.
//!
//! Differences from pi, all in what a partial shows, never in the final parse: the snapshot is
//! always current (pi may show an older snapshot while a very large container is open), and a
//! container nested deeper than 32 levels appears when it closes.

use serde_json::{Map, Value};

/// Containers at most this deep are updated in place inside the live value; deeper ones are built
/// aside and inserted when they close, so that every update costs O(1) path steps.
const MAX_LIVE_DEPTH: usize = 32;
/// An unterminated number or literal longer than this is not shown until it ends.
const MAX_PENDING_SCALAR_LENGTH: usize = 64;

#[derive(Clone, Debug, PartialEq)]
enum Slot {
    Root,
    Element(usize),
    Member(String),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Key,
    Colon,
    Value,
    Comma,
}

#[derive(Debug)]
struct Frame {
    is_array: bool,
    slot: Option<Slot>,
    /// The container lives inside the root value (else in `detached`).
    live: bool,
    detached: Value,
    key: Option<String>,
    phase: Phase,
}

#[derive(Debug)]
struct OpenString {
    is_key: bool,
    slot: Option<Slot>,
    /// Key text (value strings are appended in place).
    key: String,
    /// Pending escape: `\`, `\u`, `\u1`, ….
    escape: String,
    /// A decoded high surrogate waiting for its low half.
    high_surrogate: Option<u16>,
}

/// Where a pending scalar was shown, and what it replaced.
#[derive(Debug)]
struct Shown {
    slot: Slot,
    previous: Option<Value>,
}

/// Incremental tolerant JSON parser (pi's `StreamingJsonParser`). It never fails: unterminated
/// strings, containers, literals and numbers show what has been read so far, with pi's rules.
///
/// ```
/// use pi_ai::tool_args::StreamingJsonParser;
/// let mut p = StreamingJsonParser::new();
/// p.append(r#"{"path":"/tm"#);
/// assert_eq!(p.snapshot(), Some(&serde_json::json!({"path": "/tm"})));
/// p.append(r#"p/x","n":1"#);
/// assert_eq!(p.snapshot(), Some(&serde_json::json!({"path": "/tmp/x", "n": 1})));
/// ```
#[derive(Debug, Default)]
pub struct StreamingJsonParser {
    root: Option<Value>,
    done: bool,
    stack: Vec<Frame>,
    string: Option<OpenString>,
    scalar: String,
    scalar_slot: Option<Slot>,
    shown: Option<Shown>,
}

impl StreamingJsonParser {
    /// A parser before any text.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the next piece of text. Costs time linear in `text.len()` (plus the nesting depth).
    pub fn append(&mut self, text: &str) {
        self.hide_pending();
        let bytes = text.as_bytes();
        let mut index = 0;
        while index < bytes.len() && !self.done {
            if self.string.is_some() {
                index = self.read_string(text, index);
            } else if !self.scalar.is_empty() {
                index = self.read_scalar(text, index);
            } else {
                let c = text[index..].chars().next().unwrap_or(' ');
                index += c.len_utf8();
                self.structural(c);
            }
        }
    }

    /// The value of the text read so far: `None` before a value starts.
    pub fn snapshot(&mut self) -> Option<&Value> {
        self.show_pending();
        self.root.as_ref()
    }

    fn read_string(&mut self, text: &str, start: usize) -> usize {
        let bytes = text.as_bytes();
        let mut run_start = start;
        let mut index = start;
        while index < bytes.len() {
            let escaping = self.string.as_ref().is_some_and(|s| !s.escape.is_empty());
            if escaping {
                let c = text[index..].chars().next().unwrap_or(' ');
                if self.continue_escape(c) {
                    index += c.len_utf8();
                    run_start = index;
                    continue;
                }
                run_start = index;
            }
            match bytes[index] {
                b'"' => {
                    if index > run_start {
                        self.append_string(&text[run_start..index]);
                    }
                    self.end_string();
                    return index + 1;
                }
                b'\\' => {
                    if index > run_start {
                        self.append_string(&text[run_start..index]);
                    }
                    if let Some(open) = self.string.as_mut() {
                        open.escape.push('\\');
                    }
                    run_start = index + 1;
                }
                _ => {}
            }
            index += 1;
        }
        if bytes.len() > run_start {
            self.append_string(&text[run_start..]);
        }
        bytes.len()
    }

    fn read_scalar(&mut self, text: &str, start: usize) -> usize {
        let bytes = text.as_bytes();
        let mut end = start;
        while end < bytes.len() && !is_delimiter(bytes[end]) {
            end += 1;
        }
        self.scalar.push_str(&text[start..end]);
        if end < bytes.len() {
            self.end_scalar();
        }
        end
    }

    fn structural(&mut self, c: char) {
        match c {
            ' ' | '\t' | '\n' | '\r' => {}
            '"' => self.start_string(),
            '{' | '[' => self.open_container(c == '['),
            '}' | ']' => self.close_container(),
            ':' => {
                if let Some(frame) = self.stack.last_mut()
                    && !frame.is_array
                    && frame.phase == Phase::Colon
                {
                    frame.phase = Phase::Value;
                }
            }
            ',' => {
                if let Some(frame) = self.stack.last_mut() {
                    frame.phase = if frame.is_array { Phase::Value } else { Phase::Key };
                }
            }
            _ => {
                self.scalar.clear();
                self.scalar.push(c);
                self.scalar_slot = self.value_slot();
            }
        }
    }

    /// Where a value starting now goes, or `None` when this position takes no value.
    fn value_slot(&mut self) -> Option<Slot> {
        let Some(frame) = self.stack.last() else {
            return self.root.is_none().then_some(Slot::Root);
        };
        if frame.is_array {
            let len = match self.container_mut() {
                Some(Value::Array(items)) => items.len(),
                _ => 0,
            };
            return Some(Slot::Element(len));
        }
        // A missing colon is tolerated: `{"a" 1}` reads as `{"a": 1}`.
        match (&frame.key, frame.phase) {
            (Some(key), Phase::Value | Phase::Colon) => Some(Slot::Member(key.clone())),
            _ => None,
        }
    }

    fn start_string(&mut self) {
        let in_key_position =
            self.stack.last().is_some_and(|f| !f.is_array && matches!(f.phase, Phase::Key | Phase::Comma));
        let slot = if in_key_position { None } else { self.value_slot() };
        if !in_key_position {
            self.place(slot.clone(), Value::String(String::new()));
        }
        self.string = Some(OpenString {
            is_key: in_key_position,
            slot,
            key: String::new(),
            escape: String::new(),
            high_surrogate: None,
        });
    }

    /// Continues an escape with `c`; `false` when `c` is not part of it and must be read normally.
    fn continue_escape(&mut self, c: char) -> bool {
        let Some(open) = self.string.as_mut() else { return false };
        if open.escape == "\\" {
            let decoded = match c {
                '"' => '"',
                '\\' => '\\',
                '/' => '/',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'u' => {
                    open.escape.push('u');
                    return true;
                }
                _ => {
                    // Invalid escape: keep the backslash as text, as repairJson() does.
                    open.escape.clear();
                    self.append_string("\\");
                    return false;
                }
            };
            open.escape.clear();
            let mut buf = [0u8; 4];
            self.append_string(decoded.encode_utf8(&mut buf));
            return true;
        }
        if c.is_ascii_hexdigit() {
            open.escape.push(c);
            if open.escape.len() < 6 {
                return true;
            }
            let unit = u16::from_str_radix(&open.escape[2..], 16).unwrap_or(0xFFFD);
            open.escape.clear();
            self.append_unit(unit);
            return true;
        }
        // `\u` without four hex digits: keep it as text.
        let literal = std::mem::take(&mut open.escape);
        self.append_string(&literal);
        false
    }

    fn append_unit(&mut self, unit: u16) {
        let Some(open) = self.string.as_mut() else { return };
        if (0xD800..0xDC00).contains(&unit) {
            let previous = open.high_surrogate.replace(unit);
            if previous.is_some() {
                self.push_text("\u{FFFD}");
            }
            return;
        }
        let text = match (open.high_surrogate.take(), unit) {
            (Some(high), 0xDC00..=0xDFFF) => {
                char::from_u32(0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00))
                    .map(String::from)
                    .unwrap_or_else(|| "\u{FFFD}".to_owned())
            }
            (high, _) => {
                let mut s = String::new();
                if high.is_some() {
                    s.push('\u{FFFD}');
                }
                s.push(char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}'));
                s
            }
        };
        self.push_text(&text);
    }

    fn append_string(&mut self, text: &str) {
        if let Some(open) = self.string.as_mut()
            && open.high_surrogate.take().is_some()
        {
            self.push_text("\u{FFFD}");
        }
        self.push_text(text);
    }

    fn push_text(&mut self, text: &str) {
        let Some(open) = self.string.as_mut() else { return };
        if open.is_key {
            open.key.push_str(text);
            return;
        }
        let Some(slot) = open.slot.clone() else { return };
        if let Some(Value::String(s)) = self.slot_value_mut(&slot) {
            s.push_str(text);
        }
    }

    fn end_string(&mut self) {
        if self.string.as_ref().is_some_and(|s| s.high_surrogate.is_some()) {
            self.push_text("\u{FFFD}");
        }
        let Some(open) = self.string.take() else { return };
        if open.is_key {
            if let Some(frame) = self.stack.last_mut() {
                frame.key = Some(open.key);
                frame.phase = Phase::Colon;
            }
            return;
        }
        self.value_ended();
    }

    fn end_scalar(&mut self) {
        let token = std::mem::take(&mut self.scalar);
        let slot = self.scalar_slot.take();
        if let Some(value) = scalar_value(&token) {
            self.place(slot, value);
        }
        self.value_ended();
    }

    fn open_container(&mut self, is_array: bool) {
        let slot = self.value_slot();
        let empty = if is_array { Value::Array(Vec::new()) } else { Value::Object(Map::new()) };
        let parent_live = self.stack.last().is_none_or(|f| f.live);
        let live = slot.is_some() && parent_live && self.stack.len() < MAX_LIVE_DEPTH;
        // Placed now (empty) so that the member keeps its position; a detached container replaces
        // this placeholder when it closes.
        self.place(slot.clone(), empty.clone());
        self.stack.push(Frame {
            is_array,
            slot,
            live,
            detached: if live { Value::Null } else { empty },
            key: None,
            phase: if is_array { Phase::Value } else { Phase::Key },
        });
    }

    fn close_container(&mut self) {
        // A stray closer outside any container is ignored.
        let Some(frame) = self.stack.pop() else { return };
        if !frame.live {
            self.place(frame.slot, frame.detached);
        }
        self.value_ended();
    }

    fn value_ended(&mut self) {
        match self.stack.last_mut() {
            Some(frame) => frame.phase = Phase::Comma,
            None => {
                // Text after the root value is ignored, but only once a root value exists.
                if self.root.is_some() {
                    self.done = true;
                }
            }
        }
    }

    /// The innermost open container.
    fn container_mut(&mut self) -> Option<&mut Value> {
        let last = self.stack.len().checked_sub(1)?;
        if !self.stack[last].live {
            return Some(&mut self.stack[last].detached);
        }
        let mut value = self.root.as_mut()?;
        for frame in &self.stack[1..] {
            value = child_mut(value, frame.slot.as_ref()?)?;
        }
        Some(value)
    }

    fn slot_value_mut(&mut self, slot: &Slot) -> Option<&mut Value> {
        match slot {
            Slot::Root => self.root.as_mut(),
            _ => child_mut(self.container_mut()?, slot),
        }
    }

    /// Sets the value at `slot` of the innermost container; returns what it replaced.
    fn place(&mut self, slot: Option<Slot>, value: Value) -> Option<Option<Value>> {
        match slot? {
            Slot::Root => Some(self.root.replace(value)),
            Slot::Element(index) => match self.container_mut()? {
                Value::Array(items) if index < items.len() => Some(Some(std::mem::replace(&mut items[index], value))),
                Value::Array(items) => {
                    items.push(value);
                    Some(None)
                }
                _ => None,
            },
            Slot::Member(key) => match self.container_mut()? {
                Value::Object(members) => Some(members.insert(key, value)),
                _ => None,
            },
        }
    }

    /// The value the unterminated scalar at the end of the text shows, if any.
    fn pending_scalar(&self) -> Option<(Slot, Value)> {
        let slot = self.scalar_slot.clone()?;
        if self.scalar.is_empty() || self.scalar.len() > MAX_PENDING_SCALAR_LENGTH {
            return None;
        }
        Some((slot, pending_scalar_value(&self.scalar)?))
    }

    fn show_pending(&mut self) {
        if self.shown.is_some() {
            return;
        }
        if let Some((slot, value)) = self.pending_scalar()
            && let Some(previous) = self.place(Some(slot.clone()), value)
        {
            self.shown = Some(Shown { slot, previous });
        }
    }

    fn hide_pending(&mut self) {
        let Some(Shown { slot, previous }) = self.shown.take() else { return };
        match (slot, previous) {
            (Slot::Root, previous) => self.root = previous,
            (slot, Some(previous)) => {
                self.place(Some(slot), previous);
            }
            (Slot::Element(_), None) => {
                if let Some(Value::Array(items)) = self.container_mut() {
                    items.pop();
                }
            }
            (Slot::Member(key), None) => {
                if let Some(Value::Object(members)) = self.container_mut() {
                    // The shown member is the last one, so this does not shift anything.
                    members.shift_remove(&key);
                }
            }
        }
    }
}

fn child_mut<'v>(container: &'v mut Value, slot: &Slot) -> Option<&'v mut Value> {
    match (container, slot) {
        (Value::Array(items), Slot::Element(i)) => items.get_mut(*i),
        (Value::Object(members), Slot::Member(key)) => members.get_mut(key.as_str()),
        _ => None,
    }
}

fn is_delimiter(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' | b'{' | b'}' | b'[' | b']' | b'"')
}

/// Length of the JSON number at the start of `s` (`-?(0|[1-9]\d*)(\.\d+)?`), and whether an
/// exponent with digits follows, as `(mantissa_len, full_len_if_exponent)`.
fn number_prefix(s: &[u8]) -> Option<usize> {
    let mut i = 0;
    if s.first() == Some(&b'-') {
        i += 1;
    }
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return None,
    }
    if s.get(i) == Some(&b'.') {
        let start = i + 1;
        let mut j = start;
        while s.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j == start {
            return None;
        }
        i = j;
    }
    Some(i)
}

/// `s` is a complete JSON number.
fn is_number(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(mut i) = number_prefix(b) else { return false };
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

pub(crate) use crate::js::js_number_value as js_number;

fn parse_number(s: &str) -> Option<Value> {
    s.parse::<f64>().ok().map(js_number)
}

fn literal(token: &str, prefix: bool) -> Option<Value> {
    for (word, value) in [("true", Value::Bool(true)), ("false", Value::Bool(false)), ("null", Value::Null)] {
        if token == word || (prefix && word.starts_with(token)) {
            return Some(value);
        }
    }
    None
}

fn scalar_value(token: &str) -> Option<Value> {
    literal(token, false).or_else(|| if is_number(token) { parse_number(token) } else { None })
}

fn pending_scalar_value(token: &str) -> Option<Value> {
    if let Some(v) = literal(token, true) {
        return Some(v);
    }
    if is_number(token) {
        return parse_number(token);
    }
    // A mantissa followed by an exponent marker without digits: `1e`, `2.5E+`.
    let b = token.as_bytes();
    let m = number_prefix(b)?;
    let rest = &b[m..];
    let ok = matches!(rest, [b'e' | b'E'] | [b'e' | b'E', b'+' | b'-']);
    if ok { parse_number(&token[..m]) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed(pieces: &[&str]) -> Vec<Value> {
        let mut p = StreamingJsonParser::new();
        pieces
            .iter()
            .map(|piece| {
                p.append(piece);
                p.snapshot().cloned().unwrap_or(Value::Null)
            })
            .collect()
    }

    #[test]
    fn spec_vector() {
        assert_eq!(
            feed(&[r#"{"pa"#, r#"th":"/tm"#, r#"p/x","n":1"#, "2}"]),
            vec![
                json!({}),
                json!({"path": "/tm"}),
                json!({"path": "/tmp/x", "n": 1}),
                json!({"path": "/tmp/x", "n": 12})
            ]
        );
        assert_eq!(feed(&[r#"{"a":tr"#]), vec![json!({"a": true})]);
    }

    #[test]
    fn pending_scalars_are_hidden_again_when_invalid() {
        assert_eq!(feed(&[r#"{"a":tru"#, "x}"]), vec![json!({"a": true}), json!({})]);
        assert_eq!(feed(&["[1,", "2e", "+", "5]"]), vec![json!([1]), json!([1, 2]), json!([1, 2]), json!([1, 200000])]);
    }

    #[test]
    fn escapes_split_across_pieces() {
        assert_eq!(
            feed(&[r#"{"s":"a\"#, r#"u00"#, r#"e9\ud83d"#, r#"\ude00\d"#]),
            vec![json!({"s": "a"}), json!({"s": "a"}), json!({"s": "aé"}), json!({"s": "aé😀\\d"})]
        );
    }

    #[test]
    fn deep_nesting_is_linear_and_appears_when_closed() {
        let depth = 40;
        let open: String = "[".repeat(depth);
        let close: String = "]".repeat(depth);
        let mut p = StreamingJsonParser::new();
        p.append(&open);
        p.append("1");
        p.append(&close);
        let mut expected = json!(1);
        for _ in 0..depth {
            expected = json!([expected]);
        }
        assert_eq!(p.snapshot(), Some(&expected));
    }
}
