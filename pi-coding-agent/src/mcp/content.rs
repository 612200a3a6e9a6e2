//! MCP results as the model sees them (pi-mcp's `toLlmContent` and `limitMcpContent`, pi's
//! `convertMcpResult`): text and images pass through, embedded resources become text or images,
//! binary resources are saved to temp files, resource links name `read_mcp_resource`, a result
//! without content shows its structured content as JSON, and text over 20 KB keeps its start and
//! end around a `…N chars truncated…` marker with the full text in a temp file.

use std::io::Write;
use std::path::PathBuf;

use base64::Engine;
use pi_agent_core::AgentToolResult;
use pi_ai::{ImageContent, TextContent, UserBlock};
use serde_json::{Map, Value, json};

use crate::tools::truncate::format_size;

/// Model-facing text of an MCP result beyond this is cut in the middle.
pub const MCP_OUTPUT_MAX_BYTES: usize = 20 * 1024;

/// The tool that reads resources named by resource links.
pub const READ_MCP_RESOURCE_TOOL: &str = "read_mcp_resource";

/// Writes `data` to a new file `<tmp>/<prefix>-<16 hex><extension>` readable by the user only
/// (pi's `writeOutputFile`).
pub fn write_output_file(prefix: &str, extension: &str, data: &[u8]) -> std::io::Result<PathBuf> {
    let random = uuid::Uuid::new_v4().simple().to_string();
    let path = std::env::temp_dir().join(format!("{prefix}-{}{extension}", &random[..16]));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(&path)?.write_all(data)?;
    Ok(path)
}

fn text(t: impl Into<String>) -> UserBlock {
    UserBlock::Text(TextContent::new(t))
}

fn str_of<'a>(block: &'a Value, key: &str) -> Option<&'a str> {
    block.get(key).and_then(Value::as_str)
}

/// pi-mcp's `blockToLlmContent`.
fn block_to_llm(block: &Value) -> UserBlock {
    let kind = str_of(block, "type").unwrap_or("");
    match kind {
        "text" => text(str_of(block, "text").unwrap_or("")),
        "image" => UserBlock::Image(ImageContent::new(
            str_of(block, "data").unwrap_or(""),
            str_of(block, "mimeType").unwrap_or(""),
        )),
        "audio" => text(format!("[audio {} omitted]", str_of(block, "mimeType").unwrap_or("undefined"))),
        "resource_link" => {
            text(format!("{}: {}", str_of(block, "name").unwrap_or(""), str_of(block, "uri").unwrap_or("")))
        }
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            if let Some(t) = str_of(&resource, "text") {
                return text(t);
            }
            let mime = str_of(&resource, "mimeType");
            if let Some(m) = mime.filter(|m| m.starts_with("image/")) {
                return UserBlock::Image(ImageContent::new(str_of(&resource, "blob").unwrap_or(""), m));
            }
            text(format!(
                "[binary resource {} ({}) omitted]",
                str_of(&resource, "uri").unwrap_or(""),
                mime.unwrap_or("unknown type")
            ))
        }
        other => text(format!("[unsupported MCP content {other}]")),
    }
}

fn extension_of(uri: &str) -> String {
    let path = uri.split(['?', '#']).next().unwrap_or(uri);
    let path = path.split_once("://").map_or(path, |(_, rest)| rest.find('/').map_or("", |i| &rest[i..]));
    match path.rfind('.') {
        Some(i) if (2..=9).contains(&(path.len() - i)) && path[i + 1..].bytes().all(|b| b.is_ascii_alphanumeric()) => {
            path[i..].to_owned()
        }
        _ => ".bin".to_owned(),
    }
}

fn is_text_mime(mime: Option<&str>) -> bool {
    let Some(mime) = mime else { return false };
    let t = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    t.starts_with("text/") || t == "application/json" || t.ends_with("+json") || t.ends_with("+xml")
}

/// pi's `blockToContent` for one block of `server`'s result.
fn block_to_content(server: &str, block: &Value, readable_resources: bool) -> UserBlock {
    match str_of(block, "type") {
        Some("resource_link") => {
            let mut details: Vec<String> = Vec::new();
            if let Some(m) = str_of(block, "mimeType").filter(|m| !m.is_empty()) {
                details.push(m.to_owned());
            }
            if let Some(size) = block.get("size").and_then(Value::as_u64) {
                details.push(format_size(size as usize));
            }
            let read = if readable_resources {
                format!(". Read it with {READ_MCP_RESOURCE_TOOL} (server \"{server}\")")
            } else {
                String::new()
            };
            let description = str_of(block, "description").filter(|d| !d.is_empty()).map(|d| format!(": {d}"));
            let title = str_of(block, "title").or(str_of(block, "name")).unwrap_or("");
            let details = if details.is_empty() { String::new() } else { format!(" ({})", details.join(", ")) };
            text(format!(
                "[Resource {} \"{title}\"{details}{}{read}]",
                str_of(block, "uri").unwrap_or(""),
                description.unwrap_or_default()
            ))
        }
        Some("resource") => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let mime = str_of(&resource, "mimeType");
            match str_of(&resource, "blob") {
                Some(blob) if !mime.is_some_and(|m| m.starts_with("image/")) => binary_resource(&resource, blob, mime),
                _ => block_to_llm(block),
            }
        }
        _ => block_to_llm(block),
    }
}

fn binary_resource(resource: &Value, blob: &str, mime: Option<&str>) -> UserBlock {
    let uri = str_of(resource, "uri").unwrap_or("");
    let data = base64::engine::general_purpose::STANDARD.decode(blob).unwrap_or_default();
    if is_text_mime(mime) {
        return text(String::from_utf8_lossy(&data).into_owned());
    }
    let kind = format!("{}, {}", mime.unwrap_or("unknown type"), format_size(data.len()));
    match write_output_file("pi-mcp", &extension_of(uri), &data) {
        Ok(path) => text(format!("[Binary resource {uri} ({kind}) saved to {}]", path.display())),
        Err(e) => text(format!("[Binary resource {uri} ({kind}) could not be saved: {e}]")),
    }
}

fn text_of(blocks: &[UserBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            UserBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

struct Truncation {
    content: String,
    total_bytes: usize,
    total_lines: usize,
}

fn truncate_middle(text: &str, max_bytes: usize) -> Option<Truncation> {
    let bytes = text.as_bytes();
    if bytes.len() <= max_bytes {
        return None;
    }
    let mut head_end = max_bytes / 2;
    while head_end > 0 && !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = bytes.len() - (max_bytes - max_bytes / 2);
    while tail_start < bytes.len() && !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let removed = text[head_end..tail_start].chars().count();
    let lines = text.split('\n').count() - usize::from(text.ends_with('\n'));
    Some(Truncation {
        content: format!("{}…{removed} chars truncated…{}", &text[..head_end], &text[tail_start..]),
        total_bytes: bytes.len(),
        total_lines: lines,
    })
}

/// pi-mcp's `limitMcpContent`: content within the limit as is, else one text block in Codex's
/// truncation format naming the file with the full text, followed by the images.
pub fn limit_mcp_content(content: Vec<UserBlock>) -> (Vec<UserBlock>, Option<PathBuf>) {
    let combined = text_of(&content);
    let Some(t) = truncate_middle(&combined, MCP_OUTPUT_MAX_BYTES) else { return (content, None) };
    let (where_, path) = match write_output_file("pi-mcp", ".txt", combined.as_bytes()) {
        Ok(p) => (format!("\n\n[Full output: {} (read it with offset/limit)]", p.display()), Some(p)),
        Err(e) => (format!("\n\n[Could not save the full output: {e}]"), None),
    };
    let tokens = t.total_bytes.div_ceil(4);
    let head = format!(
        "Warning: truncated output (original token count: {tokens})\nTotal output lines: {}\n\n{}{where_}",
        t.total_lines, t.content
    );
    let mut out = vec![text(head)];
    out.extend(content.into_iter().filter(|b| matches!(b, UserBlock::Image(_))));
    (out, path)
}

/// Model-facing content of content blocks, before the output limit.
pub fn to_model_content(server: &str, blocks: &[Value], readable_resources: bool) -> Vec<UserBlock> {
    blocks.iter().map(|b| block_to_content(server, b, readable_resources)).collect()
}

/// pi's `convertMcpResult`: a `CallToolResult` (as JSON) of `server`'s `tool` as a tool result.
/// `structured_content` carries the whole result without `_meta`, for codemode scripts.
pub fn convert_mcp_result(server: &str, tool: &str, result: &Value, readable_resources: bool) -> AgentToolResult {
    let blocks = result.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let mut converted = if blocks.is_empty() {
        match result.get("structuredContent") {
            Some(s) => vec![text(pretty_json(s))],
            None => Vec::new(),
        }
    } else {
        to_model_content(server, &blocks, readable_resources)
    };
    if is_error && text_of(&converted).is_empty() {
        converted.push(text(format!("MCP tool {server}/{tool} returned an error")));
    }
    let (content, full_output_path) = limit_mcp_content(converted);
    let mut details = json!({"server": server, "tool": tool});
    if let Some(p) = full_output_path {
        details["fullOutputPath"] = Value::String(p.display().to_string());
    }
    let mut script_result: Map<String, Value> = result.as_object().cloned().unwrap_or_default();
    script_result.remove("_meta");
    let mut out = AgentToolResult::text("");
    out.content = content;
    out.details = details;
    out.structured_content = Some(Value::Object(script_result));
    out.is_error = is_error;
    out
}

/// `JSON.stringify(value, null, 2)`.
pub fn pretty_json(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(r: &AgentToolResult) -> Vec<String> {
        r.content
            .iter()
            .map(|b| match b {
                UserBlock::Text(t) => t.text.clone(),
                UserBlock::Image(i) => format!("image:{}", i.mime_type),
            })
            .collect()
    }

    #[test]
    fn blocks_convert_like_pi() {
        let result = json!({"content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "audio", "data": "", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain", "size": 2048},
            {"type": "resource", "resource": {"uri": "x://t", "text": "embedded"}},
            {"type": "resource", "resource": {"uri": "x://j", "mimeType": "application/json", "blob": "e30="}}
        ], "_meta": {"x": 1}});
        let r = convert_mcp_result("s", "t", &result, true);
        assert_eq!(
            texts(&r),
            vec![
                "hi",
                "image:image/png",
                "[audio audio/wav omitted]",
                "[Resource file:///a.txt \"a\" (text/plain, 2.0KB). Read it with read_mcp_resource (server \"s\")]",
                "embedded",
                "{}"
            ]
        );
        assert!(r.structured_content.unwrap().get("_meta").is_none());
        let err = convert_mcp_result("s", "t", &json!({"content": [], "isError": true}), false);
        assert_eq!(texts(&err), vec!["MCP tool s/t returned an error"]);
        assert!(err.is_error);
        let structured = convert_mcp_result("s", "t", &json!({"content": [], "structuredContent": {"a": 1}}), false);
        assert_eq!(texts(&structured), vec!["{\n  \"a\": 1\n}"]);
    }

    #[test]
    fn long_text_is_cut_in_the_middle_and_saved() {
        let long = format!("{}\n{}", "a".repeat(15000), "é".repeat(10000));
        let r = convert_mcp_result("s", "t", &json!({"content": [{"type": "text", "text": long}]}), false);
        let t = &texts(&r)[0];
        assert!(t.starts_with("Warning: truncated output (original token count: 8751)\nTotal output lines: 2\n\n"));
        assert!(t.contains("chars truncated…"));
        let path = r.details["fullOutputPath"].as_str().unwrap().to_owned();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), long);
        std::fs::remove_file(path).unwrap();
        assert_eq!(extension_of("file:///x/y.png?q"), ".png");
        assert_eq!(extension_of("x://host/noext"), ".bin");
    }
}
