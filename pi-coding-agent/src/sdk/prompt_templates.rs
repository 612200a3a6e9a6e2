//! Prompt templates (pi 1.6.0): markdown files whose name is a slash command. `/name args`
//! expands to the file's body with the arguments substituted (`$1`, `$@`, `$ARGUMENTS`,
//! `${N:-default}`, `${@:-default}`, `${@:N}`, `${@:N:L}`).

use std::path::{Path, PathBuf};

use super::diagnostics::ResourceDiagnostic;
use super::discovery::{read_dir_sorted, read_text, resolve_path};
use super::frontmatter::parse_frontmatter;

/// A loaded prompt template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The command name: the file name without `.md`.
    pub name: String,
    /// Frontmatter `description`, else the body's first non-blank line (60 characters, then `...`).
    pub description: String,
    /// Frontmatter `argument-hint`.
    pub argument_hint: Option<String>,
    /// The body the command expands to.
    pub content: String,
    /// The template file.
    pub file_path: PathBuf,
}

/// Templates plus what went wrong finding them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadPromptTemplatesResult {
    /// The templates, first of each name kept.
    pub templates: Vec<PromptTemplate>,
    /// Warnings, then collisions.
    pub diagnostics: Vec<ResourceDiagnostic>,
}

/// Splits command arguments like a shell (pi's `parseCommandArgs`): quotes open only at the start
/// of an argument, `\"` inside double quotes (and `\'` inside single ones) is the quote itself,
/// `""` is an empty argument, and an unclosed quote is read as literal text.
pub fn parse_command_args(input: &str) -> Vec<String> {
    let chars: Vec<char> = input.chars().collect();
    let mut args = Vec::new();
    let mut current = String::new();
    let mut has_token = false;
    let mut in_quote: Option<char> = None;
    let mut quote_start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = in_quote {
            if c == '\\' && chars.get(i + 1) == Some(&q) {
                current.push(q);
                i += 1;
            } else if c == q {
                in_quote = None;
            } else {
                current.push(c);
            }
        } else if (c == '"' || c == '\'') && !has_token {
            in_quote = Some(c);
            quote_start = i;
            has_token = true;
        } else if c.is_whitespace() {
            if has_token {
                args.push(std::mem::take(&mut current));
                has_token = false;
            }
        } else {
            current.push(c);
            has_token = true;
        }
        if in_quote.is_some() && i + 1 >= chars.len() {
            in_quote = None;
            current = chars[quote_start].to_string();
            i = quote_start;
        }
        i += 1;
    }
    if has_token {
        args.push(current);
    }
    args
}

/// Replaces the placeholders of `content` with `args` (pi's `substituteArgs`). Values are not
/// substituted again.
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let bytes = content.as_bytes();
    let mut out = String::with_capacity(content.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        if let Some((replacement, len)) = placeholder(&content[i..], args, &all) {
            out.push_str(&content[copied..i]);
            out.push_str(&replacement);
            i += len;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&content[copied..]);
    out
}

fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

fn arg_at(args: &[String], n: &str) -> Option<String> {
    let index: usize = n.parse().ok()?;
    index.checked_sub(1).and_then(|i| args.get(i)).cloned()
}

/// One placeholder at the start of `s` (which starts with `$`): the replacement and its length.
fn placeholder(s: &str, args: &[String], all: &str) -> Option<(String, usize)> {
    let rest = &s[1..];
    if let Some(inner) = rest.strip_prefix('{') {
        let close = inner.find('}')?;
        let body = &inner[..close];
        let len = close + 3;
        // ${N:-default}, ${@:-default}, ${ARGUMENTS:-default}
        if let Some((target, default)) = body.split_once(":-") {
            let value = if target == "@" || target == "ARGUMENTS" {
                Some(all.to_owned())
            } else if !target.is_empty() && digits(target) == target.len() {
                arg_at(args, target)
            } else {
                return slice(body, args).map(|r| (r, len));
            };
            return Some((value.filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_owned()), len));
        }
        return slice(body, args).map(|r| (r, len));
    }
    if rest.starts_with("ARGUMENTS") {
        return Some((all.to_owned(), 10));
    }
    if rest.starts_with('@') {
        return Some((all.to_owned(), 2));
    }
    let n = digits(rest);
    if n > 0 {
        return Some((arg_at(args, &rest[..n]).unwrap_or_default(), n + 1));
    }
    None
}

/// `@:N` or `@:N:L` (1-based start, 0 treated as 1).
fn slice(body: &str, args: &[String]) -> Option<String> {
    let spec = body.strip_prefix("@:")?;
    let (start, length) = match spec.split_once(':') {
        Some((s, l)) => (s, Some(l)),
        None => (spec, None),
    };
    if start.is_empty() || digits(start) != start.len() || length.is_some_and(|l| l.is_empty() || digits(l) != l.len())
    {
        return None;
    }
    let start = start.parse::<usize>().unwrap_or(usize::MAX).saturating_sub(1).min(args.len());
    let end = match length {
        Some(l) => start.saturating_add(l.parse::<usize>().unwrap_or(usize::MAX)).min(args.len()),
        None => args.len(),
    };
    Some(args[start..end].join(" "))
}

fn first_line_description(body: &str) -> String {
    let Some(line) = body.split('\n').find(|l| !l.trim().is_empty()) else { return String::new() };
    let units: Vec<u16> = line.encode_utf16().collect();
    if units.len() <= 60 {
        return line.to_owned();
    }
    format!("{}...", String::from_utf16_lossy(&units[..60]))
}

/// Loads one template file (pi's `loadTemplateFromFile`).
pub fn load_template_from_file(path: &Path) -> (Option<PromptTemplate>, Vec<ResourceDiagnostic>) {
    let raw = match read_text(path) {
        Ok(text) => text,
        Err(message) => return (None, vec![ResourceDiagnostic::warning(message, path)]),
    };
    let (frontmatter, body) = match parse_frontmatter(&raw) {
        Ok(parsed) => parsed,
        Err(e) => return (None, vec![ResourceDiagnostic::warning(e.0, path)]),
    };
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = file_name.strip_suffix(".md").unwrap_or(&file_name).to_owned();
    let description = match frontmatter.string("description") {
        Some(d) if !d.is_empty() => d.to_owned(),
        _ => first_line_description(&body),
    };
    let argument_hint = frontmatter.string("argument-hint").filter(|h| !h.is_empty()).map(str::to_owned);
    let template = PromptTemplate { name, description, argument_hint, content: body, file_path: path.to_path_buf() };
    (Some(template), Vec::new())
}

/// The `.md` files directly in `dir`, loaded as templates (not recursive).
pub fn load_templates_from_dir(dir: &Path) -> LoadPromptTemplatesResult {
    let mut result = LoadPromptTemplatesResult::default();
    for entry in read_dir_sorted(dir).unwrap_or_default() {
        if entry.is_file && entry.name.ends_with(".md") {
            let (template, diagnostics) = load_template_from_file(&entry.path);
            result.templates.extend(template);
            result.diagnostics.extend(diagnostics);
        }
    }
    result
}

/// Loads templates from explicit paths (directories and `.md` files; missing paths and other
/// files are skipped) and keeps the first of each name, reporting the others as collisions
/// (pi's `loadPromptTemplates` plus the resource loader's de-duplication).
pub fn load_prompt_templates(paths: &[PathBuf], cwd: &Path, home: Option<&Path>) -> LoadPromptTemplatesResult {
    let mut loaded = LoadPromptTemplatesResult::default();
    for raw in paths {
        let path = resolve_path(&raw.to_string_lossy(), cwd, home);
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() {
            let found = load_templates_from_dir(&path);
            loaded.templates.extend(found.templates);
            loaded.diagnostics.extend(found.diagnostics);
        } else if meta.is_file() && path.to_string_lossy().ends_with(".md") {
            let (template, diagnostics) = load_template_from_file(&path);
            loaded.templates.extend(template);
            loaded.diagnostics.extend(diagnostics);
        }
    }
    let mut result = LoadPromptTemplatesResult { templates: Vec::new(), diagnostics: loaded.diagnostics };
    let mut collisions = Vec::new();
    for template in loaded.templates {
        if let Some(existing) = result.templates.iter().find(|t| t.name == template.name) {
            collisions.push(ResourceDiagnostic::collision(
                "prompt",
                format!("/{}", template.name),
                &template.name,
                existing.file_path.clone(),
                template.file_path.clone(),
            ));
        } else {
            result.templates.push(template);
        }
    }
    result.diagnostics.extend(collisions);
    result
}

/// Expands `/name args` when `name` is a template (pi's `expandPromptTemplate`); any other text
/// is returned unchanged.
pub fn expand_prompt_template(text: &str, templates: &[PromptTemplate]) -> String {
    let Some(rest) = text.strip_prefix('/') else { return text.to_owned() };
    let name_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
    if name_len == 0 {
        return text.to_owned();
    }
    let (name, after) = rest.split_at(name_len);
    let args = after.trim_start();
    match templates.iter().find(|t| t.name == name) {
        Some(template) => substitute_args(&template.content, &parse_command_args(args)),
        None => text.to_owned(),
    }
}
