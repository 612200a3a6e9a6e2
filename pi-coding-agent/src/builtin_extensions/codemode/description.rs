//! The `codemode` tool's model-facing texts (pi's `extensions/codemode/tool.ts`): the description
//! with its globals and the catalog of listed tools, the prompt snippet and guideline.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use super::declarations::{Declaration, render_tool_sample, to_codemode_identifier};
use crate::builtin_extensions::tool_search::ToolNamespace;

/// The tool's name.
pub const CODEMODE_TOOL_NAME: &str = "codemode";
/// The custom entry type holding one script's `store()` writes.
pub const CODEMODE_STORE_ENTRY_TYPE: &str = "codemode-store";
/// The tool's line in the system prompt's "Available tools".
pub const CODEMODE_PROMPT_SNIPPET: &str = "Run JavaScript that calls other tools";
/// The tool's system prompt guideline.
pub const CODEMODE_PROMPT_GUIDELINE: &str = "Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter large output, instead of many separate calls.";
/// Default of `codemode.inlineBudget`, in estimated tokens.
pub const DEFAULT_CODEMODE_INLINE_BUDGET: u64 = 3000;
const CHARS_PER_TOKEN: usize = 4;

const DESCRIPTION_INTRO: &str = "Run JavaScript that calls other tools. The input is raw JavaScript (not JSON, no code fence), run as an async function body in a QuickJS sandbox: top-level `await` and `return` work. No Node, file system, network, or timers.
- `await tools.<name>({ ...args })` resolves to a string, or an object if the tool's declaration says so, and rejects with an Error on failure. A tool whose declaration returns an object resolves on failure too when it returned that object; check its fields. Calls still running when the script ends are cancelled.
- Optional first line: `// @options: {\"max_output_tokens\": 10000, \"timeout_ms\": 60000}`";

/// The reference for scripts: `docs/codemode.md` of the installed documentation.
pub fn codemode_docs_path() -> PathBuf {
    crate::sdk::system_prompt::DocsPaths::default().docs.join("codemode.md")
}

fn describe_globals(models: bool) -> String {
    let mut lines = vec![
        "Globals:".to_owned(),
        "- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)`, and top-level `return` add output; `exit()` ends the script. With several text items, each starts with a `==> text N/M <==` line, and `console` lines follow the other output in one `<console_output>` block. `image()` also saves the image to a temp file and the result names its path.".to_owned(),
        "- `store(key, value)` and `load(key)` keep JSON values across codemode calls.".to_owned(),
        "- `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`: find unlisted tools, such as MCP tools.".to_owned(),
    ];
    if models {
        lines.push(format!(
            "- `models`: classifiers and image generation. Read {} first.",
            codemode_docs_path().display()
        ));
    }
    lines.join("\n")
}

/// A tool the description may list.
#[derive(Clone, Debug)]
pub struct ListedTool {
    /// Its declaration (description with guidelines).
    pub declaration: Declaration,
    /// Its namespace (an MCP server).
    pub namespace: Option<ToolNamespace>,
    /// Whether its exposure is `deferred` (never listed).
    pub deferred: bool,
}

fn render_tool_section(declaration: &Declaration) -> String {
    let id = to_codemode_identifier(&declaration.name);
    let heading =
        if id == declaration.name { format!("### `{id}`") } else { format!("### `{id}` (`{}`)", declaration.name) };
    format!("{heading}\n{}", render_tool_sample(declaration).trim())
}

struct Entry {
    name: String,
    section: String,
    cost: usize,
}

struct Group {
    namespace: Option<ToolNamespace>,
    entries: Vec<Entry>,
}

/// pi's `selectCatalog`: each round, every group places its cheapest remaining tool while it fits.
fn select_catalog(groups: &[Group], budget: Option<u64>) -> HashSet<String> {
    let Some(budget) = budget else {
        return groups.iter().flat_map(|g| g.entries.iter().map(|e| e.name.clone())).collect();
    };
    let mut queues: Vec<Vec<&Entry>> = groups
        .iter()
        .map(|g| {
            let mut q: Vec<&Entry> = g.entries.iter().collect();
            q.sort_by_key(|e| e.cost);
            q
        })
        .filter(|q| !q.is_empty())
        .collect();
    let mut shown = HashSet::new();
    let mut remaining = budget as usize;
    while !queues.is_empty() {
        queues.retain_mut(|queue| {
            let next = queue[0];
            if next.cost > remaining {
                return false;
            }
            remaining -= next.cost;
            shown.insert(next.name.clone());
            queue.remove(0);
            !queue.is_empty()
        });
    }
    shown
}

/// The description: intro, globals, and the listed tools grouped by namespace within the budget.
pub fn create_codemode_description(tools: &[ListedTool], models: bool, inline_budget: Option<u64>) -> String {
    let listed: Vec<&ListedTool> =
        tools.iter().filter(|t| t.declaration.name != CODEMODE_TOOL_NAME && !t.deferred).collect();
    let mut groups: Vec<Group> = vec![Group { namespace: None, entries: Vec::new() }];
    let mut index: HashMap<String, usize> = HashMap::new();
    for tool in &listed {
        let slot = match &tool.namespace {
            None => 0,
            Some(ns) => *index.entry(ns.name.clone()).or_insert_with(|| {
                groups.push(Group { namespace: Some(ns.clone()), entries: Vec::new() });
                groups.len() - 1
            }),
        };
        let section = render_tool_section(&tool.declaration);
        let cost = section.encode_utf16().count().div_ceil(CHARS_PER_TOKEN);
        groups[slot].entries.push(Entry { name: tool.declaration.name.clone(), section, cost });
    }
    let first = groups.remove(0);
    groups.sort_by(|a, b| {
        let (a, b) = (a.namespace.as_ref().map(|n| n.name.as_str()), b.namespace.as_ref().map(|n| n.name.as_str()));
        a.cmp(&b)
    });
    groups.insert(0, first);
    let shown = select_catalog(&groups, inline_budget);
    let mut sections = vec![DESCRIPTION_INTRO.to_owned(), describe_globals(models)];
    if listed.is_empty() {
        return sections.join("\n\n");
    }
    let mut tool_sections = vec!["Nested tools:".to_owned()];
    for group in &groups {
        let visible: Vec<&Entry> = group.entries.iter().filter(|e| shown.contains(&e.name)).collect();
        if let Some(ns) = &group.namespace {
            let listing = if visible.len() == group.entries.len() {
                ""
            } else if visible.is_empty() {
                " (tools not listed)"
            } else {
                " (some tools not listed)"
            };
            let description = ns.description.as_deref().map(str::trim).filter(|d| !d.is_empty());
            tool_sections.push(format!(
                "## {}{listing}{}",
                ns.name,
                description.map(|d| format!("\n{d}")).unwrap_or_default()
            ));
        }
        tool_sections.extend(visible.iter().map(|e| e.section.clone()));
    }
    sections.push(tool_sections.join("\n\n"));
    sections.join("\n\n")
}

/// pi's `toCodemodeDeclaration`: the description followed by the prompt guidelines.
pub fn to_codemode_declaration(
    name: &str,
    description: &str,
    parameters: &serde_json::Value,
    guidelines: &[String],
    output_schema: Option<serde_json::Value>,
) -> Declaration {
    let bullets: Vec<String> =
        guidelines.iter().map(|g| g.trim()).filter(|g| !g.is_empty()).map(|g| format!("- {g}")).collect();
    let description = if bullets.is_empty() {
        description.to_owned()
    } else {
        format!("{}\n\n{}", description.trim(), bullets.join("\n"))
    };
    Declaration {
        name: name.to_owned(),
        description,
        input_schema: Some(parameters.clone()),
        output_schema: Some(output_schema.unwrap_or_else(|| serde_json::json!({"type": "string"}))),
    }
}
