//! Resources providers keep per agent session, released when the session ends (pi-ai's
//! `session-resources.js`): the Codex WebSocket cache, and whatever an application registers.

use std::sync::{Arc, Mutex, PoisonError};

/// A cleanup run for each session that ends.
pub type SessionCleanup = Box<dyn Fn(&str) + Send + Sync>;

/// A registered cleanup, shared so it runs outside the registry's lock.
type SharedCleanup = Arc<dyn Fn(&str) + Send + Sync>;

static CLEANUPS: Mutex<Vec<(u64, SharedCleanup)>> = Mutex::new(Vec::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Registers `cleanup` to run whenever a session's resources are released; the returned guard's
/// [`CleanupRegistration::unregister`] removes it again.
pub fn register_session_resource_cleanup(cleanup: SessionCleanup) -> CleanupRegistration {
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    CLEANUPS.lock().unwrap_or_else(PoisonError::into_inner).push((id, Arc::from(cleanup)));
    CleanupRegistration(id)
}

/// A registered cleanup (see [`register_session_resource_cleanup`]).
#[derive(Debug)]
pub struct CleanupRegistration(u64);

impl CleanupRegistration {
    /// Removes the cleanup.
    pub fn unregister(self) {
        CLEANUPS.lock().unwrap_or_else(PoisonError::into_inner).retain(|(id, _)| *id != self.0);
    }
}

/// Releases what the providers hold for `session_id` (pi's `cleanupSessionResources`): closes its
/// cached Codex WebSockets, then runs every registered cleanup. A panicking cleanup is reported
/// and the others still run. The cleanups run outside the registry's lock, so one may register or
/// unregister cleanups itself.
pub async fn cleanup_session_resources(session_id: &str) {
    crate::providers::openai_codex_responses::close_websocket_sessions(Some(session_id)).await;
    let cleanups: Vec<_> = CLEANUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|(_, cleanup)| Arc::clone(cleanup))
        .collect();
    for cleanup in &cleanups {
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cleanup(session_id))).is_err() {
            tracing::warn!("a session resource cleanup panicked");
        }
    }
}
