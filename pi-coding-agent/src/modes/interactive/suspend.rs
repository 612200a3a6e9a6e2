//! Ctrl+Z: suspend to the background as pi does (`handleCtrlZ`): the TUI is stopped (terminal
//! restored, input no longer read), SIGTSTP goes to our process group, and once SIGCONT lets the
//! process go on (`fg`, `kill -CONT`) the TUI starts again with a full redraw.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use pi_tui::{CrosstermTerminal, Tui};

use super::app::App;
use super::guard;

impl App {
    /// Stops the UI, stops the process group, and redraws everything once continued.
    pub(crate) fn suspend(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        if let Err(e) = tui.stop() {
            tracing::warn!(error = %e, "stopping the terminal UI before suspending failed");
        }
        // The terminal is restored: a signal while stopped has nothing to undo.
        guard::disarm();
        // pid 0: every process of our group, as pi's `process.kill(0, "SIGTSTP")`. The default
        // action stops us here; the call returns once SIGCONT arrived. In an orphaned process
        // group the kernel drops SIGTSTP and this returns at once, as it does for pi.
        let stopped = kill(Pid::from_raw(0), Signal::SIGTSTP);
        guard::arm();
        if let Err(e) = tui.start() {
            self.show_error(&format!("cannot restart the terminal UI: {e}"));
        }
        if let Err(e) = stopped {
            self.show_error(&format!("Suspend failed: {e}"));
        }
        tui.request_render(true);
        self.on_resize(tui);
    }
}
