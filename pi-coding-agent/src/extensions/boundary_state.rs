//! The state boundary events carry (`turn_end`, `agent_before_settle`): drafted entries, the
//! continuation request, the context preview, and what handlers answer. Apart from the dispatch
//! ([`super::boundary`]) so that the event types can hold it.

use pi_ai::Usage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::messages::CodingAgentMessage;

/// An entry a boundary handler asks to append (pi's `SessionBoundaryDraft`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum BoundaryDraft {
    /// A `custom` entry (state, never seen by the model).
    Custom {
        /// Its type.
        custom_type: String,
        /// Its data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// A `custom_message` entry (seen by the model).
    CustomMessage {
        /// Its type.
        custom_type: String,
        /// A string or a list of text and image blocks.
        content: Value,
        /// Whether the transcript shows it.
        display: bool,
        /// Details (never sent to the model).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// A `context_edit` entry replacing what an earlier entry contributes to the context.
    ContextEdit {
        /// The edited entry.
        target_id: String,
        /// The replacement (`null` omits the entry).
        replacement: Value,
    },
    /// A `compaction` entry.
    Compaction {
        /// The summary.
        summary: String,
        /// The first kept entry; `null` keeps none.
        first_kept_entry_id: Option<String>,
        /// Details.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Usage of the summary's own request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
}

/// How the activity a boundary closes ended (pi's `AgentActivityOutcome`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActivityOutcome {
    /// Finished normally.
    #[default]
    Completed,
    /// Aborted.
    Aborted,
    /// Failed.
    Error,
}

impl ActivityOutcome {
    /// pi's outcome of an assistant message's stop reason.
    pub fn of(stop_reason: pi_ai::StopReason) -> ActivityOutcome {
        match stop_reason {
            pi_ai::StopReason::Aborted => ActivityOutcome::Aborted,
            pi_ai::StopReason::Error => ActivityOutcome::Error,
            _ => ActivityOutcome::Completed,
        }
    }
}

/// The context the drafts would give (pi's `BoundaryContextPreview`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BoundaryContextPreview {
    /// The projected entries (`{sourceEntry, messages}`).
    pub context_entries: Vec<Value>,
    /// The context's messages.
    pub context_messages: Vec<CodingAgentMessage>,
    /// The messages as the provider would get them.
    pub llm_messages: Vec<Value>,
    /// Queued steering, follow-up and custom messages.
    pub pending_messages: Vec<CodingAgentMessage>,
    /// Whether a continuation could make a request.
    pub can_continue: bool,
}

/// What a boundary handler sees beside the event's own fields (pi's `BoundaryState`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BoundaryState {
    /// The drafts so far.
    pub entries: Vec<BoundaryDraft>,
    /// Whether a continuation is requested so far.
    #[serde(rename = "continue")]
    pub continue_run: bool,
    /// The preview of the context with the drafts applied.
    pub context: BoundaryContextPreview,
    /// How the activity ended.
    pub outcome: ActivityOutcome,
}

/// A boundary handler's answer (pi's `BoundaryResult`); return it as JSON from a notify handler.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BoundaryResult {
    /// Replaces the drafts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<BoundaryDraft>>,
    /// Replaces the continuation request.
    #[serde(default, rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_run: Option<bool>,
}

/// What [`ExtensionRunner::emit_boundary`](crate::extensions::ExtensionRunner::emit_boundary) returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundaryOutcome {
    /// The drafts to append (none when invalid).
    pub entries: Vec<BoundaryDraft>,
    /// Whether a continuation was requested (false when invalid).
    pub continue_run: bool,
    /// The last preview.
    pub context: BoundaryContextPreview,
    /// Whether the last drafts could be applied.
    pub valid: bool,
}
