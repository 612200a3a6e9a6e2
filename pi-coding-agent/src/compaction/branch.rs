//! Branch summaries: what the user leaves behind when navigating the tree (`/tree`).

use std::collections::{HashMap, HashSet};

use pi_agent_core::AgentMessage;
use pi_ai::Usage;

use crate::compaction::prompts::{BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT};
use crate::compaction::serialize::{
    FileOps, add_details_file_ops, compute_file_lists, extract_file_ops_from_message, format_file_operations,
    serialize_conversation,
};
use crate::compaction::summarize::{Summarizer, summarization_failure};
use crate::compaction::tokens::estimate_tokens;
use crate::messages::{
    CodingAgentMessage, convert_to_llm, create_branch_summary_message, create_compaction_summary_message,
};
use crate::session::{ContextEditEntry, SessionEntry, SessionManager, parse_iso, project_context_entry};

/// Entries to summarize when moving from `old_leaf` to `target`: from the old leaf back to the
/// deepest common ancestor (exclusive), oldest first, and that ancestor.
pub fn collect_entries_for_branch_summary<'a>(
    session: &'a SessionManager,
    old_leaf: Option<&str>,
    target: &str,
) -> (Vec<&'a SessionEntry>, Option<String>) {
    let Some(old_leaf) = old_leaf else { return (Vec::new(), None) };
    let old_path: HashSet<&str> = session.get_branch(Some(old_leaf)).iter().map(|e| e.id()).collect();
    let common =
        session.get_branch(Some(target)).iter().rev().find(|e| old_path.contains(e.id())).map(|e| e.id().to_owned());
    let mut entries = Vec::new();
    let mut current = Some(old_leaf.to_owned());
    while let Some(id) = current {
        if Some(&id) == common.as_ref() {
            break;
        }
        let Some(e) = session.entry(&id) else { break };
        entries.push(e);
        if entries.len() > session.entry_count() {
            break;
        }
        current = e.parent_id().map(str::to_owned);
    }
    entries.reverse();
    (entries, common)
}

fn message_of(entry: &SessionEntry, edit: Option<&ContextEditEntry>) -> Option<CodingAgentMessage> {
    let ms = |t: &str| parse_iso(t).map_or(0, |x| x.max(0) as u64);
    match entry {
        SessionEntry::Message(m) if matches!(m.message, AgentMessage::ToolResult(_)) => None,
        SessionEntry::Message(_) | SessionEntry::CustomMessage(_) => {
            project_context_entry(entry, edit).into_iter().next().map(|m| m.into_owned())
        }
        SessionEntry::BranchSummary(b) => Some(create_branch_summary_message(&b.summary, &b.from_id, ms(&b.timestamp))),
        SessionEntry::Compaction(c) => {
            Some(create_compaction_summary_message(&c.summary, c.tokens_before, ms(&c.timestamp)))
        }
        _ => None,
    }
}

/// Messages of a branch within `token_budget` (0: no limit), newest kept first, plus the file
/// operations of all of it (cumulative with earlier pi-generated branch summaries).
pub fn prepare_branch_entries(entries: &[&SessionEntry], token_budget: u64) -> (Vec<CodingAgentMessage>, FileOps, u64) {
    let mut ops = FileOps::default();
    for e in entries {
        if let SessionEntry::BranchSummary(b) = e
            && b.from_hook != Some(true)
        {
            add_details_file_ops(b.details.as_ref(), &mut ops);
        }
    }
    let mut edits: HashMap<&str, &ContextEditEntry> = HashMap::new();
    for e in entries {
        if let SessionEntry::ContextEdit(c) = e {
            edits.insert(&c.target_id, c);
        }
    }
    let mut messages = Vec::new();
    let mut total = 0u64;
    for e in entries.iter().rev() {
        let Some(m) = message_of(e, edits.get(e.id()).copied()) else { continue };
        extract_file_ops_from_message(&m, &mut ops);
        let t = estimate_tokens(&m);
        if token_budget > 0 && total + t > token_budget {
            if matches!(e, SessionEntry::Compaction(_) | SessionEntry::BranchSummary(_))
                && (total as f64) < token_budget as f64 * 0.9
            {
                messages.push(m);
                total += t;
            }
            break;
        }
        messages.push(m);
        total += t;
    }
    messages.reverse();
    (messages, ops, total)
}

/// The outcome of [`generate_branch_summary`].
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)] // returned once per navigation; boxing buys nothing
pub enum BranchSummaryOutcome {
    /// A summary (preamble and file lists included).
    Summary {
        /// The text for [`SessionManager::branch_with_summary`].
        summary: String,
        /// Usage of the request (none when there was nothing to summarize).
        usage: Option<Usage>,
        /// Files only read.
        read_files: Vec<String>,
        /// Files modified.
        modified_files: Vec<String>,
    },
    /// The request was cancelled.
    Aborted,
    /// The request failed (pi's message).
    Error(String),
}

/// Options of a branch summary.
#[derive(Clone, Debug, Default)]
pub struct BranchSummaryOptions {
    /// Extra focus, or the whole instructions with `replace_instructions`.
    pub custom_instructions: Option<String>,
    /// Use `custom_instructions` instead of pi's prompt.
    pub replace_instructions: bool,
    /// Tokens kept free (default 16384).
    pub reserve_tokens: Option<u64>,
}

/// Summarizes abandoned branch entries (oldest first) with the model.
pub async fn generate_branch_summary(
    entries: &[&SessionEntry],
    summarizer: &Summarizer,
    options: &BranchSummaryOptions,
) -> BranchSummaryOutcome {
    let window = if summarizer.model.context_window > 0 { summarizer.model.context_window } else { 128_000 };
    let budget = window.saturating_sub(options.reserve_tokens.unwrap_or(16384));
    let (messages, ops, _) = prepare_branch_entries(entries, budget);
    if messages.is_empty() {
        return BranchSummaryOutcome::Summary {
            summary: "No content to summarize".to_owned(),
            usage: None,
            read_files: Vec::new(),
            modified_files: Vec::new(),
        };
    }
    let conversation = serialize_conversation(&convert_to_llm(&messages));
    let custom = options.custom_instructions.as_deref().filter(|c| !c.is_empty());
    let instructions = match custom {
        Some(c) if options.replace_instructions => c.to_owned(),
        Some(c) => format!("{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {c}"),
        None => BRANCH_SUMMARY_PROMPT.to_owned(),
    };
    let prompt = format!("<conversation>\n{conversation}\n</conversation>\n\n{instructions}");
    let response = summarizer.complete(&prompt).await;
    if response.stop_reason == pi_ai::StopReason::Aborted {
        return BranchSummaryOutcome::Aborted;
    }
    if let Some(f) = summarization_failure(&response, "Branch summarization") {
        return BranchSummaryOutcome::Error(f);
    }
    if response.tool_calls().next().is_some() {
        return BranchSummaryOutcome::Error("Branch summarization attempted to call a tool".to_owned());
    }
    let (read_files, modified_files) = compute_file_lists(&ops);
    let summary = format!(
        "{BRANCH_SUMMARY_PREAMBLE}{}{}",
        response.text_joined(),
        format_file_operations(&read_files, &modified_files)
    );
    BranchSummaryOutcome::Summary { summary, usage: Some(response.usage), read_files, modified_files }
}

trait JoinedText {
    fn text_joined(&self) -> String;
}

impl JoinedText for pi_ai::AssistantMessage {
    fn text_joined(&self) -> String {
        pi_ai::transcript::blocks_text(&self.content, "\n")
    }
}

/// Navigates to `target`, summarizing the branch being left when `summarize` is set (pi's
/// `navigateTree` core): returns the new branch-summary entry id, or `None` when nothing was
/// summarized (the leaf then moves to `target`).
pub async fn navigate_with_summary(
    session: &mut SessionManager,
    target: &str,
    summarizer: Option<&Summarizer>,
    options: &BranchSummaryOptions,
) -> Result<Option<String>, NavigateError> {
    let old_leaf = session.leaf_id().map(str::to_owned);
    if session.entry(target).is_none() {
        return Err(NavigateError::Session(crate::session::SessionError::EntryNotFound(target.to_owned())));
    }
    let outcome = match summarizer {
        Some(s) => {
            let (entries, _) = collect_entries_for_branch_summary(session, old_leaf.as_deref(), target);
            if entries.is_empty() { None } else { Some(generate_branch_summary(&entries, s, options).await) }
        }
        None => None,
    };
    match outcome {
        None => {
            session.branch(target)?;
            Ok(None)
        }
        Some(BranchSummaryOutcome::Aborted) => Err(NavigateError::Aborted),
        Some(BranchSummaryOutcome::Error(e)) => Err(NavigateError::Summary(e)),
        Some(BranchSummaryOutcome::Summary { summary, usage, read_files, modified_files }) => {
            let details = serde_json::json!({"readFiles": read_files, "modifiedFiles": modified_files});
            Ok(Some(session.branch_with_summary(Some(target), &summary, Some(details), None, usage)?))
        }
    }
}

/// Why [`navigate_with_summary`] did not move.
#[derive(Debug, thiserror::Error)]
pub enum NavigateError {
    /// The session refused (unknown entry, write failure).
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
    /// The summary request was cancelled.
    #[error("Branch summarization aborted")]
    Aborted,
    /// The summary request failed.
    #[error("{0}")]
    Summary(String),
}
