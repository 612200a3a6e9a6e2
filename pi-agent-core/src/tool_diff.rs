//! Per-request tool diff: when the executable tools differ from what the transcript declares, a
//! system message announces the change before the request (`declareToolChanges`).

use std::sync::Arc;

use pi_ai::transcript::{current_tools, tool_state_changes};
use pi_ai::{SystemMessage, now_ms};

use crate::message::{AgentMessage, CustomMessage};
use crate::tool::AgentTool;

/// Returns `pending` with the tool changes declared (spec §5.3).
///
/// - The declared state is replayed from `context` plus the pending batch, where the **last**
///   pending system message's own tool fields are ignored.
/// - A last pending system message gets exactly the diff as its tool fields (the caller's tool
///   fields are intent; the executable set wins); if nothing changes and it had no tool fields it is
///   returned untouched.
/// - Without one, a `{content: "", toolsAdded?, toolsRemoved?}` message is inserted before the first
///   non-system pending message when something changed.
pub fn declare_tool_changes<C: CustomMessage>(
    context: &[AgentMessage<C>],
    tools: &[Arc<dyn AgentTool>],
    mut pending: Vec<AgentMessage<C>>,
) -> Vec<AgentMessage<C>> {
    let last_system = pending.iter().rposition(|m| matches!(m, AgentMessage::System(_)));
    let declared = {
        // Replay context then pending, with the last pending system message's tools stripped.
        let stripped: Option<AgentMessage<C>> = last_system.and_then(|i| match &pending[i] {
            AgentMessage::System(s) => Some(AgentMessage::System(
                SystemMessage { tools_added: None, tools_removed: None, ..s.clone().into_inner() }.into(),
            )),
            _ => None,
        });
        let mut view: Vec<&AgentMessage<C>> = Vec::with_capacity(context.len() + pending.len());
        view.extend(context.iter());
        for (i, m) in pending.iter().enumerate() {
            if Some(i) == last_system {
                if let Some(s) = &stripped {
                    view.push(s);
                }
            } else {
                view.push(m);
            }
        }
        current_tools(&view)
    };
    let current: Vec<pi_ai::Tool> =
        tools.iter().map(|t| pi_ai::transcript::to_tool_declaration(&t.declaration())).collect();
    let changes = tool_state_changes(&declared, &current);

    if let Some(i) = last_system {
        let AgentMessage::System(existing) = &mut pending[i] else { return pending };
        let had_tool_fields = existing.tools_added.is_some() || existing.tools_removed.is_some();
        if changes.is_empty() && !had_tool_fields {
            return pending;
        }
        existing.tools_added = (!changes.tools_added.is_empty()).then_some(changes.tools_added);
        existing.tools_removed = (!changes.tools_removed.is_empty()).then_some(changes.tools_removed);
        return pending;
    }
    if changes.is_empty() {
        return pending;
    }
    let message = SystemMessage {
        tools_added: (!changes.tools_added.is_empty()).then_some(changes.tools_added),
        tools_removed: (!changes.tools_removed.is_empty()).then_some(changes.tools_removed),
        timestamp: now_ms(),
        ..SystemMessage::new("")
    };
    let at = pending.iter().position(|m| !matches!(m, AgentMessage::System(_))).unwrap_or(pending.len());
    pending.insert(at, AgentMessage::System(message.into()));
    pending
}
