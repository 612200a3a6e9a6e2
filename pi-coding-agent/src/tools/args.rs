//! Reading tool arguments from the JSON object the model sent, with clear errors for wrong types,
//! and JavaScript's number formatting for messages that echo a number back.

use pi_agent_core::ToolError;
use serde_json::{Map, Value};

/// A required string argument.
pub fn required_str<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, ToolError> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ToolError::new(format!("{key}: must be string"))),
        None => Err(ToolError::new(format!("{key}: must have required property '{key}'"))),
    }
}

/// An optional string argument (`null` counts as absent).
pub fn optional_str<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolError::new(format!("{key}: must be string"))),
    }
}

/// An optional number argument (`null` counts as absent; numeric strings are coerced, as pi's
/// validation does).
pub fn optional_f64(args: &Map<String, Value>, key: &str) -> Result<Option<f64>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(Value::String(s)) if s.trim().parse::<f64>().is_ok() => Ok(s.trim().parse::<f64>().ok()),
        Some(_) => Err(ToolError::new(format!("{key}: must be number"))),
    }
}

/// An optional boolean argument (`null` counts as absent; `"true"`/`"false"` are coerced).
pub fn optional_bool(args: &Map<String, Value>, key: &str) -> Result<Option<bool>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s == "true" => Ok(Some(true)),
        Some(Value::String(s)) if s == "false" => Ok(Some(false)),
        Some(_) => Err(ToolError::new(format!("{key}: must be boolean"))),
    }
}

/// A number as JavaScript's `String(n)` writes it (`10`, `0.5`, `1e+21`).
///
/// ```
/// use pi_coding_agent::tools::args::js_number;
/// assert_eq!(js_number(10.0), "10");
/// assert_eq!(js_number(0.5), "0.5");
/// ```
pub use pi_ai::js::js_number_to_string as js_number;

/// JavaScript's `Math.floor` of a limit, clamped to `[min, usize::MAX]`.
pub fn floor_at_least(n: f64, min: usize) -> usize {
    if n.is_nan() {
        return min;
    }
    let f = n.floor();
    if f < min as f64 {
        min
    } else if f >= usize::MAX as f64 {
        usize::MAX
    } else {
        f as usize
    }
}

/// The `Operation aborted` error every tool returns when cancelled.
pub fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}
