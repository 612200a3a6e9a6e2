//! pi's `models.json` schema check: `config_schema.json` (generated from pi 1.6.0's TypeBox
//! `ModelsConfigSchema` by `scripts/fixtures/models_json_schema.mjs`) and a validator of the
//! keywords it uses, reporting errors as TypeBox does: its order (per schema `type`; for objects
//! `required`, `patternProperties` in the value's key order, `properties` in the schema's order;
//! for arrays `items`, `maxItems`; `minLength`; `exclusiveMinimum`, `maximum`, `minimum`; `const`,
//! `enum`, then `anyOf`, whose failed branches' errors precede its own), its messages and its cap
//! of 8 errors per error list. The schema is parsed on the first check only (a `models.json`
//! exists).

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// TypeBox's `maxErrors`.
const MAX_ERRORS: usize = 8;

/// The schema, parsed once.
fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        // The generated file is part of the crate; a broken one fails every models.json check.
        serde_json::from_str(include_str!("config_schema.json")).unwrap_or(Value::Bool(false))
    })
}

/// One schema error, as TypeBox reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaError {
    /// The instance path's keys (`["providers", "p", "models", "0"]`).
    pub instance_path: Vec<String>,
    /// The keyword that failed (`type`, `required`, …).
    pub keyword: &'static str,
    /// The missing properties of a `required` error.
    pub required: Vec<String>,
    /// TypeBox's message (`must be string`).
    pub message: String,
}

impl SchemaError {
    /// pi's `formatValidationPath`: the dotted path, the first missing property appended for a
    /// `required` error, `root` for the whole file.
    pub fn path(&self) -> String {
        let mut parts = self.instance_path.clone();
        if self.keyword == "required"
            && let Some(first) = self.required.first()
        {
            parts.push(first.clone());
        }
        if parts.is_empty() { "root".to_owned() } else { parts.join(".") }
    }
}

/// An error list with TypeBox's capacity.
#[derive(Default)]
struct Errors(Vec<SchemaError>);

impl Errors {
    /// Adds an error unless the list is full; always "invalid".
    fn add(&mut self, path: &[String], keyword: &'static str, message: String) -> bool {
        self.add_error(SchemaError { instance_path: path.to_vec(), keyword, required: Vec::new(), message })
    }

    fn add_error(&mut self, error: SchemaError) -> bool {
        if self.0.len() < MAX_ERRORS {
            self.0.push(error);
        }
        false
    }
}

/// The schema errors of a parsed `models.json`, in TypeBox's order (at most 8); empty when valid.
pub fn schema_errors(value: &Value) -> Vec<SchemaError> {
    let mut errors = Errors::default();
    check(schema(), value, &mut Vec::new(), &mut errors);
    errors.0
}

/// A JavaScript number as `String(n)` writes the schema's limits (integers without `.0`).
fn js_number(n: &Value) -> String {
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{}", f as i64),
        Some(f) => f.to_string(),
        None => n.to_string(),
    }
}

/// Whether `value` is of the JSON Schema type `name`.
fn is_type(name: &str, value: &Value) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|f| f.fract() == 0.0 && f.is_finite()),
        _ => true,
    }
}

/// Whether `key` matches a `patternProperties` pattern. pi's schema uses only `^.*$` (keys
/// without a line terminator); any other pattern is treated as matching every key.
fn pattern_matches(pattern: &str, key: &str) -> bool {
    pattern != "^.*$" || !key.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
}

/// TypeBox's `ErrorSchema`: every keyword of `schema` against `value`, errors added to `errors`.
fn check(schema: &Value, value: &Value, path: &mut Vec<String>, errors: &mut Errors) -> bool {
    let Some(s) = schema.as_object() else { return schema.as_bool().unwrap_or(true) };
    let mut valid = true;
    if let Some(Value::String(t)) = s.get("type")
        && !is_type(t, value)
    {
        valid &= errors.add(path, "type", format!("must be {t}"));
    }
    match value {
        Value::Object(object) => valid &= check_object(s, object, path, errors),
        Value::Array(items) => valid &= check_array(s, items, path, errors),
        Value::String(text) => {
            if let Some(limit) = s.get("minLength").and_then(Value::as_u64)
                && (text.chars().count() as u64) < limit
            {
                valid &= errors.add(path, "minLength", format!("must not have fewer than {limit} characters"));
            }
        }
        Value::Number(n) => valid &= check_number(s, n.as_f64().unwrap_or(f64::NAN), path, errors),
        _ => {}
    }
    if let Some(constant) = s.get("const")
        && constant != value
    {
        valid &= errors.add(path, "const", "must be equal to constant".into());
    }
    if let Some(Value::Array(allowed)) = s.get("enum")
        && !allowed.contains(value)
    {
        valid &= errors.add(path, "enum", "must be equal to one of the allowed values".into());
    }
    if let Some(Value::Array(branches)) = s.get("anyOf") {
        valid &= check_any_of(branches, value, path, errors);
    }
    valid
}

/// `anyOf`: valid when a branch is; otherwise each failed branch's errors, then its own.
fn check_any_of(branches: &[Value], value: &Value, path: &mut Vec<String>, errors: &mut Errors) -> bool {
    let mut failed = Vec::new();
    for branch in branches {
        let mut own = Errors::default();
        if check(branch, value, path, &mut own) {
            return true;
        }
        failed.push(own);
    }
    for error in failed.into_iter().flat_map(|e| e.0) {
        errors.add_error(error);
    }
    errors.add(path, "anyOf", "must match a schema in anyOf".into())
}

/// The object keywords: `required`, `patternProperties`, `properties` (`additionalProperties` is
/// always `true` in pi's schema).
fn check_object(
    s: &Map<String, Value>,
    object: &Map<String, Value>,
    path: &mut Vec<String>,
    errors: &mut Errors,
) -> bool {
    let mut valid = true;
    if let Some(Value::Array(required)) = s.get("required") {
        let missing: Vec<String> =
            required.iter().filter_map(Value::as_str).filter(|k| !object.contains_key(*k)).map(str::to_owned).collect();
        if !missing.is_empty() {
            let message = format!("must have required properties {}", missing.join(", "));
            valid &= errors.add_error(SchemaError {
                instance_path: path.clone(),
                keyword: "required",
                required: missing,
                message,
            });
        }
    }
    if let Some(Value::Object(patterns)) = s.get("patternProperties") {
        for (pattern, sub) in patterns {
            for (key, item) in object.iter().filter(|(k, _)| pattern_matches(pattern, k)) {
                path.push(key.clone());
                valid &= check(sub, item, path, errors);
                path.pop();
            }
        }
    }
    if let Some(Value::Object(properties)) = s.get("properties") {
        for (key, sub) in properties {
            if let Some(item) = object.get(key) {
                path.push(key.clone());
                valid &= check(sub, item, path, errors);
                path.pop();
            }
        }
    }
    valid
}

/// The array keywords: `items`, then `maxItems`.
fn check_array(s: &Map<String, Value>, items: &[Value], path: &mut Vec<String>, errors: &mut Errors) -> bool {
    let mut valid = true;
    if let Some(sub) = s.get("items") {
        for (i, item) in items.iter().enumerate() {
            path.push(i.to_string());
            valid &= check(sub, item, path, errors);
            path.pop();
        }
    }
    if let Some(limit) = s.get("maxItems").and_then(Value::as_u64)
        && items.len() as u64 > limit
    {
        valid &= errors.add(path, "maxItems", format!("must not have more than {limit} items"));
    }
    valid
}

/// The number keywords: `exclusiveMinimum`, `maximum`, `minimum`.
fn check_number(s: &Map<String, Value>, n: f64, path: &[String], errors: &mut Errors) -> bool {
    let mut valid = true;
    let limits = [("exclusiveMinimum", ">"), ("maximum", "<="), ("minimum", ">=")];
    for (keyword, comparison) in limits {
        let Some(limit) = s.get(keyword) else { continue };
        let bound = limit.as_f64().unwrap_or(f64::NAN);
        let ok = match comparison {
            ">" => n > bound,
            "<=" => n <= bound,
            _ => n >= bound,
        };
        if !ok {
            valid &= errors.add(path, keyword, format!("must be {comparison} {}", js_number(limit)));
        }
    }
    valid
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(text: &str) -> Vec<String> {
        let value: Value = serde_json::from_str(text).expect("test JSON");
        schema_errors(&value).iter().map(|e| format!("{}: {}", e.path(), e.message)).collect()
    }

    #[test]
    fn the_generated_schema_parses_and_accepts_a_plain_file() {
        assert!(schema().is_object());
        assert!(messages(r#"{"providers":{"p":{"baseUrl":"u","models":[{"id":"m"}]}}}"#).is_empty());
    }

    #[test]
    fn required_names_the_first_missing_property() {
        assert_eq!(messages("{}"), ["providers: must have required properties providers"]);
        assert_eq!(messages("5"), ["root: must be object"]);
    }

    #[test]
    fn at_most_eight_errors() {
        let many: Vec<String> = (0..12).map(|i| format!(r#""p{i}":3"#)).collect();
        assert_eq!(messages(&format!(r#"{{"providers":{{{}}}}}"#, many.join(","))).len(), 8);
    }
}
