//! Tools with typed arguments: the JSON Schema is derived from a Rust type (schemars) and the
//! validated arguments are deserialized into it.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::tool::{AgentTool, AgentToolResult, ExecutionMode, ToolContext, ToolError};

/// A tool whose arguments are a Rust type. Wrap it in [`Typed`] to get an [`AgentTool`].
///
/// ```
/// use pi_agent_core::{AgentTool, AgentToolResult, Typed, TypedTool, ToolContext, ToolError};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// /// Arguments of `add`.
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs {
///     /// First operand.
///     a: f64,
///     /// Second operand.
///     b: f64,
/// }
///
/// struct Add;
///
/// #[async_trait::async_trait]
/// impl TypedTool for Add {
///     type Args = AddArgs;
///     fn name(&self) -> &str { "add" }
///     fn description(&self) -> &str { "Add two numbers" }
///     async fn run(&self, _id: &str, args: AddArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
///         Ok(AgentToolResult::text(format!("{}", args.a + args.b)))
///     }
/// }
///
/// let tool = Typed::new(Add);
/// assert_eq!(tool.parameters()["required"], serde_json::json!(["a", "b"]));
/// assert!(tool.parameters().get("$schema").is_none());
/// ```
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments; their schema is the tool's `parameters`.
    type Args: DeserializeOwned + JsonSchema + Send;

    /// Unique name.
    fn name(&self) -> &str;

    /// UI label (defaults to the name).
    fn label(&self) -> &str {
        self.name()
    }

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// Per-tool execution mode.
    fn execution_mode(&self) -> Option<ExecutionMode> {
        None
    }

    /// Runs the tool with typed arguments.
    async fn run(&self, tool_call_id: &str, args: Self::Args, ctx: ToolContext) -> Result<AgentToolResult, ToolError>;
}

/// A [`TypedTool`] as an [`AgentTool`], with the schema derived once.
pub struct Typed<T: TypedTool> {
    tool: T,
    parameters: Value,
}

impl<T: TypedTool> Typed<T> {
    /// Wraps `tool`, deriving its parameter schema (without the `$schema` key).
    pub fn new(tool: T) -> Self {
        let schema = schemars::schema_for!(T::Args);
        let mut parameters = serde_json::to_value(&schema).unwrap_or_else(|_| Value::Object(Map::new()));
        if let Value::Object(map) = &mut parameters {
            map.shift_remove("$schema");
            map.shift_remove("title");
        }
        Typed { tool, parameters }
    }

    /// The wrapped tool.
    pub fn inner(&self) -> &T {
        &self.tool
    }
}

#[async_trait]
impl<T: TypedTool> AgentTool for Typed<T> {
    fn name(&self) -> &str {
        self.tool.name()
    }

    fn label(&self) -> &str {
        self.tool.label()
    }

    fn description(&self) -> &str {
        self.tool.description()
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execution_mode(&self) -> Option<ExecutionMode> {
        self.tool.execution_mode()
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        // The loop has already validated and coerced `args` against the derived schema.
        let typed: T::Args = serde_json::from_value(Value::Object(args))
            .map_err(|e| ToolError::new(format!("Invalid arguments for tool \"{}\": {e}", self.tool.name())))?;
        self.tool.run(tool_call_id, typed, ctx).await
    }
}
