//! Choosing what to compact: the cut point and the messages to summarize (`prepareCompaction`).

use std::collections::HashSet;

use crate::compaction::serialize::{FileOps, add_details_file_ops, extract_file_ops_from_message};
use crate::compaction::tokens::{CompactionSettings, estimate_projected_context_tokens, estimate_tokens};
use crate::messages::CodingAgentMessage;
use crate::session::{ProjectedEntry, SessionEntry, entry_context_messages, project_path};

/// What a compaction will summarize and keep.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionPreparation {
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Messages summarized into the history summary.
    pub messages_to_summarize: Vec<CodingAgentMessage>,
    /// The start of a turn split by the cut (summarized separately).
    pub turn_prefix_messages: Vec<CodingAgentMessage>,
    /// Whether the cut is inside a turn.
    pub is_split_turn: bool,
    /// Estimated context tokens before compaction.
    pub tokens_before: u64,
    /// The previous compaction's summary (the new one updates it).
    pub previous_summary: Option<String>,
    /// Files read and modified, cumulative with the previous pi-generated compaction.
    pub file_ops: FileOps,
    /// The settings used.
    pub settings: CompactionSettings,
}

/// Where the cut falls, in projected-entry indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutPoint {
    /// First kept entry.
    pub first_kept_entry_index: usize,
    /// The turn start when the cut splits a turn.
    pub turn_start_index: Option<usize>,
    /// Whether the cut splits a turn.
    pub is_split_turn: bool,
}

fn is_cut_point_role(role: &str) -> bool {
    matches!(role, "user" | "assistant" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary")
}

fn is_turn_start_role(role: &str) -> bool {
    matches!(role, "user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary")
}

fn is_compaction(e: &ProjectedEntry<'_>) -> bool {
    matches!(e.source, SessionEntry::Compaction(_))
}

fn is_turn_start(e: &ProjectedEntry<'_>) -> bool {
    !is_compaction(e) && e.messages.iter().any(|m| is_turn_start_role(m.role()))
}

fn tokens_of(e: &ProjectedEntry<'_>) -> u64 {
    e.messages.iter().map(|m| estimate_tokens(m)).sum()
}

/// Finds the cut point among projected entries `start..end` keeping about `keep_recent_tokens`
/// (pi's `findProjectedCutPoint`): never at a tool result; moved back over context-less metadata;
/// advanced past a closed suffix of an omitted (recovered) assistant attempt.
pub fn find_cut_point(entries: &[ProjectedEntry<'_>], start: usize, end: usize, keep_recent_tokens: u64) -> CutPoint {
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| !is_compaction(&entries[i]) && entries[i].messages.iter().any(|m| is_cut_point_role(m.role())))
        .collect();
    let Some(&first_cut) = cut_points.first() else {
        return CutPoint { first_kept_entry_index: start, turn_start_index: None, is_split_turn: false };
    };
    let mut accumulated = 0;
    let mut exceeded = false;
    let mut cut = first_cut;
    for i in (start..end).rev() {
        let t = tokens_of(&entries[i]);
        if t == 0 {
            continue;
        }
        accumulated += t;
        if accumulated >= keep_recent_tokens {
            exceeded = true;
            cut = cut_points.iter().copied().find(|&c| c >= i).unwrap_or(cut_points[cut_points.len() - 1]);
            break;
        }
    }
    let suffix = &entries[(cut + 1).min(end)..end];
    let intrinsically_visible = |e: &ProjectedEntry<'_>| {
        !matches!(e.source, SessionEntry::ContextEdit(_)) && !entry_context_messages(e.source).is_empty()
    };
    let omitted = |e: &ProjectedEntry<'_>| intrinsically_visible(e) && e.messages.is_empty();
    let omitted_ids: HashSet<&str> = suffix.iter().filter(|e| omitted(e)).map(|e| e.source.id()).collect();
    let external_replacement = suffix.iter().any(|e| match e.source {
        SessionEntry::ContextEdit(c) => c.replacement.is_some() && !omitted_ids.contains(c.target_id.as_str()),
        _ => false,
    });
    let recovery_suffix = exceeded
        && !external_replacement
        && suffix
            .iter()
            .any(|e| matches!(e.source, SessionEntry::Message(m) if m.message.role() == "assistant") && omitted(e))
        && suffix.iter().all(|e| !is_compaction(e) && (!intrinsically_visible(e) || omitted(e)));
    if recovery_suffix {
        cut += 1;
    }
    while cut > start {
        let prev = &entries[cut - 1];
        if is_compaction(prev) || !prev.messages.is_empty() {
            break;
        }
        cut -= 1;
    }
    let starts_turn = entries.get(cut).is_some_and(is_turn_start);
    let turn_start = if starts_turn {
        None
    } else {
        (start..=cut.min(end.saturating_sub(1))).rev().find(|&i| is_turn_start(&entries[i]))
    };
    CutPoint {
        first_kept_entry_index: cut,
        turn_start_index: turn_start,
        is_split_turn: !starts_turn && turn_start.is_some(),
    }
}

fn conversation_messages(entries: &[ProjectedEntry<'_>]) -> Vec<CodingAgentMessage> {
    entries
        .iter()
        .filter(|e| !is_compaction(e))
        .flat_map(|e| e.messages.iter().filter(|m| m.role() != "system").map(|m| m.as_ref().clone()))
        .collect()
}

/// Prepares a compaction of a branch (`path`: root → leaf). `None` when the last entry already is
/// a compaction or there is nothing to summarize.
pub fn prepare_compaction(path: &[&SessionEntry], settings: CompactionSettings) -> Option<CompactionPreparation> {
    if matches!(path.last(), Some(SessionEntry::Compaction(_))) {
        return None;
    }
    let projection = project_path(path.to_vec());
    let entries = &projection.entries;
    let prev = entries.iter().position(|e| is_compaction(e) && !e.messages.is_empty());
    let (previous_summary, start) = match prev.map(|i| (i, entries[i].source)) {
        Some((i, SessionEntry::Compaction(c))) => (Some(c.summary.clone()), i + 1),
        _ => (None, 0),
    };
    let tokens_before = estimate_projected_context_tokens(&projection, path).tokens;
    let cut = find_cut_point(entries, start, entries.len(), settings.keep_recent_tokens);
    let first_kept = entries.get(cut.first_kept_entry_index)?.source.id();
    if first_kept.is_empty() {
        return None;
    }
    let history_end = if cut.is_split_turn {
        cut.turn_start_index.unwrap_or(cut.first_kept_entry_index)
    } else {
        cut.first_kept_entry_index
    };
    let messages_to_summarize = conversation_messages(&entries[start..history_end.max(start)]);
    let turn_prefix_messages = match (cut.is_split_turn, cut.turn_start_index) {
        (true, Some(ts)) => conversation_messages(&entries[ts..cut.first_kept_entry_index]),
        _ => Vec::new(),
    };
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return None;
    }
    let mut file_ops = FileOps::default();
    if let Some(SessionEntry::Compaction(c)) = prev.map(|i| entries[i].source)
        && c.from_hook != Some(true)
    {
        add_details_file_ops(c.details.as_ref(), &mut file_ops);
    }
    for m in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        extract_file_ops_from_message(m, &mut file_ops);
    }
    Some(CompactionPreparation {
        first_kept_entry_id: first_kept.to_owned(),
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
        settings,
    })
}
