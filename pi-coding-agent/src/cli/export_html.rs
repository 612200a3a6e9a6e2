//! `pi --export <session.jsonl> [output.html]`: a self-contained HTML page of a session file
//! (inline CSS, no scripts, no network), with the messages of its active branch: user and
//! assistant text, thinking, tool calls with their arguments, tool results, bash executions,
//! summaries and model changes. Every piece of session text is HTML-escaped.
//!
//! The page is our own rendering; the command's behaviour follows pi 1.6.0: the default output is
//! `pi-session-<file name>.html` in the current directory, the message is `Exported to: <output>`
//! and the errors are `File not found: <path>` and `Session file is not a valid pi session: <path>`.
//!
//! ```
//! use pi_coding_agent::cli::export_html::escape_html;
//! assert_eq!(escape_html("<b>\"a\" & 'b'</b>"), "&lt;b&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/b&gt;");
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::session::{ReadOutcome, SessionEntry, SessionHeader, read_session_file};

/// Why an export failed; the text is pi's message (printed as `Error: …`).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The session file does not exist.
    #[error("File not found: {}", .0.display())]
    NotFound(PathBuf),
    /// The file is not a session.
    #[error("Session file is not a valid pi session: {}", .0.display())]
    NotASession(PathBuf),
    /// Reading the input failed.
    #[error("{context}: {source}")]
    Read {
        /// The path.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Writing the page failed (Node's wording for a missing directory).
    #[error("{0}")]
    Write(String),
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The default output name for `input`: `pi-session-<file stem>.html`.
pub fn default_output_name(input: &Path) -> String {
    let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "session".into());
    format!("pi-session-{stem}.html")
}

/// Exports `input` (relative to `cwd`) to `output` (default name when `None`, relative to `cwd`)
/// and returns the output as pi prints it.
pub fn export_from_file(input: &str, output: Option<&str>, cwd: &Path) -> Result<String, ExportError> {
    let path = crate::session::resolve_path(cwd.join(crate::session::expand_tilde(input)));
    if !path.exists() {
        return Err(ExportError::NotFound(path));
    }
    let loaded = match read_session_file(&path) {
        Ok(ReadOutcome::Session(l)) => l,
        Ok(_) => return Err(ExportError::NotASession(path)),
        Err(source) => return Err(ExportError::Read { context: format!("reading {}", path.display()), source }),
    };
    let page = render_page(&loaded.header, &loaded.entries);
    let shown = output.map(str::to_owned).unwrap_or_else(|| default_output_name(&path));
    let target = cwd.join(&shown);
    std::fs::write(&target, page).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            ExportError::Write(format!("ENOENT: no such file or directory, open '{shown}'"))
        }
        _ => ExportError::Write(format!("{e}, open '{shown}'")),
    })?;
    Ok(shown)
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;\
color:#1d1f21;background:#fafafa}header{border-bottom:1px solid #ccc;margin-bottom:1rem}\
header dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;font-size:.9rem}\
header dt{font-weight:600}.entry{border-radius:6px;padding:.6rem .9rem;margin:.7rem 0;background:#fff;\
border-left:4px solid #999}.role{font-size:.75rem;text-transform:uppercase;letter-spacing:.05em;color:#555;\
margin-bottom:.3rem}.user{border-color:#2a7ae2}.assistant{border-color:#3c9a5f}.toolResult{border-color:#b07d2b}\
.error{border-color:#c0392b}.note{border-color:#8e44ad;font-size:.9rem}pre{white-space:pre-wrap;\
word-break:break-word;margin:.3rem 0;font-family:ui-monospace,monospace;font-size:.85rem}\
.text{white-space:pre-wrap}.thinking{color:#666;font-style:italic;white-space:pre-wrap}\
.tool-call{background:#f3f3f3;border-radius:4px;padding:.3rem .5rem;margin:.3rem 0}";

/// The entries of the active branch (root to the last entry), in order.
fn active_branch(entries: &[SessionEntry]) -> Vec<&SessionEntry> {
    let by_id: std::collections::HashMap<&str, &SessionEntry> = entries.iter().map(|e| (e.id(), e)).collect();
    let mut branch = Vec::new();
    let mut next = entries.last();
    while let Some(e) = next {
        branch.push(e);
        next = e.parent_id().and_then(|p| by_id.get(p).copied());
        if branch.len() > entries.len() {
            break; // a parent cycle: stop rather than loop
        }
    }
    branch.reverse();
    branch
}

/// Renders the whole page.
pub fn render_page(header: &SessionHeader, entries: &[SessionEntry]) -> String {
    let mut body = String::new();
    let name = entries.iter().rev().find_map(|e| match e {
        SessionEntry::SessionInfo(i) => i.name.clone(),
        _ => None,
    });
    let title = name.clone().unwrap_or_else(|| format!("Session {}", header.id));
    let _ = write!(body, "<header><h1>{}</h1><dl>", escape_html(&title));
    let mut meta = vec![("Session", header.id.clone())];
    if let Some(t) = &header.timestamp {
        meta.push(("Started", t.clone()));
    }
    if let Some(c) = &header.cwd {
        meta.push(("Directory", c.clone()));
    }
    for (k, v) in meta {
        let _ = write!(body, "<dt>{k}</dt><dd>{}</dd>", escape_html(&v));
    }
    body.push_str("</dl></header>\n<main>\n");
    for entry in active_branch(entries) {
        let Ok(value) = serde_json::to_value(entry) else { continue };
        render_entry(&mut body, &value);
    }
    body.push_str("</main>\n");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape_html(&title)
    )
}

fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn note(out: &mut String, label: &str, text: &str) {
    let _ = writeln!(
        out,
        "<section class=\"entry note\"><div class=\"role\">{}</div><div class=\"text\">{}</div></section>",
        escape_html(label),
        escape_html(text)
    );
}

fn render_entry(out: &mut String, entry: &Value) {
    match str_of(entry, "type") {
        "message" => render_message(out, &entry["message"]),
        "model_change" => {
            note(out, "model", &format!("{}/{}", str_of(entry, "provider"), str_of(entry, "modelId")));
        }
        "thinking_level_change" => note(out, "thinking level", str_of(entry, "thinkingLevel")),
        "compaction" => note(out, "compaction summary", str_of(entry, "summary")),
        "branch_summary" => note(out, "branch summary", str_of(entry, "summary")),
        "custom_message" => {
            let mut text = String::new();
            content_text(&entry["content"], &mut text);
            note(out, &format!("message ({})", str_of(entry, "customType")), &text);
        }
        "session_info" => note(out, "session name", str_of(entry, "name")),
        _ => {}
    }
}

fn content_text(content: &Value, out: &mut String) {
    match content {
        Value::String(s) => out.push_str(s),
        Value::Array(blocks) => {
            for b in blocks {
                if b["type"] == "text" {
                    out.push_str(str_of(b, "text"));
                } else if b["type"] == "image" {
                    out.push_str("[image]");
                }
            }
        }
        _ => {}
    }
}

fn render_blocks(out: &mut String, content: &Value) {
    let blocks = match content {
        Value::String(s) => {
            let _ = write!(out, "<div class=\"text\">{}</div>", escape_html(s));
            return;
        }
        Value::Array(b) => b,
        _ => return,
    };
    for b in blocks {
        match str_of(b, "type") {
            "text" => {
                let _ = write!(out, "<div class=\"text\">{}</div>", escape_html(str_of(b, "text")));
            }
            "thinking" => {
                let _ = write!(out, "<div class=\"thinking\">{}</div>", escape_html(str_of(b, "thinking")));
            }
            "toolCall" => {
                let args = serde_json::to_string_pretty(&b["arguments"]).unwrap_or_default();
                let _ = write!(
                    out,
                    "<div class=\"tool-call\"><strong>{}</strong><pre>{}</pre></div>",
                    escape_html(str_of(b, "name")),
                    escape_html(&args)
                );
            }
            "image" => {
                let _ = write!(out, "<div class=\"text\">[image: {}]</div>", escape_html(str_of(b, "mimeType")));
            }
            _ => {}
        }
    }
}

fn render_message(out: &mut String, message: &Value) {
    let role = str_of(message, "role");
    let (class, label) = match role {
        "user" => ("user", "user".to_owned()),
        "assistant" => {
            let failed = matches!(str_of(message, "stopReason"), "error" | "aborted");
            let model = format!("assistant · {}", str_of(message, "model"));
            (if failed { "assistant error" } else { "assistant" }, model)
        }
        "toolResult" => {
            let failed = message["isError"] == Value::Bool(true);
            let label = format!("tool result · {}", str_of(message, "toolName"));
            (if failed { "toolResult error" } else { "toolResult" }, label)
        }
        "bashExecution" => ("toolResult", "bash".to_owned()),
        other => ("note", other.to_owned()),
    };
    let _ = write!(out, "<section class=\"entry {class}\"><div class=\"role\">{}</div>", escape_html(&label));
    if role == "bashExecution" {
        let _ = write!(
            out,
            "<pre>$ {}</pre><pre>{}</pre>",
            escape_html(str_of(message, "command")),
            escape_html(str_of(message, "output"))
        );
    } else if role == "toolResult" {
        let mut text = String::new();
        content_text(&message["content"], &mut text);
        let _ = write!(out, "<pre>{}</pre>", escape_html(&text));
    } else {
        render_blocks(out, &message["content"]);
    }
    if role == "assistant"
        && let Some(e) = message.get("errorMessage").and_then(Value::as_str)
    {
        let _ = write!(out, "<div class=\"text\">{}</div>", escape_html(e));
    }
    out.push_str("</section>\n");
}
