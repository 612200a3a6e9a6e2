//! Tools an agent can execute: the [`AgentTool`] trait, its result and its execution context.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use pi_ai::{TextContent, Tool, Usage, UserBlock};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// What a tool returns: content for the model, details for programs and UIs.
///
/// `details` never reaches the model; only `content` does.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentToolResult {
    /// Text and image blocks sent to the model.
    pub content: Vec<UserBlock>,
    /// Structured data for programs and UIs (pi's `details`). `Null` is pi's `undefined`: the
    /// tool result message then has no `details` key, as pi's files have none.
    pub details: Value,
    /// Structured output matching the tool's output schema, if it has one.
    pub structured_content: Option<Value>,
    /// Usage of the tool's own execution (e.g. a nested model call).
    pub usage: Option<Usage>,
    /// Whether the result is an error (pi's `isError === true`).
    pub is_error: bool,
    /// Ask the loop not to make another request after this batch (all-or-nothing per batch).
    pub terminate: bool,
}

impl AgentToolResult {
    /// A successful result with one text block and no `details` (pi's tools return
    /// `details: undefined` when they have nothing to add).
    ///
    /// ```
    /// let r = pi_agent_core::AgentToolResult::text("done");
    /// assert_eq!(r.content.len(), 1);
    /// assert!(!r.is_error && r.details.is_null());
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        AgentToolResult { content: vec![UserBlock::Text(TextContent::new(text))], ..Default::default() }
    }

    /// pi's error-result shape: one text block, `details: {}`, `is_error`.
    pub fn error(text: impl Into<String>) -> Self {
        AgentToolResult { is_error: true, details: Value::Object(Map::new()), ..Self::text(text) }
    }

    /// Sets `details`.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

/// A tool failure. Its message becomes the text of an error result (`isError: true`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError { message: message.into() }
    }

    /// The message the model will see.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError { message }
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError { message: message.to_owned() }
    }
}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        ToolError { message: e.to_string() }
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        ToolError { message: e.to_string() }
    }
}

/// Whether a tool may run concurrently with the other calls of its batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExecutionMode {
    /// Run calls one after another (one such tool in a batch makes the whole batch sequential).
    Sequential,
    /// Run concurrently with the batch (the default).
    Parallel,
}

type UpdateFn = dyn Fn(AgentToolResult) + Send + Sync;

/// What a running tool gets besides its arguments: the cancellation token and a way to stream
/// partial results.
#[derive(Clone)]
pub struct ToolContext {
    cancel: CancellationToken,
    on_update: Option<Arc<UpdateFn>>,
    open: Arc<AtomicBool>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext").field("cancelled", &self.cancel.is_cancelled()).finish()
    }
}

impl ToolContext {
    /// A context with a cancellation token and an optional update callback.
    pub fn new(cancel: CancellationToken, on_update: Option<Arc<UpdateFn>>) -> Self {
        ToolContext { cancel, on_update, open: Arc::new(AtomicBool::new(true)) }
    }

    /// A context that is never cancelled and drops updates (for calling a tool directly).
    pub fn detached() -> Self {
        Self::new(CancellationToken::new(), None)
    }

    /// The run's cancellation token: stop work and return when it fires.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the run was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Streams a partial result (a `tool_execution_update` event). Ignored once the call settled.
    pub fn update(&self, partial: AgentToolResult) {
        if self.open.load(Ordering::Acquire)
            && let Some(f) = &self.on_update
        {
            f(partial);
        }
    }

    /// Stops forwarding updates (called by the loop when `execute` settles).
    pub fn close(&self) {
        self.open.store(false, Ordering::Release);
    }
}

/// What a tool's [`AgentTool::prepare_loadout`] changes in the declared tools.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadoutChanges {
    /// New descriptions of declared tools, by tool name.
    pub descriptions: Vec<(String, String)>,
    /// Declared tools whose declarations requests leave out; they stay executable.
    pub hidden_declarations: Vec<String>,
}

/// A tool the agent can execute.
///
/// The declaration the model sees is `{name, description, parameters}`; `label` is for UIs.
/// `execute` receives arguments already coerced and validated against `parameters`. Return
/// `Err(ToolError)` (or a result with `is_error`) on failure: either way the model gets an error
/// result, and every tool call gets a result.
///
/// ```
/// use async_trait::async_trait;
/// use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
/// use serde_json::{json, Map, Value};
///
/// struct Echo(Value);
///
/// #[async_trait]
/// impl AgentTool for Echo {
///     fn name(&self) -> &str { "echo" }
///     fn description(&self) -> &str { "Echo the text back" }
///     fn parameters(&self) -> &Value { &self.0 }
///     async fn execute(&self, _id: &str, args: Map<String, Value>, _ctx: ToolContext)
///         -> Result<AgentToolResult, ToolError>
///     {
///         let text = args.get("text").and_then(Value::as_str).ok_or("text is required")?;
///         Ok(AgentToolResult::text(format!("echo: {text}")))
///     }
/// }
///
/// let tool = Echo(json!({"type": "object", "properties": {"text": {"type": "string"}}}));
/// assert_eq!(tool.declaration().name, "echo");
/// ```
#[async_trait]
pub trait AgentTool: Send + Sync {
    /// Unique name the model calls the tool by.
    fn name(&self) -> &str;

    /// Human-readable label for UIs (not sent to the model). Defaults to the name.
    fn label(&self) -> &str {
        self.name()
    }

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// JSON Schema of the arguments.
    fn parameters(&self) -> &Value;

    /// Per-tool execution mode override.
    fn execution_mode(&self) -> Option<ExecutionMode> {
        None
    }

    /// Compatibility shim run on the raw arguments before validation.
    fn prepare_arguments(&self, args: Map<String, Value>) -> Map<String, Value> {
        args
    }

    /// The tool's `constrainedSampling` declaration (pi's `json_schema` / `grammar` config), sent
    /// to the model where its API allows. Defaults to none.
    fn constrained_sampling(&self) -> Option<Value> {
        None
    }

    /// JSON Schema of the tool's `structured_content` (pi's `outputSchema`): what a script that
    /// calls the tool receives. Defaults to none (the script receives the text output).
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// pi's `prepareLoadout`: while this tool is declared, it may change the descriptions of the
    /// other declared tools (`declared` is the whole declared set, this tool included) and hide
    /// declarations from requests (the hidden tools stay executable). Defaults to no change.
    fn prepare_loadout(&self, declared: &[Arc<dyn AgentTool>]) -> Option<LoadoutChanges> {
        let _ = declared;
        None
    }

    /// The model-facing declaration.
    fn declaration(&self) -> Tool {
        let mut tool = Tool::new(self.name(), self.description(), self.parameters().clone());
        tool.constrained_sampling = self.constrained_sampling();
        tool
    }

    /// Runs the tool.
    async fn execute(
        &self,
        tool_call_id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError>;
}
