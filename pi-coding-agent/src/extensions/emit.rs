//! The typed emit methods of [`ExtensionRunner`] besides `emit_context` (see `context.rs`).

use std::sync::Arc;

use indexmap::IndexMap;
use pi_ai::ImageContent;
use serde_json::Value;

use super::errors::{ExtensionError, MESSAGE_END_SAME_ROLE};
use super::events::{
    AgentStartTrigger, BeforeAgentStartEvent, BeforeAgentStartOutcome, BeforeProviderRequestEvent, ExtensionEvent,
    InputEvent, InputOutcome, InputSource, MessageEndEvent, NotifyEvent, StreamingBehavior, ToolCallEvent,
    ToolCallResult, ToolResultEvent, ToolResultPatch, UserBashEvent, UserBashResult,
};
use super::runner::ExtensionRunner;
use crate::messages::CodingAgentMessage;

impl ExtensionRunner {
    /// `tool_call` (pi's `emitToolCall`): handlers may edit `event.input` in place; the first
    /// answer with `block: true` is returned at once, otherwise the last answer.
    ///
    /// **Fail-closed:** a failing or panicking handler is not reported here; its error is returned
    /// so the caller blocks the call with the error text as an error result.
    pub async fn emit_tool_call(&self, event: &mut ToolCallEvent) -> Result<Option<ToolCallResult>, ExtensionError> {
        let ctx = self.create_context();
        let mut result = None;
        for (path, handler) in self.snapshot::<ToolCallEvent>(ToolCallEvent::NAME) {
            match self.call_handler(&handler, event, &ctx).await {
                Err(error) => return Err(ExtensionError::new(path.as_ref(), ToolCallEvent::NAME, error)),
                Ok(Some(r)) => {
                    if r.block {
                        return Ok(Some(r));
                    }
                    result = Some(r);
                }
                Ok(None) => {}
            }
        }
        Ok(result)
    }

    /// `tool_result` (pi's `emitToolResult`): each handler sees the result patched by the ones
    /// before it. Replacing `content` without `structured_content` drops the structured content.
    ///
    /// Returns `None` when nothing changed, else the **final** values of every field (pass it to
    /// the agent loop as `AfterToolCallResult::from(patch)`).
    pub async fn emit_tool_result(&self, mut event: ToolResultEvent) -> Option<ToolResultPatch> {
        let ctx = self.create_context();
        let mut modified = false;
        for (path, handler) in self.snapshot::<ToolResultEvent>(ToolResultEvent::NAME) {
            let before = event.clone();
            match self.call_handler(&handler, &mut event, &ctx).await {
                Err(error) => {
                    event = before;
                    self.report(ExtensionError::new(path.as_ref(), ToolResultEvent::NAME, error));
                }
                Ok(None) => event = before,
                Ok(Some(patch)) => {
                    event = before;
                    if let Some(content) = patch.content {
                        event.content = content;
                        if patch.structured_content.is_none() {
                            event.structured_content = None;
                        }
                        modified = true;
                    }
                    if let Some(details) = patch.details {
                        event.details = details;
                        modified = true;
                    }
                    if let Some(structured) = patch.structured_content {
                        event.structured_content = Some(structured);
                        modified = true;
                    }
                    if let Some(is_error) = patch.is_error {
                        event.is_error = is_error;
                        modified = true;
                    }
                    if let Some(usage) = patch.usage {
                        event.usage = Some(usage);
                        modified = true;
                    }
                }
            }
        }
        modified.then(|| ToolResultPatch {
            content: Some(event.content),
            details: Some(event.details),
            structured_content: event.structured_content,
            is_error: Some(event.is_error),
            usage: event.usage,
        })
    }

    /// `message_end` (pi's `emitMessageEnd`): handlers may replace the message, chained; a
    /// replacement of another role is reported ([`MESSAGE_END_SAME_ROLE`]) and ignored. Returns
    /// the final message (the input when nothing changed).
    pub async fn emit_message_end(&self, message: CodingAgentMessage) -> CodingAgentMessage {
        let ctx = self.create_context();
        let mut current = message;
        for (path, handler) in self.snapshot::<MessageEndEvent>(MessageEndEvent::NAME) {
            let mut event = MessageEndEvent { message: current.clone() };
            match self.call_handler(&handler, &mut event, &ctx).await {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), MessageEndEvent::NAME, error)),
                Ok(None) => {}
                Ok(Some(replacement)) => {
                    if replacement.role() != current.role() {
                        self.report(ExtensionError::new(path.as_ref(), MessageEndEvent::NAME, MESSAGE_END_SAME_ROLE));
                        continue;
                    }
                    current = replacement;
                }
            }
        }
        current
    }

    /// `input` (pi's `emitInput`) without a streaming behaviour; see [`Self::emit_input_with`].
    pub async fn emit_input(&self, text: &str, images: Option<Vec<ImageContent>>, source: InputSource) -> InputOutcome {
        self.emit_input_with(text, images, source, None).await
    }

    /// `input` (pi's `emitInput`): `transform` answers chain (later handlers see the new text),
    /// `handled` stops at once. Returns `transform` with the final values when the text or the
    /// images were replaced, else `continue`.
    pub async fn emit_input_with(
        &self,
        text: &str,
        images: Option<Vec<ImageContent>>,
        source: InputSource,
        streaming_behavior: Option<StreamingBehavior>,
    ) -> InputOutcome {
        let ctx = self.create_context();
        let mut current_text = text.to_owned();
        let mut current_images = images;
        let mut images_replaced = false;
        for (path, handler) in self.snapshot::<InputEvent>(InputEvent::NAME) {
            let mut event =
                InputEvent { text: current_text.clone(), images: current_images.clone(), source, streaming_behavior };
            match self.call_handler(&handler, &mut event, &ctx).await {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), InputEvent::NAME, error)),
                Ok(Some(InputOutcome::Handled)) => return InputOutcome::Handled,
                Ok(Some(InputOutcome::Transform { text, images })) => {
                    current_text = text;
                    if let Some(images) = images {
                        current_images = Some(images);
                        images_replaced = true;
                    }
                }
                Ok(Some(InputOutcome::Continue)) | Ok(None) => {}
            }
        }
        if current_text != text || images_replaced {
            InputOutcome::Transform { text: current_text, images: current_images }
        } else {
            InputOutcome::Continue
        }
    }

    /// `before_agent_start` (pi's `emitBeforeAgentStart`): every handler's `message` is
    /// collected; the last `system_prompt` wins and later handlers see it as `system_prompt`.
    pub async fn emit_before_agent_start(
        &self,
        trigger: AgentStartTrigger,
        system_prompt: String,
    ) -> BeforeAgentStartOutcome {
        self.emit_before_agent_start_with_sections(trigger, system_prompt, IndexMap::new()).await
    }

    /// [`Self::emit_before_agent_start`] with the run's custom prompt sections (pi's
    /// `systemPromptOptions.sections`), which handlers may edit; the outcome carries them.
    pub async fn emit_before_agent_start_with_sections(
        &self,
        trigger: AgentStartTrigger,
        system_prompt: String,
        sections: IndexMap<String, String>,
    ) -> BeforeAgentStartOutcome {
        let ctx = self.create_context();
        let mut outcome = BeforeAgentStartOutcome { sections, ..Default::default() };
        let mut current_prompt = system_prompt;
        for (path, handler) in self.snapshot::<BeforeAgentStartEvent>(BeforeAgentStartEvent::NAME) {
            let mut event = BeforeAgentStartEvent {
                trigger: trigger.clone(),
                system_prompt: current_prompt.clone(),
                sections: std::mem::take(&mut outcome.sections),
            };
            let result = self.call_handler(&handler, &mut event, &ctx).await;
            outcome.sections = std::mem::take(&mut event.sections);
            match result {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), BeforeAgentStartEvent::NAME, error)),
                Ok(None) => {}
                Ok(Some(result)) => {
                    if let Some(message) = result.message {
                        outcome.messages.push(message);
                    }
                    if let Some(prompt) = result.system_prompt {
                        current_prompt = prompt.clone();
                        outcome.system_prompt = Some(prompt);
                    }
                }
            }
        }
        outcome
    }

    /// `user_bash` (pi's `emitUserBash`): the first answer wins. A failing handler is reported
    /// **and** returned (the command must then not run locally).
    pub async fn emit_user_bash(&self, mut event: UserBashEvent) -> Result<Option<UserBashResult>, ExtensionError> {
        let ctx = self.create_context();
        for (path, handler) in self.snapshot::<UserBashEvent>(UserBashEvent::NAME) {
            match self.call_handler(&handler, &mut event, &ctx).await {
                Err(error) => {
                    let error = ExtensionError::new(path.as_ref(), UserBashEvent::NAME, error);
                    self.report(error.clone());
                    return Err(error);
                }
                Ok(Some(result)) => return Ok(Some(result)),
                Ok(None) => {}
            }
        }
        Ok(None)
    }

    /// `before_provider_request` (pi's `emitBeforeProviderRequest`): each handler may return a new
    /// payload, chained.
    pub async fn emit_before_provider_request(&self, payload: Value) -> Value {
        let ctx = self.create_context();
        let mut current = payload;
        for (path, handler) in self.snapshot::<BeforeProviderRequestEvent>(BeforeProviderRequestEvent::NAME) {
            let mut event = BeforeProviderRequestEvent { payload: current.clone() };
            match self.call_handler(&handler, &mut event, &ctx).await {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), BeforeProviderRequestEvent::NAME, error)),
                Ok(Some(p)) => current = p,
                Ok(None) => {}
            }
        }
        current
    }

    /// `message_update`, the event of every streamed delta, as [`emit`](Self::emit) dispatches it
    /// (every handler in order, the last one given the event itself, the others a copy, a failure
    /// reported).
    ///
    /// The future holds the event once (a copy for an earlier handler is boxed), so it stays
    /// small enough for the allocator's per-thread cache: the session boxes it, polls it once and
    /// awaits it only when a handler did not answer at once.
    pub(crate) async fn emit_update(self: Arc<Self>, mut event: NotifyEvent) {
        let handlers = self.update_handlers();
        let ctx = self.create_context();
        let last = handlers.len().saturating_sub(1);
        for (position, h) in handlers.iter().enumerate() {
            let mut copy = (position < last).then(|| Box::new(event.clone()));
            let ev = match copy.as_deref_mut() {
                Some(copy) => copy,
                None => &mut event,
            };
            if let Err(error) = self.call_handler(&h.handler, ev, &ctx).await {
                self.report(ExtensionError::new(h.path.as_ref(), "message_update", error));
            }
        }
    }

    /// [`emit_update`](Self::emit_update) without a future, when every handler answers at once
    /// (registered with `on_notify_sync`): `true`, the event left as the last handler left it
    /// (pi's listeners see the very event object its handlers were given). Otherwise `false`, the
    /// event untouched, for `emit_update`.
    pub(crate) fn emit_update_now(&self, event: &mut NotifyEvent) -> bool {
        let handlers = self.update_handlers();
        if !handlers.iter().all(|h| h.sync.is_some()) {
            return false;
        }
        let ctx = self.create_context();
        let last = handlers.len().saturating_sub(1);
        for (position, h) in handlers.iter().enumerate() {
            let Some(sync) = &h.sync else { continue };
            let mut copy = (position < last).then(|| event.clone());
            let ev = match copy.as_mut() {
                Some(copy) => copy,
                None => &mut *event,
            };
            if let Err(error) = Self::call_sync_handler(sync, ev, &ctx) {
                self.report(ExtensionError::new(h.path.as_ref(), "message_update", error));
            }
        }
        true
    }

    /// A notify event or a `session_before_*` event (pi's generic `emit`). Answers matter only
    /// for `session_before_*`: a non-null answer is remembered and one with `"cancel": true` is
    /// returned at once; otherwise the last one is returned.
    ///
    /// The last handler is given the event itself, the others a copy each (a `message_update`
    /// with one handler costs no copy of its event).
    pub async fn emit(&self, event: NotifyEvent) -> Option<Value> {
        let handlers = self.snapshot::<NotifyEvent>(event.kind());
        let count = handlers.len();
        if count == 0 {
            return None;
        }
        let ctx = self.create_context();
        let name = match event.known_kind() {
            Some(kind) => std::borrow::Cow::Borrowed(kind),
            None => std::borrow::Cow::Owned(event.kind().to_owned()),
        };
        let session_before = event.is_session_before();
        let mut result = None;
        let mut event = Some(event);
        for (position, (path, handler)) in handlers.into_iter().enumerate() {
            let mut ev = match event.take() {
                Some(last) if position + 1 == count => last,
                Some(original) => {
                    let copy = original.clone();
                    event = Some(original);
                    copy
                }
                None => break,
            };
            match self.call_handler(&handler, &mut ev, &ctx).await {
                Err(error) => self.report(ExtensionError::new(path.as_ref(), name.to_string(), error)),
                Ok(Some(answer)) if session_before && !answer.is_null() && answer != Value::Bool(false) => {
                    let cancel = answer.get("cancel").and_then(Value::as_bool).unwrap_or(false);
                    result = Some(answer);
                    if cancel {
                        return result;
                    }
                }
                Ok(_) => {}
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::extensions::{Extension, ExtensionApi, FnExtension, HandlerFuture};

    fn update() -> NotifyEvent {
        let message = pi_ai::AssistantMessage::default();
        NotifyEvent::MessageUpdate {
            message: pi_agent_core::AgentMessage::Assistant(message.into()),
            assistant_message_event: pi_ai::AssistantMessageEvent::TextDelta { content_index: 0, delta: "x".into() },
        }
    }

    /// A handler that counts its calls.
    fn counter(
        count: &Arc<AtomicUsize>,
    ) -> impl for<'a> Fn(&'a mut NotifyEvent, &'a crate::extensions::ExtensionContext) -> HandlerFuture<'a, Value>
    + Send
    + Sync
    + 'static {
        let count = count.clone();
        move |_, _| {
            count.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Ok(None) })
        }
    }

    /// A runner with one extension that registers nothing at load, and that extension's api (to
    /// register handlers later, as a running extension does).
    async fn loaded_with_api() -> (Arc<ExtensionRunner>, ExtensionApi) {
        let api: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
        let slot = api.clone();
        let ext: Arc<dyn Extension> = Arc::new(FnExtension::new("/a.ts", move |pi| {
            *slot.lock().map_err(|e| e.to_string())? = Some(pi.clone());
            Ok(())
        }));
        let runner = Arc::new(ExtensionRunner::load(vec![ext], "/tmp").await);
        let pi = api.lock().ok().and_then(|a| a.clone()).expect("the extension's api");
        (runner, pi)
    }

    /// `message_update`'s handlers are kept between deltas: the kept list follows handlers added
    /// and removed after it was first built.
    #[tokio::test]
    async fn message_update_handlers_follow_handlers_added_and_removed_between_deltas() {
        let (runner, pi) = loaded_with_api().await;
        let (first, second) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        runner.clone().emit_update(update()).await;
        let off = pi.on_notify("message_update", counter(&first));
        runner.clone().emit_update(update()).await;
        runner.clone().emit_update(update()).await;
        let also = pi.on_notify("message_update", counter(&second));
        runner.clone().emit_update(update()).await;
        off.unsubscribe();
        runner.clone().emit_update(update()).await;
        also.unsubscribe();
        runner.clone().emit_update(update()).await;
        assert_eq!((first.load(Ordering::SeqCst), second.load(Ordering::SeqCst)), (3, 2));
    }

    /// Handlers registered without a future are called at once, in order, the last given the
    /// event itself and the others a copy (a change by one is not seen by the next), a failure or
    /// a panic reported; one handler with a future sends the whole dispatch down the async path.
    #[tokio::test]
    async fn message_update_handlers_without_a_future_are_called_at_once() {
        let (runner, pi) = loaded_with_api().await;
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen_errors = errors.clone();
        let _listener =
            runner.on_error(move |e| seen_errors.lock().unwrap_or_else(|p| p.into_inner()).push(e.error.clone()));
        let deltas: Arc<Mutex<Vec<String>>> = Arc::default();
        let record = |deltas: &Arc<Mutex<Vec<String>>>, tag: &'static str| {
            let deltas = deltas.clone();
            move |event: &mut NotifyEvent, _: &crate::extensions::ExtensionContext| {
                if let NotifyEvent::MessageUpdate {
                    assistant_message_event: pi_ai::AssistantMessageEvent::TextDelta { delta, .. },
                    ..
                } = event
                {
                    deltas.lock().unwrap_or_else(|p| p.into_inner()).push(format!("{tag}:{delta}"));
                    delta.push('!');
                }
                Ok::<_, crate::extensions::BoxError>(None)
            }
        };
        assert!(runner.emit_update_now(&mut update()), "no handler: nothing to wait for");
        let _first = pi.on_notify_sync("message_update", record(&deltas, "first"));
        let _failing = pi.on_notify_sync("message_update", |_, _| Err("no progress bar".into()));
        let _panicking = pi.on_notify_sync("message_update", |_, _| panic!("the handler broke"));
        let _last = pi.on_notify_sync("message_update", record(&deltas, "last"));
        let mut handled = update();
        assert!(runner.emit_update_now(&mut handled), "every handler answered at once");
        assert_eq!(*deltas.lock().unwrap_or_else(|p| p.into_inner()), ["first:x", "last:x"]);
        assert_eq!(*errors.lock().unwrap_or_else(|p| p.into_inner()), ["no progress bar", "the handler broke"]);
        let NotifyEvent::MessageUpdate {
            assistant_message_event: pi_ai::AssistantMessageEvent::TextDelta { delta, .. },
            ..
        } = handled
        else {
            panic!("the event comes back")
        };
        assert_eq!(delta, "x!", "as the last handler left it (the first changed a copy)");
        // The same handlers through the async dispatch see the same.
        runner.clone().emit_update(update()).await;
        assert_eq!(deltas.lock().unwrap_or_else(|p| p.into_inner()).len(), 4);
        let count = Arc::new(AtomicUsize::new(0));
        let _async = pi.on_notify("message_update", counter(&count));
        let mut event = update();
        assert!(!runner.emit_update_now(&mut event), "a handler with a future is awaited");
        assert_eq!(deltas.lock().unwrap_or_else(|p| p.into_inner()).len(), 4, "none called yet");
        runner.clone().emit_update(event).await;
        assert_eq!((deltas.lock().unwrap_or_else(|p| p.into_inner()).len(), count.load(Ordering::SeqCst)), (6, 1));
    }
}
