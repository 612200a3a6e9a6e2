//! pi's `_applyToolLoadout`: the declared tools' `prepare_loadout` hooks (codemode's) may give
//! declared tools other descriptions and hide declarations from requests while staying callable.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, ExecutionMode, ToolContext, ToolError};
use serde_json::{Map, Value};

use super::SessionShared;
use crate::messages::CodingAgentMessage;

/// A declared tool with the description a loadout hook gave it.
struct Described {
    inner: Arc<dyn AgentTool>,
    description: String,
}

#[async_trait]
impl AgentTool for Described {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn label(&self) -> &str {
        self.inner.label()
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        self.inner.parameters()
    }

    fn execution_mode(&self) -> Option<ExecutionMode> {
        self.inner.execution_mode()
    }

    fn prepare_arguments(&self, args: Map<String, Value>) -> Map<String, Value> {
        self.inner.prepare_arguments(args)
    }

    fn constrained_sampling(&self) -> Option<Value> {
        self.inner.constrained_sampling()
    }

    fn output_schema(&self) -> Option<Value> {
        self.inner.output_schema()
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        self.inner.execute(tool_call_id, args, ctx).await
    }
}

/// The tools to declare for `tools` (the active tools, unwrapped) and the declarations hidden
/// from requests: every declared tool's hook runs over the same declared set, later descriptions
/// win.
pub(crate) fn apply_loadout(tools: Vec<Arc<dyn AgentTool>>) -> (Vec<Arc<dyn AgentTool>>, Vec<String>) {
    let mut descriptions: HashMap<String, String> = HashMap::new();
    let mut hidden: Vec<String> = Vec::new();
    for tool in &tools {
        let Some(changes) = tool.prepare_loadout(&tools) else { continue };
        descriptions.extend(changes.descriptions);
        for name in changes.hidden_declarations {
            if !hidden.contains(&name) {
                hidden.push(name);
            }
        }
    }
    if descriptions.is_empty() {
        return (tools, hidden);
    }
    let declared = tools
        .into_iter()
        .map(|tool| match descriptions.remove(tool.name()) {
            Some(description) => Arc::new(Described { inner: tool, description }) as Arc<dyn AgentTool>,
            None => tool,
        })
        .collect();
    (declared, hidden)
}

impl SessionShared {
    /// pi's `_applyToolLoadout(names)`: the tools to hand the agent, with the loadout hooks'
    /// descriptions; remembers the hidden declarations for the prompt and the requests.
    pub(crate) fn declare_tools(&self, names: &[String]) -> Vec<Arc<dyn AgentTool>> {
        let (declared, hidden) = apply_loadout(self.tools_named(names));
        self.run_state().hidden_declarations = hidden;
        declared
    }

    /// The declarations the loadout hides from requests.
    pub(crate) fn hidden_declarations(&self) -> Vec<String> {
        self.run_state().hidden_declarations.clone()
    }
}

/// pi's `_installHiddenDeclarationsProjection`: requests leave the hidden tools out of the
/// transcript's tool changes (the session file keeps them).
pub(crate) fn hide_declarations(messages: Vec<CodingAgentMessage>, hidden: &[String]) -> Vec<CodingAgentMessage> {
    if hidden.is_empty() {
        return messages;
    }
    messages
        .into_iter()
        .map(|message| match message {
            CodingAgentMessage::System(system) if system.tools_added.is_some() || system.tools_removed.is_some() => {
                let mut system = system.into_inner();
                system.tools_added = system
                    .tools_added
                    .take()
                    .map(|t| t.into_iter().filter(|t| !hidden.contains(&t.name)).collect::<Vec<_>>())
                    .filter(|t| !t.is_empty());
                system.tools_removed = system
                    .tools_removed
                    .take()
                    .map(|t| t.into_iter().filter(|t| !hidden.contains(&t.name)).collect::<Vec<_>>())
                    .filter(|t| !t.is_empty());
                CodingAgentMessage::System(system.into())
            }
            other => other,
        })
        .collect()
}
