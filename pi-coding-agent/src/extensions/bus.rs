//! The event bus extensions share (pi's `pi.events`): `emit(channel, data)` calls every handler
//! registered on `channel` with `on(channel, handler)`, in registration order. A failing handler is
//! reported as the extension's error for event `events:<channel>`, and the others still run.
//!
//! pi has one bus per session; so does pi-rs, across processes: the session's JavaScript host
//! joins it (its `pi.events.emit` reaches the Rust handlers as `events.emit`, and what Rust
//! extensions emit is sent to the host's handlers). Within each side the order is pi's; the
//! other side hears an emit right after.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use serde_json::Value;

use super::errors::{BoxError, ExtensionError, panic_message};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where the bus reports a failing handler (the runtime's error listeners).
pub(crate) type ErrorSink = Arc<dyn Fn(ExtensionError) + Send + Sync>;

type BusHandler = Arc<dyn Fn(Value) -> Result<(), BoxError> + Send + Sync>;

struct Subscription {
    id: u64,
    channel: String,
    extension_path: String,
    handler: BusHandler,
}

/// Where an emit is passed on to the handlers in another process (the JavaScript host).
pub(crate) type RemoteBus = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// The session's bus: one per runner, shared by every extension.
#[derive(Default)]
pub(crate) struct EventBusState {
    subscriptions: Mutex<Vec<Subscription>>,
    next: AtomicU64,
    remote: Mutex<Option<RemoteBus>>,
}

/// One extension's view of the bus (pi's `EventBus`), reached as
/// [`ExtensionApi::events`](crate::extensions::ExtensionApi::events).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::sync::{Arc, Mutex};
/// use pi_coding_agent::extensions::{Extension, ExtensionRunner, FnExtension};
/// let heard = Arc::new(Mutex::new(Vec::new()));
/// let sink = heard.clone();
/// let listener = FnExtension::new("<inline:listener>", move |pi| {
///     let sink = sink.clone();
///     pi.events().on("greetings", move |data| { sink.lock().unwrap().push(data); Ok(()) });
///     Ok(())
/// });
/// let speaker = FnExtension::new("<inline:speaker>", |pi| {
///     pi.events().emit("greetings", serde_json::json!("hello"));
///     Ok(())
/// });
/// let exts: Vec<Arc<dyn Extension>> = vec![Arc::new(listener), Arc::new(speaker)];
/// let _runner = ExtensionRunner::load(exts, ".").await;
/// assert_eq!(*heard.lock().unwrap(), vec![serde_json::json!("hello")]);
/// # });
/// ```
#[derive(Clone)]
pub struct EventBus {
    pub(crate) state: Arc<EventBusState>,
    pub(crate) report: ErrorSink,
    pub(crate) extension_path: Arc<str>,
}

impl fmt::Debug for EventBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventBus").field("extension_path", &self.extension_path).finish()
    }
}

/// Removes a bus handler (pi's returned `() => void`). Dropping it does nothing.
#[derive(Clone)]
pub struct BusSubscription {
    state: Weak<EventBusState>,
    id: u64,
}

impl BusSubscription {
    /// Stops delivering to the handler.
    pub fn unsubscribe(&self) {
        if let Some(state) = self.state.upgrade() {
            lock(&state.subscriptions).retain(|s| s.id != self.id);
        }
    }
}

impl fmt::Debug for BusSubscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BusSubscription").field("id", &self.id).finish()
    }
}

impl EventBus {
    /// Calls every handler of `channel` with `data` (a copy each), the JavaScript extensions'
    /// included.
    pub fn emit(&self, channel: &str, data: Value) {
        let remote = lock(&self.state.remote).clone();
        self.state.emit_local(channel, &data, &self.report);
        if let Some(remote) = remote {
            remote(channel, &data);
        }
    }

    /// Registers a handler of `channel`.
    pub fn on(
        &self,
        channel: &str,
        handler: impl Fn(Value) -> Result<(), BoxError> + Send + Sync + 'static,
    ) -> BusSubscription {
        let id = self.state.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.state.subscriptions).push(Subscription {
            id,
            channel: channel.to_owned(),
            extension_path: self.extension_path.to_string(),
            handler: Arc::new(handler),
        });
        BusSubscription { state: Arc::downgrade(&self.state), id }
    }
}

impl EventBusState {
    /// Calls this process's handlers of `channel` (an emit of the JavaScript host arrives here).
    pub(crate) fn emit_local(&self, channel: &str, data: &Value, report: &ErrorSink) {
        let handlers: Vec<(String, BusHandler)> = lock(&self.subscriptions)
            .iter()
            .filter(|s| s.channel == channel)
            .map(|s| (s.extension_path.clone(), s.handler.clone()))
            .collect();
        for (path, handler) in handlers {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(data.clone())));
            let error = match outcome {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e.to_string(),
                Err(panic) => panic_message(panic),
            };
            report(ExtensionError::new(path, format!("events:{channel}"), error));
        }
    }

    /// Passes every emit of the Rust extensions on to `remote` from now on.
    pub(crate) fn set_remote(&self, remote: RemoteBus) {
        *lock(&self.remote) = Some(remote);
    }

    /// Removes every handler of an extension (on reload or a failed load).
    pub(crate) fn clear_extension(&self, extension_path: &str) {
        lock(&self.subscriptions).retain(|s| s.extension_path != extension_path);
    }
}
