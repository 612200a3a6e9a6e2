//! pi's `_handleAgentEvent`: every agent event reaches the extensions first (`message_end`
//! handlers may replace the message), then the public listeners; a finished message is then
//! persisted, and custom messages held during a turn are appended at its end.
//!
//! A `message_end` replacement is handed back to the agent loop (pi's `_replaceMessageInPlace`
//! changes the object the loop holds), so the run goes on with it: a replaced assistant message's
//! tool calls are the ones executed, and `turn_end`, `agent_end` and the agent's transcript carry
//! the replacement.

use std::sync::Arc;

use pi_agent_core::{AbortHandle, AgentEvent, AgentMessage};
use pi_ai::{AssistantMessage, Shared, StopReason};

use super::provider_errors::{is_context_overflow, is_retryable_assistant_error};
use super::{AgentSession, SessionEvent, SessionShared, lock};
use crate::extensions::NotifyEvent;
use crate::messages::{CodingAgentMessage, CodingMessage};

/// Subscribes the session's event handler to its agent.
pub(super) fn install(session: &AgentSession) {
    let weak = Arc::downgrade(&session.shared);
    let abort = session.agent.abort_handle();
    session.agent.subscribe_replacing(move |event| {
        if let AgentEvent::MessageUpdate { assistant_message_event } = event {
            return match weak.upgrade() {
                Some(shared) => handle_update(shared, assistant_message_event),
                None => Box::pin(NoReplacement),
            };
        }
        let weak = weak.clone();
        let abort = abort.clone();
        Box::pin(async move {
            let Some(shared) = weak.upgrade() else { return Ok(None) };
            Ok(handle(&shared, &abort, event).await)
        })
    });
}

type Answer = futures::future::BoxFuture<'static, Result<Option<CodingAgentMessage>, pi_agent_core::BoxError>>;

/// [`handle`] for a delta, the event of every streamed token: the partial is updated at once,
/// and only `message_update` handlers, when there are any, are awaited (the whole of `handle`
/// is a large future, and building one per delta would cost more than the delta itself).
///
/// Handlers registered without a future (`on_notify_sync`) are called here directly. Otherwise
/// the handlers' dispatch is polled here once: when every handler answered at once (a Rust
/// handler that does not wait), the listeners get the event now and the answer is a future of
/// no size; only a handler still running (a JavaScript one) makes the rest a future of its own.
fn handle_update(shared: Arc<SessionShared>, delta: pi_ai::AssistantMessageEvent) -> Answer {
    let partial = update_partial(&shared, &delta);
    let (Some(message), Some(runner)) = (partial, shared.runner.as_ref()) else {
        shared.emit(&SessionEvent::Agent(AgentEvent::MessageUpdate { assistant_message_event: delta }));
        return Box::pin(NoReplacement);
    };
    let mut notify =
        NotifyEvent::MessageUpdate { message: AgentMessage::Assistant(message), assistant_message_event: delta };
    if runner.emit_update_now(&mut notify) {
        // The delta lent to the handlers comes back for the listeners: no copy per delta.
        match notify {
            NotifyEvent::MessageUpdate { assistant_message_event, .. } => {
                shared.emit(&SessionEvent::Agent(AgentEvent::MessageUpdate { assistant_message_event }));
            }
            // Only a Rust handler can put another event in its place (a JavaScript one changes
            // fields); the partial has the delta, the listeners cannot be given it.
            _ => runner.report(crate::extensions::ExtensionError::new(
                "<runtime>",
                "message_update",
                "a message_update handler replaced the event; its listeners missed this delta",
            )),
        }
        return Box::pin(NoReplacement);
    }
    // A handler with a future: the listeners hear the delta once the handlers are done.
    let NotifyEvent::MessageUpdate { assistant_message_event, .. } = &notify else {
        unreachable!("built as a message_update above and untouched: no handler was called")
    };
    let event = AgentEvent::MessageUpdate { assistant_message_event: assistant_message_event.clone() };
    let mut dispatch = Box::pin(runner.clone().emit_update(notify));
    if futures::FutureExt::now_or_never(&mut dispatch).is_none() {
        return Box::pin(async move {
            dispatch.await;
            shared.emit(&SessionEvent::Agent(event));
            Ok(None)
        });
    }
    shared.emit(&SessionEvent::Agent(event));
    Box::pin(NoReplacement)
}

/// The answer of a listener that handled its event at once and replaces nothing: a future of
/// no size, so boxing it allocates nothing (a delta's answer costs no allocation).
struct NoReplacement;

impl std::future::Future for NoReplacement {
    type Output = Result<Option<CodingAgentMessage>, pi_agent_core::BoxError>;

    fn poll(self: std::pin::Pin<&mut Self>, _cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        std::task::Poll::Ready(Ok(None))
    }
}

/// Applies a delta to the partial the extensions see; the partial, shared, when an extension
/// handles `message_update`. Applying is O(delta), and the partial is shared, not copied: the
/// next delta copies it only if a handler kept it.
fn update_partial(shared: &SessionShared, delta: &pi_ai::AssistantMessageEvent) -> Option<Shared<AssistantMessage>> {
    let wanted = shared.runner.as_ref().is_some_and(|r| r.has_update_handlers());
    let mut st = shared.run_state();
    st.streaming_partial.as_mut().and_then(|partial| {
        partial.apply(delta);
        wanted.then(|| partial.shared_message())
    })
}

/// Handles one event; for `message_end`, returns the message an extension replaced it with.
async fn handle(
    shared: &Arc<SessionShared>,
    abort: &AbortHandle<CodingMessage>,
    mut event: AgentEvent<CodingMessage>,
) -> Option<CodingAgentMessage> {
    // An abort requested while the run was starting (during `before_agent_start` or the
    // compaction before the prompt) stops it here, before the first request, as pi does at
    // `agent_start`.
    if matches!(event, AgentEvent::AgentStart) && shared.run_state().abort_requested {
        abort.abort();
    }
    if let AgentEvent::MessageStart { message: AgentMessage::User(user) } = &event {
        shared.run_state().overflow_recovery_attempted = false;
        dequeue_user_text(shared, &pi_ai::transcript::content_text_with(&user.content, ""));
    }
    let recorded = record_nested_calls(shared, &mut event);
    let original = match &event {
        AgentEvent::MessageEnd { message } if shared.runner.as_ref().is_some_and(|r| r.has_handlers("message_end")) => {
            Some(message.clone())
        }
        _ => None,
    };
    forward_to_extensions(shared, &mut event).await;
    let replacement = match (original, &event) {
        (Some(original), AgentEvent::MessageEnd { message }) if original != *message => Some(message.clone()),
        // The loop's tool result carries its `nestedCalls` too (pi sets them on the loop's object).
        (None, AgentEvent::MessageEnd { message }) if recorded => Some(message.clone()),
        _ => None,
    };
    let event = match event {
        AgentEvent::AgentEnd { messages } => {
            let will_retry = will_retry_after_agent_end(shared, &messages);
            let ended = SessionEvent::AgentEnd { messages, will_retry };
            shared.emit(&ended);
            let SessionEvent::AgentEnd { messages, .. } = ended else { return replacement };
            AgentEvent::AgentEnd { messages }
        }
        // Lent to the listeners, not copied (a delta costs no copy of its text).
        other => {
            let wrapped = SessionEvent::Agent(other);
            shared.emit(&wrapped);
            let SessionEvent::Agent(event) = wrapped else { return replacement };
            event
        }
    };
    match &event {
        AgentEvent::MessageEnd { message } => {
            if persisted_on_message_end(message) {
                persist(shared, message).await;
            }
            if let AgentMessage::Assistant(assistant) = message {
                let mut st = shared.run_state();
                st.last_assistant = Some(assistant.clone().into_inner());
                if !matches!(assistant.stop_reason, StopReason::Error | StopReason::Length) {
                    st.overflow_recovery_attempted = false;
                }
                if assistant.stop_reason != StopReason::Error && st.retry_attempt > 0 {
                    let attempt = std::mem::take(&mut st.retry_attempt);
                    drop(st);
                    shared.emit(&SessionEvent::AutoRetryEnd { success: true, attempt, final_error: None });
                }
            }
        }
        AgentEvent::TurnEnd { .. } => flush_pending_custom(shared).await,
        _ => {}
    }
    replacement
}

/// pi's nested-call record on a tool result: taken at its `message_start` (listeners see it from
/// there on) and set again at its `message_end`; the scopes are forgotten at `agent_end`. Returns
/// whether a `message_end` got a record.
fn record_nested_calls(shared: &SessionShared, event: &mut AgentEvent<CodingMessage>) -> bool {
    match event {
        AgentEvent::MessageStart { message: AgentMessage::ToolResult(result) } => {
            let mut st = shared.run_state();
            if let Some(record) = st.nested.take_record(&result.tool_call_id) {
                record.apply(result.make_mut());
                st.nested_records.insert(result.tool_call_id.clone(), record);
            }
            false
        }
        AgentEvent::MessageEnd { message: AgentMessage::ToolResult(result) } => {
            let record = shared.run_state().nested_records.remove(&result.tool_call_id);
            let Some(record) = record else { return false };
            record.apply(result.make_mut());
            true
        }
        AgentEvent::AgentEnd { .. } => {
            let mut st = shared.run_state();
            st.nested.clear();
            st.nested_records.clear();
            false
        }
        _ => false,
    }
}

/// pi's `_willRetryAfterAgentEnd`: no abort was requested, retries are enabled and left, and the
/// run's last assistant message failed with a retryable error (pi's `_isRetryableError`; its
/// context window only matters for messages that did not fail, so none is needed here).
fn will_retry_after_agent_end(shared: &SessionShared, messages: &[CodingAgentMessage]) -> bool {
    let (abort_requested, attempt) = {
        let st = shared.run_state();
        (st.abort_requested, st.retry_attempt)
    };
    let settings = lock(&shared.settings).retry;
    if abort_requested || !settings.enabled || attempt >= settings.max_retries {
        return false;
    }
    messages
        .iter()
        .rev()
        .find_map(|m| m.as_assistant())
        .is_some_and(|a| !is_context_overflow(a, 0) && is_retryable_assistant_error(a))
}

/// pi's `_emitExtensionEvent`, with the turn index it keeps for `turn_start` / `turn_end`.
async fn forward_to_extensions(shared: &Arc<SessionShared>, event: &mut AgentEvent<CodingMessage>) {
    let notify = match event {
        AgentEvent::AgentStart => {
            shared.run_state().turn_index = 0;
            Some(NotifyEvent::AgentStart)
        }
        AgentEvent::TurnStart => {
            Some(NotifyEvent::TurnStart { turn_index: shared.run_state().turn_index, timestamp: pi_ai::now_ms() })
        }
        AgentEvent::TurnEnd { message, tool_results } => {
            let (turn_index, dispatched) = {
                let mut st = shared.run_state();
                st.turn_index += 1;
                (st.turn_index - 1, std::mem::take(&mut st.turn_end_dispatched))
            };
            // Normally `finish_turn` dispatched it already (pi's `_boundaryDispatchedMessages`).
            if !dispatched {
                super::boundary::dispatch_turn_end(shared, turn_index, message, tool_results).await;
            }
            None
        }
        AgentEvent::MessageStart { message: AgentMessage::Assistant(a) } if shared.runner.is_some() => {
            shared.run_state().streaming_partial = Some(pi_ai::PartialMessage::new(a.clone().into_inner()));
            Some(NotifyEvent::MessageStart { message: AgentMessage::Assistant(a.clone()) })
        }
        AgentEvent::MessageUpdate { assistant_message_event } => {
            update_partial(shared, assistant_message_event).map(|message| NotifyEvent::MessageUpdate {
                message: AgentMessage::Assistant(message),
                assistant_message_event: assistant_message_event.clone(),
            })
        }
        AgentEvent::MessageEnd { message } => {
            shared.run_state().streaming_partial = None;
            if let Some(runner) = shared.runner.as_ref().filter(|r| r.has_handlers("message_end")) {
                *message = runner.emit_message_end(message.clone()).await;
            }
            None
        }
        other => notify_event(other),
    };
    if let (Some(runner), Some(notify)) = (&shared.runner, notify) {
        runner.emit(notify).await;
    }
}

/// pi's rule on `message_end`: `custom` messages become `custom_message` entries, the LLM roles
/// (system, user, assistant, toolResult) `message` entries; any other role (bashExecution,
/// compactionSummary, branchSummary, an application's own) is persisted elsewhere or not at all.
fn persisted_on_message_end(message: &CodingAgentMessage) -> bool {
    match message {
        AgentMessage::Custom(CodingMessage::Custom(_)) => true,
        AgentMessage::Custom(_) => false,
        AgentMessage::System(_) | AgentMessage::User(_) | AgentMessage::Assistant(_) | AgentMessage::ToolResult(_) => {
            true
        }
    }
}

/// Appends one finished message to the session manager (its write queued on the manager's
/// writer thread): the entry id and type, or `None` after a failure (recorded).
fn queue_persist(shared: &SessionShared, message: &CodingAgentMessage) -> Option<(String, &'static str)> {
    let mut sm = lock(&shared.session_manager);
    let (result, entry_type) = match message {
        AgentMessage::Custom(CodingMessage::Custom(c)) => (
            sm.append_custom_message_entry(&c.custom_type, c.content.clone(), c.display, c.details.clone()),
            "custom_message",
        ),
        other => (sm.append_message(other.clone()), "message"),
    };
    drop(sm);
    match result {
        Ok(id) => Some((id, entry_type)),
        Err(e) => {
            tracing::error!(error = %e, "could not persist a message to the session");
            shared.run_state().persist_error.get_or_insert_with(|| e.to_string());
            None
        }
    }
}

/// Persists one finished message (after every listener saw it), as pi does on `message_end`:
/// the write and fsync run on the writer thread and are awaited here, so the message is on disk
/// before `EntryPersisted` and before the next event of the run.
pub(crate) async fn persist(shared: &SessionShared, message: &CodingAgentMessage) {
    let Some((id, entry_type)) = queue_persist(shared, message) else { return };
    if shared.settle_writes().await.is_ok() {
        shared.emit(&SessionEvent::EntryPersisted { id, entry_type });
    }
}

/// [`persist`] for a synchronous caller (pi's synchronous paths: a custom message delivered while
/// idle, a user `!cmd` recorded while idle): the entry is in the session at once and its write is
/// awaited by a tracked task (`dispose` waits for it; a failure is recorded).
pub(crate) fn persist_now(shared: &Arc<SessionShared>, message: &CodingAgentMessage) {
    let Some((id, entry_type)) = queue_persist(shared, message) else { return };
    shared.settle_writes_later();
    shared.emit(&SessionEvent::EntryPersisted { id, entry_type });
}

impl AgentSession {
    /// The first failure to write a message to the session file since the last call (an
    /// unwritable session directory, a full disk), taken so it is reported once. The modes print
    /// it and exit non-zero: the answer is shown, but the session was not saved.
    pub fn take_persist_error(&self) -> Option<String> {
        self.shared.run_state().persist_error.take()
    }
}

/// pi's `_appendCustomMessage`: append to the session, then `message_start` / `message_end` to
/// the public listeners (not to extensions).
pub(crate) async fn append_custom_message(shared: &SessionShared, message: CodingAgentMessage) {
    // Written first: message events never describe a message the session does not contain.
    persist(shared, &message).await;
    announce_custom_message(shared, message);
}

/// [`append_custom_message`] for a synchronous caller ([`persist_now`]).
pub(crate) fn append_custom_message_now(shared: &Arc<SessionShared>, message: CodingAgentMessage) {
    persist_now(shared, &message);
    announce_custom_message(shared, message);
}

fn announce_custom_message(shared: &SessionShared, message: CodingAgentMessage) {
    shared.emit(&SessionEvent::Agent(AgentEvent::MessageStart { message: message.clone() }));
    shared.emit(&SessionEvent::Agent(AgentEvent::MessageEnd { message }));
}

/// pi's `_flushPendingCustomMessages`.
pub(crate) async fn flush_pending_custom(shared: &SessionShared) {
    let pending = std::mem::take(&mut shared.run_state().pending_custom);
    for message in pending {
        append_custom_message(shared, message).await;
    }
}

/// pi's `_flushPendingBashMessages`.
pub(crate) async fn flush_pending_bash(shared: &SessionShared) {
    let pending = std::mem::take(&mut shared.run_state().pending_bash);
    for message in pending {
        persist(shared, &message).await;
    }
}

/// A queued user text was delivered: drop it from the queue lists and emit `queue_update`.
fn dequeue_user_text(shared: &SessionShared, text: &str) {
    let mut st = shared.run_state();
    if let Some(i) = st.steering_texts.iter().position(|t| t == text) {
        st.steering_texts.remove(i);
    } else if let Some(i) = st.follow_up_texts.iter().position(|t| t == text) {
        st.follow_up_texts.remove(i);
    } else {
        return;
    }
    drop(st);
    emit_queue_update(shared);
}

/// pi's `queue_update` event.
pub(crate) fn emit_queue_update(shared: &SessionShared) {
    let (steering, follow_up) = {
        let st = shared.run_state();
        (st.steering_texts.clone(), st.follow_up_texts.clone())
    };
    shared.emit(&SessionEvent::QueueUpdate { steering, follow_up });
}

/// Agent events as extension notifications besides `turn_*` (numbered by the session) and
/// `message_end` (whose handlers may replace the message).
fn notify_event(event: &AgentEvent<CodingMessage>) -> Option<NotifyEvent> {
    Some(match event {
        AgentEvent::AgentStart => NotifyEvent::AgentStart,
        AgentEvent::AgentEnd { messages } => NotifyEvent::AgentEnd { messages: messages.clone() },
        AgentEvent::MessageStart { message } => NotifyEvent::MessageStart { message: message.clone() },
        AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args } => NotifyEvent::ToolExecutionStart {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            args: args.clone(),
            parent_tool_call_id: None,
        },
        AgentEvent::ToolExecutionUpdate { tool_call_id, tool_name, args, partial_result } => {
            NotifyEvent::ToolExecutionUpdate {
                tool_call_id: tool_call_id.clone(),
                tool_name: tool_name.clone(),
                args: args.clone(),
                partial_result: (&**partial_result).into(),
                parent_tool_call_id: None,
            }
        }
        AgentEvent::ToolExecutionEnd { tool_call_id, tool_name, result, is_error, duration_ms } => {
            NotifyEvent::ToolExecutionEnd {
                tool_call_id: tool_call_id.clone(),
                tool_name: tool_name.clone(),
                result: (&**result).into(),
                is_error: *is_error,
                duration_ms: *duration_ms,
                parent_tool_call_id: None,
            }
        }
        _ => return None,
    })
}
