//! The session side of the boundary events (pi's `_dispatchTurnEndBoundary`,
//! `_runBeforeSettleBoundary`, `_buildBoundaryContext`, `_commitBoundaryDrafts`): previews of the
//! context a list of drafts would give, built on an in-memory copy of the branch, and the drafts
//! committed to the session afterwards.

use std::sync::Arc;

use pi_ai::{AssistantMessage, ToolResultMessage};
use serde_json::{Value, json};

use super::{SessionEvent, SessionShared, lock};
use crate::extensions::{
    ActivityOutcome, BoundaryContextPreview, BoundaryDraft, ExtensionError, ExtensionRunner, NotifyEvent,
};
use crate::messages::{CodingAgentMessage, convert_to_llm};
use crate::session::{FileEntry, NewSessionOptions, SessionEntry, SessionError, SessionManager};

/// Which boundary a preview is for (their `canContinue` rules differ).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Boundary {
    TurnEnd,
    BeforeSettle,
}

impl Boundary {
    fn name(self) -> &'static str {
        match self {
            Boundary::TurnEnd => "turn_end",
            Boundary::BeforeSettle => "agent_before_settle",
        }
    }
}

/// Appends the drafts to `manager`; the ids of the new entries.
fn apply_drafts(manager: &mut SessionManager, drafts: &[BoundaryDraft]) -> Result<Vec<String>, SessionError> {
    let mut ids = Vec::new();
    for draft in drafts {
        let id = match draft {
            BoundaryDraft::Custom { custom_type, data } => manager.append_custom_entry(custom_type, data.clone())?,
            BoundaryDraft::CustomMessage { custom_type, content, display, details } => {
                let content: pi_ai::Content<pi_ai::UserBlock> =
                    serde_json::from_value(content.clone()).map_err(SessionError::Serialize)?;
                manager.append_custom_message_entry(custom_type, content, *display, details.clone())?
            }
            BoundaryDraft::ContextEdit { target_id, replacement } => {
                let replacement = (!replacement.is_null()).then(|| replacement.clone());
                manager.append_context_edit(target_id, replacement)?
            }
            BoundaryDraft::Compaction { summary, first_kept_entry_id, details, usage } => {
                let tokens_before = {
                    let branch = manager.get_branch(None);
                    crate::compaction::estimate_projected_context_tokens(&manager.build_session_projection(), &branch)
                        .tokens as f64
                };
                manager.append_compaction(
                    summary,
                    first_kept_entry_id.as_deref(),
                    tokens_before,
                    details.clone(),
                    Some(true),
                    usage.clone(),
                )?
            }
        };
        ids.push(id);
    }
    Ok(ids)
}

/// The preview of the context `drafts` would give (pi's `_buildBoundaryContext`); `queued` are
/// the agent's queued steering and follow-up messages.
pub(crate) fn preview(
    shared: &SessionShared,
    drafts: &[BoundaryDraft],
    boundary: Boundary,
    queued: &[CodingAgentMessage],
) -> Result<BoundaryContextPreview, String> {
    let mut manager = {
        let sm = lock(&shared.session_manager);
        let mut entries = vec![FileEntry::Header(sm.header().clone())];
        entries.extend(sm.get_branch(None).into_iter().cloned().map(FileEntry::Entry));
        SessionManager::in_memory_with(sm.cwd(), NewSessionOptions::default(), entries).map_err(|e| e.to_string())?
    };
    apply_drafts(&mut manager, drafts).map_err(|e| e.to_string())?;
    let projection = manager.build_session_projection();
    let context_entries: Vec<Value> = projection
        .entries
        .iter()
        .map(|e| json!({"sourceEntry": e.source, "messages": e.messages.as_slice()}))
        .collect();
    let context_messages: Vec<CodingAgentMessage> = projection.messages().cloned().collect();
    let llm = convert_to_llm(&context_messages);
    let final_role = llm.last().map(|m| m.role());
    let has_non_system = llm.iter().any(|m| m.role() != "system");
    let pending_custom = shared.run_state().pending_custom.clone();
    let context_can_continue = has_non_system && final_role != Some("assistant");
    let has_queued = !queued.is_empty();
    let can_continue = context_can_continue
        || !pending_custom.is_empty()
        || match boundary {
            Boundary::TurnEnd => has_queued,
            Boundary::BeforeSettle => final_role == Some("assistant") && has_queued,
        };
    let mut pending_messages = queued.to_vec();
    pending_messages.extend(pending_custom);
    Ok(BoundaryContextPreview {
        context_entries,
        context_messages,
        llm_messages: llm.iter().filter_map(|m| serde_json::to_value(m).ok()).collect(),
        pending_messages,
        can_continue,
    })
}

/// Appends the drafts to the session (pi's `_commitBoundaryDrafts`), announcing each entry.
pub(crate) fn commit(shared: &Arc<SessionShared>, drafts: &[BoundaryDraft], runner: &ExtensionRunner, name: &str) {
    if drafts.is_empty() {
        return;
    }
    let appended: Result<Vec<Arc<SessionEntry>>, SessionError> = {
        let mut sm = lock(&shared.session_manager);
        apply_drafts(&mut sm, drafts)
            .map(|ids| ids.iter().filter_map(|id| sm.entry(id).cloned().map(Arc::new)).collect())
    };
    match appended {
        Ok(entries) => {
            shared.settle_writes_later();
            for entry in entries {
                shared.emit(&SessionEvent::EntryAppended { entry });
            }
        }
        Err(e) => runner.emit_error(ExtensionError::new("<boundary>", name, format!("Invalid boundary entries: {e}"))),
    }
}

fn report_invalid_continuation(runner: &ExtensionRunner, boundary: Boundary) {
    let name = boundary.name();
    runner.emit_error(ExtensionError::new(
        "<boundary>",
        name,
        format!("{name} requested continuation without runnable model context"),
    ));
}

/// The id of the newest branch entry holding a message `matches` accepts.
fn persisted_entry_id(shared: &SessionShared, matches: impl Fn(&CodingAgentMessage) -> bool) -> Option<String> {
    let sm = lock(&shared.session_manager);
    sm.get_branch(None).into_iter().rev().find_map(|e| match e {
        SessionEntry::Message(m) if matches(&m.message) => Some(m.id.clone()),
        _ => None,
    })
}

/// `turn_end` as pi dispatches it from the agent's `finishTurn`: returns whether a handler asked
/// for one more request (and the context can make one).
pub(crate) async fn dispatch_turn_end(
    shared: &Arc<SessionShared>,
    turn_index: u64,
    message: &AssistantMessage,
    tool_results: &[ToolResultMessage],
) -> bool {
    let outcome = ActivityOutcome::of(message.stop_reason);
    shared.run_state().last_outcome = outcome;
    let Some(runner) = shared.runner.clone().filter(|r| r.has_handlers("turn_end")) else { return false };
    let entry_id = persisted_entry_id(shared, |m| m.as_assistant().is_some_and(|a| a.timestamp == message.timestamp));
    let Some(message_entry_id) = entry_id else {
        runner.emit_error(ExtensionError::new(
            "<boundary>",
            "turn_end",
            "turn_end could not resolve the persisted assistant entry ID",
        ));
        return false;
    };
    let tool_result_entry_ids = tool_results
        .iter()
        .filter_map(|r| {
            persisted_entry_id(shared, |m| match m {
                crate::messages::CodingAgentMessage::ToolResult(t) => t.tool_call_id == r.tool_call_id,
                _ => false,
            })
        })
        .collect();
    let base = NotifyEvent::TurnEnd {
        turn_index,
        message: message.clone().into(),
        tool_results: tool_results.to_vec(),
        message_entry_id: Some(message_entry_id),
        tool_result_entry_ids: Some(tool_result_entry_ids),
        boundary: None,
    };
    // pi's `_getPendingBoundaryMessages`: the agent's queued steering and follow-up messages.
    let queued = shared.agent.get().and_then(|a| a.upgrade()).map(|a| a.peek_queued_messages()).unwrap_or_default();
    let result =
        runner.emit_boundary(base, outcome, |drafts| preview(shared, drafts, Boundary::TurnEnd, &queued)).await;
    commit(shared, &result.entries, &runner, "turn_end");
    let can_continue = preview(shared, &[], Boundary::TurnEnd, &queued).is_ok_and(|p| p.can_continue);
    if result.continue_run && !can_continue {
        report_invalid_continuation(&runner, Boundary::TurnEnd);
        return false;
    }
    result.continue_run
}

/// `agent_before_settle` (pi's `_runBeforeSettleBoundary`): whether the session should run once
/// more before settling. `queued` are the agent's queued messages.
pub(crate) async fn run_before_settle(shared: &Arc<SessionShared>, queued: Vec<CodingAgentMessage>) -> bool {
    let Some(runner) = shared.runner.clone().filter(|r| r.has_handlers("agent_before_settle")) else {
        return !queued.is_empty();
    };
    let outcome = shared.run_state().last_outcome;
    let base = NotifyEvent::AgentBeforeSettle { boundary: None };
    let result =
        runner.emit_boundary(base, outcome, |drafts| preview(shared, drafts, Boundary::BeforeSettle, &queued)).await;
    commit(shared, &result.entries, &runner, "agent_before_settle");
    if shared.run_state().abort_requested {
        return false;
    }
    let should_continue = result.continue_run || !queued.is_empty();
    let can_continue = preview(shared, &[], Boundary::BeforeSettle, &queued).is_ok_and(|p| p.can_continue);
    if should_continue && !can_continue {
        if result.continue_run {
            report_invalid_continuation(&runner, Boundary::BeforeSettle);
        }
        return false;
    }
    should_continue
}
