//! pi's `prepareCodemodeLoadout`: while `codemode` is declared, the declared tools' descriptions
//! say how scripts call them (`codemode.mode` `on`), or the declared tools are listed in the
//! `codemode` description and their declarations hidden from requests (`only`).

use std::collections::HashSet;
use std::sync::Arc;

use pi_agent_core::{AgentTool, LoadoutChanges};
use serde_json::Value;

use super::declarations::{render_output_type, resolve_schema_ref, to_codemode_identifier};
use super::description::{CODEMODE_TOOL_NAME, ListedTool, create_codemode_description, to_codemode_declaration};
use crate::builtin_extensions::tool_search::{TOOL_SEARCH_TOOL_NAME, ToolNamespace};

/// Tools with pi's `model-only` exposure: the model calls them, scripts cannot.
const MODEL_ONLY: [&str; 2] = [CODEMODE_TOOL_NAME, TOOL_SEARCH_TOOL_NAME];

/// How the codemode tool presents the other tools (`codemode.mode`, `codemode.inlineBudget`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadoutOptions {
    /// `codemode.mode: "only"`: declared tools are listed in the description and hidden.
    pub only: bool,
    /// `codemode.inlineBudget`, in estimated tokens.
    pub inline_budget: u64,
}

/// The changes for `declared`; `guidelines` gives a tool's prompt guidelines, `namespace` its
/// namespace (an MCP server: `only` groups its listed tools under the server's heading).
pub fn prepare_codemode_loadout(
    declared: &[Arc<dyn AgentTool>],
    options: LoadoutOptions,
    guidelines: impl Fn(&str) -> Vec<String>,
    namespace: impl Fn(&str) -> Option<ToolNamespace>,
) -> LoadoutChanges {
    // The declared tools scripts may call: `direct` ones. Tools only scripts reach (MCP tools
    // with `codemode` or `deferred` exposure) are never listed, so they change nothing here.
    let callable: Vec<&Arc<dyn AgentTool>> = declared.iter().filter(|t| !MODEL_ONLY.contains(&t.name())).collect();
    let mut changes = LoadoutChanges::default();
    if !options.only {
        for tool in &callable {
            changes.descriptions.push((tool.name().to_owned(), describe_script_call(tool.as_ref())));
        }
    }
    let listed: Vec<ListedTool> = if options.only {
        callable
            .iter()
            .map(|t| ListedTool {
                declaration: to_codemode_declaration(
                    t.name(),
                    t.description(),
                    t.parameters(),
                    &guidelines(t.name()),
                    t.output_schema(),
                ),
                namespace: namespace(t.name()),
                deferred: false,
            })
            .collect()
    } else {
        Vec::new()
    };
    let description = create_codemode_description(&listed, true, Some(options.inline_budget));
    changes.descriptions.push((CODEMODE_TOOL_NAME.to_owned(), description));
    if options.only {
        changes.hidden_declarations = callable.iter().map(|t| t.name().to_owned()).collect();
    }
    changes
}

/// pi's `describeScriptCall`: the description, then how a script calls the tool.
pub fn describe_script_call(tool: &dyn AgentTool) -> String {
    let schema = tool.output_schema().unwrap_or_else(|| serde_json::json!({"type": "string"}));
    format!(
        "{}\n\nCodemode: `tools.{}(args)` resolves to {}.",
        tool.description().trim(),
        to_codemode_identifier(tool.name()),
        describe_output(tool.name(), &schema)
    )
}

/// pi's `describeOutput`: what a call resolves to, in one line.
pub fn describe_output(name: &str, schema: &Value) -> String {
    let rendered = render_output_type(Some(schema));
    if rendered == "string" {
        return "a string".into();
    }
    if let Some(fields) = describe_fields(schema, schema, 1).or_else(|| describe_union_fields(schema, schema)) {
        return format!("`{fields}`");
    }
    if !rendered.contains('\n') {
        return format!("`{rendered}`");
    }
    format!("a value; `await describeTool({})` shows its type", Value::String(name.to_owned()))
}

/// The schema a chain of local `$ref`s names (stops at remote, missing and cyclic references).
fn follow_ref<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut seen: HashSet<*const Value> = HashSet::new();
    let mut current = schema;
    while current.is_object() && seen.insert(current as *const Value) {
        let Some(reference) = current.get("$ref").and_then(Value::as_str) else { break };
        let Some(target) = resolve_schema_ref(reference, root) else { break };
        current = target;
    }
    current
}

/// pi's `describeFields`: `{ a, b?, c: { d } }` for an object schema, `const` values inline.
fn describe_fields(schema: &Value, root: &Value, depth: u32) -> Option<String> {
    let resolved = follow_ref(schema, root);
    let object = resolved.as_object()?;
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    let properties = object.get("properties")?.as_object()?;
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = properties
        .iter()
        .map(|(name, field)| {
            let nested = match follow_ref(field, root).get("const") {
                Some(constant) => Some(constant.to_string()),
                None if depth > 0 => describe_fields(field, root, depth - 1),
                None => None,
            };
            let optional = if required.contains(&name.as_str()) { "" } else { "?" };
            format!("{name}{optional}{}", nested.map(|n| format!(": {n}")).unwrap_or_default())
        })
        .collect();
    Some(format!("{{ {} }}", fields.join(", ")))
}

/// pi's `describeUnionFields`: the fields of each object variant of `anyOf` / `oneOf`.
fn describe_union_fields(schema: &Value, root: &Value) -> Option<String> {
    let resolved = follow_ref(schema, root);
    let variants = resolved.get("anyOf").filter(|v| !v.is_null()).or_else(|| resolved.get("oneOf"))?.as_array()?;
    if variants.is_empty() {
        return None;
    }
    let described: Option<Vec<String>> = variants.iter().map(|v| describe_fields(v, root, 0)).collect();
    described.map(|d| d.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outputs_are_described_as_pi_describes_them() {
        let bash = json!({"type": "object", "properties": {
            "output": {"type": "string"}, "truncated": {"type": "boolean"},
            "full_output_path": {"type": "string"}, "exit_code": {"type": "number"}},
            "required": ["output", "truncated", "exit_code"]});
        assert_eq!(describe_output("bash", &bash), "`{ output, truncated, full_output_path?, exit_code }`");
        assert_eq!(describe_output("x", &json!({"type": "string"})), "a string");
        let nested = json!({"$defs": {"R": {"type": "object", "properties": {"results": {"type": "array"}}}},
            "type": "object", "required": ["content"], "properties": {
            "content": {"type": "array"}, "action": {"const": "start"},
            "structuredContent": {"$ref": "#/$defs/R"}}});
        assert_eq!(
            describe_output("m", &nested),
            "`{ content, action?: \"start\", structuredContent?: { results? } }`"
        );
        let union = json!({"oneOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "number"}}}]});
        assert_eq!(describe_output("u", &union), "`{ a } | { b? }`");
    }
}
