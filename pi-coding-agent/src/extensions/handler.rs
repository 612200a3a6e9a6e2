//! The handler types an extension registers ([`Handler`], [`SyncHandler`]) and the future of an
//! answer given at once.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::errors::BoxError;
use super::events::ExtensionEvent;
use super::runtime::ExtensionContext;

/// The future a handler returns: `Ok(None)` is pi's `undefined` (no change).
pub type HandlerFuture<'a, R> = BoxFuture<'a, Result<Option<R>, BoxError>>;

/// A registered handler of event `E`.
pub type Handler<E> = Arc<
    dyn for<'a> Fn(&'a mut E, &'a ExtensionContext) -> HandlerFuture<'a, <E as ExtensionEvent>::Output> + Send + Sync,
>;

/// A handler of event `E` that answers at once (registered with
/// [`ExtensionApi::on_sync`](super::ExtensionApi::on_sync) or
/// [`ExtensionApi::on_notify_sync`](super::ExtensionApi::on_notify_sync)): `message_update`, the
/// event of every streamed delta, calls it without a future.
pub type SyncHandler<E> =
    Arc<dyn Fn(&mut E, &ExtensionContext) -> Result<Option<<E as ExtensionEvent>::Output>, BoxError> + Send + Sync>;

/// The future of a handler's answer: no allocation for "no change" (a future of no size), the
/// answer in a ready future otherwise.
pub(crate) fn answered<'a, R: Send + 'a>(result: Result<Option<R>, BoxError>) -> HandlerFuture<'a, R> {
    match result {
        Ok(None) => Box::pin(NoChange(std::marker::PhantomData)),
        other => Box::pin(std::future::ready(other)),
    }
}

/// A handler's "no change" answer as a future of no size (boxing it allocates nothing).
struct NoChange<R>(std::marker::PhantomData<fn() -> R>);

impl<R> std::future::Future for NoChange<R> {
    type Output = Result<Option<R>, BoxError>;

    fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        std::task::Poll::Ready(Ok(None))
    }
}
