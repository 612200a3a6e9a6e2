//! The message a provider builds, and the events it emits while building it.

use std::sync::Arc;

use crate::options::StreamOptions;
use std::ops::ControlFlow;

use crate::sse::{SseEventRef, SseParser};
use crate::stream::{AssistantMessageEvent, AssistantMessageEventStream, PartialMessage};
use crate::types::{AssistantMessage, Model, StopReason, Usage, now_ms};

use super::{ErrorStyle, HttpError, HttpRequest, send_with_retries};

/// pi's `output`: the assistant message of one request (`stopReason` pending, zero usage,
/// `timestamp` = request start), plus the events not yet handed to the consumer.
///
/// Every change goes through [`emit`](Self::emit), which applies the event with
/// [`PartialMessage::apply`], so the final message is exactly what a consumer rebuilt from the
/// events.
#[derive(Debug)]
pub struct ProviderOutput {
    partial: PartialMessage,
    queued: Vec<AssistantMessageEvent>,
}

impl ProviderOutput {
    /// The initial message for `model`.
    pub fn new(model: &Model) -> Self {
        let message = AssistantMessage {
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            usage: Usage::default(),
            stop_reason: StopReason::Pending,
            timestamp: now_ms(),
            ..Default::default()
        };
        ProviderOutput { partial: PartialMessage::new(message), queued: Vec::new() }
    }

    /// The message so far.
    pub fn message(&self) -> &AssistantMessage {
        self.partial.message()
    }

    /// Mutable access for fields that have no event (usage, ids, stop reason).
    pub fn message_mut(&mut self) -> &mut AssistantMessage {
        self.partial.message_mut()
    }

    /// The partial with the raw argument text of open tool calls.
    pub fn partial(&self) -> &PartialMessage {
        &self.partial
    }

    /// Applies `event` and queues it for the consumer.
    pub fn emit(&mut self, event: AssistantMessageEvent) {
        self.partial.apply(&event);
        self.queued.push(event);
    }

    /// Emits `Start` with the message so far.
    pub fn start(&mut self) {
        let partial = Box::new(self.message().clone());
        self.emit(AssistantMessageEvent::Start { partial });
    }

    /// Emits `Done` with the final message.
    pub fn done(&mut self) {
        let message = Box::new(self.message().clone());
        self.emit(AssistantMessageEvent::Done { reason: message.stop_reason, message });
    }

    /// Ends with an `Error` event: `Aborted` when `aborted`, else `Error`; content is kept.
    pub fn fail(&mut self, error_message: String, aborted: bool) {
        let reason = if aborted { StopReason::Aborted } else { StopReason::Error };
        let message = self.message_mut();
        message.stop_reason = reason;
        message.error_message = Some(error_message);
        let error = Box::new(message.clone());
        self.emit(AssistantMessageEvent::Error { reason, error });
    }

    /// Takes the queued events.
    pub fn take_events(&mut self) -> Vec<AssistantMessageEvent> {
        std::mem::take(&mut self.queued)
    }

    /// Moves the queued events into `into` (emptied first), keeping both lists' storage: a
    /// stream that drains `into` after each chunk allocates no list per chunk.
    pub fn swap_events(&mut self, into: &mut Vec<AssistantMessageEvent>) {
        into.clear();
        std::mem::swap(&mut self.queued, into);
    }
}

/// What a provider does with its server's event stream (pi's per-API `for await` loop).
pub trait SseHandler: Send + 'static {
    /// Handles one SSE event. An `Err` ends the response with that error text.
    fn on_event(&mut self, event: SseEventRef<'_>, ctx: &StreamContext, out: &mut ProviderOutput)
    -> Result<(), String>;

    /// Whether the stream is over (e.g. after `data: [DONE]`): the rest of the body is not read.
    fn finished(&self) -> bool {
        false
    }

    /// Adjusts a body the payload hook replaced before it is sent (the Anthropic SDK's
    /// `messages.stream` forces `stream: true`); by default the replacement is sent as it is.
    fn on_replaced_payload(&self, _payload: &mut serde_json::Value) {}

    /// Runs after the body ended: closes blocks, checks the stop reason. `Ok` emits `Done`.
    fn on_end(&mut self, ctx: &StreamContext, out: &mut ProviderOutput) -> Result<(), String>;

    /// Called before an error is reported, to settle partial content (e.g. open tool arguments).
    fn on_error(&mut self, _out: &mut ProviderOutput) {}

    /// The cancellation token fired while the answer streamed: finish what pi finishes and return
    /// pi's text for it (each API words it differently; the default is "Request was aborted").
    fn on_abort(&mut self, _ctx: &StreamContext, _out: &mut ProviderOutput) -> String {
        "Request was aborted".to_owned()
    }
}

/// The model and options of the request being streamed.
#[derive(Clone, Debug)]
pub struct StreamContext {
    /// The target model.
    pub model: Model,
    /// The request options.
    pub options: StreamOptions,
}

impl StreamContext {
    /// Calls the `onProviderStreamEvent` hook.
    pub fn raw_event(&self, raw: &serde_json::Value) {
        if let Some(hook) = &self.options.on_provider_stream_event {
            hook(raw, &self.model);
        }
    }

    /// Whether the request was cancelled.
    pub fn aborted(&self) -> bool {
        self.options.is_cancelled()
    }
}

/// Awaits the payload hook on the request's body; a cancellation while it runs abandons it.
/// (`handler` is borrowed mutably only so the borrow is `Send` across the await.)
async fn with_payload_hook(
    mut request: HttpRequest,
    ctx: &StreamContext,
    handler: &mut impl SseHandler,
) -> Result<HttpRequest, String> {
    if ctx.options.active_payload_hook().is_none() {
        return Ok(request);
    }
    // The hook sees the payload as JSON: a body written on demand is written whole for it.
    request.materialize()?;
    let body = std::mem::take(&mut request.body);
    let hooked =
        crate::http::body::apply_payload_hook(body, &ctx.options, &ctx.model, move |v| handler.on_replaced_payload(v));
    let cancel = ctx.options.cancel.clone().unwrap_or_default();
    request.body = tokio::select! {
        body = hooked => body?,
        () = cancel.cancelled() => return Err("Request was aborted".to_owned()),
    };
    Ok(request)
}

/// Runs one HTTP streaming request: send (with retries), then `Start`, then the handler over
/// every SSE event, then `Done`, or a single `Error` event.
///
/// `request` is the built request or a setup error (reported with no `Start`, as pi does).
/// An error after the response started keeps the partial content. When the cancellation token
/// fired, the result is `Aborted` with "Request was aborted" whatever the underlying error.
pub fn stream_sse(
    ctx: StreamContext,
    mut out: ProviderOutput,
    request: Result<HttpRequest, String>,
    style: ErrorStyle,
    mut handler: impl SseHandler,
) -> AssistantMessageEventStream {
    let mut ctx = ctx;
    let observed = ObservedEvents::install(&mut ctx.options);
    let response_observer = ctx.options.request_observer.clone().filter(|o| o.wants_response());
    let ctx = Arc::new(ctx);
    AssistantMessageEventStream::new(async_stream::stream! {
        // pi stamps the message inside the stream's task, so it never predates the stream that
        // times it (building the body, payload hook included, may take longer than a millisecond).
        out.message_mut().timestamp = now_ms();
        if ctx.aborted() {
            out.fail(style.pre_abort_text().to_owned(), true);
            for e in out.take_events() { yield e; }
            return;
        }
        let request = match request {
            Ok(request) => with_payload_hook(request, &ctx, &mut handler).await,
            Err(message) => Err(message),
        };
        let request = match request {
            Ok(request) => request,
            Err(message) => {
                out.fail(if ctx.aborted() { style.format(&HttpError::Aborted) } else { message }, ctx.aborted());
                for e in out.take_events() { yield e; }
                return;
            }
        };
        let (status, headers, mut body) = match send_with_retries(&request, &ctx.options, &style).await {
            Ok(response) => response,
            Err(error) => {
                let aborted = ctx.aborted() || error == HttpError::Aborted;
                let text = if aborted { style.format(&HttpError::Aborted) } else { style.format(&error) };
                out.fail(text, aborted);
                for e in out.take_events() { yield e; }
                return;
            }
        };
        let response = crate::options::ProviderResponse { status, headers };
        if let Some(hook) = &ctx.options.on_response {
            hook(&response, &ctx.model);
        }
        if let Some(observer) = &response_observer {
            observer.response(response, &ctx.model).await;
        }
        out.start();
        for e in out.take_events() { yield e; }
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        // The events of one chunk, handed on; reused, so a chunk costs no list.
        let mut ready: Vec<AssistantMessageEvent> = Vec::new();
        let mut failure: Option<String> = None;
        let mut aborted_mid_stream = false;
        'read: loop {
            let chunk = match body.next_chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => {
                    if observed.is_none() {
                        parser.finish_with(|event| {
                            if handler.finished() {
                                return ControlFlow::Break(());
                            }
                            on_event(&mut handler, event, &ctx, &mut out, &mut failure)
                        });
                        break;
                    }
                    parser.finish(&mut events);
                    for event in events.drain(..) {
                        if handler.finished() { break; }
                        let handled = handler.on_event(event.view(), &ctx, &mut out);
                        if let Some(observed) = &observed {
                            observed.deliver(&ctx.model).await;
                            for e in out.take_events() { yield e; }
                        }
                        if let Err(message) = handled {
                            failure = Some(message);
                            break 'read;
                        }
                    }
                    break;
                }
                Err(HttpError::Aborted) => {
                    aborted_mid_stream = true;
                    break;
                }
                Err(error) => {
                    failure = Some(style.format(&error));
                    break;
                }
            };
            // The common case: every event is lent to the handler straight from the chunk.
            if observed.is_none() {
                let flow = parser.push_with(&chunk, |event| {
                    if on_event(&mut handler, event, &ctx, &mut out, &mut failure).is_break() || handler.finished() {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                });
                out.swap_events(&mut ready);
                for e in ready.drain(..) { yield e; }
                if flow.is_break() { break 'read; }
                continue;
            }
            // An awaited observer sees each raw event before the events made from it.
            parser.push(&chunk, &mut events);
            for event in events.drain(..) {
                let handled = handler.on_event(event.view(), &ctx, &mut out);
                if let Some(observed) = &observed {
                    observed.deliver(&ctx.model).await;
                    for e in out.take_events() { yield e; }
                }
                if let Err(message) = handled {
                    failure = Some(message);
                    break 'read;
                }
                if handler.finished() { break 'read; }
            }
            for e in out.take_events() { yield e; }
        }
        let result = match failure {
            Some(message) => Err(message),
            None if aborted_mid_stream || ctx.aborted() => Err(handler.on_abort(&ctx, &mut out)),
            None => handler.on_end(&ctx, &mut out),
        };
        match result {
            Ok(()) => out.done(),
            Err(message) => {
                handler.on_error(&mut out);
                out.fail(message, ctx.aborted());
            }
        }
        for e in out.take_events() { yield e; }
    })
}

/// Hands one event to the handler; an error is kept in `failure` and stops the stream.
fn on_event(
    handler: &mut impl SseHandler,
    event: SseEventRef<'_>,
    ctx: &StreamContext,
    out: &mut ProviderOutput,
    failure: &mut Option<String>,
) -> ControlFlow<()> {
    match handler.on_event(event, ctx, out) {
        Ok(()) => ControlFlow::Continue(()),
        Err(message) => {
            *failure = Some(message);
            ControlFlow::Break(())
        }
    }
}

/// The raw events of one request kept for an awaited [`crate::options::RequestObserver`]: the
/// handlers' synchronous `raw_event` calls queue them, and the stream awaits the observer for each
/// before yielding the events normalized from them.
pub(crate) struct ObservedEvents {
    queue: Arc<std::sync::Mutex<Vec<serde_json::Value>>>,
    observer: Arc<dyn crate::options::RequestObserver>,
}

impl ObservedEvents {
    /// Chains a queueing hook before the options' own `on_provider_stream_event`, when the
    /// observer wants this request's stream events.
    pub(crate) fn install(options: &mut StreamOptions) -> Option<ObservedEvents> {
        let observer = options.request_observer.clone().filter(|o| o.wants_stream_events())?;
        let queue: Arc<std::sync::Mutex<Vec<serde_json::Value>>> = Arc::default();
        let sink = queue.clone();
        let user = options.on_provider_stream_event.take();
        options.on_provider_stream_event = Some(Arc::new(move |raw: &serde_json::Value, model: &Model| {
            if let Some(user) = &user {
                user(raw, model);
            }
            sink.lock().unwrap_or_else(|e| e.into_inner()).push(raw.clone());
        }));
        Some(ObservedEvents { queue, observer })
    }

    /// Awaits the observer for every queued event, in order.
    pub(crate) async fn deliver(&self, model: &Model) {
        let pending = std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()));
        for raw in pending {
            self.observer.stream_event(raw, model).await;
        }
    }
}
