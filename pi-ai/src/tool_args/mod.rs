//! Tool-call arguments: the streamed text, its partial values, and the one strict parse at the end.
//!
//! - [`ToolCallArgumentsStream`]: what a provider keeps per streaming tool call (append, replace,
//!   finish);
//! - [`parse_tool_call_arguments`]: the final parse, with pi's `argumentsError` texts;
//! - [`parse_streaming_json`]: a best-effort parse of possibly incomplete JSON;
//! - [`repair_json`] and [`parse_json_with_repair`]: pi's repair of raw control characters and
//!   invalid escapes inside strings;
//! - [`js_json_parse`]: `JSON.parse` with V8's error messages.

mod js_parse;
mod streaming;

pub use js_parse::js_json_parse;
pub use streaming::StreamingJsonParser;

use serde_json::{Map, Value};

use crate::types::ToolCall;

/// Repairs malformed JSON string literals (pi's `repairJson`): raw control characters inside
/// strings are escaped and the backslash of an invalid escape is doubled.
///
/// ```
/// use pi_ai::tool_args::repair_json;
/// assert_eq!(repair_json("{\"p\":\"C:\\dir\"}"), "{\"p\":\"C:\\\\dir\"}");
/// assert_eq!(repair_json("{\"t\":\"a\nb\"}"), "{\"t\":\"a\\nb\"}");
/// ```
pub fn repair_json(json: &str) -> String {
    let mut repaired = String::with_capacity(json.len() + 8);
    let mut in_string = false;
    let mut chars = json.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        if !in_string {
            repaired.push(c);
            in_string = c == '"';
            continue;
        }
        match c {
            '"' => {
                repaired.push(c);
                in_string = false;
            }
            '\\' => {
                let Some(&(_, next)) = chars.peek() else {
                    repaired.push_str("\\\\");
                    continue;
                };
                if next == 'u' {
                    let digits = json.get(index + 2..index + 6);
                    if let Some(d) = digits.filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit())) {
                        repaired.push_str("\\u");
                        repaired.push_str(d);
                        for _ in 0..5 {
                            chars.next();
                        }
                        continue;
                    }
                }
                if matches!(next, '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') {
                    repaired.push('\\');
                    repaired.push(next);
                    chars.next();
                    continue;
                }
                repaired.push_str("\\\\");
            }
            '\u{8}' => repaired.push_str("\\b"),
            '\u{c}' => repaired.push_str("\\f"),
            '\n' => repaired.push_str("\\n"),
            '\r' => repaired.push_str("\\r"),
            '\t' => repaired.push_str("\\t"),
            '\0'..='\u{1f}' => repaired.push_str(&format!("\\u{:04x}", c as u32)),
            _ => repaired.push(c),
        }
    }
    repaired
}

/// `JSON.parse`, retried once on the [repaired](repair_json) text when that differs (pi's
/// `parseJsonWithRepair`). The error is V8's message for the text that was parsed last.
pub fn parse_json_with_repair(json: &str) -> Result<Value, String> {
    match js_json_parse(json) {
        Ok(v) => Ok(v),
        Err(first) => {
            let repaired = repair_json(json);
            if repaired != json { js_json_parse(&repaired) } else { Err(first) }
        }
    }
}

/// The result of parsing a finished tool call's arguments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedArguments {
    /// The arguments object (`{}` when the text was not a JSON object).
    pub arguments: Map<String, Value>,
    /// Why the text was rejected, followed by the text itself.
    pub arguments_error: Option<String>,
}

impl ParsedArguments {
    /// Stores the result on a tool-call block, as pi's `Object.assign(block, finish())` does (an
    /// existing `argumentsError` is kept when this parse succeeded).
    pub fn apply_to(self, call: &mut ToolCall) {
        call.arguments = self.arguments;
        if self.arguments_error.is_some() {
            call.arguments_error = self.arguments_error;
        }
    }
}

/// Parses the complete argument text of a finished tool call (pi's `parseToolCallArguments`).
///
/// Blank text gives `{}`. Text that is not a JSON object gives `{}` and an `arguments_error` of
/// `"<message>\n\nReceived arguments:\n<text>"`, with V8's `JSON.parse` message or
/// `Tool arguments must be a JSON object`.
///
/// ```
/// use pi_ai::tool_args::parse_tool_call_arguments;
/// let p = parse_tool_call_arguments("[1]");
/// assert!(p.arguments.is_empty());
/// assert_eq!(p.arguments_error.unwrap(), "Tool arguments must be a JSON object\n\nReceived arguments:\n[1]");
/// assert_eq!(parse_tool_call_arguments(r#"{"p":"C:\dir"}"#).arguments["p"], "C:\\dir");
/// ```
pub fn parse_tool_call_arguments(json: &str) -> ParsedArguments {
    if json.trim().is_empty() {
        return ParsedArguments::default();
    }
    let message = match parse_json_with_repair(json) {
        Ok(Value::Object(arguments)) => return ParsedArguments { arguments, arguments_error: None },
        Ok(_) => "Tool arguments must be a JSON object".to_owned(),
        Err(message) => message,
    };
    ParsedArguments {
        arguments: Map::new(),
        arguments_error: Some(format!("{message}\n\nReceived arguments:\n{json}")),
    }
}

/// Best-effort parse of possibly incomplete JSON (pi's `parseStreamingJson`): a complete document
/// is parsed strictly (with repair); otherwise the [`StreamingJsonParser`] reading of the prefix.
/// Anything but an object gives `{}`.
///
/// pi reads incomplete text with the `partial-json` package here; this port reads it with the
/// streaming parser, which agrees on well-formed prefixes (the spec's vectors) and is more
/// tolerant of malformed ones (pi returns `{}` for e.g. `{"a":1 "b":2`).
///
/// ```
/// use pi_ai::tool_args::parse_streaming_json;
/// assert_eq!(serde_json::Value::Object(parse_streaming_json(r#"{"a":tr"#)), serde_json::json!({"a": true}));
/// ```
pub fn parse_streaming_json(partial_json: &str) -> Map<String, Value> {
    if partial_json.trim().is_empty() {
        return Map::new();
    }
    let value = match parse_json_with_repair(partial_json) {
        Ok(v) => v,
        Err(_) => {
            let mut parser = StreamingJsonParser::new();
            parser.append(partial_json);
            parser.snapshot().cloned().unwrap_or(Value::Null)
        }
    };
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The arguments of one streaming tool call (pi's `ToolCallArgumentsStream`): the raw text for
/// the one full parse at the end, and a [`StreamingJsonParser`] for the partial arguments in
/// between. Providers keep one per call in their own state, never on the content block.
///
/// ```
/// use pi_ai::tool_args::ToolCallArgumentsStream;
/// let mut args = ToolCallArgumentsStream::new();
/// assert!(args.append(r#"{"pa"#).is_empty());
/// assert_eq!(args.append(r#"th":"/tm"#)["path"], "/tm");
/// let r = args.replace(r#"{"path":"/tmp"}"#);
/// assert_eq!(r.delta.as_deref(), Some(r#"p"}"#));
/// assert_eq!(args.finish().arguments["path"], "/tmp");
/// ```
#[derive(Debug, Default)]
pub struct ToolCallArgumentsStream {
    text: String,
    parser: StreamingJsonParser,
    empty: Map<String, Value>,
}

/// What [`ToolCallArgumentsStream::replace`] returns.
#[derive(Debug)]
pub struct Replaced<'a> {
    /// The missing suffix when the new text continues the old one (possibly `""`); `None` when the
    /// stream started over.
    pub delta: Option<String>,
    /// The partial arguments of the new text.
    pub arguments: &'a Map<String, Value>,
}

impl ToolCallArgumentsStream {
    /// An empty stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// The raw argument text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Appends a piece of argument text; returns the partial arguments (an object, possibly empty).
    /// Costs O(`delta`).
    pub fn append(&mut self, delta: &str) -> &Map<String, Value> {
        self.text.push_str(delta);
        self.parser.append(delta);
        self.partial()
    }

    /// Takes the provider's complete argument text. When it continues the text so far, returns the
    /// missing piece as `delta`; otherwise starts over with `text`.
    pub fn replace(&mut self, text: &str) -> Replaced<'_> {
        if let Some(delta) = text.strip_prefix(self.text.as_str()) {
            let delta = delta.to_owned();
            self.text.push_str(&delta);
            self.parser.append(&delta);
            return Replaced { delta: Some(delta), arguments: self.partial() };
        }
        self.text.clear();
        self.parser = StreamingJsonParser::new();
        self.text.push_str(text);
        self.parser.append(text);
        Replaced { delta: None, arguments: self.partial() }
    }

    /// The final arguments: one full parse of the complete text.
    pub fn finish(&self) -> ParsedArguments {
        parse_tool_call_arguments(&self.text)
    }

    /// The current partial arguments.
    pub fn partial(&mut self) -> &Map<String, Value> {
        match self.parser.snapshot() {
            Some(Value::Object(map)) => map,
            _ => &self.empty,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_vectors() {
        assert_eq!(parse_tool_call_arguments("  "), ParsedArguments::default());
        let p = parse_tool_call_arguments(r#"{"a":1"#);
        assert_eq!(
            p.arguments_error.as_deref(),
            Some(
                "Expected ',' or '}' after property value in JSON at position 6 (line 1 column 7)\n\nReceived arguments:\n{\"a\":1"
            )
        );
        assert_eq!(Value::Object(parse_tool_call_arguments(r#"{"p":"C:\dir"}"#).arguments), json!({"p": "C:\\dir"}));
        let mut s = String::new();
        let mut snaps = Vec::new();
        for piece in [r#"{"pa"#, r#"th":"/tm"#, r#"p/x","n":1"#, "2}"] {
            s.push_str(piece);
            snaps.push(Value::Object(parse_streaming_json(&s)));
        }
        assert_eq!(
            snaps,
            vec![
                json!({}),
                json!({"path": "/tm"}),
                json!({"path": "/tmp/x", "n": 1}),
                json!({"path": "/tmp/x", "n": 12})
            ]
        );
    }

    #[test]
    fn apply_keeps_an_existing_error_on_success() {
        let mut call = ToolCall { arguments_error: Some("old".into()), ..Default::default() };
        parse_tool_call_arguments(r#"{"a":1}"#).apply_to(&mut call);
        assert_eq!(call.arguments_error.as_deref(), Some("old"));
        assert_eq!(call.arguments["a"], 1);
    }
}
