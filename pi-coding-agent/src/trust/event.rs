//! The `project_trust` event for extensions: [`ProjectTrustEvent`] is an
//! [`ExtensionEvent`](crate::extensions::ExtensionEvent) (`api.on::<ProjectTrustEvent>(…)` in a
//! Rust extension), and an [`ExtensionRunner`] answers [`ProjectTrustHandlers`] the way pi's
//! `emitProjectTrustEvent` does: handlers in load then registration order, the first `yes` /
//! `no` wins, `undecided` (or no answer) falls through, a failing handler is collected and the
//! next one runs.

use async_trait::async_trait;

use super::resolve::{
    ProjectTrustContext, ProjectTrustDecision, ProjectTrustEvent, ProjectTrustEventResult, ProjectTrustHandlerError,
    ProjectTrustHandlers,
};
use crate::extensions::{ExtensionEvent, ExtensionRunner};

impl ExtensionEvent for ProjectTrustEvent {
    const NAME: &'static str = "project_trust";
    type Output = ProjectTrustEventResult;
}

#[async_trait]
impl ProjectTrustHandlers for ExtensionRunner {
    async fn emit_project_trust(
        &self,
        event: &ProjectTrustEvent,
        _ctx: &ProjectTrustContext<'_>,
    ) -> (Option<ProjectTrustEventResult>, Vec<ProjectTrustHandlerError>) {
        let ctx = self.create_context();
        let mut errors = Vec::new();
        for (path, handler) in self.snapshot::<ProjectTrustEvent>(ProjectTrustEvent::NAME) {
            let mut ev = event.clone();
            match self.call_handler(&handler, &mut ev, &ctx).await {
                Err(error) => errors.push(ProjectTrustHandlerError { extension_path: path.to_string(), error }),
                Ok(Some(result)) if result.trusted != ProjectTrustDecision::Undecided => return (Some(result), errors),
                Ok(_) => {}
            }
        }
        (None, errors)
    }
}
