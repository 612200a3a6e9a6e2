//! The `edit` tool: exact-text replacements (with pi's fuzzy fallback) in one file, keeping its
//! line endings and byte order mark; the diff goes to `details`.

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde_json::{Map, Value, json};

use super::args::required_str;
use super::edit_diff::generate_edit_diff;
use super::edit_match::{Edit, apply_edits_to_normalized_content, apply_replacements_to_original, normalize_to_lf};
use super::fs_error::{node_code, node_message};
use super::mutation_queue::with_file_mutation_queue;
use super::path::resolve_to_cwd;
use super::prologue::{check_cancelled, compute_blocking};

const DESCRIPTION: &str = "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.";

/// The `edit` tool. Build it with [`super::edit_tool`].
pub struct EditTool {
    cwd: String,
    parameters: Value,
}

impl EditTool {
    /// An edit tool resolving paths against `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["path", "edits"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["oldText", "newText"],
                        "properties": {
                            "oldText": {"type": "string", "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},
                            "newText": {"type": "string", "description": "Replacement text for this targeted edit."}
                        }
                    },
                    "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead."
                }
            }
        });
        EditTool { cwd: cwd.into(), parameters }
    }
}

fn is_single_edit(v: &Value) -> bool {
    v.get("oldText").is_some_and(Value::is_string) && v.get("newText").is_some_and(Value::is_string)
}

/// pi's `prepareEditArguments`: `edits` given as a JSON string or a single object becomes an
/// array, and legacy top-level `oldText`/`newText` become one more edit.
pub fn prepare_edit_arguments(mut args: Map<String, Value>) -> Map<String, Value> {
    match args.get("edits") {
        Some(Value::String(s)) => {
            if let Ok(parsed) = serde_json::from_str::<Value>(s) {
                if parsed.is_array() {
                    args.insert("edits".into(), parsed);
                } else if is_single_edit(&parsed) {
                    args.insert("edits".into(), Value::Array(vec![parsed]));
                }
            }
        }
        Some(v) if is_single_edit(v) => {
            let v = v.clone();
            args.insert("edits".into(), Value::Array(vec![v]));
        }
        _ => {}
    }
    let (Some(Value::String(old)), Some(Value::String(new))) = (args.get("oldText"), args.get("newText")) else {
        return args;
    };
    let legacy = json!({"oldText": old, "newText": new});
    let mut edits = match args.get("edits") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    edits.push(legacy);
    args.remove("oldText");
    args.remove("newText");
    args.insert("edits".into(), Value::Array(edits));
    args
}

fn parse_edits(args: &Map<String, Value>) -> Result<Vec<Edit>, ToolError> {
    let invalid = || ToolError::new("Edit tool input is invalid. edits must contain at least one replacement.");
    let Some(Value::Array(items)) = args.get("edits") else { return Err(invalid()) };
    if items.is_empty() {
        return Err(invalid());
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let field = |k: &str| {
                item.get(k)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| ToolError::new(format!("edits/{i}/{k}: must be string")))
            };
            Ok(Edit { old_text: field("oldText")?, new_text: field("newText")? })
        })
        .collect()
}

#[async_trait]
impl AgentTool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn constrained_sampling(&self) -> Option<Value> {
        Some(serde_json::json!({"type": "json_schema", "strict": "prefer"}))
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn prepare_arguments(&self, args: Map<String, Value>) -> Map<String, Value> {
        prepare_edit_arguments(args)
    }

    async fn execute(
        &self,
        _id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let edits = parse_edits(&args)?;
        let path = required_str(&args, "path")?;
        let absolute = resolve_to_cwd(path, &self.cwd);
        with_file_mutation_queue(&absolute, || async {
            check_cancelled(&ctx)?;
            let access =
                nix::unistd::access(absolute.as_str(), nix::unistd::AccessFlags::R_OK | nix::unistd::AccessFlags::W_OK);
            if let Err(errno) = access {
                check_cancelled(&ctx)?;
                let (code, _) = node_code(&std::io::Error::from(errno));
                return Err(ToolError::new(format!("Could not edit file: {path}. Error code: {code}.")));
            }
            let bytes = tokio::fs::read(&absolute).await.map_err(|e| ToolError::new(node_message(&e, "read", None)))?;
            check_cancelled(&ctx)?;
            // pi decodes lossily and would write the replacement characters back; refuse instead.
            let Ok(raw) = std::str::from_utf8(&bytes) else {
                return Err(ToolError::new(format!(
                    "Could not edit file: {path}. The file is not valid UTF-8 text; editing it would corrupt it."
                )));
            };
            let (bom, content) = match raw.strip_prefix('\u{FEFF}') {
                Some(rest) => ("\u{FEFF}", rest),
                None => ("", raw),
            };
            let normalized = normalize_to_lf(content);
            let path_owned = path.to_owned();
            let content_owned = content.to_owned();
            // Matching and diffing are CPU work on possibly large files: keep them off the runtime.
            let computed = compute_blocking("edit", move || {
                let applied = apply_edits_to_normalized_content(&normalized, &edits, &path_owned)?;
                let diff =
                    generate_edit_diff(&path_owned, &applied.base_content, &applied.new_content, &applied.replacements);
                let body = if content_owned == normalized {
                    applied.new_content
                } else {
                    apply_replacements_to_original(&content_owned, &applied.replacements)
                };
                Ok::<_, super::edit_match::EditError>((body, diff, edits.len()))
            })
            .await?;
            let (body, diff, count) = computed.map_err(|e| ToolError::new(e.to_string()))?;
            check_cancelled(&ctx)?;
            let final_content = format!("{bom}{body}");
            tokio::fs::write(&absolute, final_content.as_bytes())
                .await
                .map_err(|e| ToolError::new(node_message(&e, "open", Some(&absolute))))?;
            check_cancelled(&ctx)?;
            Ok(AgentToolResult::text(format!("Successfully replaced {count} block(s) in {path}."))
                .with_details(json!(diff)))
        })
        .await
    }
}
