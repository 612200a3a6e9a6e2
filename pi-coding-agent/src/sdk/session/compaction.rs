//! Compaction in a session: manual (pi's `compact`) and automatic after a run (pi's
//! `_checkCompaction` / `_runAutoCompaction`). Both prepare the cut, let `session_before_compact`
//! handlers cancel or supply the summary, otherwise summarize with the session's model, append
//! the `compaction` entry, rebuild the context and emit `session_compact`; listeners see
//! `compaction_start` / `compaction_end`.

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantMessage, StopReason, Usage};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::provider_errors::is_context_overflow;
use super::{AgentSession, CompactionEnd, CompactionReason, SessionEvent, lock};
use crate::compaction::{
    CompactionPreparation, Summarizer, calculate_context_tokens, compact, estimate_context_tokens,
    estimate_projected_context_tokens, estimate_tokens, prepare_compaction, should_compact,
};
use crate::extensions::NotifyEvent;
use crate::sdk::error::SdkError;
use crate::session::context::project_context_entry;
use crate::session::{SessionEntry, SessionManager, parse_iso};

/// The result of a compaction (pi's `CompactionResult` plus `estimatedTokensAfter`).
#[derive(Clone, Debug, PartialEq)]
pub struct CompactOutcome {
    /// The summary.
    pub summary: String,
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Estimated context tokens before.
    pub tokens_before: u64,
    /// Estimated context tokens after.
    pub estimated_tokens_after: u64,
    /// Usage of the summary request(s).
    pub usage: Option<Usage>,
    /// `{readFiles, modifiedFiles}`, or an extension's details.
    pub details: Option<Value>,
}

impl CompactOutcome {
    /// pi's wire shape.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("summary".into(), json!(self.summary));
        o.insert("firstKeptEntryId".into(), json!(self.first_kept_entry_id));
        o.insert("tokensBefore".into(), json!(self.tokens_before));
        o.insert("estimatedTokensAfter".into(), json!(self.estimated_tokens_after));
        if let Some(u) = &self.usage {
            o.insert("usage".into(), serde_json::to_value(u).unwrap_or(Value::Null));
        }
        if let Some(d) = &self.details {
            o.insert("details".into(), d.clone());
        }
        Value::Object(o)
    }
}

/// What `_checkCompaction` knows of an assistant message's place in the session.
#[derive(Debug, PartialEq)]
struct CompactionFacts {
    /// The latest compaction's time on the branch (ms).
    latest_compaction_ms: Option<i64>,
    /// The projected context contains context edits.
    has_context_edits: bool,
    /// The message is in the projected context (or was never persisted).
    projected: bool,
    /// Its usage describes the projected context: projected, and no context edit since.
    usage_matches_projection: bool,
    /// No compaction since, and no context edit omitting it.
    retained_for_explicit_recovery: bool,
}

/// Why a compaction stopped.
enum Stop {
    /// Cancelled by an extension or an abort.
    Cancelled,
    /// Failed with pi's message.
    Failed(String),
}

fn preparation_json(p: &CompactionPreparation) -> Value {
    json!({
        "firstKeptEntryId": p.first_kept_entry_id,
        "messagesToSummarize": p.messages_to_summarize,
        "turnPrefixMessages": p.turn_prefix_messages,
        "isSplitTurn": p.is_split_turn,
        "tokensBefore": p.tokens_before,
        "previousSummary": p.previous_summary,
        "fileOps": {"read": p.file_ops.read, "written": p.file_ops.written, "edited": p.file_ops.edited},
        "settings": {"enabled": p.settings.enabled, "reserveTokens": p.settings.reserve_tokens,
                     "keepRecentTokens": p.settings.keep_recent_tokens},
    })
}

fn other(kind: &str, payload: Value) -> NotifyEvent {
    let payload = match payload {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    NotifyEvent::Other { kind: kind.to_owned(), payload }
}

impl AgentSession {
    /// Whether a compaction (manual or automatic) or a branch summary runs (pi's `isCompacting`).
    pub fn is_compacting(&self) -> bool {
        let st = self.shared.run_state();
        st.auto_compaction_cancel.is_some() || st.compaction_cancel.is_some() || st.branch_summary_cancel.is_some()
    }

    /// Whether a manual compaction or a branch summary runs: what refuses a prompt. An automatic
    /// compaction runs inside a run, so a prompt meanwhile is queued or refused as while streaming.
    pub(crate) fn blocks_prompts(&self) -> bool {
        let st = self.shared.run_state();
        st.compaction_cancel.is_some() || st.branch_summary_cancel.is_some()
    }

    /// pi's `abortCompaction`: cancels a manual and an automatic compaction.
    pub fn abort_compaction(&self) {
        let st = self.shared.run_state();
        for token in [&st.compaction_cancel, &st.auto_compaction_cancel].into_iter().flatten() {
            token.cancel();
        }
    }

    /// pi's `abortBranchSummary`.
    pub fn abort_branch_summary(&self) {
        if let Some(token) = &self.shared.run_state().branch_summary_cancel {
            token.cancel();
        }
    }

    /// Manual compaction (pi's `compact`): aborts the current run first; errors are pi's
    /// (`Nothing to compact (session too small)`, `Already compacted`, `Compaction cancelled`,
    /// a summary failure).
    pub async fn compact(&self, custom_instructions: Option<&str>) -> Result<CompactOutcome, SdkError> {
        self.abort().await;
        let cancel = CancellationToken::new();
        self.shared.run_state().compaction_cancel = Some(cancel.clone());
        self.shared.emit(&SessionEvent::CompactionStart { reason: CompactionReason::Manual });
        let outcome = self.run_compaction("manual", custom_instructions, false, &cancel).await;
        // Idle before `compaction_end` (its listeners may prompt); waiters (`abort`) resume after
        // it, as pi's idle promise resolves after the synchronous emit.
        self.shared.run_state().compaction_cancel = None;
        match outcome {
            Ok((result, _)) => {
                self.emit_compaction_end("manual", Some(&result), false, false, None);
                self.shared.idle.notify_waiters();
                Ok(result)
            }
            Err((stop, from_extension)) => {
                let (aborted, message) = match &stop {
                    Stop::Cancelled => (true, "Compaction cancelled".to_owned()),
                    Stop::Failed(m) => (false, m.clone()),
                };
                let error_message = (!aborted).then(|| format!("Compaction failed: {message}"));
                self.emit_compaction_end("manual", None, aborted, false, error_message.as_deref());
                self.shared.idle.notify_waiters();
                self.emit_compact_failed("manual", error_message.as_deref(), aborted, from_extension).await;
                Err(SdkError::Failed(message))
            }
        }
    }

    /// Prepare, ask extensions, summarize, append and announce. `Err` carries whether an
    /// extension supplied the summary.
    async fn run_compaction(
        &self,
        reason: &str,
        custom_instructions: Option<&str>,
        will_retry: bool,
        cancel: &CancellationToken,
    ) -> Result<(CompactOutcome, bool), (Stop, bool)> {
        let settings = lock(&self.shared.settings).compaction;
        let (preparation, branch_json, last_is_compaction) = {
            let sm = self.lock_session_manager();
            let branch = sm.get_branch(None);
            let last_is_compaction = matches!(branch.last(), Some(SessionEntry::Compaction(_)));
            let branch_json = serde_json::to_value(&branch).unwrap_or(Value::Null);
            (prepare_compaction(&branch, settings), branch_json, last_is_compaction)
        };
        let Some(preparation) = preparation else {
            let message =
                if last_is_compaction { "Already compacted" } else { "Nothing to compact (session too small)" };
            return Err((Stop::Failed(message.to_owned()), false));
        };
        let mut supplied = None;
        if let Some(runner) = self.shared.runner.as_ref().filter(|r| r.has_handlers("session_before_compact")) {
            let event = other(
                "session_before_compact",
                json!({
                    "preparation": preparation_json(&preparation),
                    "branchEntries": branch_json,
                    "customInstructions": custom_instructions,
                    "reason": reason,
                    "willRetry": will_retry,
                }),
            );
            if let Some(answer) = runner.emit(event).await {
                if answer.get("cancel").and_then(Value::as_bool) == Some(true) {
                    return Err((Stop::Cancelled, false));
                }
                supplied = answer.get("compaction").filter(|c| c.is_object()).cloned();
            }
        }
        if cancel.is_cancelled() {
            return Err((Stop::Cancelled, false));
        }
        let from_extension = supplied.is_some();
        let (summary, first_kept, tokens_before, usage, details) = match supplied {
            Some(c) => (
                c.get("summary").and_then(Value::as_str).unwrap_or_default().to_owned(),
                c.get("firstKeptEntryId")
                    .and_then(Value::as_str)
                    .unwrap_or(&preparation.first_kept_entry_id)
                    .to_owned(),
                c.get("tokensBefore").and_then(Value::as_u64).unwrap_or(preparation.tokens_before),
                c.get("usage").and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok()),
                c.get("details").cloned(),
            ),
            None => {
                let summarizer =
                    self.summarizer(cancel.clone()).await.map_err(|e| (Stop::Failed(e.to_string()), false))?;
                let result = compact(&preparation, &summarizer, custom_instructions)
                    .await
                    .map_err(|e| (if cancel.is_cancelled() { Stop::Cancelled } else { Stop::Failed(e.0) }, false))?;
                (result.summary, result.first_kept_entry_id, result.tokens_before, result.usage, Some(result.details))
            }
        };
        if cancel.is_cancelled() {
            return Err((Stop::Cancelled, from_extension));
        }
        let appended = self.lock_session_manager().append_compaction(
            &summary,
            Some(&first_kept),
            tokens_before as f64,
            details.clone(),
            // pi writes `fromHook: false` for its own summaries.
            Some(from_extension),
            usage.clone(),
        );
        let id = appended.map_err(|e| (Stop::Failed(e.to_string()), from_extension))?;
        self.shared.emit(&SessionEvent::EntryPersisted { id: id.clone(), entry_type: "compaction" });
        self.refresh_context();
        let (estimated_tokens_after, entry_json) = {
            let sm = self.lock_session_manager();
            let projection = sm.build_session_projection();
            let after = projection.messages().map(estimate_tokens).sum::<u64>();
            (after, sm.entry(&id).and_then(|e| serde_json::to_value(e).ok()))
        };
        if let (Some(runner), Some(entry)) = (&self.shared.runner, entry_json) {
            let event = other(
                "session_compact",
                json!({"compactionEntry": entry, "fromExtension": from_extension, "reason": reason, "willRetry": will_retry}),
            );
            runner.emit(event).await;
        }
        let outcome = CompactOutcome {
            summary,
            first_kept_entry_id: first_kept,
            tokens_before,
            estimated_tokens_after,
            usage,
            details,
        };
        Ok((outcome, from_extension))
    }

    /// The model that writes summaries: the session's model, stream function and credentials. A
    /// virtual selection is routed first (reason `direct`): summaries size their input and
    /// output from the model they get.
    async fn summarizer(&self, cancel: CancellationToken) -> Result<Summarizer, pi_agent_core::BoxError> {
        let (model, thinking_level) = self.direct_route().await?;
        let mut summarizer = Summarizer::with_stream_fn(model, self.shared.stream_fn.clone());
        summarizer.api_key = self.shared.stream_options.api_key.clone();
        summarizer.headers = self.shared.stream_options.headers.clone();
        summarizer.thinking_level = Some(thinking_level);
        summarizer.cancel = Some(cancel);
        Ok(summarizer)
    }

    fn emit_compaction_end(
        &self,
        reason: &str,
        result: Option<&CompactOutcome>,
        aborted: bool,
        will_retry: bool,
        error_message: Option<&str>,
    ) {
        self.shared.emit(&SessionEvent::CompactionEnd(Box::new(CompactionEnd {
            reason: CompactionReason::parse(reason),
            result: result.cloned(),
            aborted,
            will_retry,
            error_message: error_message.map(str::to_owned),
        })));
    }

    async fn emit_compact_failed(
        &self,
        reason: &str,
        error_message: Option<&str>,
        aborted: bool,
        from_extension: bool,
    ) {
        if let Some(runner) = self.shared.runner.as_ref().filter(|r| r.has_handlers("session_compact_failed")) {
            let mut payload =
                json!({"reason": reason, "aborted": aborted, "willRetry": false, "fromExtension": from_extension});
            if let (Value::Object(o), Some(e)) = (&mut payload, error_message) {
                o.insert("errorMessage".into(), json!(e));
            }
            runner.emit(other("session_compact_failed", payload)).await;
        }
    }

    /// pi's `_checkCompaction`: after a run (or before a prompt, `skip_aborted_check: false`),
    /// compact on context overflow or a recoverable `length` stop (then retry the turn once), or
    /// when the context crossed the threshold. Usage from before the latest compaction, or from
    /// before a later context edit, is not trusted. Returns whether the run loop should continue
    /// the agent.
    pub(crate) async fn check_compaction(&self, message: &AssistantMessage, skip_aborted_check: bool) -> bool {
        let settings = lock(&self.shared.settings).compaction;
        if !settings.enabled || (skip_aborted_check && message.stop_reason == StopReason::Aborted) {
            return false;
        }
        // pi's `_modelForMessage`: limits come from the model that answered, when it is current
        // (under a virtual selection, the physical model that produced the message).
        let message_model = self.model_for_message(message);
        let same_model = message_model.is_some();
        let model = message_model.unwrap_or_else(|| self.model());
        let facts = self.compaction_facts(message);
        if facts.latest_compaction_ms.is_some_and(|t| (message.timestamp as i64) <= t) {
            return false;
        }
        let explicit_overflow = message.stop_reason == StopReason::Error && is_context_overflow(message, 0);
        let context_overflow = same_model
            && ((explicit_overflow && facts.retained_for_explicit_recovery)
                || (facts.usage_matches_projection && is_context_overflow(message, model.context_window)));
        let recoverable_length = same_model
            && facts.projected
            && message.stop_reason == StopReason::Length
            && model.max_tokens > 0
            && message.usage.output < model.max_tokens;
        if context_overflow || recoverable_length {
            let will_retry = message.stop_reason != StopReason::Stop;
            if !will_retry {
                return self.run_auto_compaction("overflow", false).await;
            }
            if self.shared.run_state().overflow_recovery_attempted {
                let error = if context_overflow {
                    "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model."
                } else {
                    "Truncated response recovery failed after one compact-and-retry attempt."
                };
                self.emit_compaction_end("overflow", None, false, false, Some(error));
                self.emit_compact_failed("overflow", Some(error), false, false).await;
                return false;
            }
            self.shared.run_state().overflow_recovery_attempted = true;
            self.omit_recovery_attempt(message);
            return self.run_auto_compaction("overflow", true).await;
        }
        let direct = calculate_context_tokens(&message.usage);
        let context_tokens = if facts.has_context_edits {
            let sm = self.lock_session_manager();
            let branch = sm.get_branch(None);
            estimate_projected_context_tokens(&sm.build_session_projection(), &branch).tokens
        } else if message.stop_reason == StopReason::Error || direct == 0 {
            let messages = self.agent.messages();
            let refs: Vec<_> = messages.iter().collect();
            let estimate = estimate_context_tokens(&refs);
            // Usage recorded before the latest compaction reflects the old, larger context.
            let stale = estimate.last_usage_index.and_then(|i| messages.get(i)).is_some_and(|m| match m {
                AgentMessage::Assistant(a) => facts.latest_compaction_ms.is_some_and(|t| (a.timestamp as i64) <= t),
                _ => false,
            });
            if stale {
                return false;
            }
            estimate.tokens
        } else {
            direct
        };
        if should_compact(context_tokens, model.context_window, &settings) {
            return self.run_auto_compaction("threshold", false).await;
        }
        false
    }

    /// Where the assistant message stands in the session (pi's `_checkCompaction` preamble).
    fn compaction_facts(&self, message: &AssistantMessage) -> CompactionFacts {
        compaction_facts_of(&self.lock_session_manager(), message)
    }

    /// pi's `_runAutoCompaction`: whether the run loop should continue the agent.
    pub(super) async fn run_auto_compaction(&self, reason: &str, will_retry: bool) -> bool {
        let settings = lock(&self.shared.settings).compaction;
        if prepare_compaction(&self.lock_session_manager().get_branch(None), settings).is_none() {
            return false;
        }
        let cancel = CancellationToken::new();
        // Installed before `compaction_start`, so an abort from a listener of it cancels: pi's
        // `throwIfAborted()` right after the event skips even `session_before_compact`.
        self.shared.run_state().auto_compaction_cancel = Some(cancel.clone());
        self.shared.emit(&SessionEvent::CompactionStart { reason: CompactionReason::parse(reason) });
        let outcome = if cancel.is_cancelled() {
            Err((Stop::Cancelled, false))
        } else {
            self.run_compaction(reason, None, will_retry, &cancel).await
        };
        self.shared.run_state().auto_compaction_cancel = None;
        self.shared.idle.notify_waiters();
        match outcome {
            Ok((result, _)) => {
                self.emit_compaction_end(reason, Some(&result), false, will_retry, None);
                will_retry || self.agent.has_queued_messages()
            }
            Err((stop, from_extension)) => {
                let (aborted, message) = match stop {
                    Stop::Cancelled => (true, String::new()),
                    Stop::Failed(m) => (false, m),
                };
                let error_message = (!aborted).then(|| match reason {
                    "overflow" => format!("Context overflow recovery failed: {message}"),
                    _ => format!("Auto-compaction failed: {message}"),
                });
                self.emit_compaction_end(reason, None, aborted, false, error_message.as_deref());
                self.emit_compact_failed(reason, error_message.as_deref(), aborted, from_extension).await;
                false
            }
        }
    }
}

/// Where the assistant message stands in the session (pi's `_checkCompaction` preamble).
fn compaction_facts_of(sm: &SessionManager, message: &AssistantMessage) -> CompactionFacts {
    let branch = sm.get_branch(None);
    let latest_compaction_ms = branch.iter().rev().find_map(|e| match e {
        SessionEntry::Compaction(c) => Some(parse_iso(&c.timestamp).unwrap_or(0)),
        _ => None,
    });
    // pi's `_findPersistedMessageEntryId`: the entry that recorded this message.
    let index = branch.iter().rposition(
        |e| matches!(e, SessionEntry::Message(m) if matches!(&m.message, AgentMessage::Assistant(a) if a == message)),
    );
    // The projection's answers, read from the context entries without projecting them all:
    // whether any context edit is in effect, and whether the message's entry contributes an
    // assistant message (the latest edit targeting it applied).
    let selected = sm.build_context_entries();
    let has_context_edits = selected.iter().any(|e| matches!(e, SessionEntry::ContextEdit(_)));
    let projected = index.map(|i| branch[i].id()).is_some_and(|id| {
        let latest_edit = || {
            selected.iter().rev().find_map(|e| match e {
                SessionEntry::ContextEdit(c) if c.target_id == id => Some(c),
                _ => None,
            })
        };
        let edit = if has_context_edits { latest_edit() } else { None };
        selected.iter().enumerate().rev().any(|(i, e)| {
            e.id() == id
                && !(i > 0 && matches!(e, SessionEntry::Compaction(_)))
                && project_context_entry(e, edit).iter().any(|m| matches!(m.as_ref(), AgentMessage::Assistant(_)))
        })
    });
    let Some(index) = index else {
        return CompactionFacts {
            latest_compaction_ms,
            has_context_edits,
            projected: true,
            usage_matches_projection: true,
            retained_for_explicit_recovery: true,
        };
    };
    let id = branch[index].id();
    let after = &branch[index + 1..];
    let edited_after = after.iter().any(|e| matches!(e, SessionEntry::ContextEdit(_)));
    let compacted_after = after.iter().any(|e| matches!(e, SessionEntry::Compaction(_)));
    let omitted = after.iter().rev().find_map(|e| match e {
        SessionEntry::ContextEdit(edit) if edit.target_id == id => Some(edit.replacement.is_none()),
        _ => None,
    });
    CompactionFacts {
        latest_compaction_ms,
        has_context_edits,
        projected,
        usage_matches_projection: projected && !edited_after,
        retained_for_explicit_recovery: !compacted_after && omitted != Some(true),
    }
}

#[cfg(test)]
mod tests {
    use pi_agent_core::AgentMessage;
    use pi_ai::{AssistantMessage, Shared, UserMessage};
    use serde_json::json;

    use super::{CompactionFacts, compaction_facts_of};
    use crate::session::{SessionEntry, SessionManager};

    /// The facts as the whole projection gives them (what `compaction_facts_of` reads without
    /// building it).
    fn from_projection(sm: &SessionManager, message: &AssistantMessage) -> (bool, bool) {
        let projection = sm.build_session_projection();
        let has_context_edits = projection.entries.iter().any(|e| matches!(e.source, SessionEntry::ContextEdit(_)));
        let branch = sm.get_branch(None);
        let index = branch.iter().rposition(|e| {
            matches!(e, SessionEntry::Message(m) if matches!(&m.message, AgentMessage::Assistant(a) if **a == *message))
        });
        let projected = index.is_none_or(|i| {
            projection.entries.iter().any(|e| {
                e.source.id() == branch[i].id()
                    && e.messages.iter().any(|m| matches!(m.as_ref(), AgentMessage::Assistant(_)))
            })
        });
        (has_context_edits, projected)
    }

    fn facts(sm: &SessionManager, message: &AssistantMessage) -> CompactionFacts {
        let facts = compaction_facts_of(sm, message);
        assert_eq!((facts.has_context_edits, facts.projected), from_projection(sm, message));
        facts
    }

    fn reply(text: &str, timestamp: u64) -> AssistantMessage {
        AssistantMessage {
            content: vec![pi_ai::AssistantBlock::Text(pi_ai::TextContent::new(text))],
            timestamp,
            ..Default::default()
        }
    }

    #[test]
    fn facts_read_in_place_agree_with_the_projection() {
        let mut sm = SessionManager::in_memory("/tmp");
        let first = reply("first", 1);
        let second = reply("second", 2);
        sm.append_message(UserMessage::new("one").into()).expect("append");
        let first_id = sm.append_message(AgentMessage::Assistant(Shared::new(first.clone()))).expect("append");
        sm.append_message(UserMessage::new("two").into()).expect("append");
        let second_id = sm.append_message(AgentMessage::Assistant(Shared::new(second.clone()))).expect("append");
        let plain = facts(&sm, &second);
        assert!(plain.projected && plain.usage_matches_projection && !plain.has_context_edits);
        // A message never persisted counts as projected.
        assert!(facts(&sm, &reply("elsewhere", 9)).projected);
        // An edit replacing the first reply keeps it projected; the usage after it is stale.
        sm.append_context_edit(&first_id, Some(json!("short"))).expect("append");
        let edited = facts(&sm, &first);
        assert!(edited.has_context_edits && edited.projected && !edited.usage_matches_projection, "{edited:?}");
        // Removing the second reply: no longer projected, not retained for recovery.
        sm.append_context_edit(&second_id, None).expect("append");
        let removed = facts(&sm, &second);
        assert!(!removed.projected && !removed.retained_for_explicit_recovery);
        // A later edit restoring it wins.
        sm.append_context_edit(&second_id, Some(json!("back"))).expect("append");
        assert!(facts(&sm, &second).projected);
        // A compaction keeping only what follows it: the first reply leaves the context.
        let kept = sm.append_message(UserMessage::new("three").into()).expect("append");
        sm.append_compaction("summary", Some(&kept), 10.0, None, None, None).expect("append");
        let compacted = facts(&sm, &first);
        assert!(!compacted.projected && !compacted.retained_for_explicit_recovery);
        assert!(compacted.latest_compaction_ms.is_some());
    }
}
