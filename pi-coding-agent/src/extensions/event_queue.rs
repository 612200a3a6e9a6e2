//! The events pi emits without awaiting them (`void this.emit(…)`, `queueMicrotask`):
//! `mcp_servers_change` and `ui_prompt_start` / `ui_prompt_end`. They go through one queue per
//! runtime, emitted in order by one task, so they reach handlers in the order they happened.
//! A caller may wait until its event was delivered (a UI prompt does, so its events have reached
//! the handlers before the prompt's caller resumes, as pi's microtasks have).

use std::sync::{Arc, Weak};

use tokio::sync::oneshot;

use super::api::ExtensionRecord;
use super::events::NotifyEvent;
use super::runtime::{Runtime, lock};

/// One queued event and who waits for its delivery.
pub(crate) type Queued = (NotifyEvent, Option<oneshot::Sender<()>>);

tokio::task_local! {
    /// Set while the queue's task runs handlers: a handler that queues an event must not wait
    /// for it (the task would wait for itself).
    static IN_QUEUE: ();
}

/// How the queue's task delivers an event: the runner's `emit` over these extensions and this
/// runtime (set by the runner, which this module does not import).
pub(crate) type Emit =
    fn(Vec<Arc<ExtensionRecord>>, Arc<Runtime>, NotifyEvent) -> futures::future::BoxFuture<'static, ()>;

static EMIT: std::sync::OnceLock<Emit> = std::sync::OnceLock::new();

/// Sets how queued events are delivered (once; the runner's emit).
pub(crate) fn set_emitter(emit: Emit) {
    let _ = EMIT.set(emit);
}

/// Starts the queue's task for `runtime` (once; later calls keep the running one). The task
/// holds the runtime weakly and ends with it.
pub(crate) fn start(runtime: &Arc<Runtime>, extensions: Vec<Arc<ExtensionRecord>>) {
    let mut slot = lock(&runtime.event_queue);
    if slot.as_ref().is_some_and(|tx| !tx.is_closed()) {
        return;
    }
    let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
    let Some(&emit) = EMIT.get() else { return };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Queued>();
    let weak: Weak<Runtime> = Arc::downgrade(runtime);
    handle.spawn(IN_QUEUE.scope((), async move {
        while let Some((event, ack)) = rx.recv().await {
            let Some(runtime) = weak.upgrade() else { break };
            emit(extensions.clone(), runtime, event).await;
            if let Some(ack) = ack {
                // The waiter may have been cancelled; nothing waits for this answer then.
                let _ = ack.send(());
            }
        }
    }));
    *slot = Some(tx);
}

/// Queues `event`; with `wait`, returns a receiver that resolves once it was delivered (`None`
/// when nothing can wait: no queue, or called from a handler the queue runs).
pub(crate) fn push(runtime: &Runtime, event: NotifyEvent, wait: bool) -> Option<oneshot::Receiver<()>> {
    let tx = lock(&runtime.event_queue).clone()?;
    let wait = wait && IN_QUEUE.try_with(|_| ()).is_err();
    let (ack, rx) = if wait {
        let (ack, rx) = oneshot::channel();
        (Some(ack), Some(rx))
    } else {
        (None, None)
    };
    tx.send((event, ack)).ok()?;
    rx
}
