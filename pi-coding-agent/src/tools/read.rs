//! The `read` tool: a text file's lines (offset/limit, pi's truncation notices) or an image.

use std::io::Read;

use async_trait::async_trait;
use base64::Engine;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use pi_ai::{ImageContent, TextContent, UserBlock};
use serde_json::{Map, Value, json};

use super::args::{aborted, js_number, optional_f64, required_str};
use super::fs_error::node_message;
use super::image::{IMAGE_SNIFF_BYTES, detect_image_mime};
use super::path::resolve_read_path;
use super::prologue::{check_cancelled, run_blocking};
use super::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationOptions, TruncationResult, format_size, truncate_head_lines,
};

/// Options of the read tool (pi's `ReadToolOptions`, less what this port does not do).
#[derive(Clone, Debug)]
pub struct ReadToolOptions {
    /// Refuse files that look binary (a NUL byte in their first 8 KiB) with a clear error instead
    /// of decoding them as text. pi 1.6.0 decodes them; default: true.
    pub refuse_binary: bool,
}

impl Default for ReadToolOptions {
    fn default() -> Self {
        ReadToolOptions { refuse_binary: true }
    }
}

/// How many leading bytes are checked for a NUL byte when refusing binary files.
const BINARY_SNIFF_BYTES: usize = 8192;

/// The `read` tool. Build it with [`super::read_tool`].
pub struct ReadTool {
    cwd: String,
    options: ReadToolOptions,
    parameters: Value,
}

impl ReadTool {
    /// A read tool resolving paths against `cwd`.
    pub fn new(cwd: impl Into<String>, options: ReadToolOptions) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
                "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
                "limit": {"type": "number", "description": "Maximum number of lines to read"}
            }
        });
        ReadTool { cwd: cwd.into(), options, parameters }
    }
}

const DESCRIPTION: &str = "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.";

/// The lines a read selected, measured in full but stored only as far as truncation can show.
struct Selection {
    /// Lines in the file (`split("\n").length`).
    total_file_lines: usize,
    /// Truncation of the selected lines joined with `\n`.
    truncation: TruncationResult,
    /// Bytes of the first selected line.
    first_line_bytes: usize,
}

/// Streams `reader` and selects lines `[start, end)` without holding more than truncation shows.
fn select_lines(
    mut reader: impl Read,
    start: usize,
    end: usize,
    cancel: &dyn Fn() -> bool,
) -> Result<Selection, std::io::Error> {
    let opts = TruncationOptions::default();
    let mut stored: Vec<String> = Vec::new();
    let mut stored_bytes = 0usize;
    let mut storing = true;
    let mut line_no = 0usize; // current line index in the file
    let mut cur: Vec<u8> = Vec::new();
    let mut cur_bytes = 0usize; // raw bytes of the current line
    let mut selected_lines = 0usize;
    let mut selected_bytes = 0usize; // raw bytes of the joined selection
    let mut first_line_bytes = 0usize;
    let mut last_line_empty = true;
    let mut buf = vec![0u8; 64 * 1024];

    let mut finish_line = |cur: &mut Vec<u8>, cur_bytes: usize, line_no: usize| {
        if line_no >= start && line_no < end {
            if selected_lines == 0 {
                first_line_bytes = cur_bytes;
            }
            if selected_lines > 0 {
                selected_bytes += 1;
            }
            selected_bytes += cur_bytes;
            if storing {
                if stored.len() > DEFAULT_MAX_LINES || stored_bytes > DEFAULT_MAX_BYTES {
                    storing = false;
                } else {
                    // A line over the byte cap is stored cut just past the cap: it is never shown,
                    // and its stored size still exceeds the cap as its full size does.
                    let text = String::from_utf8_lossy(cur).into_owned();
                    stored_bytes += text.len() + usize::from(!stored.is_empty());
                    stored.push(text);
                }
            }
            selected_lines += 1;
            last_line_empty = cur_bytes == 0;
        }
        cur.clear();
    };

    loop {
        if cancel() {
            return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "Operation aborted"));
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            let nl = chunk.iter().position(|&b| b == b'\n');
            let piece = &chunk[..nl.unwrap_or(chunk.len())];
            if line_no >= start && line_no < end && cur_bytes <= DEFAULT_MAX_BYTES {
                cur.extend_from_slice(piece);
            }
            cur_bytes += piece.len();
            match nl {
                Some(i) => {
                    finish_line(&mut cur, cur_bytes, line_no);
                    cur_bytes = 0;
                    line_no += 1;
                    chunk = &chunk[i + 1..];
                }
                None => chunk = &[],
            }
        }
    }
    finish_line(&mut cur, cur_bytes, line_no);
    let total_lines = if selected_bytes == 0 { 0 } else { selected_lines - usize::from(last_line_empty) };
    let truncation = truncate_head_lines(&stored, total_lines, selected_bytes, opts);
    Ok(Selection { total_file_lines: line_no + 1, truncation, first_line_bytes })
}

/// Selects lines of an in-memory text with JavaScript `slice` semantics (negative limits count
/// from the end), for the unusual ranges pi reads whole.
fn select_lines_in_memory(bytes: &[u8], start: usize, limit: f64) -> Selection {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.split('\n').collect();
    let len = all.len() as f64;
    let end = (start as f64 + limit).min(len);
    let end = if end < 0.0 { (len + end).max(0.0) } else { end } as usize;
    let selected: &[&str] = if start < end && start < all.len() { &all[start..end.min(all.len())] } else { &[] };
    let joined = selected.join("\n");
    let truncation = super::truncate::truncate_head(&joined, TruncationOptions::default());
    let first_line_bytes = if truncation.first_line_exceeds_limit { all.get(start).map_or(0, |l| l.len()) } else { 0 };
    Selection { total_file_lines: all.len(), truncation, first_line_bytes }
}

#[async_trait]
impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn constrained_sampling(&self) -> Option<Value> {
        Some(serde_json::json!({"type": "json_schema", "strict": "prefer"}))
    }

    /// pi's `readOutputSchema`: a file's text, or an image block for an image.
    fn output_schema(&self) -> Option<Value> {
        Some(serde_json::json!({
            "anyOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "properties": {
                        "type": {"const": "image", "type": "string"},
                        "data": {"type": "string"},
                        "mimeType": {"type": "string"},
                        "note": {"type": "string"}
                    },
                    "required": ["type", "data", "mimeType", "note"]
                }
            ]
        }))
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(
        &self,
        _id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        check_cancelled(&ctx)?;
        let path = required_str(&args, "path")?.to_owned();
        let offset = optional_f64(&args, "offset")?;
        let limit = optional_f64(&args, "limit")?;
        let absolute = resolve_read_path(&path, &self.cwd).await;
        let refuse_binary = self.options.refuse_binary;
        run_blocking(&ctx, "read", move |cancel| {
            read_blocking(&path, &absolute, offset, limit, refuse_binary, &|| cancel.is_cancelled())
        })
        .await
    }
}

fn read_blocking(
    path: &str,
    absolute: &str,
    offset: Option<f64>,
    limit: Option<f64>,
    refuse_binary: bool,
    cancel: &dyn Fn() -> bool,
) -> Result<AgentToolResult, ToolError> {
    // pi checks readability with access(R_OK) first: its error names the path.
    nix::unistd::access(absolute, nix::unistd::AccessFlags::R_OK)
        .map_err(|e| ToolError::new(node_message(&std::io::Error::from(e), "access", Some(absolute))))?;
    let mut file =
        std::fs::File::open(absolute).map_err(|e| ToolError::new(node_message(&e, "open", Some(absolute))))?;
    let mut head = vec![0u8; IMAGE_SNIFF_BYTES.max(BINARY_SNIFF_BYTES)];
    let mut got = 0usize;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ToolError::new(node_message(&e, "read", None))),
        }
    }
    head.truncate(got);

    if let Some(mime) = detect_image_mime(&head[..got.min(IMAGE_SNIFF_BYTES)]) {
        let mut bytes = head;
        file.read_to_end(&mut bytes).map_err(|e| ToolError::new(node_message(&e, "read", None)))?;
        return Ok(image_result(&bytes, mime));
    }
    if refuse_binary && head[..got.min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(ToolError::new(format!(
            "Cannot read binary file: {path}. It is not text or a supported image (jpg, png, gif, webp, bmp); use bash (e.g. file, xxd) to inspect it."
        )));
    }

    let start = offset.map_or(0.0, |o| if o == 0.0 || o.is_nan() { 0.0 } else { (o - 1.0).max(0.0) }).trunc() as usize;
    let display_start = start + 1;
    let streamable = offset.is_none_or(|o| o.fract() == 0.0) && limit.is_none_or(|l| l.fract() == 0.0 && l >= 0.0);
    let selection = if streamable {
        let end = limit.map_or(usize::MAX, |l| start.saturating_add(l as usize));
        let reader = std::io::Cursor::new(head).chain(file);
        select_lines(reader, start, end, cancel).map_err(|e| {
            if e.kind() == std::io::ErrorKind::Interrupted {
                aborted()
            } else {
                ToolError::new(node_message(&e, "read", None))
            }
        })?
    } else {
        let mut bytes = head;
        file.read_to_end(&mut bytes).map_err(|e| ToolError::new(node_message(&e, "read", None)))?;
        select_lines_in_memory(&bytes, start, limit.unwrap_or(f64::INFINITY))
    };
    let Selection { total_file_lines, truncation, first_line_bytes } = selection;
    if start >= total_file_lines {
        let shown = offset.map_or_else(|| "undefined".to_owned(), js_number);
        return Err(ToolError::new(format!("Offset {shown} is beyond end of file ({total_file_lines} lines total)")));
    }
    let user_limited = limit.map(|l| (start as f64 + l).min(total_file_lines as f64) - start as f64);
    let mut details = Value::Null;
    let text = if truncation.first_line_exceeds_limit {
        let text = format!(
            "[Line {display_start} is {}, exceeds {} limit. Use bash: sed -n '{display_start}p' {path} | head -c {DEFAULT_MAX_BYTES}]",
            format_size(first_line_bytes),
            format_size(DEFAULT_MAX_BYTES)
        );
        details = json!({ "truncation": truncation });
        text
    } else if truncation.truncated {
        let end_display = display_start + truncation.output_lines - 1;
        let next = end_display + 1;
        let mut text = truncation.content.clone();
        if truncation.truncated_by == Some(super::truncate::TruncatedBy::Lines) {
            text += &format!(
                "\n\n[Showing lines {display_start}-{end_display} of {total_file_lines}. Use offset={next} to continue.]"
            );
        } else {
            text += &format!(
                "\n\n[Showing lines {display_start}-{end_display} of {total_file_lines} ({} limit). Use offset={next} to continue.]",
                format_size(DEFAULT_MAX_BYTES)
            );
        }
        details = json!({ "truncation": truncation });
        text
    } else if let Some(user) = user_limited.filter(|u| start as f64 + u < total_file_lines as f64) {
        let remaining = total_file_lines as f64 - (start as f64 + user);
        let next = start as f64 + user + 1.0;
        format!(
            "{}\n\n[{} more lines in file. Use offset={} to continue.]",
            truncation.content,
            js_number(remaining),
            js_number(next)
        )
    } else {
        truncation.content
    };
    let structured = Value::String(text.clone());
    let mut result = AgentToolResult::text(text).with_details(details);
    result.structured_content = Some(structured);
    Ok(result)
}

/// `[text "Read image file [mime]", image]` (pi with `autoResizeImages: false`), or the omission
/// note for an image that cannot be sent as is.
fn image_result(bytes: &[u8], mime: &str) -> AgentToolResult {
    match super::image::to_inline_image(bytes, mime) {
        Some((data, out_mime, hint)) => {
            let mut note = format!("Read image file [{out_mime}]");
            if let Some(h) = hint {
                note.push('\n');
                note.push_str(&h);
            }
            let data = base64::engine::general_purpose::STANDARD.encode(&data);
            let structured = json!({"type": "image", "data": data, "mimeType": out_mime, "note": note});
            let mut r = AgentToolResult {
                content: vec![
                    UserBlock::Text(TextContent::new(note)),
                    UserBlock::Image(ImageContent::new(data, out_mime)),
                ],
                ..Default::default()
            };
            r.structured_content = Some(structured);
            r
        }
        None => {
            let note = format!(
                "Read image file [{mime}]\n[Image omitted: could not be converted to a supported inline image format.]"
            );
            let mut r = AgentToolResult::text(note.clone());
            r.structured_content = Some(Value::String(note));
            r
        }
    }
}
