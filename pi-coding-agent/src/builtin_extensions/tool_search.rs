//! The `tool_search` tool (pi's `extensions/tool-search/`): a BM25 ranker over the metadata of
//! tools that are not declared to the model (`codemode` and `deferred` exposure), which activates
//! the matches so the next model call declares them. Activation goes through the active tool set,
//! so it is recorded in the transcript as a tool change and stays on that branch.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde_json::{Map, Value, json};
use unicode_normalization::UnicodeNormalization;

use crate::extensions::{BoxError, Extension, ExtensionApi, ToolDefinition};

/// The tool's name.
pub const TOOL_SEARCH_TOOL_NAME: &str = "tool_search";
/// Matches loaded without `limit`.
pub const DEFAULT_TOOL_SEARCH_LIMIT: usize = 8;

/// The tool's description (it never lists the searchable tools, so it stays the same as servers
/// connect).
pub const TOOL_SEARCH_DESCRIPTION: &str = "# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\nSome of the tools, such as tools of MCP servers, may not have been provided to you upfront, and you should use this tool (`tool_search`) to search for the required tools. For MCP tool discovery, always use `tool_search`.";

/// A tool's group (an MCP server): its name, description and instructions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolNamespace {
    /// `mcp__<server>`.
    pub name: String,
    /// The configured description.
    pub description: Option<String>,
    /// The server instructions.
    pub instructions: Option<String>,
}

/// A tool `tool_search` (and codemode's `searchTools`) can find.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchableTool {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its parameters schema.
    pub parameters: Value,
    /// Its namespace.
    pub namespace: Option<ToolNamespace>,
}

/// A source of tools that are not declared to the model (the MCP extension is one).
#[async_trait]
pub trait ToolCatalog: Send + Sync {
    /// Waits until the catalog's tools are known (every MCP server connected or failed).
    async fn ready(&self);
    /// The searchable tools (`codemode` or `deferred` exposure).
    fn searchable_tools(&self) -> Vec<SearchableTool>;
    /// The namespace of one of the source's tools whatever its exposure (a `direct` MCP tool's
    /// server), for codemode's listing; `None` when the tool is not the catalog's.
    fn namespace_of(&self, _name: &str) -> Option<ToolNamespace> {
        None
    }
}

const STOP_WORDS: [&str; 22] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on", "or", "that", "the",
    "this", "to", "with", "",
];

fn stem(term: &str) -> String {
    let n = term.chars().count();
    if n > 4 && term.ends_with("ies") {
        return format!("{}y", &term[..term.len() - 3]);
    }
    if n > 4 && ["ches", "shes", "sses", "xes", "zes"].iter().any(|s| term.ends_with(s)) {
        return term[..term.len() - 2].to_owned();
    }
    if n > 3 && term.ends_with('s') && !term.ends_with("ss") {
        return term[..term.len() - 1].to_owned();
    }
    term.to_owned()
}

/// Splits `aB` and `ABc` identifier boundaries with a space (pi's two camel-case regexes).
fn split_identifiers(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 && c.is_ascii_uppercase() {
            let prev = chars[i - 1];
            let lower_digit_before = prev.is_ascii_lowercase() || prev.is_ascii_digit();
            let acronym_end = prev.is_ascii_uppercase() && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if lower_digit_before || acronym_end {
                out.push(' ');
            }
        }
        out.push(c);
    }
    out
}

/// pi's `tokenize`: NFC, identifier boundaries, lowercase, words of letters, marks and digits,
/// no English stop words, naive singular forms of ASCII words.
pub fn tokenize(text: &str) -> Vec<String> {
    let normalized: String = split_identifiers(&text.nfc().collect::<String>()).to_lowercase();
    let spaced: String = normalized.chars().map(|c| if c.is_alphanumeric() || is_mark(c) { c } else { ' ' }).collect();
    spaced
        .split(' ')
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(|w| if w.bytes().all(|b| b.is_ascii_alphanumeric()) { stem(w) } else { w.to_owned() })
        .collect()
}

fn is_mark(c: char) -> bool {
    unicode_normalization::char::is_combining_mark(c)
}

fn schema_text(schema: &Value, root: &Value, parts: &mut Vec<String>, seen: &mut HashSet<String>) {
    let Some(obj) = schema.as_object() else { return };
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str)
        && let Some(target) = resolve_ref(reference, root)
        && seen.insert(reference.to_owned())
    {
        schema_text(target, root, parts, seen);
    }
    if let Some(d) = obj.get("description").and_then(Value::as_str) {
        parts.push(d.to_owned());
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, property) in props {
            parts.push(name.clone());
            schema_text(property, root, parts, seen);
        }
    }
    if let Some(items) = obj.get("items") {
        schema_text(items, root, parts, seen);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(variants) = obj.get(key).and_then(Value::as_array) {
            for v in variants {
                schema_text(v, root, parts, seen);
            }
        }
    }
}

fn resolve_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

struct Document {
    name: String,
    name_terms: HashSet<String>,
    local_name_terms: Vec<String>,
    text_counts: HashMap<String, usize>,
    text_length: usize,
    namespace_terms: HashSet<String>,
}

fn index(tool: &SearchableTool) -> Document {
    let mut parts = vec![tool.description.clone()];
    schema_text(&tool.parameters, &tool.parameters, &mut parts, &mut HashSet::new());
    let text = parts.into_iter().filter(|p| !p.trim().is_empty()).collect::<Vec<_>>().join(" ");
    let namespace_text = tool
        .namespace
        .as_ref()
        .map(|n| {
            [n.name.as_str(), n.description.as_deref().unwrap_or(""), n.instructions.as_deref().unwrap_or("")].join(" ")
        })
        .unwrap_or_default();
    let mut text_counts = HashMap::new();
    for term in tokenize(&text) {
        *text_counts.entry(term).or_insert(0) += 1;
    }
    let local = tool.name.rsplit("__").next().unwrap_or(&tool.name);
    let mut local_name_terms: Vec<String> = Vec::new();
    for t in tokenize(local) {
        if !local_name_terms.contains(&t) {
            local_name_terms.push(t);
        }
    }
    Document {
        name: tool.name.clone(),
        name_terms: tokenize(&tool.name).into_iter().collect(),
        local_name_terms,
        text_length: text_counts.values().sum(),
        text_counts,
        namespace_terms: tokenize(&namespace_text).into_iter().collect(),
    }
}

fn normalize_name(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$' { c } else { '_' })
        .collect()
}

const NAME_WEIGHT: f64 = 3.0;
const NAMESPACE_WEIGHT: f64 = 0.5;

/// pi's `Bm25Ranker` (k1 1.2, b 0.75): coverage of the query's terms first, then the score; a
/// query that is exactly a tool's name ranks it first. Returns `(name, score)`, best first.
pub fn rank(query: &str, tools: &[SearchableTool], limit: usize) -> Vec<(String, f64)> {
    let (k1, b) = (1.2_f64, 0.75_f64);
    let mut query_terms: Vec<String> = Vec::new();
    for t in tokenize(query) {
        if !query_terms.contains(&t) {
            query_terms.push(t);
        }
    }
    if query_terms.is_empty() || tools.is_empty() || limit == 0 {
        return Vec::new();
    }
    let docs: Vec<Document> = tools.iter().map(index).collect();
    let average = docs.iter().map(|d| d.text_length as f64).sum::<f64>() / docs.len() as f64;
    let average = if average == 0.0 { 1.0 } else { average };
    let n = docs.len() as f64;
    let idf: Vec<f64> = query_terms
        .iter()
        .map(|term| {
            let freq = docs
                .iter()
                .filter(|d| {
                    d.name_terms.contains(term) || d.text_counts.contains_key(term) || d.namespace_terms.contains(term)
                })
                .count() as f64;
            (1.0 + (n - freq + 0.5) / (freq + 0.5)).ln()
        })
        .collect();
    let full_name_bonus: f64 = idf.iter().sum();
    let exact_query = normalize_name(query);
    let mut matches: Vec<(String, f64, usize, bool, usize)> = Vec::new();
    for (position, doc) in docs.iter().enumerate() {
        let norm = k1 * (1.0 - b + (b * doc.text_length as f64) / average);
        let (mut score, mut covered) = (0.0, 0usize);
        for (term, idf) in query_terms.iter().zip(&idf) {
            let count = *doc.text_counts.get(term).unwrap_or(&0) as f64;
            let weight = if doc.name_terms.contains(term) { NAME_WEIGHT } else { 0.0 }
                + if doc.namespace_terms.contains(term) { NAMESPACE_WEIGHT } else { 0.0 }
                + (count * (k1 + 1.0)) / (count + norm);
            if weight > 0.0 {
                covered += 1;
            }
            score += idf * weight;
        }
        if score == 0.0 {
            continue;
        }
        if !doc.local_name_terms.is_empty() && doc.local_name_terms.iter().all(|t| query_terms.contains(t)) {
            score += full_name_bonus;
        }
        let normalized = normalize_name(&doc.name);
        let exact = normalized == exact_query || normalized.ends_with(&format!("__{exact_query}"));
        matches.push((doc.name.clone(), score, covered, exact, position));
    }
    matches.sort_by(|a, b| {
        b.3.cmp(&a.3)
            .then(b.2.cmp(&a.2))
            .then(b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal))
            .then(a.4.cmp(&b.4))
    });
    matches.into_iter().take(limit).map(|(name, score, ..)| (name, score)).collect()
}

/// The `tool_search` tool.
pub struct ToolSearchTool {
    api: ExtensionApi,
    catalogs: Vec<Arc<dyn ToolCatalog>>,
    parameters: Value,
}

impl ToolSearchTool {
    /// The tool, loading matches through `api` from `catalogs`.
    pub fn new(api: ExtensionApi, catalogs: Vec<Arc<dyn ToolCatalog>>) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["query"],
            "properties": {
                "query": {"type": "string", "description": "Search query for deferred tools."},
                "limit": {"type": "number", "description": format!("Maximum number of tools to return. Defaults to {DEFAULT_TOOL_SEARCH_LIMIT}.")}
            }
        });
        ToolSearchTool { api, catalogs, parameters }
    }
}

#[async_trait]
impl AgentTool for ToolSearchTool {
    fn name(&self) -> &str {
        TOOL_SEARCH_TOOL_NAME
    }

    fn description(&self) -> &str {
        TOOL_SEARCH_DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Map<String, Value>,
        _ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let query = args.get("query").and_then(Value::as_str).unwrap_or("");
        if query.trim().is_empty() {
            return Err("query must not be empty".into());
        }
        let limit = match args.get("limit") {
            None | Some(Value::Null) => DEFAULT_TOOL_SEARCH_LIMIT,
            Some(v) => match v.as_f64() {
                Some(l) if l > 0.0 && l.fract() == 0.0 => l as usize,
                _ => return Err("limit must be a positive integer".into()),
            },
        };
        for catalog in &self.catalogs {
            catalog.ready().await;
        }
        let active = self.api.get_active_tools().map_err(|e| e.to_string())?;
        let candidates: Vec<SearchableTool> =
            self.catalogs.iter().flat_map(|c| c.searchable_tools()).filter(|t| !active.contains(&t.name)).collect();
        let matches = rank(query, &candidates, limit);
        if !matches.is_empty() {
            let mut next = active.clone();
            next.extend(matches.iter().map(|(n, _)| n.clone()));
            self.api.set_active_tools(&next).map_err(|e| e.to_string())?;
        }
        let loaded: Vec<&SearchableTool> =
            matches.iter().filter_map(|(n, _)| candidates.iter().find(|t| &t.name == n)).collect();
        let text = if loaded.is_empty() {
            "No matching tools found.".to_owned()
        } else {
            let lines: Vec<String> = loaded
                .iter()
                .map(|t| {
                    format!(
                        "- {}: {}",
                        t.name,
                        t.description.trim().split('\n').next().unwrap_or("").trim_end_matches('\r')
                    )
                })
                .collect();
            format!(
                "Loaded {} tool{}. They are available from your next call:\n{}",
                loaded.len(),
                if loaded.len() == 1 { "" } else { "s" },
                lines.join("\n")
            )
        };
        let mut out = AgentToolResult::text(text);
        out.details = json!({"loaded": loaded.iter().map(|t| t.name.clone()).collect::<Vec<_>>()});
        Ok(out)
    }
}

/// The built-in `tool_search` extension. The tool is registered inactive unless `active`.
pub struct ToolSearchExtension {
    catalogs: Vec<Arc<dyn ToolCatalog>>,
    active: bool,
}

impl ToolSearchExtension {
    /// The extension over `catalogs`; `active` when `--tools` or `defaultTools` name it.
    pub fn new(catalogs: Vec<Arc<dyn ToolCatalog>>, active: bool) -> Self {
        ToolSearchExtension { catalogs, active }
    }
}

#[async_trait]
impl Extension for ToolSearchExtension {
    fn path(&self) -> &str {
        "builtin:tool-search"
    }

    async fn setup(&self, api: &ExtensionApi) -> Result<(), BoxError> {
        let tool: Arc<dyn AgentTool> = Arc::new(ToolSearchTool::new(api.clone(), self.catalogs.clone()));
        api.register_tool(ToolDefinition {
            tool,
            prompt_snippet: Some("Search for tools that are not loaded yet and load the matches".into()),
            prompt_guidelines: None,
        })?;
        if !self.active {
            // Registered inactive (pi's `defaultActive: false`): leave the loadout unless asked.
            let api2 = api.clone();
            api.on_notify("session_start", move |_event, _ctx| {
                if let Ok(active) = api2.get_active_tools()
                    && active.iter().any(|n| n == TOOL_SEARCH_TOOL_NAME)
                {
                    let rest: Vec<String> = active.into_iter().filter(|n| n != TOOL_SEARCH_TOOL_NAME).collect();
                    let _ = api2.set_active_tools(&rest);
                }
                Box::pin(async { Ok(None) })
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> SearchableTool {
        SearchableTool { name: name.into(), description: description.into(), parameters: json!({}), namespace: None }
    }

    #[test]
    fn tokenize_like_pi() {
        assert_eq!(
            tokenize("getHTTPResponse issues searches the class"),
            vec!["get", "http", "response", "issue", "search", "class"]
        );
        assert_eq!(tokenize("dev-radius_tool"), vec!["dev", "radiu", "tool"]);
    }

    #[test]
    fn ranking_prefers_coverage_names_and_exact_queries() {
        let tools = vec![
            tool("mcp__shot__window", "Manage windows"),
            tool("mcp__shot__capture", "Take a screenshot of a window"),
            tool("mcp__gh__issue_read", "Read an issue"),
        ];
        let ranked = rank("screenshot window", &tools, 8);
        assert_eq!(ranked[0].0, "mcp__shot__capture");
        assert_eq!(rank("issue_read", &tools, 8)[0].0, "mcp__gh__issue_read");
        assert!(rank("unrelated", &tools, 8).is_empty());
        assert_eq!(rank("window", &tools, 1).len(), 1);
    }
}
