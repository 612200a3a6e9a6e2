//! Boundary events: `turn_end` and `agent_before_settle` (pi's `emitBoundary`).
//!
//! Each handler sees the entries drafted so far, whether a continuation is requested, and a
//! preview of the context those drafts would give; it may answer `{entries?, continue?}`
//! ([`BoundaryResult`]). `entries` replaces the drafts, `continue` the request; after every
//! handler the preview is rebuilt, and drafts that cannot be applied are reported as
//! `Invalid boundary entries: …` and dropped (the outcome is then invalid: no entries, no
//! continuation).

pub use super::boundary_state::{
    ActivityOutcome, BoundaryContextPreview, BoundaryDraft, BoundaryOutcome, BoundaryResult, BoundaryState,
};
use super::errors::ExtensionError;
use super::events::NotifyEvent;
use super::runner::ExtensionRunner;

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
