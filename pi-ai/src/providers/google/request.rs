//! The `generateContent` body around the contents (pi's `buildParams` after the `@google/genai`
//! SDK's conversion): `systemInstruction`, `tools`, `toolConfig`, `generationConfig` with the
//! thinking configuration.

use serde_json::{Map, Value, json};

use crate::models::clamp_thinking_level;
use crate::options::{StreamOptions, ToolChoice};
use crate::providers::constrained;
use crate::types::{Model, ThinkingLevel, Tool};

use super::wire::gemini_major_version;

/// pi's `usesGoogleThinkingLevel`: Gemini 3 Pro/Flash, Gemini 4+, the `-latest` Flash aliases and
/// Gemma 4 take a discrete `thinkingLevel` instead of a token budget.
pub fn uses_thinking_level(model: &Model) -> bool {
    let id = model.id.to_ascii_lowercase();
    let gemini3 = id.match_indices("gemini-3").any(|(i, m)| {
        let mut rest = &id[i + m.len()..];
        if let Some(r) = rest.strip_prefix('.') {
            let n = r.chars().take_while(char::is_ascii_digit).count();
            if n == 0 {
                return false;
            }
            rest = &r[n..];
        }
        rest.starts_with("-pro") || rest.starts_with("-flash")
    });
    let gemini4 = id.match_indices("gemini-").any(|(i, _)| {
        let rest = &id[i + "gemini-".len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        match digits.len() {
            0 => false,
            1 => digits.as_bytes()[0] >= b'4',
            _ => !digits.starts_with('0'),
        }
    });
    let gemma4 = id.contains("gemma4") || id.contains("gemma-4");
    gemini3 || gemini4 || id == "gemini-flash-latest" || id == "gemini-flash-lite-latest" || gemma4
}

/// pi's `resolveGoogleThinkingLevel`: the model's mapping of `level` (lower-cased), which must be
/// one of Google's four levels.
pub fn resolve_level(model: &Model, level: ThinkingLevel) -> Result<&'static str, String> {
    let mapped = model.thinking_level_map.as_ref().and_then(|m| m.get(level.as_str()));
    let resolved = match mapped {
        Some(Value::String(s)) => s.to_ascii_lowercase(),
        _ => level.as_str().to_owned(),
    };
    match resolved.as_str() {
        "minimal" => Ok("MINIMAL"),
        "low" => Ok("LOW"),
        "medium" => Ok("MEDIUM"),
        "high" => Ok("HIGH"),
        _ => Err(format!(
            "Unsupported Google thinking level mapping for {}/{}: {} -> {}",
            model.provider,
            model.id,
            level.as_str(),
            match mapped {
                None => "undefined".to_owned(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            }
        )),
    }
}

/// pi's `getGoogleBudget` for a Google level (`MINIMAL`…`HIGH`).
fn budget(model: &Model, level: &str, options: &StreamOptions) -> i64 {
    let custom = options.thinking_budgets.and_then(|b| match level {
        "MINIMAL" => b.minimal,
        "LOW" => b.low,
        "MEDIUM" => b.medium,
        _ => b.high,
    });
    if let Some(b) = custom {
        return i64::try_from(b).unwrap_or(i64::MAX);
    }
    let table: Option<[i64; 4]> = if model.id.contains("2.5-pro") {
        Some([128, 2048, 8192, 32768])
    } else if model.id.contains("2.5-flash-lite") && model.api == super::GEMINI_API {
        Some([512, 2048, 8192, 24576])
    } else if model.id.contains("2.5-flash") {
        Some([128, 2048, 8192, 24576])
    } else {
        None
    };
    let index = ["MINIMAL", "LOW", "MEDIUM", "HIGH"].iter().position(|l| *l == level).unwrap_or(3);
    table.map_or(-1, |t| t[index])
}

/// The `thinkingConfig` of a reasoning model (`None` for others), as pi's `streamSimple` plans it.
pub fn thinking_config(model: &Model, options: &StreamOptions) -> Result<Option<Value>, String> {
    if !model.reasoning {
        // pi still validates the level mapping of a requested level.
        return Ok(None);
    }
    let level = options.reasoning.map(|l| clamp_thinking_level(model, l)).filter(|l| *l != ThinkingLevel::Off);
    let Some(level) = level else {
        if !uses_thinking_level(model) {
            return Ok(Some(json!({"thinkingBudget": 0})));
        }
        let fallback = clamp_thinking_level(model, ThinkingLevel::Off);
        if fallback == ThinkingLevel::Off {
            return Ok(Some(json!({"thinkingBudget": 0})));
        }
        return Ok(Some(json!({"thinkingLevel": resolve_level(model, fallback)?})));
    };
    let google = resolve_level(model, level)?;
    Ok(Some(if uses_thinking_level(model) {
        json!({"includeThoughts": true, "thinkingLevel": google})
    } else {
        json!({"includeThoughts": true, "thinkingBudget": budget(model, google, options)})
    }))
}

const META_KEYS: [&str; 8] =
    ["$schema", "$id", "$anchor", "$dynamicAnchor", "$vocabulary", "$comment", "$defs", "definitions"];
const NAME_MAPS: [&str; 6] =
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];
const SUBSCHEMAS: [&str; 16] = [
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// pi's `rewriteConstAsEnum`: string and number `const`s become one-value `enum`s (Gemini ignores
/// `const` in `parametersJsonSchema`).
pub fn rewrite_const_as_enum(schema: &Value, is_name_map: bool) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(|i| rewrite_const_as_enum(i, false)).collect()),
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let v = if is_name_map || SUBSCHEMAS.contains(&k.as_str()) {
                    rewrite_const_as_enum(v, false)
                } else if NAME_MAPS.contains(&k.as_str()) {
                    rewrite_const_as_enum(v, true)
                } else {
                    v.clone()
                };
                out.insert(k.clone(), v);
            }
            if !is_name_map
                && !out.contains_key("enum")
                && let Some(c) = out.get("const").filter(|c| c.is_string() || c.is_number()).cloned()
            {
                out.shift_remove("const");
                out.insert("enum".into(), Value::Array(vec![c]));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// pi's `sanitizeForOpenApi` (for the legacy `parameters` field): meta declarations removed.
pub fn sanitize_for_open_api(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !META_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), sanitize_for_open_api(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// pi's `supportsGoogleStrictToolSampling`: Gemini 3+.
pub fn supports_strict(model: &Model) -> bool {
    gemini_major_version(&model.id) >= Some(3)
}

/// `[{functionDeclarations: [{name, description, parametersJsonSchema}]}]`.
pub fn convert_tools(tools: &[Tool], supports_strict: bool) -> Value {
    let declarations: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let (_, parameters) = constrained::tool_parameters(tool, supports_strict, None);
            json!({"name": tool.name, "description": tool.description, "parametersJsonSchema": rewrite_const_as_enum(&parameters, false)})
        })
        .collect();
    json!([{"functionDeclarations": declarations}])
}

/// pi's `resolveGoogleFunctionCallingMode`.
pub fn function_calling_mode(
    tools: &[Tool],
    choice: Option<ToolChoice>,
    supports_strict: bool,
) -> Option<&'static str> {
    if choice == Some(ToolChoice::None) {
        return Some("NONE");
    }
    if tools.iter().any(|t| constrained::resolve_strict(t, supports_strict, None) == Ok(true)) {
        return Some("VALIDATED");
    }
    choice.map(|_| "AUTO")
}

/// The top-level body fields (with `contents: null` in place).
pub(crate) fn body_fields(
    model: &Model,
    system: &str,
    tools: &[Tool],
    options: &StreamOptions,
) -> Result<Map<String, Value>, String> {
    let strict = supports_strict(model);
    let mut p = Map::new();
    p.insert("contents".into(), Value::Null);
    if !system.is_empty() {
        p.insert("systemInstruction".into(), json!({"parts": [{"text": system}], "role": "user"}));
    }
    if !tools.is_empty() {
        p.insert("tools".into(), convert_tools(tools, strict));
        if let Some(mode) = function_calling_mode(tools, options.tool_choice, strict) {
            p.insert("toolConfig".into(), json!({"functionCallingConfig": {"mode": mode}}));
        }
    }
    let mut generation = Map::new();
    if let Some(t) = options.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    if let Some(max) = options.max_tokens {
        generation.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(thinking) = thinking_config(model, options)? {
        generation.insert("thinkingConfig".into(), thinking);
    }
    if !generation.is_empty() {
        p.insert("generationConfig".into(), Value::Object(generation));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str) -> Model {
        Model { id: id.into(), ..Default::default() }
    }

    #[test]
    fn thinking_level_models() {
        for id in [
            "gemini-3-pro-preview",
            "gemini-3.1-pro-preview",
            "gemini-3.8-flash",
            "gemini-4-argon",
            "gemma-4-x",
            "gemma4-y",
            "gemini-flash-latest",
        ] {
            assert!(uses_thinking_level(&model(id)), "{id}");
        }
        for id in ["gemini-2.5-flash", "gemini-3-nano", "gemini-3.-pro", "gemma-3"] {
            assert!(!uses_thinking_level(&model(id)), "{id}");
        }
    }

    #[test]
    fn const_becomes_enum_outside_name_maps() {
        let s = json!({"type": "object", "properties": {"const": {"const": "x"}, "n": {"const": 1}}, "const": true});
        assert_eq!(
            rewrite_const_as_enum(&s, false),
            json!({"type": "object", "properties": {"const": {"enum": ["x"]}, "n": {"enum": [1]}}, "const": true})
        );
    }

    #[test]
    fn modes() {
        let t = vec![Tool::new("a", "d", json!({"type": "object"}))];
        assert_eq!(function_calling_mode(&t, None, true), None);
        assert_eq!(function_calling_mode(&t, Some(ToolChoice::Auto), true), Some("AUTO"));
        assert_eq!(function_calling_mode(&t, Some(ToolChoice::None), true), Some("NONE"));
    }
}
