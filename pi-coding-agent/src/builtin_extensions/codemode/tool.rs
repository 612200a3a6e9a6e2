//! The `codemode` tool (pi's `executeCodemode`): parses the options line, lists the callable
//! tools for the sandbox, runs the script, and turns its output into the result. Nested calls go
//! through the session's tool pipeline ([`ExtensionApi::execute_tool`]), so validation and the
//! `tool_call` / `tool_result` handlers apply as for calls the model makes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, LoadoutChanges, ToolContext, ToolError};
use pi_ai::{TextContent, UserBlock};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::declarations::{render_tool_sample, to_codemode_identifier};
use super::description::{CODEMODE_STORE_ENTRY_TYPE, CODEMODE_TOOL_NAME, to_codemode_declaration};
use super::discovery::{Callable, call_discovery_global, discovery_globals};
use super::format::{
    CallRecord, DEFAULT_MAX_OUTPUT_TOKENS, Item, format_error, format_output, join_adjacent_text, save_images,
    to_blocks, truncate_output, truncate_text,
};
use super::loadout::{LoadoutOptions, prepare_codemode_loadout};
use super::models::{CallSink, LazyModelCatalog, ModelCalls, call_model_global, call_model_run, model_globals};
use super::sandbox::{SandboxHost, SandboxTool, ScriptRequest, run_script};
use super::source::parse_codemode_source;
use crate::builtin_extensions::tool_search::ToolCatalog;
use crate::extensions::ExtensionApi;

const ARGS_PREVIEW_CHARS: usize = 200;
const ERROR_PREVIEW_CHARS: usize = 500;

/// Script globals that can name any tool: a script using one may call every tool.
const DISCOVERY_WORDS: [&str; 4] = ["searchTools", "describeNamespace", "describeTool", "ALL_TOOLS"];

/// The `codemode` tool.
pub struct CodemodeTool {
    api: ExtensionApi,
    catalogs: Vec<Arc<dyn ToolCatalog>>,
    description: String,
    parameters: Value,
    models: LazyModelCatalog,
    loadout: LoadoutOptions,
}

impl CodemodeTool {
    /// The tool for the session behind `api`; `catalogs` hold the tools that are callable without
    /// being active (MCP tools with `codemode` or `deferred` exposure).
    /// `models` is the catalog of `models.*`.
    pub fn new(
        api: ExtensionApi,
        catalogs: Vec<Arc<dyn ToolCatalog>>,
        description: String,
        models: LazyModelCatalog,
    ) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["code"],
            "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}}
        });
        let loadout = LoadoutOptions { only: false, inline_budget: super::description::DEFAULT_CODEMODE_INLINE_BUDGET };
        CodemodeTool { api, catalogs, description, parameters, models, loadout }
    }

    /// How the tool presents the other declared tools (`codemode.mode`, `codemode.inlineBudget`).
    pub fn with_loadout(mut self, loadout: LoadoutOptions) -> Self {
        self.loadout = loadout;
        self
    }

    /// The loadout options: `codemode.mode` and `codemode.inlineBudget` as the session's settings
    /// have them now (pi's `getMode` / `getInlineBudget`), else the ones the tool was made with.
    fn current_loadout(&self) -> LoadoutOptions {
        let settings = self.api.get_settings().ok();
        let codemode = settings.as_ref().and_then(|s| s.get("codemode"));
        let only = match codemode.and_then(|c| c.get("mode")) {
            Some(mode) => mode.as_str() == Some("only"),
            None => self.loadout.only,
        };
        let inline_budget = codemode
            .and_then(|c| c.get("inlineBudget"))
            .and_then(Value::as_f64)
            .filter(|b| b.is_finite() && *b >= 0.0)
            .map(|b| b as u64)
            .unwrap_or(self.loadout.inline_budget);
        LoadoutOptions { only, inline_budget }
    }

    /// The tools a script may call: the active tools and the catalogs' tools, never `codemode`.
    fn callable(&self) -> Vec<Callable> {
        let active: HashSet<String> = self.api.get_active_tools().unwrap_or_default().into_iter().collect();
        let catalog: Vec<_> = self.catalogs.iter().flat_map(|c| c.searchable_tools()).collect();
        let all = self.api.get_all_tools().unwrap_or_default();
        all.into_iter()
            .filter(|t| t.name != CODEMODE_TOOL_NAME)
            .filter_map(|t| {
                let from_catalog = catalog.iter().find(|c| c.name == t.name);
                if !active.contains(&t.name) && from_catalog.is_none() {
                    return None;
                }
                let guidelines = t.prompt_guidelines.clone().unwrap_or_default();
                let declaration = to_codemode_declaration(
                    &t.name,
                    &t.description,
                    &t.parameters,
                    &guidelines,
                    t.output_schema.clone(),
                );
                Some(Callable {
                    sample: render_tool_sample(&declaration),
                    name: t.name,
                    description: t.description,
                    parameters: t.parameters,
                    namespace: from_catalog.and_then(|c| c.namespace.clone()),
                })
            })
            .collect()
    }

    /// `load()` values: the `codemode-store` entries of the branch, applied from the root.
    fn read_store(&self) -> Map<String, Value> {
        let mut store = Map::new();
        let Ok(Some(snapshot)) = self.api.session_snapshot() else { return store };
        let entries = snapshot.get("entries").and_then(Value::as_array).cloned().unwrap_or_default();
        for entry in entries {
            if entry.get("type").and_then(Value::as_str) != Some("custom")
                || entry.get("customType").and_then(Value::as_str) != Some(CODEMODE_STORE_ENTRY_TYPE)
            {
                continue;
            }
            let Some(data) = entry.get("data") else { continue };
            let (Some(set), Some(deleted)) =
                (data.get("set").and_then(Value::as_object), data.get("delete").and_then(Value::as_array))
            else {
                continue;
            };
            if !deleted.iter().all(Value::is_string) {
                continue;
            }
            for key in deleted.iter().filter_map(Value::as_str) {
                store.remove(key);
            }
            for (key, value) in set {
                store.insert(key.clone(), Value::String(value.to_string()));
            }
        }
        store
    }
}

/// The sandbox's view of the session: nested calls, recorded for `details`.
struct Host {
    api: ExtensionApi,
    tool_call_id: String,
    callable: Arc<Vec<Callable>>,
    calls: Arc<Mutex<Vec<CallRecord>>>,
    ctx: ToolContext,
    models: LazyModelCatalog,
    /// The script's `models.classify()` / `models.generateImages()` calls.
    model_calls: Arc<ModelCalls>,
    /// Nested calls made so far: the session numbers them `<callerId>/<n>` as they are made.
    made: Mutex<u64>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn details(calls: &[CallRecord]) -> Value {
    json!({"calls": calls.iter().map(CallRecord::to_json).collect::<Vec<_>>()})
}

fn text_of(result: &AgentToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| if let UserBlock::Text(t) = b { Some(t.text.as_str()) } else { None })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Host {
    fn publish(&self) {
        let snapshot = details(&lock(&self.calls));
        self.ctx.update(AgentToolResult { content: Vec::new(), details: snapshot, ..Default::default() });
    }
}

#[async_trait]
impl SandboxHost for Host {
    async fn call_tool(&self, name: &str, args: Option<Value>, cancel: CancellationToken) -> Result<Value, String> {
        let preview = args.as_ref().map(|a| truncate_text(&a.to_string(), ARGS_PREVIEW_CHARS)).unwrap_or_default();
        let index = {
            let mut calls = lock(&self.calls);
            calls.push(CallRecord {
                id: format!("{}/?", self.tool_call_id),
                name: name.to_owned(),
                args: preview,
                status: "running".into(),
                duration_ms: None,
                error: None,
                cost: None,
            });
            calls.len() - 1
        };
        self.publish();
        let started = Instant::now();
        let args = match args {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let (future, id) = {
            // Numbered and started under one lock, so the id is the one the session gives the call.
            let mut made = lock(&self.made);
            *made += 1;
            let future = self.api.execute_tool(&self.tool_call_id, name, args, cancel.clone());
            (future.map_err(|e| e.to_string())?, format!("{}/{}", self.tool_call_id, *made))
        };
        let result = future.await.map_err(|e| e.to_string())?;
        let text = text_of(&result);
        {
            let mut calls = lock(&self.calls);
            let record = &mut calls[index];
            record.id = id;
            record.duration_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
            if result.is_error {
                record.status = if cancel.is_cancelled() { "cancelled" } else { "error" }.into();
                let error = if text.is_empty() { format!("Tool \"{name}\" failed") } else { text.clone() };
                record.error = Some(truncate_text(&error, ERROR_PREVIEW_CHARS));
            } else {
                record.status = "ok".into();
            }
        }
        self.publish();
        if let Some(structured) = result.structured_content {
            return Ok(structured);
        }
        if result.is_error {
            return Err(if text.is_empty() { format!("Tool \"{name}\" failed") } else { text });
        }
        Ok(Value::String(text))
    }

    async fn call_global(
        &self,
        name: &str,
        args: Option<Value>,
        cancel: CancellationToken,
    ) -> Result<Option<Value>, String> {
        let args = match args {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        if name == "models.classify" || name == "models.generateImages" {
            let publish = || self.publish();
            let sink = CallSink { tool_call_id: &self.tool_call_id, calls: &self.calls, publish: &publish };
            return call_model_run(&self.models, &self.model_calls, name, &args, cancel, &sink).await;
        }
        if name.starts_with("models.") {
            return call_model_global(self.models.get(), name, &args);
        }
        call_discovery_global(&self.callable, name, &args)
    }
}

fn header(ok: bool, started: Instant) -> UserBlock {
    let status = if ok { "Script completed" } else { "Script failed" };
    UserBlock::Text(TextContent::new(format!(
        "{status}\nWall time {:.1} seconds\nOutput:\n",
        started.elapsed().as_secs_f64()
    )))
}

fn store_entry(writes: &[(String, Option<String>)]) -> Option<Value> {
    if writes.is_empty() {
        return None;
    }
    let mut set = Map::new();
    let mut deleted = Vec::new();
    for (key, json) in writes {
        match json.as_deref().map(serde_json::from_str::<Value>) {
            Some(Ok(value)) => {
                set.insert(key.clone(), value);
            }
            _ => deleted.push(Value::String(key.clone())),
        }
    }
    Some(json!({"set": set, "delete": deleted}))
}

#[async_trait]
impl AgentTool for CodemodeTool {
    fn name(&self) -> &str {
        CODEMODE_TOOL_NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// pi's `prepareCodemodeLoadout`.
    /// pi's `prepareCodemodeLoadout`, with `codemode.mode` and `codemode.inlineBudget` read again
    /// from the session's settings at every loadout change.
    fn prepare_loadout(&self, declared: &[Arc<dyn AgentTool>]) -> Option<LoadoutChanges> {
        let loadout = self.current_loadout();
        let infos = if loadout.only { self.api.get_all_tools().unwrap_or_default() } else { Vec::new() };
        let guidelines = |name: &str| {
            infos.iter().find(|t| t.name == name).and_then(|t| t.prompt_guidelines.clone()).unwrap_or_default()
        };
        let namespace = |name: &str| self.catalogs.iter().find_map(|c| c.namespace_of(name));
        Some(prepare_codemode_loadout(declared, loadout, guidelines, namespace))
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let started = Instant::now();
        let input = args.get("code").and_then(Value::as_str).unwrap_or("");
        let source = parse_codemode_source(input)?;
        let calls: Arc<Mutex<Vec<CallRecord>>> = Arc::new(Mutex::new(Vec::new()));
        ctx.update(AgentToolResult { content: Vec::new(), details: details(&[]), ..Default::default() });
        // A script that names MCP tools or looks tools up waits for the servers to connect.
        if input.contains("mcp__") || DISCOVERY_WORDS.iter().any(|w| input.contains(w)) {
            for catalog in &self.catalogs {
                catalog.ready().await;
            }
        }
        let callable = Arc::new(self.callable());
        let tools: Vec<SandboxTool> = callable
            .iter()
            .map(|t| SandboxTool {
                name: t.name.clone(),
                js_name: to_codemode_identifier(&t.name),
                description: t.sample.clone(),
            })
            .collect();
        let request = ScriptRequest {
            code: source.code,
            tools,
            globals: discovery_globals().into_iter().chain(model_globals()).collect(),
            store: self.read_store(),
            timeout: source.options.timeout_ms.map(Duration::from_millis),
        };
        let model_calls = Arc::new(ModelCalls::default());
        let host = Arc::new(Host {
            api: self.api.clone(),
            tool_call_id: tool_call_id.to_owned(),
            callable: callable.clone(),
            calls: calls.clone(),
            ctx: ctx.clone(),
            models: self.models.clone(),
            model_calls: model_calls.clone(),
            made: Mutex::new(0),
        });
        let outcome = run_script(request, host, ctx.cancel_token().clone()).await;
        let calls: Vec<CallRecord> = {
            let mut calls = lock(&calls);
            for call in calls.iter_mut().filter(|c| c.status == "running") {
                call.status = "cancelled".into();
            }
            calls.clone()
        };
        let mut output = outcome.output.clone();
        if outcome.error.is_none() {
            if let Some(entry) = store_entry(&outcome.writes) {
                self.api.append_entry(CODEMODE_STORE_ENTRY_TYPE, entry).map_err(|e| e.to_string())?;
            }
            if let Some(value) = &outcome.value {
                let text = match value {
                    Value::String(s) => s.clone(),
                    v => pi_ai::json::to_js_json(v),
                };
                output.push(super::sandbox::OutputItem::Text { text, console: false });
            }
        }
        let mut items = format_output(&output);
        if let Some(error) = &outcome.error {
            items.push(Item::Text(format!("Script error:\n{}", format_error(error, &calls))));
        }
        let generated = model_calls.generated_images();
        if generated > 0 && !items.iter().any(|i| matches!(i, Item::Image(..))) {
            items.push(Item::Text(format!(
                "Note: models.generateImages() returned {generated} image{} that the script did not show. Show each image block of result.output with image(block).",
                if generated == 1 { "" } else { "s" }
            )));
        }
        let max_tokens = source.options.max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS);
        let (items, full_output_path) = truncate_output(join_adjacent_text(items), max_tokens);
        let items = join_adjacent_text(save_images(items));
        let ok = outcome.error.is_none();
        let mut content = vec![header(ok, started)];
        content.extend(to_blocks(items));
        let mut details = details(&calls);
        if let Some(path) = full_output_path {
            details["fullOutputPath"] = json!(path);
        }
        Ok(AgentToolResult { content, details, usage: model_calls.usage(), is_error: !ok, ..Default::default() })
    }
}
