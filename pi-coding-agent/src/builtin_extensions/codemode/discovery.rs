//! `searchTools()`, `describeTool()` and `describeNamespace()` (pi's `createDiscoveryGlobals`):
//! BM25 search and lookups over the script's callable tools and their namespaces.

use serde_json::{Value, json};

use super::declarations::to_codemode_identifier;
use super::sandbox::SandboxGlobal;
use crate::builtin_extensions::tool_search::{DEFAULT_TOOL_SEARCH_LIMIT, SearchableTool, ToolNamespace, rank};

/// A tool a script may call.
#[derive(Clone, Debug)]
pub struct Callable {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its parameters schema.
    pub parameters: Value,
    /// Its namespace (an MCP server).
    pub namespace: Option<ToolNamespace>,
    /// Its description and declaration (`ALL_TOOLS`, `describeTool()`).
    pub sample: String,
}

/// The discovery globals, all taking their arguments spread.
pub fn discovery_globals() -> Vec<SandboxGlobal> {
    ["searchTools", "describeTool", "describeNamespace"]
        .into_iter()
        .map(|name| SandboxGlobal { name: name.into(), spread: true })
        .collect()
}

/// Whether `query` names the namespace, as written or as the same identifier.
fn is_namespace_name(namespace: &ToolNamespace, query: &str) -> bool {
    namespace.name == query || to_codemode_identifier(&namespace.name) == to_codemode_identifier(query)
}

fn search_tools(tools: &[Callable], args: &[Value]) -> Result<Option<Value>, String> {
    let query = args.first().and_then(Value::as_str).ok_or("searchTools() expects a query string")?;
    let options = args.get(1).filter(|o| o.is_object());
    let limit = match options.and_then(|o| o.get("limit")) {
        None | Some(Value::Null) => DEFAULT_TOOL_SEARCH_LIMIT,
        Some(v) => match v.as_f64() {
            Some(l) if l > 0.0 && l.fract() == 0.0 => l as usize,
            _ => return Err("searchTools() limit must be a positive integer".into()),
        },
    };
    let namespace = match options.and_then(|o| o.get("namespace")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err("searchTools() namespace must be a string".into()),
    };
    let documents: Vec<SearchableTool> = tools
        .iter()
        .filter(|t| match (namespace, &t.namespace) {
            (Some(q), Some(ns)) if !q.is_empty() => is_namespace_name(ns, q),
            (Some(q), None) if !q.is_empty() => false,
            _ => true,
        })
        .map(|t| SearchableTool {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.parameters.clone(),
            namespace: t.namespace.clone(),
        })
        .collect();
    let matches = rank(query, &documents, limit);
    let entries: Vec<Value> = matches
        .iter()
        .filter_map(|(name, _)| tools.iter().find(|t| &t.name == name))
        .map(|t| json!({"name": to_codemode_identifier(&t.name), "description": t.sample}))
        .collect();
    Ok(Some(Value::Array(entries)))
}

/// Runs discovery global `name` with the script's spread arguments.
pub fn call_discovery_global(tools: &[Callable], name: &str, args: &[Value]) -> Result<Option<Value>, String> {
    match name {
        "searchTools" => search_tools(tools, args),
        "describeTool" => {
            let name = args.first().and_then(Value::as_str).ok_or("describeTool() expects a tool name")?;
            Ok(tools
                .iter()
                .find(|t| t.name == name || to_codemode_identifier(&t.name) == name)
                .map(|t| Value::String(t.sample.clone())))
        }
        "describeNamespace" => {
            let query = args.first().and_then(Value::as_str).ok_or("describeNamespace() expects a namespace name")?;
            let mut found: Option<&ToolNamespace> = None;
            let mut names = Vec::new();
            for tool in tools {
                let Some(ns) = tool.namespace.as_ref().filter(|ns| is_namespace_name(ns, query)) else { continue };
                found.get_or_insert(ns);
                names.push(Value::String(to_codemode_identifier(&tool.name)));
            }
            Ok(found.map(|ns| {
                let mut out = json!({"name": ns.name});
                if let Some(d) = ns.description.as_ref().filter(|d| !d.is_empty()) {
                    out["description"] = json!(d);
                }
                if let Some(i) = ns.instructions.as_ref().filter(|i| !i.is_empty()) {
                    out["instructions"] = json!(i);
                }
                out["tools"] = Value::Array(names);
                out
            }))
        }
        other => Err(format!("Unknown global \"{other}\"")),
    }
}
