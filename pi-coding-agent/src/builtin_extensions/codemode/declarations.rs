//! TypeScript declarations of tools for scripts (pi-codemode's `declarations.ts`): JSON Schema to
//! TypeScript types, tool signatures and the "codemode tool declaration" sample.

use std::collections::HashSet;

use serde_json::Value;

const INDENT: &str = "  ";
/// Longest rendered input type before tags are dropped (then `unknown`).
pub const DEFAULT_INPUT_SCHEMA_MAX_CHARS: usize = 16_000;
const MAX_REF_EXPANSIONS: usize = 32;
const TAG_KEYWORDS: [&str; 11] = [
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
];
const LOWER_BOUNDS: [&str; 4] = ["minimum", "exclusiveMinimum", "minLength", "minItems"];
const UPPER_BOUNDS: [&str; 4] = ["maximum", "exclusiveMaximum", "maxLength", "maxItems"];
const MAX_TAG_CHARS: usize = 80;

/// The identifier a script uses for a tool: characters not valid in a JavaScript identifier become `_`.
pub fn to_codemode_identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let valid = c.is_ascii_alphabetic() || c == '_' || c == '$' || (!out.is_empty() && c.is_ascii_digit());
        out.push(if valid { c } else { '_' });
    }
    if out.is_empty() { "_".into() } else { out }
}

/// What a script sees of a tool.
#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    /// The tool's name.
    pub name: String,
    /// Description (with prompt guidelines).
    pub description: String,
    /// Input schema.
    pub input_schema: Option<Value>,
    /// Output schema.
    pub output_schema: Option<Value>,
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// JavaScript's `JSON.stringify` for a value (serde's compact form matches for JSON values).
fn js_json(value: &Value) -> String {
    value.to_string()
}

/// `name(args: Input): Promise<Output>;`.
pub fn render_tool_signature(tool: &Declaration) -> String {
    let input = match &tool.input_schema {
        None => "unknown".to_owned(),
        Some(s) => schema_to_type(s, Some(DEFAULT_INPUT_SCHEMA_MAX_CHARS)),
    };
    format!(
        "{}(args: {input}): Promise<{}>;",
        to_codemode_identifier(&tool.name),
        render_output_type(tool.output_schema.as_ref())
    )
}

/// The description followed by the tool's declaration in a `ts` fence.
pub fn render_tool_sample(tool: &Declaration) -> String {
    let declaration = format!("declare const tools: {{ {} }};", render_tool_signature(tool));
    format!("{}\n\ncodemode tool declaration:\n```ts\n{declaration}\n```", tool.description.trim())
}

/// The TypeScript type of an output schema (`unknown` without one).
pub fn render_output_type(schema: Option<&Value>) -> String {
    schema.map(|s| schema_to_type(s, None)).unwrap_or_else(|| "unknown".into())
}

struct Cx<'a> {
    root: &'a Value,
    resolving: HashSet<String>,
    expansions: usize,
    tags: bool,
}

/// A JSON Schema as a TypeScript type; past `max_chars` without tags, then `unknown`.
pub fn schema_to_type(schema: &Value, max_chars: Option<usize>) -> String {
    let render = |tags| to_type(schema, &mut Cx { root: schema, resolving: HashSet::new(), expansions: 0, tags });
    let typed = render(true);
    let Some(max) = max_chars else { return typed };
    if typed.chars().count() <= max {
        return typed;
    }
    let untagged = render(false);
    if untagged.chars().count() <= max { untagged } else { "unknown".into() }
}

/// The subschema a local `$ref` names in `root`.
pub fn resolve_schema_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    if reference != "#" && !reference.starts_with("#/") {
        return None;
    }
    let mut current = root;
    for segment in reference.get(2..).unwrap_or("").split('/').filter(|s| !s.is_empty()) {
        let decoded = percent_decode(segment)?;
        let key = decoded.replace("~1", "/").replace("~0", "~");
        current = current.as_object()?.get(&key)?;
    }
    (current.is_boolean() || current.is_object()).then_some(current)
}

fn percent_decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn union(types: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for t in types {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    if unique.iter().any(|t| t == "unknown") {
        return "unknown".into();
    }
    if unique.is_empty() { "never".into() } else { unique.join(" | ") }
}

fn to_type(schema: &Value, cx: &mut Cx<'_>) -> String {
    let obj = match schema {
        Value::Bool(true) => return "unknown".into(),
        Value::Bool(false) => return "never".into(),
        Value::Object(o) => o,
        _ => return "unknown".into(),
    };
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        if cx.resolving.contains(reference) || cx.expansions >= MAX_REF_EXPANSIONS {
            return "unknown".into();
        }
        let Some(target) = resolve_schema_ref(reference, cx.root) else { return "unknown".into() };
        cx.expansions += 1;
        cx.resolving.insert(reference.to_owned());
        let out = to_type(target, cx);
        cx.resolving.remove(reference);
        return out;
    }
    if let Some(c) = obj.get("const") {
        return js_json(c);
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        return union(values.iter().map(js_json).collect());
    }
    let variants = obj.get("anyOf").and_then(Value::as_array).or_else(|| obj.get("oneOf").and_then(Value::as_array));
    if let Some(variants) = variants {
        return union(variants.iter().map(|v| to_type(v, cx)).collect());
    }
    if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
        let parts: Vec<String> = parts.iter().map(|p| to_type(p, cx)).filter(|p| p != "unknown").collect();
        if parts.is_empty() {
            return "unknown".into();
        }
        return parts
            .iter()
            .map(|p| if p.contains(" | ") { format!("({p})") } else { p.clone() })
            .collect::<Vec<_>>()
            .join(" & ");
    }
    match obj.get("type") {
        Some(Value::Array(types)) => union(
            types
                .iter()
                .map(|t| {
                    let mut one = obj.clone();
                    one.insert("type".into(), t.clone());
                    to_type(&Value::Object(one), cx)
                })
                .collect(),
        ),
        Some(Value::String(t)) => match t.as_str() {
            "string" => "string".into(),
            "number" | "integer" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => array_type(obj, cx),
            "object" => object_type(obj, cx),
            _ => "unknown".into(),
        },
        None => {
            if obj.contains_key("properties")
                || obj.contains_key("additionalProperties")
                || obj.contains_key("required")
            {
                object_type(obj, cx)
            } else if obj.contains_key("items") || obj.contains_key("prefixItems") {
                array_type(obj, cx)
            } else {
                "unknown".into()
            }
        }
        Some(_) => "unknown".into(),
    }
}

fn array_type(obj: &serde_json::Map<String, Value>, cx: &mut Cx<'_>) -> String {
    if let Some(items) = obj.get("items").filter(|i| !i.is_array()) {
        return format!("Array<{}>", to_type(items, cx));
    }
    let tuple = obj
        .get("prefixItems")
        .and_then(Value::as_array)
        .or_else(|| obj.get("items").and_then(Value::as_array))
        .cloned()
        .unwrap_or_default();
    if tuple.is_empty() {
        return "unknown[]".into();
    }
    format!("[{}]", tuple.iter().map(|i| to_type(i, cx)).collect::<Vec<_>>().join(", "))
}

fn number_text(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}

fn constraint_tags(schema: &Value) -> String {
    let Some(property) = schema.as_object() else { return String::new() };
    let variants = property.get("anyOf").or_else(|| property.get("oneOf")).and_then(Value::as_array);
    let non_null: Vec<&Value> = variants
        .map(|v| v.iter().filter(|x| x.get("type").and_then(Value::as_str) != Some("null")).collect())
        .unwrap_or_default();
    let mut branches = vec![property.clone()];
    if non_null.len() == 1
        && let Some(b) = non_null[0].as_object()
    {
        branches.push(b.clone());
    }
    for b in &mut branches {
        for (flag, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
            if b.get(flag) == Some(&Value::Bool(true)) {
                let value = b.remove(bound).unwrap_or(Value::Null);
                b.insert(flag.into(), value);
            }
        }
    }
    let mut tags = Vec::new();
    let is_integer = |t: Option<&Value>| match t {
        Some(Value::String(s)) => s == "integer",
        Some(Value::Array(a)) => a.iter().any(|x| x == "integer"),
        _ => false,
    };
    if branches.iter().any(|b| is_integer(b.get("type"))) {
        tags.push("@integer".to_owned());
    }
    for keyword in TAG_KEYWORDS {
        let values: Vec<&Value> = branches.iter().filter_map(|b| b.get(keyword)).collect();
        if LOWER_BOUNDS.contains(&keyword) || UPPER_BOUNDS.contains(&keyword) {
            let numbers: Vec<&serde_json::Number> = values.iter().filter_map(|v| v.as_number()).collect();
            let pick = if LOWER_BOUNDS.contains(&keyword) {
                numbers.iter().max_by(|a, b| a.as_f64().partial_cmp(&b.as_f64()).unwrap_or(std::cmp::Ordering::Equal))
            } else {
                numbers.iter().min_by(|a, b| a.as_f64().partial_cmp(&b.as_f64()).unwrap_or(std::cmp::Ordering::Equal))
            };
            if let Some(n) = pick {
                tags.push(format!("@{keyword} {}", number_text(n)));
            }
            continue;
        }
        let mut seen: Vec<String> = Vec::new();
        for v in values {
            let text = match v {
                Value::Number(n) => number_text(n),
                Value::String(s) => s.clone(),
                _ => continue,
            };
            if !seen.contains(&text) {
                seen.push(text.clone());
                tags.push(format!("@{keyword} {text}"));
            }
        }
    }
    if branches.iter().any(|b| b.get("uniqueItems") == Some(&Value::Bool(true))) {
        tags.push("@uniqueItems".into());
    }
    if let Some(d) = property.get("default").filter(|d| !d.is_null()) {
        tags.push(format!("@default {}", js_json(d)));
    }
    if property.get("deprecated") == Some(&Value::Bool(true)) {
        tags.push("@deprecated".into());
    }
    tags.into_iter()
        .filter(|t| t.encode_utf16().count() <= MAX_TAG_CHARS)
        .map(|t| escape_line_terminators(&t))
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{2028}' | '\u{2029}')
}

fn escape_line_terminators(text: &str) -> String {
    text.chars().map(|c| if is_line_terminator(c) { format!("\\u{:04x}", c as u32) } else { c.to_string() }).collect()
}

fn object_type(obj: &serde_json::Map<String, Value>, cx: &mut Cx<'_>) -> String {
    let empty = serde_json::Map::new();
    let properties = obj.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let required: HashSet<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<&String> = properties.keys().collect();
    names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    let mut members: Vec<String> = names
        .iter()
        .map(|name| {
            let optional = if required.contains(name.as_str()) { "" } else { "?" };
            let key = if is_identifier(name) { (*name).clone() } else { js_json(&Value::String((*name).clone())) };
            format!("{key}{optional}: {};", to_type(&properties[name.as_str()], cx))
        })
        .collect();
    match obj.get("additionalProperties") {
        Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => members.push("[key: string]: unknown;".into()),
        Some(additional) => {
            let t = to_type(additional, cx);
            members.push(format!("[key: string]: {t};"));
        }
        None if names.is_empty() => members.push("[key: string]: unknown;".into()),
        None => {}
    }
    if members.is_empty() {
        return "{}".into();
    }
    let comments: Vec<Vec<String>> = names
        .iter()
        .map(|name| {
            let property = &properties[name.as_str()];
            let description = property.get("description").and_then(Value::as_str).map(str::trim).unwrap_or("");
            let mut lines: Vec<String> = description
                .split(is_line_terminator)
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect();
            let tags = if cx.tags { constraint_tags(property) } else { String::new() };
            if !tags.is_empty() {
                lines.push(tags);
            }
            lines
        })
        .collect();
    if comments.iter().all(Vec::is_empty) {
        return format!("{{ {} }}", members.join(" "));
    }
    let mut lines = vec!["{".to_owned()];
    for (index, comment) in comments.iter().enumerate() {
        for line in comment {
            lines.push(format!("{INDENT}// {line}"));
        }
        lines.push(format!("{INDENT}{}", members[index].replace('\n', &format!("\n{INDENT}"))));
    }
    for member in &members[names.len()..] {
        lines.push(format!("{INDENT}{member}"));
    }
    lines.push("}".into());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifiers_and_types() {
        assert_eq!(to_codemode_identifier("mcp__dev-radius__search"), "mcp__dev_radius__search");
        assert_eq!(to_codemode_identifier("9x"), "_x");
        let schema = json!({"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string", "description": "Path to the file"},
            "limit": {"type": "number"}}});
        assert_eq!(schema_to_type(&schema, None), "{\n  limit?: number;\n  // Path to the file\n  path: string;\n}");
        assert_eq!(schema_to_type(&json!({"type": "object", "properties": {}}), None), "{ [key: string]: unknown; }");
        assert_eq!(schema_to_type(&json!({"enum": ["a", 1]}), None), "\"a\" | 1");
    }
}
