//! The run driver: `prompt` and `continue`, one run of the loop, and the failure path.

use std::sync::Arc;

use pi_ai::{AssistantBlock, AssistantMessage, Shared, StopReason, TextContent, UserBlock, UserMessage, now_ms};
use tokio_util::sync::CancellationToken;

use super::error::AgentError;
use super::input::PromptInput;
use super::listeners::AgentSink;
use super::queue::drain_queue;
use super::{Agent, lock};
use crate::agent_loop::{
    AgentContext, AgentLoopConfig, MessageSource, check_continue, run_agent_loop_continue, run_agent_loop_with,
};
use crate::event::AgentEvent;
use crate::message::{AgentMessage, CustomMessage};
use crate::sink::{EventSink, end_assistant};

impl<C: CustomMessage> Agent<C> {
    /// Runs a prompt to completion. Failures inside the run do not surface here: they end the run
    /// with an error message in the transcript (see `AgentState::error_message`).
    pub async fn prompt(&self, input: impl Into<PromptInput<C>>) -> Result<(), AgentError> {
        let messages = match input.into() {
            PromptInput::Text(text, images) => {
                let mut content = vec![UserBlock::Text(TextContent::new(text))];
                content.extend(images.into_iter().map(UserBlock::Image));
                vec![AgentMessage::User(UserMessage::new(content).into())]
            }
            PromptInput::Messages(m) => m,
        };
        let cancel = self.begin_run(AgentError::AlreadyPrompting)?;
        self.run(cancel, RunKind::Prompt { messages, poll_steering: true }).await
    }

    /// Continues from the current transcript (pi's `continue()`): after an assistant message, runs
    /// queued steering or follow-up messages; otherwise makes a request from the existing context.
    #[doc(alias = "continue")]
    pub async fn continue_run(&self) -> Result<(), AgentError> {
        if lock(&self.inner.active).is_some() {
            return Err(AgentError::AlreadyContinuing);
        }
        let last_is_assistant = {
            let state = lock(&self.inner.state);
            if state.messages.iter().all(|m| matches!(m, AgentMessage::System(_))) {
                return Err(AgentError::NoMessages);
            }
            matches!(state.messages.last(), Some(AgentMessage::Assistant(_)))
        };
        let kind = if last_is_assistant {
            let steering = drain_queue(&self.inner.steering, self.steering_mode());
            if !steering.is_empty() {
                RunKind::Prompt { messages: steering, poll_steering: false }
            } else {
                let follow_up = drain_queue(&self.inner.follow_up, self.follow_up_mode());
                if follow_up.is_empty() {
                    return Err(AgentError::ContinueFromAssistant);
                }
                RunKind::Prompt { messages: follow_up, poll_steering: true }
            }
        } else {
            RunKind::Continue
        };
        let cancel = self.begin_run(AgentError::AlreadyContinuing)?;
        self.run(cancel, kind).await
    }

    fn begin_run(&self, busy: AgentError) -> Result<CancellationToken, AgentError> {
        let mut active = lock(&self.inner.active);
        if active.is_some() {
            return Err(busy);
        }
        let token = CancellationToken::new();
        *active = Some(token.clone());
        self.inner.runs.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        drop(active);
        self.inner.idle.send_replace(false);
        let mut state = lock(&self.inner.state);
        state.is_streaming = true;
        state.streaming_message = None;
        state.error_message = None;
        Ok(token)
    }

    /// What a request for `messages` would send the model now, offline: this agent's
    /// `transform_context` and `convert_to_llm`, then `normalize_context` (the same code the
    /// loop runs; the turn hooks' `prepare_request` is not consulted). Pair it with
    /// `pi_ai::providers::request_body` for the exact HTTP body.
    pub async fn request_context(
        &self,
        messages: &[AgentMessage<C>],
    ) -> Result<pi_ai::transcript::TranscriptContext, crate::BoxError> {
        let (transform, convert) = {
            let hooks = lock(&self.inner.hooks);
            (hooks.transform_context.clone(), hooks.convert_to_llm.clone())
        };
        let cancel = CancellationToken::new();
        crate::agent_loop::request_context(messages, transform.as_deref(), &*convert, &cancel).await
    }

    /// The base stream options (what every request starts from, payload hook included).
    pub fn stream_options(&self) -> pi_ai::options::StreamOptions {
        lock(&self.inner.hooks).stream_options.clone()
    }

    fn loop_config(&self) -> (AgentContext<C>, AgentLoopConfig<C>) {
        let hooks = lock(&self.inner.hooks).clone();
        let state = lock(&self.inner.state);
        let inner_s = Arc::downgrade(&self.inner);
        let inner_f = Arc::downgrade(&self.inner);
        let steering: MessageSource<C> = Arc::new(move || {
            inner_s
                .upgrade()
                .map(|i| {
                    let mode = *lock(&i.steering_mode);
                    drain_queue(&i.steering, mode)
                })
                .unwrap_or_default()
        });
        let follow_up: MessageSource<C> = Arc::new(move || {
            inner_f
                .upgrade()
                .map(|i| {
                    let mode = *lock(&i.follow_up_mode);
                    drain_queue(&i.follow_up, mode)
                })
                .unwrap_or_default()
        });
        let config = AgentLoopConfig {
            model: state.model.clone(),
            thinking_level: state.thinking_level,
            stream_fn: hooks.stream_fn,
            stream_options: hooks.stream_options,
            convert_to_llm: hooks.convert_to_llm,
            transform_context: hooks.transform_context,
            get_api_key: hooks.get_api_key,
            tool_hooks: hooks.tool_hooks,
            turn_hooks: hooks.turn_hooks,
            tool_execution: hooks.tool_execution,
            steering: Some(steering),
            follow_up: Some(follow_up),
        };
        let context = AgentContext { messages: state.messages.clone(), tools: state.tools.clone() };
        (context, config)
    }

    async fn run(&self, cancel: CancellationToken, kind: RunKind<C>) -> Result<(), AgentError> {
        let (context, config) = self.loop_config();
        let mut sink = AgentSink { inner: self.inner.clone() };
        let outcome = match kind {
            RunKind::Prompt { messages, poll_steering } => {
                run_agent_loop_with(messages, context, config, &mut sink, cancel.clone(), poll_steering).await
            }
            RunKind::Continue => match check_continue(&context.messages) {
                Ok(()) => run_agent_loop_continue(context, config, &mut sink, cancel.clone()).await,
                Err(e) => Err(e),
            },
        };
        let result = match outcome {
            Ok(_) => Ok(()),
            Err(e) => self.fail(&mut sink, &cancel, e.to_string()).await,
        };
        {
            let mut state = lock(&self.inner.state);
            state.is_streaming = false;
            state.streaming_message = None;
            state.pending_tool_calls.clear();
        }
        *lock(&self.inner.active) = None;
        self.inner.idle.send_replace(true);
        result
    }

    /// The failure path: a substitute error message, `turn_end` and `agent_end` with only it.
    async fn fail(&self, sink: &mut AgentSink<C>, cancel: &CancellationToken, text: String) -> Result<(), AgentError> {
        let model = self.with_state(|s| s.model.clone());
        let message = AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::new(""))],
            api: model.api,
            provider: model.provider,
            model: model.id,
            stop_reason: if cancel.is_cancelled() { StopReason::Aborted } else { StopReason::Error },
            error_message: Some(text),
            timestamp: now_ms(),
            ..Default::default()
        };
        let message: Shared<AssistantMessage> = message.into();
        sink.emit(AgentEvent::MessageStart { message: AgentMessage::Assistant(message.clone()) })
            .await
            .map_err(AgentError::Listener)?;
        // A `MessageEnd` listener may replace it; `TurnEnd` and `AgentEnd` then carry the
        // replacement, as pi's listeners change the one object all three events share.
        let message = end_assistant(sink, message).await.map_err(AgentError::Listener)?;
        let events = [
            AgentEvent::TurnEnd { message: message.clone(), tool_results: Vec::new() },
            AgentEvent::AgentEnd { messages: vec![AgentMessage::Assistant(message)] },
        ];
        for event in events {
            sink.emit(event).await.map_err(AgentError::Listener)?;
        }
        Ok(())
    }
}

enum RunKind<C> {
    Prompt { messages: Vec<AgentMessage<C>>, poll_steering: bool },
    Continue,
}
