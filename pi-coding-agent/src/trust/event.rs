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
use crate::extensions::{ExtensionEvent, ExtensionRunner, NotifyEvent};

impl ExtensionEvent for ProjectTrustEvent {
    const NAME: &'static str = "project_trust";
    type Output = ProjectTrustEventResult;
}

fn decode_result(answer: &serde_json::Value) -> Option<ProjectTrustEventResult> {
    let trusted = match answer.get("trusted")?.as_str()? {
        "yes" => ProjectTrustDecision::Yes,
        "no" => ProjectTrustDecision::No,
        _ => ProjectTrustDecision::Undecided,
    };
    Some(ProjectTrustEventResult {
        trusted,
        remember: answer.get("remember").and_then(serde_json::Value::as_bool).unwrap_or(false),
    })
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
        let typed = self.snapshot::<ProjectTrustEvent>(ProjectTrustEvent::NAME);
        // JSON-RPC and JavaScript extensions answer through their notify handler.
        let remote = self.snapshot::<NotifyEvent>(ProjectTrustEvent::NAME);
        for path in self.extension_paths() {
            for (_, handler) in typed.iter().filter(|(p, _)| **p == *path) {
                let mut ev = event.clone();
                match self.call_handler(handler, &mut ev, &ctx).await {
                    Err(error) => errors.push(ProjectTrustHandlerError { extension_path: path.clone(), error }),
                    Ok(Some(result)) if result.trusted != ProjectTrustDecision::Undecided => {
                        return (Some(result), errors);
                    }
                    Ok(_) => {}
                }
            }
            for (_, handler) in remote.iter().filter(|(p, _)| **p == *path) {
                let mut payload = serde_json::Map::new();
                payload.insert("cwd".into(), serde_json::Value::String(event.cwd.clone()));
                let mut ev = NotifyEvent::Other { kind: ProjectTrustEvent::NAME.into(), payload };
                match self.call_handler(handler, &mut ev, &ctx).await {
                    Err(error) => errors.push(ProjectTrustHandlerError { extension_path: path.clone(), error }),
                    Ok(Some(answer)) => match decode_result(&answer) {
                        Some(result) if result.trusted != ProjectTrustDecision::Undecided => {
                            return (Some(result), errors);
                        }
                        _ => {}
                    },
                    Ok(None) => {}
                }
            }
        }
        (None, errors)
    }
}
