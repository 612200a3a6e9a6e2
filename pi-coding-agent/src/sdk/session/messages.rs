//! Messages into a session besides prompts: pi's `sendCustomMessage` (`deliver_as` steer,
//! follow-up or next turn, `trigger_turn`), `sendUserMessage`, and queued steering / follow-up
//! user messages (`steer`, `followUp`, `clearQueue`).

use pi_agent_core::AgentMessage;
use pi_ai::{Content, ImageContent, UserBlock, now_ms};

use super::AgentSession;
use super::events::{append_custom_message_now, emit_queue_update};
use super::prompt::{PromptOptions, RunTrigger, user_message};
use crate::extensions::{DeliverAs, ExtensionMessage, InputSource, SendMessageOptions, StreamingBehavior};
use crate::messages::{CodingAgentMessage, CodingMessage, CustomRoleMessage};
use crate::sdk::error::SdkError;

/// What happened to a queued input (pi's `disposition`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueDisposition {
    /// Queued for delivery.
    Queued,
    /// An `input` handler handled it.
    Handled,
}

impl QueueDisposition {
    /// pi's wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueDisposition::Queued => "queued",
            QueueDisposition::Handled => "handled",
        }
    }
}

/// pi's `custom` message built from what an extension sent.
pub(crate) fn custom_message(message: ExtensionMessage) -> CodingAgentMessage {
    AgentMessage::Custom(CodingMessage::Custom(
        CustomRoleMessage {
            custom_type: message.custom_type,
            content: message.content,
            display: message.display,
            details: message.details,
            timestamp: now_ms(),
            ..Default::default()
        }
        .into(),
    ))
}

/// A triggered custom message sent while `agent_settled` was emitted, sent again afterwards.
fn deferred_custom(message: CodingAgentMessage, options: SendMessageOptions) -> super::DeferredAction {
    Box::new(move |session: AgentSession| Box::pin(async move { session.deliver_custom(message, options).await }))
}

impl AgentSession {
    /// pi's `sendCustomMessage`: a `custom` message whose `content` reaches the model.
    ///
    /// - `deliver_as: next_turn`: held and sent with the next prompt (after its user message).
    /// - streaming, `trigger_turn` not `false`: queued as a follow-up (`deliver_as: follow_up`)
    ///   or a steering message (otherwise).
    /// - idle with `trigger_turn: true`: starts a run with it (`before_agent_start` sees it).
    /// - streaming with `trigger_turn: false`: appended when the current turn ends.
    /// - idle otherwise: appended to the session at once, no run.
    pub async fn send_message(&self, message: ExtensionMessage, options: SendMessageOptions) -> Result<(), SdkError> {
        self.deliver_custom(custom_message(message), options).await
    }

    /// [`Self::send_message`] with a ready [`CustomRoleMessage`] and only `trigger_turn`.
    pub async fn send_custom_message(&self, message: CustomRoleMessage, trigger_turn: bool) -> Result<(), SdkError> {
        let options = SendMessageOptions { trigger_turn: Some(trigger_turn), deliver_as: None };
        self.deliver_custom(AgentMessage::Custom(CodingMessage::Custom(message.into())), options).await
    }

    async fn deliver_custom(&self, message: CodingAgentMessage, options: SendMessageOptions) -> Result<(), SdkError> {
        match self.deliver_custom_now(message, options) {
            Some(message) => self.run_custom(message).await,
            None => Ok(()),
        }
    }

    /// The synchronous part of pi's `sendCustomMessage` (what runs before its first `await`):
    /// every case but starting a run is done here; that case returns the message, with the run
    /// already marked active (pi's `_startRun` sets `_isAgentRunActive` before awaiting), so
    /// messages sent meanwhile are queued into it. Continue with [`Self::run_custom`].
    pub(crate) fn deliver_custom_now(
        &self,
        message: CodingAgentMessage,
        options: SendMessageOptions,
    ) -> Option<CodingAgentMessage> {
        let streaming = self.is_streaming();
        if options.deliver_as == Some(DeliverAs::NextTurn) {
            self.shared.run_state().pending_next_turn.push(message);
        } else if streaming && options.trigger_turn != Some(false) {
            if options.deliver_as == Some(DeliverAs::FollowUp) {
                self.agent.follow_up(message);
            } else {
                self.agent.steer(message);
            }
        } else if options.trigger_turn == Some(true) {
            // As pi: a run triggered while `agent_settled` is emitted waits until it was heard.
            let mut st = self.shared.run_state();
            if st.emitting_settled {
                st.deferred_settled.push(deferred_custom(message, options));
                return None;
            }
            drop(st);
            self.mark_run_started();
            return Some(message);
        } else if streaming {
            self.shared.run_state().pending_custom.push(message);
        } else {
            append_custom_message_now(&self.shared, message);
            self.refresh_context();
        }
        None
    }

    /// Runs a custom message [`Self::deliver_custom_now`] returned.
    pub(crate) async fn run_custom(&self, message: CodingAgentMessage) -> Result<(), SdkError> {
        self.start_run(RunTrigger::Custom(Box::new(message))).await
    }

    /// pi's `sendUserMessage`: a user message as if typed (source `extension`, no template
    /// expansion unless asked); while streaming `deliver_as` picks steer or follow-up.
    pub async fn send_user_message(
        &self,
        content: Content<UserBlock>,
        deliver_as: Option<DeliverAs>,
        expand_prompt_templates: bool,
    ) -> Result<(), SdkError> {
        let (text, images) = split_user_content(content);
        let streaming_behavior = streaming_behavior_of(deliver_as);
        let options = PromptOptions {
            images,
            source: Some(InputSource::Extension),
            streaming_behavior,
            expand_prompt_templates: Some(expand_prompt_templates),
            preflight: None,
        };
        self.prompt_with(&text, options).await
    }

    /// The part of [`Self::send_user_message`] pi runs before its first real suspension, done
    /// within the call: while a run streams, with no `input` handler to ask and no command to
    /// try, the message is queued now, so a steer sent from a `tool_call` handler is pending at
    /// that turn's end whatever the scheduler does. Returns the content when the whole async
    /// path is needed (not streaming, `input` handlers, a command, a compaction).
    pub(crate) fn queue_user_message_now(
        &self,
        content: Content<UserBlock>,
        deliver_as: Option<DeliverAs>,
        expand_prompt_templates: bool,
    ) -> Option<Content<UserBlock>> {
        let Some(behavior) = streaming_behavior_of(deliver_as) else { return Some(content) };
        let slash = match &content {
            Content::Text(text) => text.starts_with('/'),
            Content::Blocks(blocks) => {
                blocks.iter().any(|b| matches!(b, UserBlock::Text(t) if t.text.starts_with('/')))
            }
        };
        let asks_handlers = self.shared.runner.as_ref().is_some_and(|r| r.has_handlers("input"));
        if !self.is_streaming() || asks_handlers || (expand_prompt_templates && slash) || self.blocks_prompts() {
            return Some(content);
        }
        let (text, images) = split_user_content(content);
        let text = if expand_prompt_templates { self.expand_input(&text) } else { text };
        match behavior {
            StreamingBehavior::FollowUp => self.queue_follow_up(&text, images),
            StreamingBehavior::Steer => self.queue_steer(&text, images),
        }
        None
    }

    /// pi's `steer`: queues a steering message (delivered after the current assistant turn's
    /// tool calls, before the next request). Runs the `input` event first.
    pub async fn steer(&self, text: &str) -> Result<QueueDisposition, SdkError> {
        self.queue_user_input(text, Vec::new(), StreamingBehavior::Steer, InputSource::Interactive).await
    }

    /// pi's `followUp`: queues a follow-up message (delivered when the agent would stop).
    pub async fn follow_up(&self, text: &str) -> Result<QueueDisposition, SdkError> {
        self.queue_user_input(text, Vec::new(), StreamingBehavior::FollowUp, InputSource::Interactive).await
    }

    /// [`Self::steer`] / [`Self::follow_up`] with images and a source (RPC uses `rpc`).
    pub async fn queue_user_input(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        behavior: StreamingBehavior,
        source: InputSource,
    ) -> Result<QueueDisposition, SdkError> {
        if let Some(body) = text.strip_prefix('/') {
            let name = body.split_once(' ').map_or(body, |(n, _)| n);
            if self.shared.runner.as_ref().is_some_and(|r| r.command(name).is_some()) {
                return Err(SdkError::Failed(format!(
                    "Extension command \"/{name}\" cannot be queued. Use prompt() or execute the command when not streaming."
                )));
            }
        }
        let streaming_behavior = self.is_streaming().then_some(behavior);
        let Some((text, images)) = self.run_input_handlers(text, images, source, streaming_behavior).await else {
            return Ok(QueueDisposition::Handled);
        };
        let text = self.expand_input(&text);
        match behavior {
            StreamingBehavior::Steer => self.queue_steer(&text, images),
            StreamingBehavior::FollowUp => self.queue_follow_up(&text, images),
        }
        Ok(QueueDisposition::Queued)
    }

    /// pi's `_queueSteer` (already expanded).
    pub(crate) fn queue_steer(&self, text: &str, images: Vec<ImageContent>) {
        self.shared.run_state().steering_texts.push(text.to_owned());
        emit_queue_update(&self.shared);
        self.agent.steer(user_message(text, images));
    }

    /// pi's `_queueFollowUp` (already expanded).
    pub(crate) fn queue_follow_up(&self, text: &str, images: Vec<ImageContent>) {
        self.shared.run_state().follow_up_texts.push(text.to_owned());
        emit_queue_update(&self.shared);
        self.agent.follow_up(user_message(text, images));
    }

    /// pi's `clearQueue`: drops every queued message; returns the steering and follow-up texts.
    pub fn clear_queue(&self) -> (Vec<String>, Vec<String>) {
        let (steering, follow_up) = {
            let mut st = self.shared.run_state();
            (std::mem::take(&mut st.steering_texts), std::mem::take(&mut st.follow_up_texts))
        };
        self.agent.clear_all_queues();
        emit_queue_update(&self.shared);
        (steering, follow_up)
    }

    /// pi's `pendingMessageCount`: queued steering plus follow-up messages.
    pub fn pending_message_count(&self) -> usize {
        let st = self.shared.run_state();
        st.steering_texts.len() + st.follow_up_texts.len()
    }
}

/// A user message's text blocks joined by newlines, and its images.
fn split_user_content(content: Content<UserBlock>) -> (String, Vec<ImageContent>) {
    match content {
        Content::Text(text) => (text, Vec::new()),
        Content::Blocks(blocks) => {
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for block in blocks {
                match block {
                    UserBlock::Text(t) => texts.push(t.text),
                    UserBlock::Image(i) => images.push(i),
                }
            }
            (texts.join("\n"), images)
        }
    }
}

/// How a message sent while streaming is queued: steer or follow-up (`nextTurn` is not one).
fn streaming_behavior_of(deliver_as: Option<DeliverAs>) -> Option<StreamingBehavior> {
    match deliver_as {
        Some(DeliverAs::FollowUp) => Some(StreamingBehavior::FollowUp),
        Some(DeliverAs::Steer) => Some(StreamingBehavior::Steer),
        _ => None,
    }
}
