//! Routing a request made with a virtual model (pi's `prepareRequest` under a virtual selection
//! and `ModelRuntime.resolveModel`): the router of the selected virtual model picks the physical
//! model and thinking level of this one request; the selection stays in the agent's state. New
//! router state is stored on the branch before the request is sent. A routing failure ends the
//! run with an error response naming the virtual model.

use std::sync::Arc;

use pi_agent_core::BoxError;
use pi_ai::{AssistantMessage, Message, Model, ThinkingLevel};
use serde_json::json;

use super::{AgentSession, SessionEvent, SessionShared, lock};
use crate::extensions::{
    ExtensionRunner, Route, RouteReason, RouteRequest, RoutedPair, VIRTUAL_MODEL_STATE_ENTRY, find_latest_response,
    is_virtual_model, resolve_virtual_route, virtual_model_state,
};
use crate::messages::{CodingAgentMessage, convert_to_llm};
use crate::session::SessionEntry;

/// The physical model and level for a request under the virtual `model`, or `None` when `model`
/// is physical.
pub(crate) async fn route_request(
    shared: &Arc<SessionShared>,
    model: &Model,
    thinking_level: ThinkingLevel,
    messages: &[CodingAgentMessage],
) -> Result<Option<(Model, ThinkingLevel)>, BoxError> {
    // After a routed request the loop holds the routed model: route again from the selection.
    let selection = match shared.run_state().routed.clone() {
        Some((selected, level, target)) if !is_virtual_model(model) && target.same_as(model) => Some((selected, level)),
        _ => None,
    };
    let (model, thinking_level) = match &selection {
        Some((selected, level)) => (selected, *level),
        None => (model, thinking_level),
    };
    if !is_virtual_model(model) {
        shared.run_state().routed = None;
        return Ok(None);
    }
    let failed = shared.run_state().retry_failed.take();
    let llm = convert_to_llm(messages);
    let reason = if failed.is_some() {
        RouteReason::Retry
    } else if user_turn(&llm) {
        RouteReason::User
    } else {
        RouteReason::Continuation
    };
    let state = {
        let sm = lock(&shared.session_manager);
        virtual_model_state(&sm.get_branch(None), &model.provider, &model.id)
    };
    let runner = shared.runner.as_ref().ok_or_else(|| not_registered(model))?;
    let request =
        RouteRequest { model: model.clone(), thinking_level, reason, previous: None, failed, state, messages: llm };
    let route = resolve_model(runner, request).await?;
    if let Some(new_state) = route.state.clone() {
        store_state(shared, model, new_state)?;
    }
    shared.run_state().routed = Some((model.clone(), thinking_level, route.model.clone()));
    Ok(Some((route.model, route.thinking_level)))
}

/// pi's `ModelRuntime.resolveModel`: asks the router and checks its answer. `request.previous`
/// is filled from `request.messages`; `request.failed` holds the failed message when retrying.
pub(crate) async fn resolve_model(runner: &Arc<ExtensionRunner>, request: RouteRequest) -> Result<Route, BoxError> {
    Ok(resolve_virtual_route(&runner.create_context(), request).await?)
}

/// The failed message of a retry, as the router's `failed` before the physical lookup.
pub(crate) fn failed_pair(message: &AssistantMessage) -> RoutedPair {
    let message = message.clone();
    RoutedPair { model: Model::default(), thinking_level: message.thinking_level, message: Some(message) }
}

fn not_registered(model: &Model) -> BoxError {
    format!("Virtual model {}/{} is not registered.", model.provider, model.id).into()
}

/// Only messages the user wrote start a turn: a user message after the latest response.
fn user_turn(messages: &[Message]) -> bool {
    let last = messages.iter().rposition(|m| matches!(m, Message::Assistant(_)));
    messages[last.map_or(0, |i| i + 1)..].iter().any(|m| matches!(m, Message::User(_)))
}

fn store_state(shared: &Arc<SessionShared>, model: &Model, state: serde_json::Value) -> Result<(), BoxError> {
    let data = json!({"provider": model.provider, "modelId": model.id, "state": state});
    let entry = {
        let mut sm = lock(&shared.session_manager);
        let id = sm.append_custom_entry(VIRTUAL_MODEL_STATE_ENTRY, Some(data))?;
        sm.entry(&id).cloned()
    };
    shared.settle_writes_later();
    if let Some(entry) = entry {
        shared.emit(&SessionEvent::EntryAppended { entry: Arc::new(entry) });
    }
    Ok(())
}

/// pi's `getBranchSelection`: the model selection a branch records. A virtual `model_change`
/// holds until the next `model_change` (responses name the physical models it routed to);
/// otherwise the latest physical response wins. A virtual model that is no longer registered
/// (`lookup` does not find it, or finds it physical) does not hold, so the selection falls back
/// to the physical model that answered last.
pub(crate) fn branch_selection(
    branch: &[&SessionEntry],
    lookup: impl Fn(&str, &str) -> Option<Model>,
) -> Option<(String, String)> {
    for (i, entry) in branch.iter().enumerate().rev() {
        match entry {
            SessionEntry::ModelChange(m) => return Some((m.provider.clone(), m.model_id.clone())),
            SessionEntry::Message(m) => {
                let Some(a) = m.message.as_assistant() else { continue };
                if a.api == crate::extensions::VIRTUAL_MODEL_API {
                    continue;
                }
                let change = branch[..i].iter().rev().find_map(|e| match e {
                    SessionEntry::ModelChange(c) => Some((c.provider.clone(), c.model_id.clone())),
                    _ => None,
                });
                let held = change.as_ref().and_then(|(p, id)| lookup(p, id)).is_some_and(|m| is_virtual_model(&m));
                return match change {
                    Some(change) if held => Some(change),
                    _ => Some((a.provider.clone(), a.model.clone())),
                };
            }
            _ => {}
        }
    }
    None
}

impl AgentSession {
    /// A model of the session's catalog that is not virtual (pi's `getPhysicalModel`).
    pub(crate) fn physical_model(&self, provider: &str, id: &str) -> Option<Model> {
        super::session_models(self, false)
            .into_iter()
            .find(|m| m.provider == provider && m.id == id && !is_virtual_model(m))
    }

    /// Under a virtual selection, the physical model and thinking level of the latest successful
    /// response (pi's `routedModel`); `None` for a physical selection.
    pub fn routed_model(&self) -> Option<(Model, Option<ThinkingLevel>)> {
        if !is_virtual_model(&self.model()) {
            return None;
        }
        let messages = convert_to_llm(&self.messages());
        let latest = find_latest_response(&messages)?;
        Some((self.physical_model(&latest.provider, &latest.model)?, latest.thinking_level))
    }

    /// The model whose limits apply now (pi's `_limitsModel`): the routed model under a virtual
    /// selection, else the selected one.
    pub(crate) fn limits_model(&self) -> Model {
        self.routed_model().map_or_else(|| self.model(), |(model, _)| model)
    }

    /// The model whose limits apply to `message` (pi's `_modelForMessage`): under a virtual
    /// selection the physical model that produced it, else the selected model when it produced it.
    pub(crate) fn model_for_message(&self, message: &AssistantMessage) -> Option<Model> {
        let model = self.model();
        if is_virtual_model(&model) {
            return self.physical_model(&message.provider, &message.model);
        }
        (model.provider == message.provider && model.id == message.model).then_some(model)
    }

    /// The model and level a request outside the agent loop uses (pi's
    /// `_getSummarizationRequestAuth`): a virtual selection is routed with reason `direct` (no
    /// state; state it returns is ignored).
    pub(crate) async fn direct_route(&self) -> Result<(Model, ThinkingLevel), BoxError> {
        let (model, thinking_level) = (self.model(), self.thinking_level());
        if !is_virtual_model(&model) {
            return Ok((model, thinking_level));
        }
        let runner = self.shared.runner.clone().ok_or_else(|| not_registered(&model))?;
        let messages = convert_to_llm(&self.messages());
        let request = RouteRequest {
            model,
            thinking_level,
            reason: RouteReason::Direct,
            previous: None,
            failed: None,
            state: None,
            messages,
        };
        let route = resolve_model(&runner, request).await?;
        Ok((route.model, route.thinking_level))
    }
}

/// pi's check in `prepareRequest` under a virtual selection: when the conversation exceeds the
/// compaction threshold of the model the request is routed to, compact before sending it (the
/// route stands). Whether a compaction ran.
pub(crate) async fn compact_for_route(shared: &Arc<SessionShared>, routed: &Model) -> bool {
    if routed.context_window == 0 {
        return false;
    }
    let settings = lock(&shared.settings).compaction;
    let tokens = {
        let sm = lock(&shared.session_manager);
        let branch = sm.get_branch(None);
        crate::compaction::estimate_projected_context_tokens(&sm.build_session_projection(), &branch).tokens
    };
    if !crate::compaction::should_compact(tokens, routed.context_window, &settings) {
        return false;
    }
    let Some(agent) = shared.agent.get().and_then(|a| a.upgrade()) else { return false };
    let cwd = lock(&shared.session_manager).cwd().to_owned();
    let session = AgentSession { agent, shared: shared.clone(), cwd };
    session.run_auto_compaction("threshold", false).await;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(lines: &[serde_json::Value]) -> Vec<SessionEntry> {
        lines.iter().map(|l| serde_json::from_value(l.clone()).expect("an entry")).collect()
    }

    fn change(id: &str, provider: &str, model: &str) -> serde_json::Value {
        json!({"type": "model_change", "id": id, "parentId": null, "timestamp": "2026-01-01T00:00:00.000Z",
               "provider": provider, "modelId": model})
    }

    fn answer(id: &str, provider: &str, model: &str) -> serde_json::Value {
        json!({"type": "message", "id": id, "parentId": null, "timestamp": "2026-01-01T00:00:00.000Z",
               "message": {"role": "assistant", "content": [], "api": "openai-completions", "provider": provider,
                           "model": model, "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                           "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                           "stopReason": "stop", "timestamp": 0}})
    }

    #[test]
    fn a_virtual_selection_holds_while_registered_else_the_last_physical_answer_wins() {
        let list = entries(&[change("a", "router", "auto"), answer("b", "phys", "big")]);
        let branch: Vec<&SessionEntry> = list.iter().collect();
        let registered = |p: &str, id: &str| {
            (p == "router").then(|| Model {
                provider: p.into(),
                id: id.into(),
                api: "pi-virtual".into(),
                ..Default::default()
            })
        };
        let selection = |lookup: &dyn Fn(&str, &str) -> Option<Model>| branch_selection(&branch, lookup);
        assert_eq!(selection(&registered), Some(("router".into(), "auto".into())));
        assert_eq!(selection(&|_: &str, _: &str| None), Some(("phys".into(), "big".into())));
        // A later model_change is the selection whatever answered before it.
        let list = entries(&[answer("b", "phys", "big"), change("c", "local", "m")]);
        let branch: Vec<&SessionEntry> = list.iter().collect();
        assert_eq!(branch_selection(&branch, |_: &str, _: &str| None), Some(("local".into(), "m".into())));
        assert_eq!(branch_selection(&[], |_: &str, _: &str| None), None);
    }
}
