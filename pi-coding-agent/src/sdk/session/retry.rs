//! Auto-retry of retryable provider errors (pi's `_prepareRetry`, `abortRetry`): the failed
//! attempt stays in the session but is omitted from the model's context by a context edit, then
//! the run continues after an exponential back-off, or after the server's `Retry-After` of a
//! 429/503 answer (beyond pi), capped by `retry.maxAgentDelayMs`. `auto_retry_start` / `auto_retry_end` tell
//! listeners.

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantMessage, StopReason};
use tokio_util::sync::CancellationToken;

use super::provider_errors::{is_context_overflow, is_retryable_assistant_error};
use super::{AgentSession, SessionEvent, lock};
use crate::session::SessionEntry;

impl AgentSession {
    /// pi's `_isRetryableError`: context overflow is left to compaction.
    pub(crate) fn is_retryable(&self, message: &AssistantMessage) -> bool {
        !is_context_overflow(message, self.model().context_window) && is_retryable_assistant_error(message)
    }

    /// Schedules a retry; `false` when retries are off, exhausted or cancelled.
    pub(crate) async fn prepare_retry(&self, message: &AssistantMessage) -> bool {
        let settings = lock(&self.shared.settings).retry;
        if !settings.enabled {
            return false;
        }
        let attempt = {
            let mut st = self.shared.run_state();
            st.retry_attempt += 1;
            if st.retry_attempt > settings.max_retries {
                st.retry_attempt -= 1;
                return false;
            }
            st.retry_attempt
        };
        let delay_ms = settings.delay_for(attempt, self.shared.retry_after.take());
        self.shared.emit(&SessionEvent::AutoRetryStart {
            attempt,
            max_attempts: settings.max_retries,
            delay_ms,
            error_message: message
                .error_message
                .clone()
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "Unknown error".into()),
        });
        self.omit_recovery_attempt(message);
        let cancel = CancellationToken::new();
        self.shared.run_state().retry_cancel = Some(cancel.clone());
        let slept = tokio::select! {
            _ = cancel.cancelled() => false,
            _ = tokio::time::sleep(std::time::Duration::from_millis(delay_ms)) => true,
        };
        self.shared.run_state().retry_cancel = None;
        if !slept {
            self.finish_cancelled_retry();
        }
        slept
    }

    /// Keeps a failed attempt in the session and hides it (and its tool results) from the model
    /// with context edits (pi's `_omitRecoveryAttempt`).
    pub(crate) fn omit_recovery_attempt(&self, message: &AssistantMessage) {
        let call_ids: Vec<String> = message.tool_calls().map(|c| c.id.clone()).collect();
        let mut sm = self.lock_session_manager();
        let branch: Vec<(String, Option<crate::messages::CodingAgentMessage>)> = sm
            .get_branch(None)
            .iter()
            .map(|e| (e.id().to_owned(), e.as_message().cloned().filter(|_| matches!(e, SessionEntry::Message(_)))))
            .collect();
        let Some(index) =
            branch.iter().rposition(|(_, m)| matches!(m, Some(AgentMessage::Assistant(a)) if a == message))
        else {
            return;
        };
        let mut targets = vec![branch[index].0.clone()];
        for (id, m) in &branch[index + 1..] {
            match m {
                Some(AgentMessage::Assistant(_)) => break,
                Some(AgentMessage::ToolResult(r)) if call_ids.contains(&r.tool_call_id) => targets.push(id.clone()),
                _ => {}
            }
        }
        let mut appended = Vec::new();
        for target in targets {
            match sm.append_context_edit(&target, None) {
                Ok(id) => {
                    let entry = sm.entry(&id).cloned();
                    appended.push((id, entry));
                }
                Err(e) => tracing::error!(error = %e, "could not omit a failed attempt from the context"),
            }
        }
        drop(sm);
        for (id, entry) in appended {
            self.shared.emit(&SessionEvent::EntryPersisted { id, entry_type: "context_edit" });
            // pi's `entry_appended` event, which its json and rpc modes put on the wire.
            if let Some(entry) = entry {
                self.shared.emit(&SessionEvent::EntryAppended { entry: std::sync::Arc::new(entry) });
            }
        }
        self.refresh_context();
    }

    /// A retry was cancelled: `auto_retry_end` with `Retry cancelled`.
    pub(crate) fn finish_cancelled_retry(&self) {
        let attempt = std::mem::take(&mut self.shared.run_state().retry_attempt);
        if attempt > 0 {
            self.shared.emit(&SessionEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error: Some("Retry cancelled".into()),
            });
        }
    }

    /// The last attempt failed too: `auto_retry_end` with its error.
    pub(crate) fn finish_failed_retry(&self, message: &AssistantMessage) {
        if message.stop_reason != StopReason::Error {
            return;
        }
        let attempt = std::mem::take(&mut self.shared.run_state().retry_attempt);
        if attempt > 0 {
            self.shared.emit(&SessionEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error: message.error_message.clone(),
            });
        }
    }

    /// pi's `abortRetry`: cancels the back-off sleep.
    pub fn abort_retry(&self) {
        if let Some(cancel) = &self.shared.run_state().retry_cancel {
            cancel.cancel();
        }
    }

    /// Whether a retry back-off is running.
    pub fn is_retrying(&self) -> bool {
        self.shared.run_state().retry_cancel.is_some()
    }
}
