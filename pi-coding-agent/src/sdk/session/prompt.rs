//! The prompt path (pi's `prompt` → `_preparePrompt` → `_startRun` → `_prepareRun`):
//! extension commands, the `input` event, input expansion, queueing while streaming, then a run
//! that emits `before_agent_start`, prepends held `next_turn` messages, and loops over auto-retry,
//! automatic compaction and queued messages until the agent settles.

use std::sync::Arc;

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, TextContent, UserBlock, UserMessage, now_ms};

use super::events::{flush_pending_bash, flush_pending_custom};
use super::{AgentSession, DeferredAction, lock};
use crate::extensions::{AgentStartTrigger, InputOutcome, InputSource, StreamingBehavior};
use crate::messages::{CodingAgentMessage, CodingMessage, CustomRoleMessage};
use crate::sdk::error::SdkError;
use crate::sdk::system_prompt::{build_system_prompt, build_system_prompt_message, diff_system_prompt_sections};

/// Asked before a prompt goes to the model (pi's preflight `hasConfiguredAuth || checkAuth`):
/// the message the prompt fails with when the model has no credentials (pi's `No API key found
/// for <provider>.` with its login guidance), `None` when it may go. Models of providers
/// extensions registered with configured auth, and virtual models, are not asked about.
pub type PromptAuthCheck = Arc<dyn Fn(&pi_ai::Model) -> Option<String> + Send + Sync>;

/// What a prompt's preflight decided (pi's `preflightResult` dispositions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptDisposition {
    /// A run started.
    Started,
    /// Queued as steering or follow-up while the agent streams.
    Queued,
    /// An extension command or an `input` handler handled it.
    Handled,
}

impl PromptDisposition {
    /// pi's wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            PromptDisposition::Started => "started",
            PromptDisposition::Queued => "queued",
            PromptDisposition::Handled => "handled",
        }
    }
}

/// Called once, as soon as a prompt's preflight decides (pi's `preflightResult` option): before
/// the run's first event when it starts. Errors before that point are returned by the prompt
/// instead.
#[derive(Clone)]
pub struct PreflightCallback(pub Arc<dyn Fn(PromptDisposition) + Send + Sync>);

impl std::fmt::Debug for PreflightCallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PreflightCallback")
    }
}

impl PreflightCallback {
    fn call(callback: Option<&PreflightCallback>, disposition: PromptDisposition) {
        if let Some(callback) = callback {
            (callback.0)(disposition);
        }
    }
}

/// Options of one prompt (pi's `PromptOptions`).
#[derive(Clone, Debug, Default)]
pub struct PromptOptions {
    /// Images sent with the text.
    pub images: Vec<ImageContent>,
    /// Where the input came from, for the `input` event (default: interactive).
    pub source: Option<InputSource>,
    /// How to queue the prompt while the agent streams (without it a prompt while streaming
    /// fails with [`SdkError::Busy`]).
    pub streaming_behavior: Option<StreamingBehavior>,
    /// Run extension commands and expand skills and prompt templates (default: true).
    pub expand_prompt_templates: Option<bool>,
    /// Told how the preflight ended (RPC mode answers `prompt` with it).
    pub preflight: Option<PreflightCallback>,
}

/// What starts a run (pi's run trigger).
pub(crate) enum RunTrigger {
    /// A user prompt.
    User { text: String, images: Vec<ImageContent> },
    /// A custom message sent with `trigger_turn`.
    Custom(Box<CodingAgentMessage>),
    /// Several messages as one prompt (SDK `prompt_messages`).
    Messages(Vec<CodingAgentMessage>),
}

/// A user message with pi's array content `[{type:"text"}, …images]`.
pub(crate) fn user_message(text: &str, images: Vec<ImageContent>) -> UserMessage {
    let mut content = vec![UserBlock::Text(TextContent::new(text))];
    content.extend(images.into_iter().map(UserBlock::Image));
    UserMessage::new(content)
}

/// A prompt made while `agent_settled` was emitted, made again afterwards.
fn deferred_prompt(text: String, options: PromptOptions) -> DeferredAction {
    Box::new(move |session: AgentSession| Box::pin(async move { session.prompt_with(&text, options).await }))
}

impl AgentSession {
    /// Sends a user prompt and runs until the agent settles. The user content is always an array
    /// (`[{type:"text"}, …images]`), as pi sends it.
    pub async fn prompt(&self, text: &str) -> Result<(), SdkError> {
        self.prompt_with(text, PromptOptions::default()).await
    }

    /// pi's `prompt(text, options)`: an extension command (`/name args`) runs at once; otherwise
    /// the `input` event may handle or transform the text; while streaming the prompt is queued
    /// per `streaming_behavior`; otherwise a run starts.
    ///
    /// Called while `agent_settled` is being emitted (from its handlers), the prompt is deferred
    /// until the event has reached every handler and listener, as pi does; it then returns at once.
    pub async fn prompt_with(&self, text: &str, options: PromptOptions) -> Result<(), SdkError> {
        {
            let mut st = self.shared.run_state();
            if st.emitting_settled {
                st.deferred_settled.push(deferred_prompt(text.to_owned(), options));
                return Ok(());
            }
        }
        let expand = options.expand_prompt_templates.unwrap_or(true);
        let preflight = options.preflight.clone();
        let preflight = preflight.as_ref();
        if expand && text.starts_with('/') && self.try_extension_command(text).await {
            PreflightCallback::call(preflight, PromptDisposition::Handled);
            return Ok(());
        }
        if self.blocks_prompts() {
            return Err(SdkError::Compacting);
        }
        let streaming_behavior = if self.is_streaming() { options.streaming_behavior } else { None };
        let source = options.source.unwrap_or(InputSource::Interactive);
        let Some((text, images)) = self.run_input_handlers(text, options.images, source, streaming_behavior).await
        else {
            PreflightCallback::call(preflight, PromptDisposition::Handled);
            return Ok(());
        };
        let text = if expand { self.expand_input(&text) } else { text };
        if self.is_streaming() {
            match options.streaming_behavior {
                None => return Err(SdkError::Busy),
                Some(StreamingBehavior::FollowUp) => self.queue_follow_up(&text, images),
                Some(StreamingBehavior::Steer) => self.queue_steer(&text, images),
            }
            PreflightCallback::call(preflight, PromptDisposition::Queued);
            return Ok(());
        }
        if let Some(message) = self.prompt_auth_failure() {
            return Err(SdkError::Failed(message));
        }
        self.start_run_with(RunTrigger::User { text, images }, preflight).await
    }

    /// Installs the check a prompt passes before it reaches the model (see [`PromptAuthCheck`]);
    /// without one, every prompt is sent and a missing key fails the request itself.
    pub fn set_prompt_auth_check(&self, check: PromptAuthCheck) {
        *lock(&self.shared.prompt_auth) = Some(check);
    }

    /// Why a prompt cannot go to the current model, if it cannot.
    fn prompt_auth_failure(&self) -> Option<String> {
        let check = lock(&self.shared.prompt_auth).clone()?;
        let model = self.model();
        if let Some(runner) = &self.shared.runner {
            let virtual_model = runner.virtual_models().iter().any(|v| v.model.provider == model.provider);
            if virtual_model || runner.available_registered_providers().iter().any(|p| p.name == model.provider) {
                return None;
            }
        }
        check(&model)
    }

    /// Sends several messages as one prompt (they may include system messages that patch the
    /// prompt, and custom messages), as `agent.prompt([...])` does in pi.
    pub async fn prompt_messages(&self, messages: Vec<CodingAgentMessage>) -> Result<(), SdkError> {
        if self.is_streaming() {
            return Err(SdkError::Busy);
        }
        self.start_run(RunTrigger::Messages(messages)).await
    }

    /// Expands the input after the `input` event (pi's `_expandSkillCommand` and
    /// `expandPromptTemplate`); see `sdk/expand.rs`.
    pub(crate) fn expand_input(&self, text: &str) -> String {
        self.expand_user_input(text, true)
    }

    /// `/name args` of a registered extension command: runs it and returns `true`.
    async fn try_extension_command(&self, text: &str) -> bool {
        let Some(runner) = &self.shared.runner else { return false };
        let Some(body) = text.strip_prefix('/') else { return false };
        let (name, args) = body.split_once(' ').unwrap_or((body, ""));
        runner.run_command(name, args).await
    }

    /// pi's `_runInputHandlers`: `None` when a handler handled the input.
    pub(crate) async fn run_input_handlers(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        source: InputSource,
        streaming_behavior: Option<StreamingBehavior>,
    ) -> Option<(String, Vec<ImageContent>)> {
        let Some(runner) = self.shared.runner.as_ref().filter(|r| r.has_handlers("input")) else {
            return Some((text.to_owned(), images));
        };
        let event_images = if images.is_empty() { None } else { Some(images.clone()) };
        match runner.emit_input_with(text, event_images, source, streaming_behavior).await {
            InputOutcome::Handled => None,
            InputOutcome::Transform { text, images: new_images } => Some((text, new_images.unwrap_or(images))),
            InputOutcome::Continue => Some((text.to_owned(), images)),
        }
    }

    /// Whether a run is active: the agent streams, or a prompt run is between its low-level runs
    /// (preparation, retry back-off, compaction, `agent_settled`).
    pub fn is_streaming(&self) -> bool {
        self.agent.with_state(|s| s.is_streaming) || self.shared.run_state().run_active
    }

    /// pi's `_startRun`: prepare, run, then loop over retries, compaction and queued messages;
    /// always ends with `agent_settled`.
    pub(crate) async fn start_run(&self, trigger: RunTrigger) -> Result<(), SdkError> {
        self.start_run_with(trigger, None).await
    }

    /// [`Self::start_run`], telling `preflight` once the run is prepared (pi's `onStarted`).
    async fn start_run_with(&self, trigger: RunTrigger, preflight: Option<&PreflightCallback>) -> Result<(), SdkError> {
        self.mark_run_started();
        let messages = match self.prepare_run(trigger).await {
            Ok(m) => m,
            Err(e) => {
                self.shared.run_state().run_active = false;
                flush_pending_bash(&self.shared).await;
                flush_pending_custom(&self.shared).await;
                self.refresh_context();
                self.shared.idle.notify_waiters();
                return Err(e);
            }
        };
        flush_pending_bash(&self.shared).await;
        flush_pending_custom(&self.shared).await;
        PreflightCallback::call(preflight, PromptDisposition::Started);
        self.refresh_context();
        let result = self.run_loop(messages).await;
        let aborted = {
            let mut st = self.shared.run_state();
            st.forced_system_prompt = None;
            st.abort_requested
        };
        if aborted {
            self.finish_cancelled_retry();
        }
        flush_pending_bash(&self.shared).await;
        flush_pending_custom(&self.shared).await;
        self.refresh_context();
        let settled = self.emit_agent_settled(aborted).await;
        result.and(settled)
    }

    /// The session is busy from here on (pi's `_isAgentRunActive = true` at the top of
    /// `_startRun`): messages sent meanwhile queue into this run.
    pub(crate) fn mark_run_started(&self) {
        let mut st = self.shared.run_state();
        st.run_active = true;
        st.abort_requested = false;
    }

    async fn run_loop(&self, messages: Vec<CodingAgentMessage>) -> Result<(), SdkError> {
        self.agent.prompt(messages).await?;
        while !self.abort_requested() {
            if self.handle_post_agent_run().await {
                if self.abort_requested() {
                    break;
                }
                self.refresh_context();
                self.agent.continue_run().await?;
                continue;
            }
            // pi's `_runBeforeSettleBoundary`: `agent_before_settle` handlers may ask for one more
            // request; without handlers, queued messages run.
            let queued = self.agent.peek_queued_messages();
            if self.abort_requested() || !super::boundary::run_before_settle(&self.shared, queued).await {
                break;
            }
            if self.abort_requested() {
                break;
            }
            self.refresh_context();
            self.agent.continue_run().await?;
        }
        Ok(())
    }

    pub(crate) fn abort_requested(&self) -> bool {
        self.shared.run_state().abort_requested
    }

    /// pi's `_handlePostAgentRun`: whether the loop continues the agent.
    async fn handle_post_agent_run(&self) -> bool {
        let message = self.shared.run_state().last_assistant.take();
        if self.abort_requested() {
            self.finish_cancelled_retry();
            return false;
        }
        let Some(message) = message else { return self.agent.has_queued_messages() };
        if self.is_retryable(&message) && self.prepare_retry(&message).await {
            self.shared.run_state().retry_failed = Some(super::virtual_route::failed_pair(&message));
            if self.abort_requested() {
                self.finish_cancelled_retry();
            }
            return !self.abort_requested();
        }
        if self.abort_requested() {
            self.finish_cancelled_retry();
            return false;
        }
        self.finish_failed_retry(&message);
        if self.check_compaction(&message, true).await {
            return !self.abort_requested();
        }
        !self.abort_requested() && self.agent.has_queued_messages()
    }

    /// pi's `_emitAgentSettled`: the run is over; extensions, then listeners, hear
    /// `agent_settled`. Prompts and triggered runs requested meanwhile run afterwards, in call
    /// order; the first failing one ends them and its error is returned.
    async fn emit_agent_settled(&self, aborted: bool) -> Result<(), SdkError> {
        self.shared.cache_warmer.on_agent_settled();
        {
            let mut st = self.shared.run_state();
            st.run_active = false;
            st.emitting_settled = true;
        }
        if let Some(runner) = &self.shared.runner {
            runner.emit(crate::extensions::NotifyEvent::AgentSettled { aborted }).await;
        }
        self.shared.emit(&super::SessionEvent::AgentSettled { aborted });
        let deferred = {
            let mut st = self.shared.run_state();
            st.emitting_settled = false;
            std::mem::take(&mut st.deferred_settled)
        };
        let mut outcome = Ok(());
        for action in deferred {
            if let Err(e) = action(self.clone()).await {
                outcome = Err(e);
                break;
            }
        }
        self.shared.idle.notify_waiters();
        outcome
    }

    /// Defers `action` when `agent_settled` is being emitted (see [`Self::prompt_with`]); gives
    /// it back otherwise.
    pub(crate) fn defer_while_settling(&self, action: DeferredAction) -> Option<DeferredAction> {
        let mut st = self.shared.run_state();
        if st.emitting_settled {
            st.deferred_settled.push(action);
            None
        } else {
            Some(action)
        }
    }

    /// pi's `_prepareRun`: compaction check, `before_agent_start`, then the starting messages:
    /// the trigger, held `next_turn` messages, handler messages, with a system patch first when
    /// the prompt changed.
    async fn prepare_run(&self, trigger: RunTrigger) -> Result<Vec<CodingAgentMessage>, SdkError> {
        let last_assistant = self.agent.messages().iter().rev().find_map(|m| m.as_assistant().cloned());
        if let Some(last) = last_assistant {
            self.check_compaction(&last, false).await;
        }
        let mut handler_messages = Vec::new();
        let mut forced = None;
        if let Some(runner) = self.shared.runner.as_ref().filter(|r| r.has_handlers("before_agent_start")) {
            let event_trigger = match &trigger {
                RunTrigger::User { text, images } => AgentStartTrigger::User {
                    prompt: text.clone(),
                    images: (!images.is_empty()).then(|| images.clone()),
                },
                RunTrigger::Custom(message) => AgentStartTrigger::Custom { message: message.clone() },
                RunTrigger::Messages(messages) => AgentStartTrigger::User {
                    prompt: messages
                        .iter()
                        .find_map(|m| match m {
                            AgentMessage::User(u) => Some(pi_ai::transcript::content_text(&u.content)),
                            _ => None,
                        })
                        .unwrap_or_default(),
                    images: None,
                },
            };
            let sections: indexmap::IndexMap<String, String> =
                lock(&self.shared.prompt_options).sections.iter().cloned().collect();
            let outcome = runner
                .emit_before_agent_start_with_sections(event_trigger, self.desired_system_prompt()?, sections)
                .await;
            handler_messages = outcome.messages;
            forced = outcome.system_prompt;
            // Handlers' section edits (pi's `systemPromptOptions.sections`) shape this run's prompt.
            lock(&self.shared.prompt_options).sections = outcome.sections.into_iter().collect();
        }
        let mut messages = match trigger {
            RunTrigger::User { text, images } => vec![AgentMessage::User(user_message(&text, images).into())],
            RunTrigger::Custom(message) => vec![*message],
            RunTrigger::Messages(messages) => messages,
        };
        messages.append(&mut self.shared.run_state().pending_next_turn);
        for m in handler_messages {
            messages.push(AgentMessage::Custom(CodingMessage::Custom(
                CustomRoleMessage {
                    custom_type: m.custom_type,
                    content: m.content,
                    display: m.display,
                    details: m.details,
                    timestamp: now_ms(),
                    ..Default::default()
                }
                .into(),
            )));
        }
        // pi's `_applyToolLoadout(getActiveToolNames())`: the active tools are the agent's, so a
        // direct change to them (`agent.set_tools`) is declared by this run and its prompt lists them.
        self.agent.set_tools(self.shared.declare_tools(&self.active_tool_names()));
        if let Some(patch) = self.system_patch()? {
            messages.insert(0, AgentMessage::System(patch.into()));
        }
        self.shared.run_state().forced_system_prompt = forced;
        Ok(messages)
    }

    /// The system prompt text the current options build (what `before_agent_start` sees).
    pub(crate) fn desired_system_prompt(&self) -> Result<String, SdkError> {
        let mut options = lock(&self.shared.prompt_options).clone();
        options.selected_tools = Some(self.active_tool_names());
        options.hidden_tools = self.shared.hidden_declarations();
        Ok(build_system_prompt(&options)?)
    }

    /// The system message the next prompt should start with: the whole prompt when the session
    /// has none yet, a `sections` patch when it changed, nothing otherwise.
    fn system_patch(&self) -> Result<Option<pi_ai::SystemMessage>, SdkError> {
        let mut options = lock(&self.shared.prompt_options).clone();
        options.selected_tools = Some(self.active_tool_names());
        options.hidden_tools = self.shared.hidden_declarations();
        let desired = build_system_prompt_message(&options)?;
        let current = self.transcript_system_message();
        let patch = match current {
            None => Some(desired),
            Some(head) => {
                let previous = head.sections.unwrap_or_default();
                let wanted = desired.sections.unwrap_or_default();
                diff_system_prompt_sections(&previous, &wanted)
                    .map(|sections| pi_ai::SystemMessage { sections: Some(sections), ..pi_ai::SystemMessage::new("") })
            }
        };
        Ok(patch.map(|mut m| {
            m.timestamp = now_ms();
            m
        }))
    }

    /// Aborts the run (and any retry back-off or compaction) and waits until the session is idle.
    pub async fn abort(&self) {
        self.request_abort();
        self.wait_for_idle().await;
    }

    /// [`Self::abort`] without waiting (pi's `void session.abort()`): a run that is still being
    /// prepared stops when it starts, before its first request; a retry back-off, a compaction
    /// and the streaming request are cancelled now.
    pub fn request_abort(&self) {
        {
            let mut st = self.shared.run_state();
            if st.run_active {
                st.abort_requested = true;
            }
        }
        self.abort_retry();
        self.abort_compaction();
        self.abort_branch_summary();
        self.agent.abort();
    }

    /// Resolves when no run is active.
    pub async fn wait_for_idle(&self) {
        loop {
            let notified = self.shared.idle.notified();
            if !self.is_streaming() && !self.is_compacting() {
                self.agent.wait_for_idle().await;
                return;
            }
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
            }
        }
    }
}
