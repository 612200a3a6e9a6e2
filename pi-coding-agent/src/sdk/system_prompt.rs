//! The coding agent's system prompt, built from named sections as pi 1.6.0 builds it.
//!
//! The prompt is persisted as the transcript's first system message: `content: ""` plus
//! `sections` (`preamble`, `tools`, `rules`, `docs`, `addendum`, `project_context`, `skills`,
//! `cwd`, custom ones). Later changes are section patches ([`diff_system_prompt_sections`]).

use std::path::PathBuf;

use pi_ai::Sections;
use thiserror::Error;

use super::skills::{Skill, format_skills_for_prompt, skill_reader};

/// The built-in tools' prompt contributions: `(name, snippet, guidelines)`.
pub const BUILTIN_TOOL_PROMPTS: &[(&str, &str, &[&str])] = &[
    ("read", "Read file contents", &["Use read to examine files instead of cat or sed."]),
    (
        "bash",
        "Execute bash commands (ls, grep, find, etc.)",
        &["You can inspect PI_* environment variables for current model and session details."],
    ),
    (
        "powershell",
        "Execute PowerShell commands",
        &["You can inspect PI_* environment variables for current model and session details."],
    ),
    (
        "edit",
        "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
        &[
            "Use edit for targeted changes. Batch changes to one file in a single call.",
            "Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and non-overlapping; merge nearby changes without including large unchanged regions.",
        ],
    ),
    ("write", "Create or overwrite files", &["Use write only for new files or complete rewrites."]),
    ("grep", "Search file contents for patterns (respects .gitignore)", &[]),
    ("find", "Find files by glob pattern (respects .gitignore)", &[]),
    ("ls", "List directory contents", &[]),
];

/// The default active tools.
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

const PREAMBLE: &str = "You are a coding assistant running inside pi, a coding agent harness. Help users inspect files, run commands, and modify code.";

/// Where the `docs` section points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocsPaths {
    /// Main documentation (a README).
    pub readme: PathBuf,
    /// Additional docs directory.
    pub docs: PathBuf,
    /// Examples directory.
    pub examples: PathBuf,
}

impl Default for DocsPaths {
    fn default() -> Self {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        DocsPaths { readme: root.join("README.md"), docs: root.join("docs"), examples: root.join("examples") }
    }
}

/// A context file (`AGENTS.md`, `CLAUDE.md`, …) included in the prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFile {
    /// Its path, as shown to the model.
    pub path: String,
    /// Its content.
    pub content: String,
}

/// Inputs of the system prompt (pi's `BuildSystemPromptOptions`).
#[derive(Clone, Debug, Default)]
pub struct SystemPromptOptions {
    /// Replaces preamble, tools, rules and docs.
    pub custom_prompt: Option<String>,
    /// An opaque prompt that replaces everything (no sections).
    pub force_system_prompt: Option<String>,
    /// Active tools, in order (default: read, bash, edit, write).
    pub selected_tools: Option<Vec<String>>,
    /// Tools that are active but not declared.
    pub hidden_tools: Vec<String>,
    /// One-line snippet per tool name.
    pub tool_snippets: Vec<(String, String)>,
    /// Guidelines per tool name.
    pub tool_guidelines: Vec<(String, Vec<String>)>,
    /// Extra guidelines.
    pub prompt_guidelines: Vec<String>,
    /// Appended as the `addendum` section.
    pub append_system_prompt: String,
    /// Custom sections (`[a-z][a-z0-9_-]*`, not `preamble`).
    pub sections: Vec<(String, String)>,
    /// The working directory.
    pub cwd: String,
    /// Project context files.
    pub context_files: Vec<ContextFile>,
    /// Paths of the documentation the `docs` section names.
    pub docs: DocsPaths,
    /// Skills listed in the `skills` section (only when `read` or `bash` is active, as in pi).
    pub skills: Vec<Skill>,
}

impl SystemPromptOptions {
    /// Options with the built-in tools' snippets and guidelines.
    pub fn with_builtin_tools(cwd: impl Into<String>) -> Self {
        SystemPromptOptions {
            tool_snippets: BUILTIN_TOOL_PROMPTS.iter().map(|(n, s, _)| ((*n).to_owned(), (*s).to_owned())).collect(),
            tool_guidelines: BUILTIN_TOOL_PROMPTS
                .iter()
                .map(|(n, _, g)| ((*n).to_owned(), g.iter().map(|s| (*s).to_owned()).collect()))
                .collect(),
            cwd: cwd.into(),
            ..Default::default()
        }
    }

    fn selected(&self) -> Vec<String> {
        self.selected_tools.clone().unwrap_or_else(|| DEFAULT_TOOLS.iter().map(|s| (*s).to_owned()).collect())
    }
}

/// A bad custom section name.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("Invalid system prompt section name: {0}")]
pub struct InvalidSectionName(pub String);

fn valid_section_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && name != "preamble"
}

fn build_rules(selected: &[String], options: &SystemPromptOptions) -> String {
    let mut rules: Vec<String> = Vec::new();
    let mut add = |rule: &str| {
        let r = rule.trim();
        if !r.is_empty() && !rules.iter().any(|x| x == r) {
            rules.push(r.to_owned());
        }
    };
    let has = |n: &str| selected.iter().any(|s| s == n);
    let (bash, ps) = (has("bash"), has("powershell"));
    if (bash || ps) && !has("grep") && !has("find") && !has("ls") {
        if bash && ps {
            add("Use bash or PowerShell for file operations like listing, searching, and finding files");
        } else if ps {
            add("Use PowerShell for file operations like listing, searching, and finding files");
        } else {
            add("Use bash for file operations like ls, rg, find");
        }
    }
    for name in selected {
        for (tool, guidelines) in &options.tool_guidelines {
            if tool == name {
                for g in guidelines {
                    add(g);
                }
            }
        }
    }
    for g in &options.prompt_guidelines {
        add(g);
    }
    add("Be concise in your responses");
    add("Show file paths clearly when working with files");
    rules.iter().map(|r| format!("- {r}")).collect::<Vec<_>>().join("\n")
}

/// The ordered prompt sections (pi's `buildSystemPromptSections`): `preamble` as is, every other
/// section wrapped as `<name>\n…\n</name>`.
///
/// ```
/// use pi_coding_agent::sdk::system_prompt::{SystemPromptOptions, build_system_prompt_sections};
/// let s = build_system_prompt_sections(&SystemPromptOptions::with_builtin_tools("/tmp/proj")).unwrap();
/// assert_eq!(s.keys().collect::<Vec<_>>(), ["preamble", "tools", "rules", "docs", "cwd"]);
/// assert_eq!(s.get("cwd"), Some(Some("<cwd>\n/tmp/proj\n</cwd>")));
/// ```
pub fn build_system_prompt_sections(options: &SystemPromptOptions) -> Result<Sections, InvalidSectionName> {
    for (name, _) in &options.sections {
        if !valid_section_name(name) {
            return Err(InvalidSectionName(name.clone()));
        }
    }
    let selected = options.selected();
    let declared: Vec<String> = selected.iter().filter(|n| !options.hidden_tools.contains(n)).cloned().collect();
    let mut parts: Vec<(String, String)> = Vec::new();
    let mut set = |name: &str, content: String| {
        if let Some(slot) = parts.iter_mut().find(|(n, _)| n == name) {
            slot.1 = content;
        } else {
            parts.push((name.to_owned(), content));
        }
    };
    match &options.custom_prompt {
        Some(custom) if !custom.is_empty() => set("preamble", custom.clone()),
        _ => {
            set("preamble", PREAMBLE.to_owned());
            let snippet = |name: &str| {
                options.tool_snippets.iter().find(|(n, s)| n == name && !s.is_empty()).map(|(_, s)| s.as_str())
            };
            let visible: Vec<String> =
                declared.iter().filter_map(|n| snippet(n).map(|s| format!("- {n}: {s}"))).collect();
            let tools = if visible.is_empty() { "(none)".to_owned() } else { visible.join("\n") };
            set("tools", format!("{tools}\n\nAdditional tools may be available."));
            set("rules", build_rules(&declared, options));
            let d = &options.docs;
            set(
                "docs",
                format!(
                    "Pi documentation (read only when the user asks about the harness itself, its SDK, extensions, themes, skills, or TUI):
- Main documentation: {}
- Additional docs: {}
- Examples: {} (extensions, custom tools, SDK)
- When reading pi docs or examples, resolve docs/... under Additional docs and examples/... under Examples, not the current working directory
- When asked about: extensions (docs/extensions.md, examples/extensions/), themes (docs/themes.md), skills (docs/skills.md), prompt templates (docs/prompt-templates.md), TUI components (docs/tui.md), keybindings (docs/keybindings.md), SDK integrations (docs/sdk.md), custom providers (docs/custom-provider.md), adding models (docs/models.md), packages (docs/packages.md), environment variables (docs/environment-variables.md), MCP servers (docs/mcp.md), codemode scripts and non-LLM models such as classifiers and image models (docs/codemode.md)
- Before implementing harness changes, read the relevant docs and examples in full, following related cross-references.",
                    d.readme.display(),
                    d.docs.display(),
                    d.examples.display()
                ),
            );
        }
    }
    if !options.append_system_prompt.is_empty() {
        set("addendum", options.append_system_prompt.clone());
    }
    if !options.context_files.is_empty() {
        let mut text = vec!["Project-specific instructions and guidelines:".to_owned()];
        text.extend(
            options
                .context_files
                .iter()
                .map(|f| format!("<project_instructions path=\"{}\">\n{}\n</project_instructions>", f.path, f.content)),
        );
        set("project_context", text.join("\n\n"));
    }
    if let Some(reader) = skill_reader(&selected, &options.hidden_tools)
        && !options.skills.is_empty()
    {
        let listing = format_skills_for_prompt(&options.skills, reader);
        if !listing.is_empty() {
            set("skills", listing);
        }
    }
    set("cwd", options.cwd.replace('\\', "/"));
    for (name, content) in &options.sections {
        if !content.is_empty() {
            set(name, content.clone());
        }
    }
    let mut sections = Sections::new();
    for (name, content) in parts {
        if name == "preamble" {
            sections.insert(name, Some(content));
        } else {
            let wrapped = format!("<{name}>\n{content}\n</{name}>");
            sections.insert(name, Some(wrapped));
        }
    }
    Ok(sections)
}

/// The leading system message for the options: a forced prompt as `content`, otherwise empty
/// `content` and the sections (pi's `buildSystemPromptState`).
pub fn build_system_prompt_message(options: &SystemPromptOptions) -> Result<pi_ai::SystemMessage, InvalidSectionName> {
    if let Some(forced) = &options.force_system_prompt {
        return Ok(pi_ai::SystemMessage::new(forced.clone()));
    }
    let sections = build_system_prompt_sections(options)?;
    Ok(pi_ai::SystemMessage { sections: Some(sections), ..pi_ai::SystemMessage::new("") })
}

/// The prompt text, as the transcript's system message replays it.
pub fn build_system_prompt(options: &SystemPromptOptions) -> Result<String, InvalidSectionName> {
    Ok(pi_ai::transcript::system_message_text(&build_system_prompt_message(options)?))
}

/// The `sections` patch from `previous` to `current` (`None` deletes), or `None` when equal.
pub fn diff_system_prompt_sections(previous: &Sections, current: &Sections) -> Option<Sections> {
    let mut patch = Sections::new();
    for (name, text) in current.iter() {
        if previous.get(name) != Some(text) {
            patch.insert(name, text.map(str::to_owned));
        }
    }
    for name in previous.keys() {
        if current.get(name).is_none() {
            patch.insert(name, None);
        }
    }
    (!patch.is_empty()).then_some(patch)
}
