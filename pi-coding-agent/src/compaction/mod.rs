//! Compaction and branch summaries, as pi 1.6.0 does them.
//!
//! - Threshold: [`should_compact`] with context tokens from [`estimate_projected_context_tokens`]
//!   (last assistant usage plus estimates, unless a later context edit or compaction invalidates
//!   it) and [`CompactionSettings`].
//! - Preparation: [`prepare_compaction`] finds the cut point that keeps about
//!   `keep_recent_tokens` (never at a tool result; split turns get a separate prefix summary) and
//!   tracks file operations.
//! - Summary: [`compact`] asks the model through a [`Summarizer`] (an `Arc<dyn ApiProvider>` plus a
//!   `Model`, or any [`StreamFn`]) with pi's exact prompts ([`prompts`]) and returns a
//!   [`CompactionResult`] for [`SessionManager::append_compaction`](crate::session::SessionManager::append_compaction).
//! - Branch summaries: [`collect_entries_for_branch_summary`], [`generate_branch_summary`],
//!   [`navigate_with_summary`].

mod branch;
mod prepare;
pub mod prompts;
mod serialize;
pub(crate) mod summarize;
mod tokens;

pub use branch::{
    BranchSummaryOptions, BranchSummaryOutcome, NavigateError, collect_entries_for_branch_summary,
    generate_branch_summary, navigate_with_summary, prepare_branch_entries,
};
pub use prepare::{CompactionPreparation, CutPoint, find_cut_point, prepare_compaction};
pub use serialize::{
    FileOps, TOOL_RESULT_MAX_CHARS, add_details_file_ops, compute_file_lists, extract_file_ops_from_message,
    format_file_operations, serialize_conversation,
};
pub use summarize::{
    CompactionResult, StreamFn, SummarizationError, Summarizer, compact, generate_summary, summarization_failure,
    summary_prompt, turn_prefix_prompt,
};
pub use tokens::{
    CompactionSettings, ContextEstimate, ESTIMATED_IMAGE_CHARS, calculate_context_tokens, estimate_context_tokens,
    estimate_projected_context_tokens, estimate_tokens, js_len, last_assistant_usage, should_compact,
};
