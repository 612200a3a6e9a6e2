//! Listeners: registration, and the event sink that updates the state and then calls them in order.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use futures::FutureExt;
use futures::future::BoxFuture;

use super::{Agent, Inner, lock};
use crate::event::AgentEvent;
use crate::hooks::BoxError;
use crate::message::{AgentMessage, CustomMessage};
use crate::sink::{EventSink, role_changed};

pub(super) type SyncListener<C> = Arc<dyn Fn(&AgentEvent<C>) + Send + Sync>;
pub(super) type AsyncListener<C> = Arc<dyn Fn(AgentEvent<C>) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync>;
pub(super) type ReplacingListener<C> =
    Arc<dyn Fn(AgentEvent<C>) -> BoxFuture<'static, Result<Option<AgentMessage<C>>, BoxError>> + Send + Sync>;

#[derive(Clone)]
pub(super) enum Listener<C> {
    Sync(SyncListener<C>),
    Async(AsyncListener<C>),
    Replacing(ReplacingListener<C>),
}

/// Removes a listener when called.
pub struct Unsubscribe(Box<dyn FnOnce() + Send>);

impl Unsubscribe {
    /// A handle that runs `f` when unsubscribing.
    pub fn new(f: impl FnOnce() + Send + 'static) -> Self {
        Unsubscribe(Box::new(f))
    }

    /// Removes the listener.
    pub fn unsubscribe(self) {
        (self.0)()
    }
}

impl<C: CustomMessage> Agent<C> {
    /// Registers a listener, called for every event after the state was updated, in registration
    /// order. A panicking listener ends the run through the failure path.
    pub fn subscribe(&self, listener: impl Fn(&AgentEvent<C>) + Send + Sync + 'static) -> Unsubscribe {
        self.add_listener(Listener::Sync(Arc::new(listener)))
    }

    /// Registers an async listener; the run waits for it (a barrier, as in pi).
    pub fn subscribe_async(
        &self,
        listener: impl Fn(AgentEvent<C>) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync + 'static,
    ) -> Unsubscribe {
        self.add_listener(Listener::Async(Arc::new(listener)))
    }

    /// Registers an async listener that may replace a finished message, as pi's listeners can by
    /// changing the `message_end` message in place (the coding agent's extensions do).
    ///
    /// For `MessageEnd`, an answer `Some(message)` (of the same role) replaces the event's message
    /// for the listeners after this one, in the state's transcript and for the rest of the run
    /// (see [`EventSink::emit_message_end`]: a replaced assistant message's tool calls are the ones
    /// executed). For other events the answer is ignored. The run waits for the listener.
    pub fn subscribe_replacing(
        &self,
        listener: impl Fn(AgentEvent<C>) -> BoxFuture<'static, Result<Option<AgentMessage<C>>, BoxError>>
        + Send
        + Sync
        + 'static,
    ) -> Unsubscribe {
        self.add_listener(Listener::Replacing(Arc::new(listener)))
    }

    fn add_listener(&self, listener: Listener<C>) -> Unsubscribe {
        let id = self.inner.next_listener.fetch_add(1, Ordering::Relaxed);
        Arc::make_mut(&mut lock(&self.inner.listeners)).push((id, listener));
        let inner = Arc::downgrade(&self.inner);
        Unsubscribe(Box::new(move || {
            if let Some(inner) = inner.upgrade() {
                Arc::make_mut(&mut lock(&inner.listeners)).retain(|(i, _)| *i != id);
            }
        }))
    }
}

/// Updates the state for each event, then calls the listeners in order.
pub(super) struct AgentSink<C: CustomMessage> {
    pub(super) inner: Arc<Inner<C>>,
}

impl<C: CustomMessage> AgentSink<C> {
    /// Updates the state, then calls the listeners in order; returns the event as the last
    /// listener saw it (a replacing listener may have swapped a `MessageEnd` message), or `None`
    /// when not `wanted` back: the last listener then takes the event itself, not a copy.
    async fn dispatch(&mut self, mut event: AgentEvent<C>, wanted: bool) -> Result<Option<AgentEvent<C>>, BoxError> {
        // Where `MessageEnd` put its message in the state's transcript, to follow a replacement.
        let ended_at = {
            let mut state = lock(&self.inner.state);
            state.apply(&event);
            matches!(event, AgentEvent::MessageEnd { .. }).then(|| state.messages.len().saturating_sub(1))
        };
        let listeners = Arc::clone(&lock(&self.inner.listeners));
        let count = listeners.len();
        for (position, (_, listener)) in listeners.iter().enumerate() {
            // The last listener may take the event itself when it is not wanted back (a delta then
            // costs no copy).
            let give = !wanted && position + 1 == count && ended_at.is_none();
            match listener {
                Listener::Sync(f) => {
                    std::panic::catch_unwind(AssertUnwindSafe(|| f(&event))).map_err(panicked)?;
                }
                Listener::Async(f) => {
                    let owned =
                        if give { std::mem::replace(&mut event, AgentEvent::AgentStart) } else { event.clone() };
                    AssertUnwindSafe(f(owned)).catch_unwind().await.map_err(panicked)??;
                }
                Listener::Replacing(f) => {
                    let owned =
                        if give { std::mem::replace(&mut event, AgentEvent::AgentStart) } else { event.clone() };
                    let answer = AssertUnwindSafe(f(owned)).catch_unwind().await.map_err(panicked)??;
                    if let (Some(replacement), AgentEvent::MessageEnd { message }, Some(index)) =
                        (answer, &mut event, ended_at)
                    {
                        if replacement.role() != message.role() {
                            return Err(role_changed(message.role(), replacement.role()));
                        }
                        let mut state = lock(&self.inner.state);
                        // Unless a listener rewrote the transcript meanwhile.
                        if let Some(slot) = state.messages.get_mut(index).filter(|slot| slot.is_same(message)) {
                            *slot = replacement.clone();
                        }
                        *message = replacement;
                    }
                }
            }
        }
        Ok(wanted.then_some(event))
    }
}

impl<C: CustomMessage> AgentSink<C> {
    /// [`dispatch`](Self::dispatch) of a `MessageUpdate` without a future of its own: every
    /// listener is called and its future polled once; the first one not ready at once is
    /// returned, together with the listeners after it, as the future that finishes the dispatch.
    fn dispatch_update(&mut self, mut event: AgentEvent<C>) -> Result<Option<UpdateRest<C>>, BoxError> {
        lock(&self.inner.state).apply(&event);
        let listeners = Arc::clone(&lock(&self.inner.listeners));
        let count = listeners.len();
        for (position, (_, listener)) in listeners.iter().enumerate() {
            let give = position + 1 == count;
            let pending: BoxFuture<'static, Result<(), BoxError>> = match listener {
                Listener::Sync(f) => {
                    std::panic::catch_unwind(AssertUnwindSafe(|| f(&event))).map_err(panicked)?;
                    continue;
                }
                Listener::Async(f) => {
                    let owned =
                        if give { std::mem::replace(&mut event, AgentEvent::AgentStart) } else { event.clone() };
                    let mut future = f(owned);
                    match poll_once(&mut future)? {
                        Some(answer) => {
                            answer?;
                            continue;
                        }
                        None => future,
                    }
                }
                Listener::Replacing(f) => {
                    let owned =
                        if give { std::mem::replace(&mut event, AgentEvent::AgentStart) } else { event.clone() };
                    // An update has no message to replace: the answer is ignored.
                    let mut future = f(owned);
                    match poll_once(&mut future)? {
                        Some(answer) => {
                            answer?;
                            continue;
                        }
                        None => Box::pin(future.map(|answer| answer.map(drop))),
                    }
                }
            };
            return Ok(Some(UpdateRest { pending, listeners: Arc::clone(&listeners), next: position + 1, event }));
        }
        Ok(None)
    }
}

/// The rest of an update's dispatch: the listener being awaited, then those after it.
struct UpdateRest<C: CustomMessage> {
    pending: BoxFuture<'static, Result<(), BoxError>>,
    listeners: Arc<Vec<(u64, Listener<C>)>>,
    next: usize,
    event: AgentEvent<C>,
}

impl<C: CustomMessage> UpdateRest<C> {
    async fn finish(self) -> Result<(), BoxError> {
        AssertUnwindSafe(self.pending).catch_unwind().await.map_err(panicked)??;
        for (_, listener) in &self.listeners[self.next..] {
            match listener {
                Listener::Sync(f) => {
                    std::panic::catch_unwind(AssertUnwindSafe(|| f(&self.event))).map_err(panicked)?;
                }
                Listener::Async(f) => {
                    AssertUnwindSafe(f(self.event.clone())).catch_unwind().await.map_err(panicked)??;
                }
                Listener::Replacing(f) => {
                    AssertUnwindSafe(f(self.event.clone())).catch_unwind().await.map_err(panicked)??;
                }
            }
        }
        Ok(())
    }
}

/// Polls `future` once (its waker does nothing: a pending future is polled again, with the real
/// waker, when it is awaited): its output when ready, `None` when pending.
fn poll_once<T>(future: &mut BoxFuture<'static, T>) -> Result<Option<T>, BoxError> {
    let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
    match std::panic::catch_unwind(AssertUnwindSafe(|| std::future::Future::poll(future.as_mut(), &mut cx))) {
        Ok(std::task::Poll::Ready(output)) => Ok(Some(output)),
        Ok(std::task::Poll::Pending) => Ok(None),
        Err(panic) => Err(panicked(panic)),
    }
}

#[async_trait]
impl<C: CustomMessage> EventSink<C> for AgentSink<C> {
    async fn emit(&mut self, event: AgentEvent<C>) -> Result<(), BoxError> {
        self.dispatch(event, false).await.map(drop)
    }

    fn emit_update(
        &mut self,
        delta: pi_ai::AssistantMessageEvent,
    ) -> Result<Option<BoxFuture<'_, Result<(), BoxError>>>, BoxError> {
        let event = AgentEvent::MessageUpdate { assistant_message_event: delta };
        Ok(self.dispatch_update(event)?.map(|rest| Box::pin(rest.finish()) as BoxFuture<'_, _>))
    }

    async fn emit_message_end(&mut self, message: AgentMessage<C>) -> Result<AgentMessage<C>, BoxError> {
        match self.dispatch(AgentEvent::MessageEnd { message }, true).await? {
            Some(AgentEvent::MessageEnd { message }) => Ok(message),
            Some(other) => Err(format!("message_end dispatch returned {}", other.kind()).into()),
            None => Err("message_end dispatch returned no event".into()),
        }
    }
}

fn panicked(p: Box<dyn std::any::Any + Send>) -> BoxError {
    format!("listener panicked: {}", panic_message(&p)).into()
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
