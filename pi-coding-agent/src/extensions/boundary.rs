//! Boundary events: `turn_end` and `agent_before_settle` (pi's `emitBoundary`).
//!
//! Each handler sees the entries drafted so far, whether a continuation is requested, and a
//! preview of the context those drafts would give; it may answer `{entries?, continue?}`
//! ([`BoundaryResult`]). `entries` replaces the drafts, `continue` the request; after every
//! handler the preview is rebuilt, and drafts that cannot be applied are reported as
//! `Invalid boundary entries: …` and dropped (the outcome is then invalid: no entries, no
//! continuation).

use pi_ai::Usage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::errors::ExtensionError;
use super::events::NotifyEvent;
use super::runner::ExtensionRunner;
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

/// What [`ExtensionRunner::emit_boundary`] returns.
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

impl NotifyEvent {
    /// The boundary state of a `turn_end` or `agent_before_settle` event.
    pub fn boundary_mut(&mut self) -> Option<&mut Option<BoundaryState>> {
        match self {
            NotifyEvent::TurnEnd { boundary, .. } | NotifyEvent::AgentBeforeSettle { boundary } => Some(boundary),
            _ => None,
        }
    }
}

impl ExtensionRunner {
    /// A boundary event (pi's `emitBoundary`): `base` is a `turn_end` or `agent_before_settle`
    /// event; `build` previews the context of a list of drafts (`Err(text)` when they cannot be
    /// applied). Handlers run in order, each seeing the state the previous ones left.
    pub async fn emit_boundary(
        &self,
        base: NotifyEvent,
        outcome: ActivityOutcome,
        mut build: impl FnMut(&[BoundaryDraft]) -> Result<BoundaryContextPreview, String>,
    ) -> BoundaryOutcome {
        let ctx = self.create_context();
        let name = base.kind().to_owned();
        let mut entries: Vec<BoundaryDraft> = Vec::new();
        let mut continue_run = false;
        let mut context = build(&entries).unwrap_or_default();
        let mut valid = true;
        for (path, handler) in self.snapshot::<NotifyEvent>(&name) {
            let mut event = base.clone();
            if let Some(slot) = event.boundary_mut() {
                *slot =
                    Some(BoundaryState { entries: entries.clone(), continue_run, context: context.clone(), outcome });
            }
            match self.call_handler(&handler, &mut event, &ctx).await {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), name.clone(), error)),
                Ok(Some(answer)) if !answer.is_null() => match serde_json::from_value::<BoundaryResult>(answer) {
                    Ok(result) => {
                        if let Some(e) = result.entries {
                            entries = e;
                        }
                        if let Some(c) = result.continue_run {
                            continue_run = c;
                        }
                    }
                    Err(e) => {
                        valid = false;
                        self.report(ExtensionError::new(
                            path.as_ref(),
                            name.clone(),
                            format!("Invalid boundary entries: {e}"),
                        ));
                        continue;
                    }
                },
                Ok(_) => {}
            }
            match build(&entries) {
                Ok(c) => {
                    context = c;
                    valid = true;
                }
                Err(e) => {
                    valid = false;
                    self.report(ExtensionError::new(
                        path.as_ref(),
                        name.clone(),
                        format!("Invalid boundary entries: {e}"),
                    ));
                }
            }
        }
        if valid {
            BoundaryOutcome { entries, continue_run, context, valid }
        } else {
            BoundaryOutcome { entries: Vec::new(), continue_run: false, context, valid }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drafts_and_results_have_pi_shape() {
        let r: BoundaryResult = serde_json::from_value(json!({
            "entries": [
                {"type": "custom", "customType": "note", "data": {"a": 1}},
                {"type": "custom_message", "customType": "m", "content": "hi", "display": false},
                {"type": "context_edit", "targetId": "abc", "replacement": null},
                {"type": "compaction", "summary": "s", "firstKeptEntryId": null}
            ],
            "continue": true
        }))
        .expect("valid result");
        assert_eq!(r.continue_run, Some(true));
        assert_eq!(r.entries.as_ref().map(Vec::len), Some(4));
        let state = BoundaryState { outcome: ActivityOutcome::Aborted, ..Default::default() };
        let v = serde_json::to_value(&state).expect("serializes");
        assert_eq!(v["continue"], json!(false));
        assert_eq!(v["outcome"], json!("aborted"));
        assert_eq!(v["context"]["canContinue"], json!(false));
    }
}
