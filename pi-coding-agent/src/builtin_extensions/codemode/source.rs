//! The script source: JavaScript, optionally preceded by one `// @options: {...}` line
//! (pi-codemode's `parseCodemodeSource`).

use serde_json::Value;

/// The options line's prefix.
pub const CODEMODE_OPTIONS_PREFIX: &str = "// @options:";
const SUPPORTED_FIELDS_TEXT: &str = "`max_output_tokens` and `timeout_ms`";
/// Largest `timeout_ms` (the largest delay of `setTimeout`).
const MAX_TIMEOUT_MS: u64 = 2_147_483_647;
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// The options of one script.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceOptions {
    /// `max_output_tokens`.
    pub max_output_tokens: Option<u64>,
    /// `timeout_ms`.
    pub timeout_ms: Option<u64>,
}

/// A script split from its options line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedSource {
    /// The code (starting with the newline after the options line, if there was one).
    pub code: String,
    /// Its options.
    pub options: SourceOptions,
}

fn safe_integer(value: &Value) -> Option<u64> {
    let n = value.as_f64()?;
    (n >= 0.0 && n.fract() == 0.0 && n <= MAX_SAFE_INTEGER).then_some(n as u64)
}

fn parse_options(directive: &str) -> Result<SourceOptions, String> {
    let object_error = || format!("@options must be a JSON object with supported fields {SUPPORTED_FIELDS_TEXT}");
    if directive.is_empty() {
        return Err(object_error());
    }
    let value: Value = serde_json::from_str(directive).map_err(|e| {
        format!("@options must be valid JSON with supported fields {SUPPORTED_FIELDS_TEXT}: {}", json_error_text(&e))
    })?;
    let Value::Object(fields) = value else { return Err(object_error()) };
    if let Some(key) = fields.keys().find(|k| *k != "max_output_tokens" && *k != "timeout_ms") {
        return Err(format!("@options only supports {SUPPORTED_FIELDS_TEXT}; got `{key}`"));
    }
    let mut options = SourceOptions::default();
    if let Some(v) = fields.get("max_output_tokens") {
        options.max_output_tokens =
            Some(safe_integer(v).ok_or("@options field `max_output_tokens` must be a non-negative safe integer")?);
    }
    if let Some(v) = fields.get("timeout_ms") {
        match safe_integer(v) {
            Some(ms) if ms > 0 && ms <= MAX_TIMEOUT_MS => options.timeout_ms = Some(ms),
            _ => return Err(format!("@options field `timeout_ms` must be a positive integer up to {MAX_TIMEOUT_MS}")),
        }
    }
    Ok(options)
}

/// serde's message without its position suffix (V8's texts differ anyway).
fn json_error_text(e: &serde_json::Error) -> String {
    let text = e.to_string();
    text.split(" at line ").next().unwrap_or(&text).to_owned()
}

/// Splits the optional first-line options from the script; fails for empty input, invalid
/// options, and an options line that is not the first line.
pub fn parse_codemode_source(input: &str) -> Result<ParsedSource, String> {
    if input.trim().is_empty() {
        return Err("Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line `// @options: {\"max_output_tokens\": 1000}`.".into());
    }
    let lines: Vec<&str> = input.split('\n').collect();
    if let Some(misplaced) =
        lines.iter().enumerate().skip(1).find(|(_, l)| l.trim_start().starts_with(CODEMODE_OPTIONS_PREFIX))
    {
        return Err(format!(
            "The {CODEMODE_OPTIONS_PREFIX} line must be the first line of the input; found one on line {}",
            misplaced.0 + 1
        ));
    }
    let first = lines[0].strip_suffix('\r').unwrap_or(lines[0]);
    let trimmed = first.trim_start();
    if !trimmed.starts_with(CODEMODE_OPTIONS_PREFIX) {
        return Ok(ParsedSource { code: input.to_owned(), options: SourceOptions::default() });
    }
    let code = input.find('\n').map(|i| input[i..].to_owned()).unwrap_or_default();
    if code.trim().is_empty() {
        return Err("The @options line must be followed by JavaScript source on subsequent lines".into());
    }
    let options = parse_options(trimmed[CODEMODE_OPTIONS_PREFIX.len()..].trim())?;
    Ok(ParsedSource { code, options })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_line() {
        let p = parse_codemode_source("// @options: {\"timeout_ms\": 50}\nreturn 1").unwrap();
        assert_eq!(p.options.timeout_ms, Some(50));
        assert_eq!(p.code, "\nreturn 1");
        assert!(parse_codemode_source("x\n// @options: {}").unwrap_err().contains("found one on line 2"));
        assert!(parse_codemode_source("// @options: {\"a\": 1}\nx").unwrap_err().contains("got `a`"));
        assert!(parse_codemode_source("// @options: {\"timeout_ms\": 0}\nx").is_err());
        assert!(parse_codemode_source("  ").is_err());
    }
}
