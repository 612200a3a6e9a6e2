//! JSON-schema constrained sampling (pi-ai's `constrained-sampling.js`): a tool declaring
//! `constrainedSampling: {type: "json_schema", strict: "prefer" | "require"}` is sent in the API's
//! strict mode, with its schema made strict (every property required, optional ones nullable,
//! `additionalProperties: false`), when the model's compat allows it and the schema fits the strict
//! subset. `"prefer"` falls back to a normal tool; `"require"` fails the request instead.

use serde_json::{Map, Value, json};

use crate::types::Tool;

/// Keywords no strict mode accepts.
const UNSUPPORTED: [&str; 16] = [
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
];

/// A provider's extra rule: `(keyword, value)` its strict mode rejects.
pub type KeywordFilter = fn(&str, &Value) -> bool;

fn is_structured(schema: &Value) -> bool {
    let Some(o) = schema.as_object() else { return false };
    let types: Vec<&str> = match o.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    types.contains(&"object") || types.contains(&"array") || o.contains_key("properties") || o.contains_key("items")
}

fn allows_null(schema: &Value) -> bool {
    let Some(o) = schema.as_object() else { return false };
    match o.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(a)) if a.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    if o.get("const") == Some(&Value::Null)
        || o.get("enum").and_then(Value::as_array).is_some_and(|e| e.contains(&Value::Null))
    {
        return true;
    }
    o.get("anyOf").and_then(Value::as_array).is_some_and(|v| v.iter().any(allows_null))
}

fn strict_node(schema: &mut Value, filter: Option<KeywordFilter>) -> Result<(), String> {
    let Some(o) = schema.as_object_mut() else { return Err("boolean schemas are unsupported".into()) };
    if let Some(key) = UNSUPPORTED.iter().find(|k| o.contains_key(**k)) {
        return Err(format!("{key} schemas are unsupported"));
    }
    if let Some(filter) = filter
        && let Some((k, v)) = o.iter().find(|(k, v)| filter(k, v))
    {
        return Err(format!("{k}: {v} is unsupported"));
    }
    if !o.contains_key("type") && !o.contains_key("anyOf") && !o.contains_key("enum") {
        return Err("schemas without a type are unsupported".into());
    }
    if let Some(any_of) = o.get_mut("anyOf") {
        let Some(variants) = any_of.as_array_mut().filter(|v| !v.is_empty()) else {
            return Err("anyOf must contain at least one schema".into());
        };
        for variant in variants {
            if is_structured(variant) {
                return Err("object and array unions are unsupported".into());
            }
            strict_node(variant, filter)?;
        }
    }
    if let Some(items) = o.get_mut("items") {
        if items.is_array() {
            return Err("tuple schemas are unsupported".into());
        }
        strict_node(items, filter)?;
    }
    let is_object = o.get("type").and_then(Value::as_str) == Some("object");
    if o.contains_key("properties") && !is_object {
        return Err("properties require type object".into());
    }
    if !is_object {
        return Ok(());
    }
    if o.get("additionalProperties").is_some_and(|a| a != &Value::Bool(false)) {
        return Err("schema-valued or true additionalProperties is unsupported".into());
    }
    if o.get("properties").is_some_and(|p| !p.is_object()) {
        return Err("object properties must be a schema map".into());
    }
    let required: Vec<String> = match o.get("required") {
        None => Vec::new(),
        Some(Value::Array(r)) if r.iter().all(Value::is_string) => {
            r.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        Some(_) => return Err("object required must be a string array".into()),
    };
    let mut empty = Map::new();
    let properties = match o.get_mut("properties") {
        Some(Value::Object(p)) => p,
        _ => &mut empty,
    };
    if required.iter().any(|r| !properties.contains_key(r)) {
        return Err("required contains an unknown property".into());
    }
    for (key, property) in properties.iter_mut() {
        strict_node(property, filter)?;
        if !required.contains(key) && !allows_null(property) {
            *property = json!({"anyOf": [property.take(), {"type": "null"}]});
        }
    }
    let names: Vec<Value> = properties.keys().map(|k| Value::String(k.clone())).collect();
    // Assigning keeps an existing key in place and appends a new one, as JavaScript does.
    o.insert("required".into(), Value::Array(names));
    o.insert("additionalProperties".into(), Value::Bool(false));
    Ok(())
}

/// pi's `makeStrictJsonSchema`: the strict form of a tool's parameter schema, or why it has none.
///
/// ```
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}, "required": ["a"]});
/// let strict = pi_ai::providers::constrained::make_strict_json_schema(&schema, None).unwrap();
/// assert_eq!(strict, json!({"type": "object", "properties": {"a": {"type": "string"},
///     "b": {"anyOf": [{"type": "number"}, {"type": "null"}]}}, "required": ["a", "b"], "additionalProperties": false}));
/// ```
pub fn make_strict_json_schema(schema: &Value, filter: Option<KeywordFilter>) -> Result<Value, String> {
    let mut cloned = schema.clone();
    if !cloned.is_object() {
        return Err("root schema must have type object".into());
    }
    strict_node(&mut cloned, filter)?;
    if cloned.get("type").and_then(Value::as_str) != Some("object") {
        return Err("root schema must have type object".into());
    }
    Ok(cloned)
}

fn json_schema_config(tool: &Tool) -> Option<&str> {
    let c = tool.constrained_sampling.as_ref()?.as_object()?;
    (c.get("type")? == "json_schema").then(|| c.get("strict").and_then(Value::as_str).unwrap_or(""))
}

/// Whether `tool` asks for strict sampling only when possible (`strict: "prefer"`).
pub fn prefers_strict(tool: &Tool) -> bool {
    json_schema_config(tool) == Some("prefer")
}

/// pi's `resolveJsonSchemaStrictSampling`: `Ok(true)` to send `tool` strict, `Ok(false)` not to,
/// or the error of a `"require"` tool that cannot be strict.
pub fn resolve_strict(tool: &Tool, supports_strict: bool, filter: Option<KeywordFilter>) -> Result<bool, String> {
    let Some(strict) = json_schema_config(tool) else { return Ok(false) };
    let require = strict == "require";
    if supports_strict {
        return match make_strict_json_schema(&tool.parameters, filter) {
            Ok(_) => Ok(true),
            Err(_) if !require => Ok(false),
            Err(why) => Err(format!("Tool \"{}\" requires JSON-schema constrained sampling, but {why}.", tool.name)),
        };
    }
    if require {
        return Err(format!(
            "Tool \"{}\" requires JSON-schema constrained sampling, but strict tools are unsupported.",
            tool.name
        ));
    }
    Ok(false)
}

/// `(strict, parameters)` of `tool` for a request: the strict schema when strict. A `"require"`
/// tool that cannot be strict was refused earlier by [`check_tools`]; here it is sent normally.
pub fn tool_parameters(tool: &Tool, supports_strict: bool, filter: Option<KeywordFilter>) -> (bool, Value) {
    if resolve_strict(tool, supports_strict, filter) == Ok(true)
        && let Ok(schema) = make_strict_json_schema(&tool.parameters, filter)
    {
        return (true, schema);
    }
    (false, tool.parameters.clone())
}

/// The first `"require"` tool of `tools` that cannot be sent strict, as the request's error.
pub fn check_tools<'a>(
    tools: impl IntoIterator<Item = &'a Tool>,
    supports_strict: bool,
    filter: Option<KeywordFilter>,
) -> Result<(), String> {
    tools.into_iter().try_for_each(|t| resolve_strict(t, supports_strict, filter).map(drop))
}

/// pi's `strict-tool-limits.js`: Claude (on Anthropic's API and on Bedrock) rejects a request whose
/// strict tools exceed its limits (20 strict tools, 16 optional or union-typed parameters). A
/// session that hit them sends its `"prefer"` tools non-strict from then on.
pub mod strict_limits {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    const MESSAGES: [&str; 3] = [
        "The compiled grammar is too large",
        "Too many strict tools (",
        "Schemas contains too many parameters with union types (",
    ];
    const MAX_SESSIONS: usize = 10_000;

    static SESSIONS: Mutex<VecDeque<String>> = Mutex::new(VecDeque::new());

    /// Whether a provider error says the strict tools exceed the limits.
    ///
    /// ```
    /// use pi_ai::providers::constrained::strict_limits::is_limit_error;
    /// assert!(is_limit_error("Validation error: Too many strict tools (21)"));
    /// assert!(!is_limit_error("Validation error: bad"));
    /// ```
    pub fn is_limit_error(message: &str) -> bool {
        MESSAGES.iter().any(|m| message.contains(m))
    }

    /// Remembers that `session`'s strict tools were rejected (nothing without a session; at most
    /// 10 000 sessions, the oldest forgotten first).
    pub fn mark_exceeded(session: Option<&str>) {
        let Some(session) = session else { return };
        let mut sessions = SESSIONS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !sessions.iter().any(|s| s == session) {
            sessions.push_back(session.to_owned());
        }
        while sessions.len() > MAX_SESSIONS {
            sessions.pop_front();
        }
    }

    /// Whether an earlier request of `session` had its strict tools rejected.
    pub fn has_exceeded(session: Option<&str>) -> bool {
        let Some(session) = session else { return false };
        SESSIONS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().any(|s| s == session)
    }

    /// Forgets `session` (pi's session-resource cleanup), or every session with `None`.
    pub fn forget(session: Option<&str>) {
        let mut sessions = SESSIONS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match session {
            Some(session) => sessions.retain(|s| s != session),
            None => sessions.clear(),
        }
    }
}

/// A grammar tool as an API sends it (pi's `resolveGrammarConstrainedSampling`): the model writes
/// the raw `input_property` string constrained by `definition`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrammarTool {
    /// `lark` or `regex`.
    pub format: &'static str,
    /// The grammar.
    pub definition: String,
    /// The one required string property the raw input fills.
    pub input_property: String,
}

fn grammar_input_property(tool: &Tool) -> Result<String, String> {
    let schema = &tool.parameters;
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("grammar constrained sampling requires an object parameter schema".into());
    }
    let required = schema.get("required").and_then(Value::as_array);
    let Some(property) = required.filter(|r| r.len() == 1).and_then(|r| r[0].as_str()) else {
        return Err("grammar constrained sampling requires exactly one required string property".into());
    };
    let Some(definition) = schema.get("properties").and_then(|p| p.get(property)) else {
        return Err(format!("grammar constrained sampling requires a properties entry for {property}"));
    };
    if definition.get("type").and_then(Value::as_str) != Some("string") {
        return Err(format!("grammar constrained sampling property {property} must have type string"));
    }
    Ok(property.to_owned())
}

/// The grammar form of `tool` when it declares `{type: "grammar", variants}` and the model takes
/// OpenAI grammar tools (`lark` preferred over `regex`); the error of a declaration that cannot work.
pub fn resolve_grammar(tool: &Tool, supports_grammar_tools: bool) -> Result<Option<GrammarTool>, String> {
    let Some(config) = tool.constrained_sampling.as_ref().and_then(Value::as_object) else { return Ok(None) };
    if config.get("type").and_then(Value::as_str) != Some("grammar") || !supports_grammar_tools {
        return Ok(None);
    }
    let variant = |k: &str| {
        config.get("variants").and_then(|v| v.get(k)).and_then(Value::as_str).filter(|d| !d.trim().is_empty())
    };
    let (format, definition) = match (variant("openai_lark"), variant("openai_regex")) {
        (Some(lark), _) => ("lark", lark),
        (None, Some(regex)) => ("regex", regex),
        (None, None) => {
            return Err(format!(
                "Tool \"{}\" cannot use grammar constrained sampling: no supported grammar variant was provided.",
                tool.name
            ));
        }
    };
    let input_property = grammar_input_property(tool)
        .map_err(|why| format!("Tool \"{}\" cannot use grammar constrained sampling: {why}.", tool.name))?;
    Ok(Some(GrammarTool { format, definition: definition.to_owned(), input_property }))
}

/// Tool name → input property of every grammar tool (pi's `createGrammarToolInputProperties`).
pub fn grammar_input_properties<'a>(
    tools: impl IntoIterator<Item = &'a Tool>,
    supports_grammar_tools: bool,
) -> Result<std::collections::HashMap<String, String>, String> {
    let mut out = std::collections::HashMap::new();
    for tool in tools {
        if let Some(grammar) = resolve_grammar(tool, supports_grammar_tools)? {
            out.insert(tool.name.clone(), grammar.input_property);
        }
    }
    Ok(out)
}

/// The grammar tools of a request (name → input property), or the error that refuses it: a grammar
/// declaration that cannot work, or a replayed grammar tool call without its string input.
pub fn check_grammar_tools(
    messages: &[crate::types::Message],
    declared: &[Tool],
    supports_grammar_tools: bool,
) -> Result<std::collections::HashMap<String, String>, String> {
    let grammar = grammar_input_properties(declared, supports_grammar_tools)?;
    if grammar.is_empty() {
        return Ok(grammar);
    }
    for message in messages {
        if let crate::types::Message::Assistant(a) = message {
            for call in a.tool_calls() {
                if let Some(property) = grammar.get(&call.name) {
                    grammar_tool_input(&call.name, &call.arguments, property)?;
                }
            }
        }
    }
    Ok(grammar)
}

/// The raw input of a replayed grammar tool call (pi's `getGrammarToolInput`).
pub fn grammar_tool_input<'a>(
    tool_name: &str,
    arguments: &'a Map<String, Value>,
    property: &str,
) -> Result<&'a str, String> {
    arguments
        .get(property)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("Grammar tool call \"{tool_name}\" requires argument \"{property}\" to be a string."))
}

/// A streaming grammar tool input turned into the JSON text of its arguments piece by piece
/// (`{"<property>":"` … `"}`), costing time linear in each delta.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrammarInput {
    /// The input so far.
    pub input: String,
    started: bool,
    closed: bool,
}

impl GrammarInput {
    fn start(&mut self, property: &str) -> String {
        if self.started {
            return String::new();
        }
        self.started = true;
        format!("{{{}:\"", Value::String(property.to_owned()))
    }

    fn escaped(text: &str) -> String {
        let quoted = Value::String(text.to_owned()).to_string();
        quoted[1..quoted.len() - 1].to_owned()
    }

    /// Appends `delta`; the matching JSON piece, `None` for an empty delta.
    pub fn append(&mut self, property: &str, delta: &str) -> Result<Option<String>, String> {
        if self.closed {
            return Err(format!("grammar tool input for property \"{property}\" changed after it was closed"));
        }
        if delta.is_empty() {
            return Ok(None);
        }
        self.input.push_str(delta);
        Ok(Some(self.start(property) + &Self::escaped(delta)))
    }

    /// Closes the input (`final_input`, when sent, must continue what streamed); the rest of the
    /// JSON text, `None` when it was already closed with the same input.
    pub fn close(&mut self, property: &str, final_input: Option<&str>) -> Result<Option<String>, String> {
        if self.closed {
            if final_input.is_none_or(|f| f == self.input) {
                return Ok(None);
            }
            return Err(format!("grammar tool input for property \"{property}\" changed after it was closed"));
        }
        let rest = match final_input {
            Some(f) if !f.starts_with(&self.input) => {
                return Err(format!("grammar tool input for property \"{property}\" changed non-monotonically"));
            }
            Some(f) => f[self.input.len()..].to_owned(),
            None => String::new(),
        };
        self.input.push_str(&rest);
        self.closed = true;
        Ok(Some(format!("{}{}\"}}", self.start(property), Self::escaped(&rest))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(config: Value, parameters: Value) -> Tool {
        let mut t = Tool::new("t", "d", parameters);
        t.constrained_sampling = Some(config);
        t
    }

    #[test]
    fn prefer_falls_back_and_require_fails() {
        let bad = json!({"type": "object", "properties": {"a": {"$ref": "#/x"}}});
        let prefer = tool(json!({"type": "json_schema", "strict": "prefer"}), bad.clone());
        assert_eq!(resolve_strict(&prefer, true, None), Ok(false));
        let require = tool(json!({"type": "json_schema", "strict": "require"}), bad);
        assert_eq!(
            resolve_strict(&require, true, None).unwrap_err(),
            "Tool \"t\" requires JSON-schema constrained sampling, but $ref schemas are unsupported."
        );
        let ok = tool(json!({"type": "json_schema", "strict": "require"}), json!({"type": "object"}));
        assert_eq!(resolve_strict(&ok, true, None), Ok(true));
        assert!(resolve_strict(&ok, false, None).unwrap_err().ends_with("but strict tools are unsupported."));
        assert_eq!(resolve_strict(&Tool::new("n", "d", json!({})), true, None), Ok(false));
    }

    #[test]
    fn strict_schemas_match_pi() {
        let empty = make_strict_json_schema(&json!({"type": "object"}), None).unwrap();
        assert_eq!(empty, json!({"type": "object", "required": [], "additionalProperties": false}));
        let nested = json!({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "object",
            "properties": {"k": {"type": ["string", "null"]}}}}}, "required": ["xs"]});
        let strict = make_strict_json_schema(&nested, None).unwrap();
        assert_eq!(
            strict["properties"]["xs"]["items"],
            json!({"type": "object", "properties": {"k": {"type": ["string", "null"]}}, "required": ["k"], "additionalProperties": false})
        );
        let union = json!({"type": "object", "properties": {"u": {"anyOf": [{"type": "object"}, {"type": "null"}]}}});
        assert_eq!(make_strict_json_schema(&union, None).unwrap_err(), "object and array unions are unsupported");
        let no_type = json!({"type": "object", "properties": {"c": {"const": 1}}});
        assert_eq!(make_strict_json_schema(&no_type, None).unwrap_err(), "schemas without a type are unsupported");
    }

    #[test]
    fn grammar_tools_resolve_and_stream_json() {
        let params = json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]});
        let mut t = tool(
            json!({"type": "grammar", "variants": {"openai_regex": "[a-z]+", "openai_lark": "start: /x/"}}),
            params,
        );
        let g = resolve_grammar(&t, true).unwrap().unwrap();
        assert_eq!((g.format, g.definition.as_str(), g.input_property.as_str()), ("lark", "start: /x/", "code"));
        assert_eq!(resolve_grammar(&t, false), Ok(None));
        t.parameters = json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]});
        assert_eq!(
            resolve_grammar(&t, true).unwrap_err(),
            "Tool \"t\" cannot use grammar constrained sampling: grammar constrained sampling property a must have type string."
        );
        let mut buffer = GrammarInput::default();
        let mut text = buffer.append("code", "say \"hi\"").unwrap().unwrap();
        assert_eq!(buffer.append("code", ""), Ok(None));
        text += &buffer.close("code", Some("say \"hi\"\n")).unwrap().unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), json!({"code": "say \"hi\"\n"}));
        assert_eq!(buffer.close("code", None), Ok(None));
        assert!(buffer.append("code", "x").is_err());
        let mut other = GrammarInput::default();
        other.append("code", "ab").unwrap();
        assert!(other.close("code", Some("xy")).unwrap_err().ends_with("changed non-monotonically"));
    }
}
