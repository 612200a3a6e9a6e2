//! Restoring the terminal on every exit path: normal stop, a panic anywhere in the process, and
//! fatal signals (SIGHUP when the terminal closes, SIGTERM).

use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the interactive terminal is active (raw mode, alternate screen).
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Marks the terminal active and installs (once) a panic hook that restores it before the
/// default hook prints the panic, so the message lands on a usable terminal.
pub(crate) fn arm() {
    ACTIVE.store(true, Ordering::SeqCst);
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // Renderer panics are caught and drawn as error lines; only the UI thread's own
            // panics end the UI. A panic on a worker thread (a tool, an extension) is reported
            // by its owner, so the terminal stays as it is.
            if crate::render::inside_isolated_renderer() {
                tracing::warn!(panic = %info, "an extension renderer panicked");
                return;
            }
            if std::thread::current().name() == Some("main") {
                restore();
            }
            previous(info);
        }));
    });
}

/// Restores the terminal if it is still active (idempotent).
pub(crate) fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        pi_tui::emergency_restore();
    }
}

/// Marks the terminal restored by the normal path (`Tui::stop`).
pub(crate) fn disarm() {
    ACTIVE.store(false, Ordering::SeqCst);
}
