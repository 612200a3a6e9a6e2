//! Tree navigation (pi's `navigateTree`): move the leaf within the session file, optionally
//! summarizing the branch being left; `session_before_tree` handlers may cancel, supply the
//! summary or change its instructions and label; `session_tree` follows.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use crate::compaction::generate_branch_summary;
use crate::compaction::{BranchSummaryOptions, BranchSummaryOutcome, collect_entries_for_branch_summary};
use crate::extensions::NotifyEvent;
use crate::sdk::error::SdkError;
use crate::session::SessionEntry;

/// Options of [`AgentSession::navigate_tree`].
#[derive(Clone, Debug, Default)]
pub struct NavigateTreeOptions {
    /// Summarize the branch being left.
    pub summarize: bool,
    /// Extra instructions for the summary.
    pub custom_instructions: Option<String>,
    /// `custom_instructions` replace pi's prompt.
    pub replace_instructions: Option<bool>,
    /// A label for the summary entry (or for the target without a summary).
    pub label: Option<String>,
}

/// What [`AgentSession::navigate_tree`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NavigateTreeOutcome {
    /// The text of the selected user or custom message, for the editor.
    pub editor_text: Option<String>,
    /// An extension cancelled, or the summary was aborted.
    pub cancelled: bool,
    /// The summary request was aborted.
    pub aborted: bool,
    /// The id of the new `branch_summary` entry.
    pub summary_entry_id: Option<String>,
}

impl AgentSession {
    /// Moves the session leaf to `target_id` within the same file (pi's `navigateTree`): a user
    /// or custom message puts the leaf on its parent and returns its text for the editor; any
    /// other entry becomes the leaf.
    pub async fn navigate_tree(
        &self,
        target_id: &str,
        options: NavigateTreeOptions,
    ) -> Result<NavigateTreeOutcome, SdkError> {
        if self.is_streaming() {
            return Err(SdkError::Failed(
                "Wait for the current response to finish before navigating the session tree.".into(),
            ));
        }
        if self.is_compacting() {
            return Err(SdkError::Failed(
                "Wait for the current compaction or tree navigation to finish before navigating the session tree."
                    .into(),
            ));
        }
        let old_leaf = self.lock_session_manager().leaf_id().map(str::to_owned);
        if old_leaf.as_deref() == Some(target_id) {
            return Ok(NavigateTreeOutcome::default());
        }
        let (target, entries_json, common_ancestor) = {
            let sm = self.lock_session_manager();
            let Some(target) = sm.entry(target_id).cloned() else {
                return Err(SdkError::Failed(format!("Entry {target_id} not found")));
            };
            let (entries, common) = collect_entries_for_branch_summary(&sm, old_leaf.as_deref(), target_id);
            (target, serde_json::to_value(&entries).unwrap_or(Value::Null), common)
        };
        let cancel = CancellationToken::new();
        self.shared.run_state().branch_summary_cancel = Some(cancel.clone());
        let result = self.navigate_inner(target, old_leaf, entries_json, common_ancestor, options, cancel).await;
        self.shared.run_state().branch_summary_cancel = None;
        self.shared.idle.notify_waiters();
        result
    }

    async fn navigate_inner(
        &self,
        target: SessionEntry,
        old_leaf: Option<String>,
        entries_json: Value,
        common_ancestor: Option<String>,
        options: NavigateTreeOptions,
        cancel: CancellationToken,
    ) -> Result<NavigateTreeOutcome, SdkError> {
        let target_id = target.id().to_owned();
        let mut custom_instructions = options.custom_instructions.clone();
        let mut replace_instructions = options.replace_instructions;
        let mut label = options.label.clone();
        let mut supplied: Option<Value> = None;
        let has_entries = entries_json.as_array().is_some_and(|a| !a.is_empty());
        if let Some(runner) = self.shared.runner.as_ref().filter(|r| r.has_handlers("session_before_tree")) {
            let mut payload = Map::new();
            payload.insert(
                "preparation".into(),
                json!({
                    "targetId": target_id, "oldLeafId": old_leaf, "commonAncestorId": common_ancestor,
                    "entriesToSummarize": entries_json, "userWantsSummary": options.summarize,
                    "customInstructions": custom_instructions, "replaceInstructions": replace_instructions,
                    "label": label,
                }),
            );
            let answer = runner.emit(NotifyEvent::Other { kind: "session_before_tree".into(), payload }).await;
            if let Some(answer) = answer {
                if answer.get("cancel").and_then(Value::as_bool) == Some(true) {
                    return Ok(NavigateTreeOutcome { cancelled: true, ..Default::default() });
                }
                if options.summarize {
                    supplied = answer.get("summary").filter(|s| s.is_object()).cloned();
                }
                if let Some(v) = answer.get("customInstructions") {
                    custom_instructions = v.as_str().map(str::to_owned);
                }
                if let Some(v) = answer.get("replaceInstructions") {
                    replace_instructions = v.as_bool();
                }
                if let Some(v) = answer.get("label") {
                    label = v.as_str().map(str::to_owned);
                }
            }
        }
        let from_extension = supplied.is_some();
        let mut summary: Option<(String, Option<Value>, Option<pi_ai::Usage>)> = None;
        if let Some(s) = supplied {
            summary = Some((
                s.get("summary").and_then(Value::as_str).unwrap_or_default().to_owned(),
                s.get("details").cloned(),
                s.get("usage").and_then(|u| serde_json::from_value(u.clone()).ok()),
            ));
        } else if options.summarize && has_entries {
            // A virtual selection is routed first (reason `direct`).
            let (model, level) = self.direct_route().await.map_err(|e| SdkError::Failed(e.to_string()))?;
            let mut summarizer = crate::compaction::Summarizer::with_stream_fn(model, self.shared.stream_fn.clone());
            summarizer.api_key = self.shared.stream_options.api_key.clone();
            summarizer.headers = self.shared.stream_options.headers.clone();
            summarizer.thinking_level = Some(level);
            summarizer.cancel = Some(cancel.clone());
            let branch_options = BranchSummaryOptions {
                custom_instructions: custom_instructions.clone(),
                replace_instructions: replace_instructions.unwrap_or(false),
                reserve_tokens: None,
            };
            let outcome = {
                let entries: Vec<SessionEntry> = {
                    let sm = self.lock_session_manager();
                    collect_entries_for_branch_summary(&sm, old_leaf.as_deref(), &target_id)
                        .0
                        .into_iter()
                        .cloned()
                        .collect()
                };
                let refs: Vec<&SessionEntry> = entries.iter().collect();
                generate_branch_summary(&refs, &summarizer, &branch_options).await
            };
            match outcome {
                BranchSummaryOutcome::Aborted => {
                    return Ok(NavigateTreeOutcome { cancelled: true, aborted: true, ..Default::default() });
                }
                BranchSummaryOutcome::Error(e) => return Err(SdkError::Failed(e)),
                BranchSummaryOutcome::Summary { summary: text, usage, read_files, modified_files } => {
                    let details = json!({"readFiles": read_files, "modifiedFiles": modified_files});
                    summary = Some((text, Some(details), usage));
                }
            }
        }
        let (new_leaf, editor_text) = match &target {
            SessionEntry::Message(m) if m.message.role() == "user" => {
                let text = match &m.message {
                    pi_agent_core::AgentMessage::User(u) => pi_ai::transcript::content_text_with(&u.content, ""),
                    _ => String::new(),
                };
                (target.parent_id().map(str::to_owned), Some(text))
            }
            SessionEntry::CustomMessage(c) => {
                (target.parent_id().map(str::to_owned), Some(pi_ai::transcript::content_text_with(&c.content, "")))
            }
            _ => (Some(target_id.clone()), None),
        };
        let mut summary_entry_id = None;
        {
            let mut sm = self.lock_session_manager();
            match &summary {
                Some((text, details, usage)) if !text.is_empty() => {
                    let id = sm.branch_with_summary(
                        new_leaf.as_deref(),
                        text,
                        details.clone(),
                        // pi writes `fromHook: false` for its own summaries.
                        Some(from_extension),
                        usage.clone(),
                    )?;
                    if let Some(label) = &label {
                        sm.append_label_change(&id, Some(label))?;
                    }
                    summary_entry_id = Some(id);
                }
                _ => {
                    match &new_leaf {
                        None => sm.reset_leaf(),
                        Some(id) => sm.branch(id)?,
                    }
                    if let Some(label) = &label {
                        sm.append_label_change(&target_id, Some(label))?;
                    }
                }
            }
        }
        self.refresh_context();
        self.shared.run_state().branch_summary_cancel = None;
        if let Some(runner) = &self.shared.runner {
            let (new_leaf_id, summary_entry) = {
                let sm = self.lock_session_manager();
                let entry =
                    summary_entry_id.as_deref().and_then(|id| sm.entry(id)).and_then(|e| serde_json::to_value(e).ok());
                (sm.leaf_id().map(str::to_owned), entry)
            };
            let mut payload = Map::new();
            payload.insert("newLeafId".into(), json!(new_leaf_id));
            payload.insert("oldLeafId".into(), json!(old_leaf));
            if let Some(e) = summary_entry {
                payload.insert("summaryEntry".into(), e);
                payload.insert("fromExtension".into(), json!(from_extension));
            }
            runner.emit(NotifyEvent::Other { kind: "session_tree".into(), payload }).await;
        }
        Ok(NavigateTreeOutcome { editor_text, cancelled: false, aborted: false, summary_entry_id })
    }
}
