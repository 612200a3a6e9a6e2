//! The output schemas of MCP tools (pi's `createMcpResultSchema`) and of the resource tools
//! (`resources.ts`): what a codemode script's call resolves to, as `describeTool()`, `ALL_TOOLS`
//! and the declared tools' "Codemode:" lines show it.

use serde_json::{Map, Value, json};

/// Keywords whose values are data, so a `$ref` key in them is not a reference.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];
/// Keywords whose values map names to schemas.
const MAP_KEYWORDS: [&str; 6] =
    ["properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"];

/// pi's `relocateSchema`: `schema` placed at `pointer` of another schema, its local `$ref`s
/// rewritten to resolve to the same subschemas.
fn relocate(schema: &Value, pointer: &str) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(|i| relocate(i, pointer)).collect()),
        Value::Object(object) => {
            let mut out = Map::new();
            for (key, value) in object {
                let moved = match (key.as_str(), value) {
                    ("$ref", Value::String(r)) if r == "#" || r.starts_with("#/") => {
                        json!(format!("{pointer}{}", &r[1..]))
                    }
                    (k, v) if DATA_KEYWORDS.contains(&k) => v.clone(),
                    (k, Value::Object(map)) if MAP_KEYWORDS.contains(&k) => {
                        Value::Object(map.iter().map(|(n, s)| (n.clone(), relocate(s, pointer))).collect())
                    }
                    (_, v) => relocate(v, pointer),
                };
                out.insert(key.clone(), moved);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// pi's `createMcpResultSchema`: the `CallToolResult` a script receives, with the tool's own
/// output schema as `structuredContent`.
pub fn mcp_result_schema(structured_content: Option<&Value>) -> Value {
    let content_block = json!({
        "type": "object",
        "properties": {
            "type": {"enum": ["text", "image", "audio", "resource_link", "resource"]},
            "text": {"type": "string"},
            "data": {"type": "string"},
            "mimeType": {"type": "string"}
        },
        "required": ["type"],
        "additionalProperties": true
    });
    let structured = match structured_content {
        Some(schema) if !schema.is_null() => relocate(schema, "#/properties/structuredContent"),
        _ => json!({}),
    };
    json!({
        "type": "object",
        "properties": {
            "content": {"type": "array", "items": content_block},
            "structuredContent": structured,
            "isError": {"type": "boolean"}
        },
        "required": ["content"],
        "additionalProperties": true
    })
}

fn listing_errors() -> Value {
    json!({
        "type": "array",
        "description": "Servers that could not be listed",
        "items": {"type": "object", "properties": {"server": {"type": "string"}, "error": {"type": "string"}}, "required": ["server", "error"]}
    })
}

/// `list_mcp_resources`' output schema.
pub fn list_resources_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "server": {"type": "string"},
            "resources": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "server": {"type": "string"}, "uri": {"type": "string"}, "name": {"type": "string"},
                    "title": {"type": "string"}, "description": {"type": "string"}, "mimeType": {"type": "string"},
                    "size": {"type": "number"}
                },
                "required": ["server", "uri", "name"]
            }},
            "nextCursor": {"type": "string"},
            "errors": listing_errors()
        },
        "required": ["resources"]
    })
}

/// `list_mcp_resource_templates`' output schema.
pub fn list_templates_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "server": {"type": "string"},
            "resourceTemplates": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "server": {"type": "string"},
                    "uriTemplate": {"type": "string", "description": "RFC 6570 URI template"},
                    "name": {"type": "string"}, "title": {"type": "string"}, "description": {"type": "string"},
                    "mimeType": {"type": "string"}
                },
                "required": ["server", "uriTemplate", "name"]
            }},
            "nextCursor": {"type": "string"},
            "errors": listing_errors()
        },
        "required": ["resourceTemplates"]
    })
}

/// `read_mcp_resource`'s output schema.
pub fn read_resource_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "server": {"type": "string"},
            "uri": {"type": "string"},
            "contents": {"type": "array", "items": {"anyOf": [
                {"type": "object", "properties": {"uri": {"type": "string"}, "mimeType": {"type": "string"}, "text": {"type": "string"}}, "required": ["uri", "text"]},
                {"type": "object", "properties": {"uri": {"type": "string"}, "mimeType": {"type": "string"}, "blob": {"type": "string", "description": "base64"}}, "required": ["uri", "blob"]}
            ]}}
        },
        "required": ["server", "uri", "contents"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_references_follow_the_schema_into_structured_content() {
        let own = json!({"$defs": {"R": {"type": "string", "const": {"$ref": "#/kept"}}}, "properties": {"r": {"$ref": "#/$defs/R"}}, "x": {"$ref": "http://remote"}});
        let schema = mcp_result_schema(Some(&own));
        let moved = &schema["properties"]["structuredContent"];
        assert_eq!(moved["properties"]["r"]["$ref"], "#/properties/structuredContent/$defs/R");
        assert_eq!(moved["$defs"]["R"]["const"]["$ref"], "#/kept", "data is not rewritten");
        assert_eq!(moved["x"]["$ref"], "http://remote");
        assert_eq!(mcp_result_schema(None)["properties"]["structuredContent"], json!({}));
    }
}
