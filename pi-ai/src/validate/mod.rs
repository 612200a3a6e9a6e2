//! Tool-call argument validation exactly as pi 1.6.0 does it before every tool call.
//!
//! pi compiles each tool's JSON Schema with pi-schema (`coerce: true`, every `format`, `unresolvedRefs:
//! "reject"`), coerces a copy of the model's arguments towards it (`"42"` becomes 42, `"true"` becomes `true`, a
//! single value becomes a one-item array, `null` for an omitted optional property is dropped), checks the result
//! and, on failure, shows the model every error:
//!
//! ```text
//! Validation failed for tool "add":
//!   - b: missing
//!   - a: expected number, got string
//!
//! Received arguments:
//! {
//!   "a": "x"
//! }
//! ```
//!
//! The model reads these texts, so they are pi's, word for word. Compiled schemas are cached by their JSON text.
//!
//! ```
//! use pi_ai::validate::validate_tool_call;
//! use pi_ai::{Tool, ToolCall};
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]});
//! let tools = [Tool::new("add", "Adds", schema)];
//! let args = json!({"a": "42"}).as_object().cloned().unwrap();
//! let coerced = validate_tool_call(&tools, &ToolCall::new("c1", "add", args)).unwrap();
//! assert_eq!(coerced["a"], json!(42));
//! ```

mod annotations;
mod check;
mod coerce;
mod explain;
mod formats;
mod js;
mod resolver;
mod schema;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::{Map, Value};

use crate::{Tool, ToolCall};
use schema::{Compiled, Ctx};

/// Why a tool call's arguments were rejected. `Display` gives pi's exact text, which the model reads.
///
/// ```
/// use pi_ai::validate::ValidationError;
/// let e = ValidationError::Failed {
///     tool: "add".into(),
///     errors: vec![("b".into(), "missing".into())],
///     received: "{}".into(),
/// };
/// assert_eq!(e.to_string(), "Validation failed for tool \"add\":\n  - b: missing\n\nReceived arguments:\n{}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    /// No tool has the call's name.
    #[error("Tool \"{name}\" not found")]
    NotFound {
        /// The name the model called.
        name: String,
    },
    /// The argument text was not a JSON object (the call's `argumentsError`).
    #[error("Invalid arguments for tool \"{tool}\": {error}")]
    InvalidArguments {
        /// The tool's name.
        tool: String,
        /// The call's `argumentsError`.
        error: String,
    },
    /// The arguments do not match the schema, even after coercion.
    #[error("Validation failed for tool \"{tool}\":\n{}\n\nReceived arguments:\n{received}", list(.errors))]
    Failed {
        /// The tool's name.
        tool: String,
        /// Each error: the dotted path of the value (`edits.0.oldText`, `root`) and pi-schema's message.
        errors: Vec<(String, String)>,
        /// The arguments as received (before coercion), as `JSON.stringify(args, null, 2)` writes them.
        received: String,
    },
    /// The tool's schema cannot be compiled (pi throws the compiler's message as it is).
    #[error("{message}")]
    Schema {
        /// The tool's name.
        tool: String,
        /// The compiler's message, e.g. `A schema must be an object or a boolean, got 5`.
        message: String,
    },
}

fn list(errors: &[(String, String)]) -> String {
    let mut out = String::new();
    for (i, (path, message)) in errors.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = write!(out, "  - {path}: {message}");
    }
    out
}

/// A JSON Pointer as the dotted path the model sees: `/edits/0/oldText` is `edits.0.oldText`, `""` is `root`.
fn dotted(pointer: &str) -> String {
    if pointer.is_empty() {
        return "root".to_owned();
    }
    pointer[1..].split('/').map(|s| s.replace("~1", "/").replace("~0", "~")).collect::<Vec<_>>().join(".")
}

/// At most this many compiled schemas are kept; past it the cache starts over.
const CACHE_LIMIT: usize = 256;

fn cache() -> &'static Mutex<HashMap<String, Arc<Compiled>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Compiled>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The compiled schema of `parameters`, from the cache when it was compiled before.
fn compiled(parameters: &Value) -> Result<Arc<Compiled>, String> {
    // pi keys its cache with a WeakMap, which rejects a boolean schema after compiling it.
    if parameters.is_boolean() {
        return Err("Invalid value used as weak map key".to_owned());
    }
    let key = parameters.to_string();
    if let Some(hit) = cache().lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return Ok(Arc::clone(hit));
    }
    let fresh = Arc::new(Compiled::new(parameters)?);
    let mut cache = cache().lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() >= CACHE_LIMIT {
        cache.clear();
    }
    cache.insert(key, Arc::clone(&fresh));
    Ok(fresh)
}

/// pi's `validateToolCall`: finds the tool by name, rejects a call whose argument text did not parse, and
/// validates the arguments. Returns the coerced arguments.
///
/// ```
/// use pi_ai::validate::validate_tool_call;
/// use pi_ai::{Tool, ToolCall};
/// let err = validate_tool_call(&[], &ToolCall::new("c", "nope", Default::default())).unwrap_err();
/// assert_eq!(err.to_string(), "Tool \"nope\" not found");
/// ```
pub fn validate_tool_call(tools: &[Tool], call: &ToolCall) -> Result<Map<String, Value>, ValidationError> {
    let Some(tool) = tools.iter().find(|t| t.name == call.name) else {
        return Err(ValidationError::NotFound { name: call.name.clone() });
    };
    validate_tool_call_arguments(tool, call)
}

/// pi's `validateToolArguments(tool, toolCall)`: the call's `argumentsError` first, then the arguments.
///
/// ```
/// use pi_ai::validate::validate_tool_call_arguments;
/// use pi_ai::{Tool, ToolCall};
/// let tool = Tool::new("t", "", serde_json::json!({"type": "object"}));
/// let call = ToolCall { name: "t".into(), arguments_error: Some("bad".into()), ..Default::default() };
/// let err = validate_tool_call_arguments(&tool, &call).unwrap_err();
/// assert_eq!(err.to_string(), "Invalid arguments for tool \"t\": bad");
/// ```
pub fn validate_tool_call_arguments(tool: &Tool, call: &ToolCall) -> Result<Map<String, Value>, ValidationError> {
    if let Some(error) = &call.arguments_error {
        return Err(ValidationError::InvalidArguments { tool: call.name.clone(), error: error.clone() });
    }
    validate_as(&call.name, &tool.parameters, &call.arguments)
}

/// Validates a copy of `args` against `tool.parameters` with pi's coercion and returns the coerced arguments.
/// The call's `argumentsError` is not seen here: [`validate_tool_call`] and [`validate_tool_call_arguments`]
/// check it first, as pi does.
///
/// ```
/// use pi_ai::validate::validate_tool_arguments;
/// use pi_ai::Tool;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n", "m"]});
/// let tool = Tool::new("count", "", schema);
/// let args = json!({"n": "x"}).as_object().cloned().unwrap();
/// let err = validate_tool_arguments(&tool, &args).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "Validation failed for tool \"count\":\n  - m: missing\n  - n: expected integer, got string\n\n\
///      Received arguments:\n{\n  \"n\": \"x\"\n}"
/// );
/// ```
pub fn validate_tool_arguments(tool: &Tool, args: &Map<String, Value>) -> Result<Map<String, Value>, ValidationError> {
    validate_as(&tool.name, &tool.parameters, args)
}

/// [`validate_tool_arguments`] for a tool known only by its name and parameter schema (no [`Tool`] to build).
///
/// ```
/// use pi_ai::validate::validate_arguments;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}}}});
/// let args = json!({"paths": "a.txt"}).as_object().cloned().unwrap();
/// let coerced = validate_arguments("ls", &schema, &args).unwrap();
/// assert_eq!(coerced["paths"], json!(["a.txt"]));
/// ```
pub fn validate_arguments(
    name: &str,
    parameters: &Value,
    args: &Map<String, Value>,
) -> Result<Map<String, Value>, ValidationError> {
    validate_as(name, parameters, args)
}

fn validate_as(
    name: &str,
    parameters: &Value,
    args: &Map<String, Value>,
) -> Result<Map<String, Value>, ValidationError> {
    let schema_error = |message: String| ValidationError::Schema { tool: name.to_owned(), message };
    let compiled = compiled(parameters).map_err(schema_error)?;
    let ctx = Ctx::new(&compiled);
    let input = Value::Object(args.clone());
    let coerced = ctx.coerce(&input);
    let ok = ctx.check(&compiled.root, resolver::DEFAULT_BASE, &coerced);
    let errors = if ok { Vec::new() } else { ctx.errors(&coerced) };
    if ctx.overflowed() {
        tracing::debug!(tool = name, "tool schema nests too deep to validate");
        return Err(schema_error("Maximum call stack size exceeded".to_owned()));
    }
    if ok {
        return match coerced {
            Value::Object(map) => Ok(js::reorder(map)),
            // A root schema that converts the object itself (e.g. `{"type": "string"}`) only passes non-objects,
            // which the check already rejected; keep the arguments as a fallback.
            _ => Ok(args.clone()),
        };
    }
    Err(ValidationError::Failed {
        tool: name.to_owned(),
        errors: errors.into_iter().map(|(path, message)| (dotted(&path), message)).collect(),
        received: js::stringify_pretty(&input),
    })
}
