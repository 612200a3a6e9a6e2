//! The prologue every built-in tool's `execute` shares, written once: the cancellation check
//! before (and between) operations, and the blocking section (file system walks, reads, matching)
//! run on the blocking pool while the call stays cancellable. Arguments are read with the helpers
//! of [`super::args`].
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use pi_agent_core::ToolContext;
//! use pi_coding_agent::tools::prologue::run_blocking;
//! let n = run_blocking(&ToolContext::detached(), "demo", |_cancel| Ok(2 + 2)).await;
//! assert_eq!(n.ok(), Some(4));
//! # });
//! ```

use pi_agent_core::{ToolContext, ToolError};
use tokio_util::sync::CancellationToken;

use super::args::aborted;

/// `Operation aborted` when the call was cancelled (pi checks `signal.aborted` before and between
/// a tool's operations).
pub fn check_cancelled(ctx: &ToolContext) -> Result<(), ToolError> {
    check_token(ctx.cancel_token())
}

/// [`check_cancelled`] inside a blocking section, on the token [`run_blocking`] hands it.
pub fn check_token(cancel: &CancellationToken) -> Result<(), ToolError> {
    if cancel.is_cancelled() { Err(aborted()) } else { Ok(()) }
}

/// Runs `work` on the blocking pool, after a cancellation check. A cancellation while it runs
/// answers `Operation aborted` at once (the work sees the token and stops at its next check); a
/// panic in it is `<tool> failed: …`.
pub async fn run_blocking<T, F>(ctx: &ToolContext, tool: &str, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(CancellationToken) -> Result<T, ToolError> + Send + 'static,
{
    check_cancelled(ctx)?;
    let cancel = ctx.cancel_token().clone();
    let handle = tokio::task::spawn_blocking(move || work(cancel));
    tokio::select! {
        _ = ctx.cancel_token().cancelled() => Err(aborted()),
        joined = handle => joined.map_err(|e| ToolError::new(format!("{tool} failed: {e}")))?,
    }
}

/// Runs CPU work on the blocking pool to completion (never abandoned: a tool holding the file
/// mutation queue must not leave it mid-operation); a panic in it is `<tool> failed: …`.
pub async fn compute_blocking<T, F>(tool: &str, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.map_err(|e| ToolError::new(format!("{tool} failed: {e}")))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_cancelled_call_does_no_work() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let ctx = ToolContext::new(cancel, None);
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let out = run_blocking(&ctx, "t", move |_| {
            flag.store(true, Ordering::SeqCst);
            Ok(())
        })
        .await;
        assert_eq!(out.err().map(|e| e.to_string()), Some("Operation aborted".to_owned()));
        assert!(!ran.load(Ordering::SeqCst));
        assert!(check_cancelled(&ctx).is_err());
    }

    #[tokio::test]
    async fn cancelling_while_blocked_answers_at_once() {
        let cancel = CancellationToken::new();
        let ctx = ToolContext::new(cancel.clone(), None);
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let call = run_blocking(&ctx, "t", move |_| {
            let _ = started_tx.send(());
            // Blocks until the test releases it, after the call has already answered.
            let _ = release_rx.recv();
            Ok(1)
        });
        let canceller = async {
            let _ = started_rx.await;
            cancel.cancel();
        };
        let (out, ()) = tokio::join!(call, canceller);
        assert_eq!(out.err().map(|e| e.to_string()), Some("Operation aborted".to_owned()));
        let _ = release_tx.send(());
    }

    #[tokio::test]
    async fn a_panic_in_the_blocking_section_is_an_error() {
        let out: Result<(), ToolError> = run_blocking(&ToolContext::detached(), "grep", |_| panic!("boom")).await;
        assert!(out.err().is_some_and(|e| e.to_string().starts_with("grep failed: ")));
        let computed: Result<(), ToolError> = compute_blocking("edit", || panic!("boom")).await;
        assert!(computed.err().is_some_and(|e| e.to_string().starts_with("edit failed: ")));
    }
}
