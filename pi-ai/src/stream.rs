//! The event protocol of one streamed response, and the stream type that carries it.
//!
//! A provider call returns an [`AssistantMessageEventStream`]: a [`futures::Stream`] of
//! [`AssistantMessageEvent`]s ending in exactly one terminal event (`Done` or `Error`), plus the
//! final [`AssistantMessage`] through [`AssistantMessageEventStream::result`]. Once returned, a
//! stream never fails: HTTP errors, malformed data, dropped connections and cancellation all
//! arrive as an `Error` event whose message has `stop_reason` `Error` or `Aborted`.
//!
//! **Deltas do not clone the message.** pi's events carry the live `partial` message. Here an event
//! carries only what changed; the stream applies it to its own [`PartialMessage`], which
//! [`AssistantMessageEventStream::partial`] lends out between events. Tool-call argument text is
//! accumulated raw and parsed once at `ToolCallEnd` (parse it early on demand with
//! [`PartialMessage::tool_arguments_text`]), so the cost of a delta does not grow with the message.

use std::collections::HashMap;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::Stream;

use crate::types::{
    AssistantBlock, AssistantMessage, Shared, StopReason, TextContent, ThinkingContent, ToolCall, now_ms,
};

/// One step of a streamed response. `content_index` indexes the partial message's `content`.
#[derive(Clone, Debug, PartialEq)]
pub enum AssistantMessageEvent {
    /// The response started; `partial` has empty content and `stop_reason` `Pending`.
    Start {
        /// The initial message (api, provider, model, timestamp, usage); boxed, so the events of
        /// every delta stay small.
        partial: Box<AssistantMessage>,
    },
    /// A text block opened.
    TextStart {
        /// Index of the new block.
        content_index: usize,
        /// The block as it starts (normally empty).
        block: TextContent,
    },
    /// Text appended to a text block.
    TextDelta {
        /// Block index.
        content_index: usize,
        /// The appended text.
        delta: String,
    },
    /// A text block finished; `block` is authoritative (it may carry a signature).
    TextEnd {
        /// Block index.
        content_index: usize,
        /// The finished block.
        block: TextContent,
    },
    /// A thinking block opened (a redacted one may be complete already).
    ThinkingStart {
        /// Index of the new block.
        content_index: usize,
        /// The block as it starts.
        block: ThinkingContent,
    },
    /// Reasoning appended to a thinking block.
    ThinkingDelta {
        /// Block index.
        content_index: usize,
        /// The appended text.
        delta: String,
    },
    /// A thinking block finished.
    ThinkingEnd {
        /// Block index.
        content_index: usize,
        /// The finished block.
        block: ThinkingContent,
    },
    /// A tool call opened (id and name known; arguments usually `{}`).
    ToolCallStart {
        /// Index of the new block.
        content_index: usize,
        /// The call as it starts (boxed: a delta event stays small).
        tool_call: Box<ToolCall>,
    },
    /// Argument JSON text appended to a tool call (may be `""`).
    ToolCallDelta {
        /// Block index.
        content_index: usize,
        /// The appended argument text.
        delta: String,
    },
    /// A tool call finished with its parsed arguments.
    ToolCallEnd {
        /// Block index.
        content_index: usize,
        /// The finished call (boxed: a delta event stays small).
        tool_call: Box<ToolCall>,
    },
    /// The response finished (`Stop`, `Length`, `ToolUse` or `Deferred`).
    Done {
        /// Why it stopped.
        reason: StopReason,
        /// The final message (boxed: a delta event stays small).
        message: Box<AssistantMessage>,
    },
    /// The response failed (`Error` or `Aborted`); the message keeps the partial content.
    Error {
        /// `Error` or `Aborted`.
        reason: StopReason,
        /// The final message, with `error_message` set (boxed: a delta event stays small).
        error: Box<AssistantMessage>,
    },
}

impl AssistantMessageEvent {
    /// pi's event `type` string (`"text_delta"`, …).
    pub fn kind(&self) -> &'static str {
        use AssistantMessageEvent::*;
        match self {
            Start { .. } => "start",
            TextStart { .. } => "text_start",
            TextDelta { .. } => "text_delta",
            TextEnd { .. } => "text_end",
            ThinkingStart { .. } => "thinking_start",
            ThinkingDelta { .. } => "thinking_delta",
            ThinkingEnd { .. } => "thinking_end",
            ToolCallStart { .. } => "toolcall_start",
            ToolCallDelta { .. } => "toolcall_delta",
            ToolCallEnd { .. } => "toolcall_end",
            Done { .. } => "done",
            Error { .. } => "error",
        }
    }

    /// Whether this event ends the stream.
    pub fn is_terminal(&self) -> bool {
        matches!(self, AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. })
    }

    /// The block index, for block events.
    pub fn content_index(&self) -> Option<usize> {
        use AssistantMessageEvent::*;
        match self {
            TextStart { content_index, .. }
            | TextDelta { content_index, .. }
            | TextEnd { content_index, .. }
            | ThinkingStart { content_index, .. }
            | ThinkingDelta { content_index, .. }
            | ThinkingEnd { content_index, .. }
            | ToolCallStart { content_index, .. }
            | ToolCallDelta { content_index, .. }
            | ToolCallEnd { content_index, .. } => Some(*content_index),
            Start { .. } | Done { .. } | Error { .. } => None,
        }
    }
}

/// A response being assembled from its events: the live `partial` of pi's protocol.
///
/// Providers and consumers both use it, so the rules of how an event changes the message live in
/// one place ([`PartialMessage::apply`]). The message is [`Shared`]:
/// [`shared_message`](Self::shared_message) lends it without a copy, and the next change copies
/// it only if that loan is still held.
#[derive(Clone, Debug, Default)]
pub struct PartialMessage {
    message: Shared<AssistantMessage>,
    tool_args: HashMap<usize, String>,
}

impl PartialMessage {
    /// An empty partial with `stop_reason` `Pending`.
    pub fn new(initial: AssistantMessage) -> Self {
        PartialMessage { message: Shared::new(initial), tool_args: HashMap::new() }
    }

    /// The message so far.
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    /// The message so far, shared: no copy is made, and the next change copies the message
    /// only if this handle is still held then (a `message_update` handler gets the partial this
    /// way, so a delta costs the same however long the message is).
    pub fn shared_message(&self) -> Shared<AssistantMessage> {
        self.message.clone()
    }

    /// Mutable access, for providers that set usage, ids or stop reasons directly.
    pub fn message_mut(&mut self) -> &mut AssistantMessage {
        self.message.make_mut()
    }

    /// Consumes the partial, returning the message.
    pub fn into_message(self) -> AssistantMessage {
        self.message.into_inner()
    }

    /// The raw argument text streamed so far for the tool call at `content_index`, until its
    /// `ToolCallEnd`.
    pub fn tool_arguments_text(&self, content_index: usize) -> Option<&str> {
        self.tool_args.get(&content_index).map(String::as_str)
    }

    fn put_block(&mut self, index: usize, block: AssistantBlock) {
        let content = &mut self.message.make_mut().content;
        if index < content.len() {
            content[index] = block;
        } else {
            // Indices arrive in order; tolerate a gap rather than panic.
            content.push(block);
        }
    }

    /// Applies one event. Deltas cost O(delta); terminal events replace the message.
    pub fn apply(&mut self, event: &AssistantMessageEvent) {
        use AssistantMessageEvent::*;
        match event {
            Start { partial } => {
                self.message = Shared::new((**partial).clone());
                self.tool_args.clear();
            }
            TextStart { content_index, block } | TextEnd { content_index, block } => {
                self.put_block(*content_index, AssistantBlock::Text(block.clone()));
            }
            ThinkingStart { content_index, block } | ThinkingEnd { content_index, block } => {
                self.put_block(*content_index, AssistantBlock::Thinking(block.clone()));
            }
            ToolCallStart { content_index, tool_call } => {
                self.tool_args.insert(*content_index, String::new());
                self.put_block(*content_index, AssistantBlock::ToolCall((**tool_call).clone()));
            }
            ToolCallEnd { content_index, tool_call } => {
                self.tool_args.remove(content_index);
                self.put_block(*content_index, AssistantBlock::ToolCall((**tool_call).clone()));
            }
            TextDelta { content_index, delta } => {
                if let Some(AssistantBlock::Text(t)) = self.message.make_mut().content.get_mut(*content_index) {
                    t.text.push_str(delta);
                }
            }
            ThinkingDelta { content_index, delta } => {
                if let Some(AssistantBlock::Thinking(t)) = self.message.make_mut().content.get_mut(*content_index) {
                    t.thinking.push_str(delta);
                }
            }
            ToolCallDelta { content_index, delta } => {
                self.tool_args.entry(*content_index).or_default().push_str(delta);
            }
            Done { message, .. } => {
                self.message = Shared::new((**message).clone());
                self.tool_args.clear();
            }
            Error { error, .. } => {
                self.message = Shared::new((**error).clone());
                self.tool_args.clear();
            }
        }
    }
}

type BoxedEvents = Pin<Box<dyn Stream<Item = AssistantMessageEvent> + Send>>;

/// The stream of one response: events, the live partial, and the final message.
///
/// ```
/// # tokio_test_block(async {
/// use futures::StreamExt;
/// use pi_ai::{AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, StopReason};
///
/// let done = AssistantMessage { stop_reason: StopReason::Stop, ..Default::default() };
/// let mut stream = AssistantMessageEventStream::from_events(vec![
///     AssistantMessageEvent::Start { partial: Box::default() },
///     AssistantMessageEvent::Done { reason: StopReason::Stop, message: Box::new(done) },
/// ]);
/// while let Some(event) = stream.next().await {
///     println!("{} (partial has {} blocks)", event.kind(), stream.partial().content.len());
/// }
/// assert_eq!(stream.result().await.stop_reason, StopReason::Stop);
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) { futures::executor::block_on(f) }
/// ```
pub struct AssistantMessageEventStream {
    inner: Option<BoxedEvents>,
    partial: PartialMessage,
    result: Option<AssistantMessage>,
    created: Instant,
    created_ms: u64,
    saw_start: bool,
}

impl std::fmt::Debug for AssistantMessageEventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssistantMessageEventStream")
            .field("partial", &self.partial)
            .field("finished", &self.inner.is_none())
            .finish()
    }
}

impl AssistantMessageEventStream {
    /// Wraps a stream of events produced by a provider.
    pub fn new(events: impl Stream<Item = AssistantMessageEvent> + Send + 'static) -> Self {
        AssistantMessageEventStream {
            inner: Some(Box::pin(events)),
            partial: PartialMessage::default(),
            result: None,
            created: Instant::now(),
            created_ms: now_ms(),
            saw_start: false,
        }
    }

    /// A stream that replays fixed events.
    pub fn from_events(events: Vec<AssistantMessageEvent>) -> Self {
        Self::new(futures::stream::iter(events))
    }

    /// A stream that fails at once with a single `Error` event and no `Start` (setup failures).
    pub fn failed(error: AssistantMessage) -> Self {
        let reason = if error.stop_reason == StopReason::Aborted { StopReason::Aborted } else { StopReason::Error };
        Self::from_events(vec![AssistantMessageEvent::Error { reason, error: Box::new(error) }])
    }

    /// The message assembled so far (pi's live `partial`).
    pub fn partial(&self) -> &AssistantMessage {
        self.partial.message()
    }

    /// The partial with its raw tool-argument text.
    pub fn partial_state(&self) -> &PartialMessage {
        &self.partial
    }

    /// Drains the remaining events and returns the final message (pi's `result()`). Never fails:
    /// a failed response has `stop_reason` `Error` or `Aborted` and an `error_message`.
    pub async fn result(mut self) -> AssistantMessage {
        use futures::StreamExt;
        while self.next().await.is_some() {}
        self.result.take().unwrap_or_else(|| self.partial.into_message())
    }

    fn finish(&mut self, message: &mut AssistantMessage) {
        if self.saw_start && message.duration_ms.is_none() && message.timestamp >= self.created_ms.saturating_sub(1) {
            message.duration_ms = Some(self.created.elapsed().as_millis() as u64);
        }
    }
}

impl Stream for AssistantMessageEventStream {
    type Item = AssistantMessageEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match inner.as_mut().poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(mut event)) => {
                match &mut event {
                    AssistantMessageEvent::Start { .. } => this.saw_start = true,
                    AssistantMessageEvent::Done { message, .. }
                    | AssistantMessageEvent::Error { error: message, .. } => this.finish(message),
                    _ => {}
                }
                this.partial.apply(&event);
                if event.is_terminal() {
                    this.inner = None;
                    this.result = Some(this.partial.message().clone());
                }
                Poll::Ready(Some(event))
            }
            Poll::Ready(None) => {
                // The producer ended without a terminal event: report it rather than hang.
                this.inner = None;
                let mut error = this.partial.message().clone();
                error.stop_reason = StopReason::Error;
                error.error_message = Some("Stream ended without a terminal event".to_owned());
                this.finish(&mut error);
                let event = AssistantMessageEvent::Error { reason: StopReason::Error, error: Box::new(error) };
                this.partial.apply(&event);
                this.result = Some(this.partial.message().clone());
                Poll::Ready(Some(event))
            }
        }
    }
}
