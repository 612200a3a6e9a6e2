//! Replacing the session behind an `AgentSession` (pi's runtime `newSession`, `switchSession`,
//! `fork`): `session_before_switch` / `session_before_fork` handlers may cancel; the current run
//! is aborted, `session_shutdown` is emitted, the new session is installed and `session_start`
//! follows with the reason (`new`, `resume`, `fork`).
//!
//! pi rebuilds the whole runtime; this port keeps the agent, tools and extension runner and swaps
//! the [`SessionManager`] (held messages and queues are dropped as a new runtime would).

use serde_json::{Map, json};

use pi_ai::{Model, ThinkingLevel};

use super::{AgentSession, lock};
use crate::extensions::NotifyEvent;
use crate::sdk::error::SdkError;
use crate::session::{NewSessionOptions, SessionEntry, SessionManager};

/// The result of [`AgentSession::new_session`] / [`AgentSession::switch_session`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwitchOutcome {
    /// A `session_before_switch` handler cancelled.
    pub cancelled: bool,
}

/// The result of [`AgentSession::fork`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForkOutcome {
    /// A `session_before_fork` handler cancelled.
    pub cancelled: bool,
    /// The text of the user message forked before (for the editor).
    pub selected_text: Option<String>,
}

/// A user message that can be forked from (pi's `getUserMessagesForForking` item).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkMessage {
    /// The entry id.
    pub entry_id: String,
    /// The message text.
    pub text: String,
}

fn user_text(entry: &SessionEntry) -> Option<String> {
    match entry {
        SessionEntry::Message(m) => match &m.message {
            pi_agent_core::AgentMessage::User(u) => Some(pi_ai::transcript::content_text_with(&u.content, "")),
            _ => None,
        },
        _ => None,
    }
}

impl AgentSession {
    /// Starts a new session (pi's `newSession`): same directory (or in memory), optionally naming
    /// a parent session in its header.
    pub async fn new_session(&self, parent_session: Option<String>) -> Result<SwitchOutcome, SdkError> {
        self.new_session_with_setup(parent_session, None).await
    }

    /// [`new_session`](Self::new_session) with pi's `setup`: once the new session is installed,
    /// `setup` changes its manager and the agent's context is rebuilt from it, before
    /// `session_start` (pi's runtime runs `setup` before it binds the new session).
    pub async fn new_session_with_setup(
        &self,
        parent_session: Option<String>,
        setup: Option<crate::extensions::SessionSetupFuture>,
    ) -> Result<SwitchOutcome, SdkError> {
        if self.emit_before("session_before_switch", json!({"reason": "new"})).await {
            return Ok(SwitchOutcome { cancelled: true });
        }
        let previous = self.session_file();
        let mut next = {
            let sm = self.lock_session_manager();
            if sm.is_persisted() {
                SessionManager::create(sm.cwd(), Some(sm.session_dir()), NewSessionOptions::default())?
            } else {
                SessionManager::in_memory(sm.cwd())
            }
        };
        if parent_session.is_some() {
            next.new_session(NewSessionOptions { parent_session, ..Default::default() })?;
        }
        self.teardown("new", next.session_file().map(|p| p.display().to_string())).await;
        self.install_with(Some(next), "new", previous, setup).await?;
        Ok(SwitchOutcome { cancelled: false })
    }

    /// Opens another session file (pi's `switchSession`).
    pub async fn switch_session(&self, path: &std::path::Path) -> Result<SwitchOutcome, SdkError> {
        let target = path.display().to_string();
        if self.emit_before("session_before_switch", json!({"reason": "resume", "targetSessionFile": target})).await {
            return Ok(SwitchOutcome { cancelled: true });
        }
        let previous = self.session_file();
        let next = SessionManager::open(path, None, None)?;
        self.teardown("resume", next.session_file().map(|p| p.display().to_string())).await;
        self.install(Some(next), "resume", previous).await?;
        Ok(SwitchOutcome { cancelled: false })
    }

    /// Forks before a user message into a new session (pi's `fork(entryId)`, position
    /// `before`): the new session holds the path up to the message's parent, and the message's
    /// text is returned for the editor.
    pub async fn fork(&self, entry_id: &str) -> Result<ForkOutcome, SdkError> {
        self.fork_at(entry_id, false).await
    }

    /// Copies the path up to and including `entry_id` into a new session (pi's `clone`, fork
    /// position `at`).
    pub async fn clone_at(&self, entry_id: &str) -> Result<ForkOutcome, SdkError> {
        self.fork_at(entry_id, true).await
    }

    async fn fork_at(&self, entry_id: &str, at: bool) -> Result<ForkOutcome, SdkError> {
        let position = if at { "at" } else { "before" };
        if self.emit_before("session_before_fork", json!({"entryId": entry_id, "position": position})).await {
            return Ok(ForkOutcome { cancelled: true, selected_text: None });
        }
        let invalid = || SdkError::Failed("Invalid entry ID for forking".into());
        let (target_leaf, selected_text) = {
            let sm = self.lock_session_manager();
            let entry = sm.entry(entry_id).ok_or_else(invalid)?;
            if at {
                (Some(entry.id().to_owned()), None)
            } else {
                let text = user_text(entry).ok_or_else(invalid)?;
                (entry.parent_id().map(str::to_owned), Some(text))
            }
        };
        let previous = self.session_file();
        let (persisted, cwd, dir) = {
            let sm = self.lock_session_manager();
            (sm.is_persisted(), sm.cwd().to_owned(), sm.session_dir().to_path_buf())
        };
        if !persisted {
            // In memory: the same manager is reset or cut down, after the run settled.
            self.teardown("fork", None).await;
            {
                let mut sm = self.lock_session_manager();
                match &target_leaf {
                    None => {
                        sm.new_session(NewSessionOptions {
                            parent_session: previous.as_ref().map(|p| p.display().to_string()),
                            ..Default::default()
                        })?;
                    }
                    Some(leaf) => {
                        sm.create_branched_session(leaf)?;
                    }
                }
            }
            self.install(None, "fork", previous).await?;
            return Ok(ForkOutcome { cancelled: false, selected_text });
        }
        let current =
            previous.clone().ok_or_else(|| SdkError::Failed("Persisted session is missing a session file".into()))?;
        let next = match &target_leaf {
            None => {
                let mut next = SessionManager::create(&cwd, Some(&dir), NewSessionOptions::default())?;
                next.new_session(NewSessionOptions {
                    parent_session: Some(current.display().to_string()),
                    ..Default::default()
                })?;
                next
            }
            Some(leaf) => {
                if !current.exists() {
                    return Err(SdkError::Failed(
                        "This session has not been saved yet. Send a message before cloning or forking it.".into(),
                    ));
                }
                let mut next = SessionManager::open(&current, Some(&dir), None)?;
                next.create_branched_session(leaf)?
                    .ok_or_else(|| SdkError::Failed("Failed to create forked session".into()))?;
                next
            }
        };
        self.teardown("fork", next.session_file().map(|p| p.display().to_string())).await;
        self.install(Some(next), "fork", previous).await?;
        Ok(ForkOutcome { cancelled: false, selected_text })
    }

    /// pi's `getUserMessagesForForking`: every user message with text, in file order.
    pub fn get_fork_messages(&self) -> Vec<ForkMessage> {
        self.lock_session_manager()
            .entries()
            .iter()
            .filter_map(|e| {
                user_text(e).filter(|t| !t.is_empty()).map(|text| ForkMessage { entry_id: e.id().to_owned(), text })
            })
            .collect()
    }

    /// Emits a cancellable `session_before_*` event; `true` when a handler cancelled.
    async fn emit_before(&self, kind: &str, payload: serde_json::Value) -> bool {
        let Some(runner) = self.shared.runner.as_ref().filter(|r| r.has_handlers(kind)) else { return false };
        let payload = match payload {
            serde_json::Value::Object(m) => m,
            _ => Map::new(),
        };
        let event = match kind {
            "session_before_switch" => NotifyEvent::SessionBeforeSwitch {
                reason: payload.get("reason").and_then(|v| v.as_str()).unwrap_or_default().to_owned(),
                target_session_file: payload.get("targetSessionFile").and_then(|v| v.as_str()).map(str::to_owned),
            },
            "session_before_fork" => NotifyEvent::SessionBeforeFork {
                entry_id: payload.get("entryId").and_then(|v| v.as_str()).unwrap_or_default().to_owned(),
                position: payload.get("position").and_then(|v| v.as_str()).unwrap_or_default().to_owned(),
            },
            _ => NotifyEvent::Other { kind: kind.to_owned(), payload },
        };
        runner.emit(event).await.is_some_and(|a| a.get("cancel").and_then(|c| c.as_bool()) == Some(true))
    }

    /// What pi's `createAgentSession` does for the session a runtime switches to: a session with
    /// messages restores the model its branch last used (its last `model_change`, else its last
    /// assistant's) when that model is available, and its recorded thinking level; a model that
    /// is not available leaves pi's fallback message and keeps the current model. The level is
    /// clamped to the model. A session without messages records the model and level; one without
    /// a `thinking_level_change` gets one.
    fn restore_model_and_thinking_level(&self) -> Result<(), SdkError> {
        let (has_messages, recorded_level, recorded_model, has_thinking_entry) = {
            let sm = self.lock_session_manager();
            let context = sm.build_session_context();
            let branch = sm.get_branch(None);
            let has_thinking_entry = branch.iter().any(|e| matches!(e, SessionEntry::ThinkingLevelChange(_)));
            // pi's `getBranchSelection`: a virtual selection holds while it is registered.
            let known = super::session_models(self, false);
            let lookup = |p: &str, id: &str| known.iter().find(|m| m.provider == p && m.id == id).cloned();
            let selection = super::virtual_route::branch_selection(&branch, lookup)
                .map(|(provider, model_id)| crate::session::ModelRef { provider, model_id });
            (!context.messages.is_empty(), context.thinking_level, selection, has_thinking_entry)
        };
        let current = self.model();
        let mut model = current.clone();
        let mut fallback = None;
        if has_messages && let Some(recorded) = recorded_model {
            match super::extension_model(self, &recorded.provider, &recorded.model_id) {
                Some(found) => model = found,
                None => {
                    fallback = Some(format!(
                        "Could not restore model {}/{}. Using {}/{}",
                        recorded.provider, recorded.model_id, current.provider, current.id
                    ))
                }
            }
        }
        let level = match ThinkingLevel::parse(&recorded_level) {
            Some(level) if has_messages && has_thinking_entry => level,
            _ => self.thinking_level(),
        };
        let level = pi_ai::models::clamp_thinking_level(&model, level);
        self.agent.set_model(model.clone());
        self.agent.set_thinking_level(level);
        *lock(&self.shared.model_fallback_message) = fallback;
        let mut sm = self.lock_session_manager();
        if !has_messages {
            sm.append_model_change(&model.provider, &model.id)?;
            sm.append_thinking_level_change(level.as_str())?;
        } else if !has_thinking_entry {
            sm.append_thinking_level_change(level.as_str())?;
        }
        Ok(())
    }

    /// A model with configured auth (pi's `modelRuntime.getModel` + `hasConfiguredAuth`).
    pub(crate) fn available_model(&self, provider: &str, id: &str) -> Option<Model> {
        let current = self.model();
        if current.provider == provider && current.id == id {
            return Some(current);
        }
        if !self.shared.models.is_empty() {
            return self.shared.models.iter().find(|m| m.provider == provider && m.id == id).cloned();
        }
        pi_ai::models::get_model(provider, id).filter(|_| pi_ai::models::env_api_key(provider).is_some()).cloned()
    }

    /// pi's `modelFallbackMessage`: why the last switched or forked session did not get the model
    /// it recorded ("Could not restore model p/m. Using p2/m2").
    pub fn model_fallback_message(&self) -> Option<String> {
        lock(&self.shared.model_fallback_message).clone()
    }

    /// pi's `teardownCurrent`: settle the run, then `session_shutdown`.
    async fn teardown(&self, reason: &str, target_session_file: Option<String>) {
        self.abort().await;
        if let Some(runner) = &self.shared.runner {
            runner.emit(NotifyEvent::SessionShutdown { reason: reason.to_owned(), target_session_file }).await;
        }
    }

    /// Installs `next` as the session (`None`: the current manager was changed in place), resets per-session state, then `session_start`.
    async fn install(
        &self,
        next: Option<SessionManager>,
        reason: &str,
        previous: Option<std::path::PathBuf>,
    ) -> Result<(), SdkError> {
        self.install_with(next, reason, previous, None).await
    }

    /// [`install`](Self::install), running a `newSession` `setup` before `session_start`.
    async fn install_with(
        &self,
        next: Option<SessionManager>,
        reason: &str,
        previous: Option<std::path::PathBuf>,
        setup: Option<crate::extensions::SessionSetupFuture>,
    ) -> Result<(), SdkError> {
        if let Some(next) = next {
            *self.lock_session_manager() = next;
        }
        // Requests carry the new session's id (openai-responses' `prompt_cache_key`), as pi's
        // runtime rebuild sets `agent.sessionId`.
        let session_id = self.lock_session_manager().session_id().to_owned();
        self.agent.set_session_id(Some(session_id));
        {
            let mut st = self.shared.run_state();
            st.pending_next_turn.clear();
            st.pending_custom.clear();
            st.pending_bash.clear();
            st.steering_texts.clear();
            st.follow_up_texts.clear();
            st.retry_attempt = 0;
            st.overflow_recovery_attempted = false;
        }
        self.agent.clear_all_queues();
        self.restore_model_and_thinking_level()?;
        self.refresh_context();
        if let Some(setup) = setup {
            let apply = setup.await.map_err(|e| SdkError::Failed(e.to_string()))?;
            self.with_session_manager(apply).map_err(|e| SdkError::Failed(e.to_string()))?;
            self.refresh_context();
        }
        if let Some(runner) = &self.shared.runner {
            let previous_session_file = previous.map(|p| p.display().to_string());
            runner.emit(NotifyEvent::SessionStart { reason: reason.to_owned(), previous_session_file }).await;
            self.extend_resources_from_extensions("startup").await;
        }
        Ok(())
    }
}
