//! Listeners: registration, and the event sink that updates the state and then calls them in order.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use futures::FutureExt;
use futures::future::BoxFuture;

use super::{Agent, Inner, lock};
use crate::agent_loop::EventSink;
use crate::event::AgentEvent;
use crate::hooks::BoxError;
use crate::message::CustomMessage;

pub(super) type SyncListener<C> = Arc<dyn Fn(&AgentEvent<C>) + Send + Sync>;
pub(super) type AsyncListener<C> = Arc<dyn Fn(AgentEvent<C>) -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync>;

#[derive(Clone)]
pub(super) enum Listener<C> {
    Sync(SyncListener<C>),
    Async(AsyncListener<C>),
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

    fn add_listener(&self, listener: Listener<C>) -> Unsubscribe {
        let id = self.inner.next_listener.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.listeners).push((id, listener));
        let inner = Arc::downgrade(&self.inner);
        Unsubscribe(Box::new(move || {
            if let Some(inner) = inner.upgrade() {
                lock(&inner.listeners).retain(|(i, _)| *i != id);
            }
        }))
    }
}

/// Updates the state for each event, then calls the listeners in order.
pub(super) struct AgentSink<C: CustomMessage> {
    pub(super) inner: Arc<Inner<C>>,
}

#[async_trait]
impl<C: CustomMessage> EventSink<C> for AgentSink<C> {
    async fn emit(&mut self, event: AgentEvent<C>) -> Result<(), BoxError> {
        lock(&self.inner.state).apply(&event);
        let listeners: Vec<Listener<C>> = lock(&self.inner.listeners).iter().map(|(_, l)| l.clone()).collect();
        for listener in listeners {
            match listener {
                Listener::Sync(f) => {
                    std::panic::catch_unwind(AssertUnwindSafe(|| f(&event)))
                        .map_err(|p| -> BoxError { format!("listener panicked: {}", panic_message(&p)).into() })?;
                }
                Listener::Async(f) => {
                    AssertUnwindSafe(f(event.clone()))
                        .catch_unwind()
                        .await
                        .map_err(|p| -> BoxError { format!("listener panicked: {}", panic_message(&p)).into() })??;
                }
            }
        }
        Ok(())
    }
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
