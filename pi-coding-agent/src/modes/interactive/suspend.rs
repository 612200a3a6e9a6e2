//! Suspending to the background as pi does (`handleCtrlZ`), from Ctrl+Z or an external
//! `kill -TSTP`: the TUI is stopped (terminal restored: raw mode off, cursor shown, alternate
//! screen, bracketed paste, keyboard protocols and light/dark reports off), the process group is
//! stopped, and once SIGCONT lets the process go on (`fg`, `kill -CONT`) the TUI starts again
//! with a full redraw. A SIGINT while suspended is ignored, as pi ignores it (a Ctrl+C meant for
//! the shell does not kill the stopped process); SIGTERM and SIGHUP received while stopped take
//! effect on SIGCONT through the event loop's normal shutdown, which restores the terminal.
//!
//! The event loop listens for SIGTSTP (to restore the terminal before stopping), so SIGTSTP's
//! default action no longer stops the process and this port cannot set it back without `unsafe`.
//! The group is stopped with SIGSTOP instead, which stops it the same way; as the kernel drops
//! SIGTSTP for an orphaned process group (nobody could continue it), no SIGSTOP is sent then and
//! the call returns at once, as pi's does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, getpgrp, getsid};
use pi_tui::{CrosstermTerminal, Tui};

use super::app::App;
use super::guard;
use super::theme_controller;

/// Set by every SIGINT (a signal-safe flag, written at delivery); cleared after a suspend so a
/// SIGINT received while stopped is ignored.
pub(crate) fn sigint_flag() -> &'static Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        if let Err(e) = signal_hook::flag::register(Signal::SIGINT as i32, flag.clone()) {
            tracing::warn!(error = %e, "cannot watch SIGINT");
        }
        flag
    })
}

/// How long after a resume a SIGINT still counts as one sent while suspended. A SIGINT sent to
/// the stopped process stays pending until SIGCONT, and then any of our threads may take it: its
/// handler can run after [`App::suspend`] returned, so the flag alone cannot tell it from a new
/// one. An interrupt sent within this time of `fg` is ignored too, which nobody can tell apart.
const RESUME_GRACE: Duration = Duration::from_millis(500);

/// When the process last went on after a suspend.
static RESUMED_AT: Mutex<Option<Instant>> = Mutex::new(None);

/// Whether a SIGINT the event loop sees now is one that came while suspended (pi ignores those).
pub(crate) fn sigint_came_while_suspended() -> bool {
    let resumed = *RESUMED_AT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    resumed.is_some_and(|at| at.elapsed() < RESUME_GRACE)
}

/// `(ppid, pgrp, session)` of a process from `/proc/<pid>/stat`.
fn stat_ids(pid: &str) -> Option<(i32, i32, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit_once(") ")?.1.split(' ').skip(1);
    let mut next = || fields.next().and_then(|f| f.parse::<i32>().ok());
    Some((next()?, next()?, next()?))
}

/// POSIX's orphaned process group: no member has a parent in another group of the same session.
fn group_is_orphaned() -> bool {
    let (group, session) = (getpgrp().as_raw(), getsid(None).map(Pid::as_raw).unwrap_or(-1));
    let Ok(dir) = std::fs::read_dir("/proc") else { return false };
    let pids: Vec<String> = dir.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    !pids.iter().filter_map(|p| stat_ids(p)).filter(|(_, pgrp, _)| *pgrp == group).any(|(ppid, _, _)| {
        stat_ids(&ppid.to_string())
            .is_some_and(|(_, parent_group, parent_session)| parent_group != group && parent_session == session)
    })
}

/// Stops the process group; returns once the process was continued (or at once when the group is
/// orphaned).
fn stop_process_group() -> nix::Result<()> {
    if group_is_orphaned() {
        return Ok(());
    }
    // pid 0: every process of our group, as pi's `process.kill(0, "SIGTSTP")`. We stop inside this
    // call and go on once SIGCONT arrived.
    kill(Pid::from_raw(0), Signal::SIGSTOP)
}

impl App {
    /// Stops the UI, stops the process group, and redraws everything once continued.
    pub(crate) fn suspend(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        // pi's `beforeTerminalStop` closes the transcript search.
        self.close_search(tui);
        theme_controller::before_stop(tui);
        if let Err(e) = tui.stop() {
            tracing::warn!(error = %e, "stopping the terminal UI before suspending failed");
        }
        // The terminal is restored: a signal while stopped has nothing to undo.
        guard::disarm();
        let flag = sigint_flag();
        let interrupted_before = flag.swap(false, Ordering::SeqCst);
        let stopped = stop_process_group();
        *RESUMED_AT.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
        // A SIGINT that came while suspended is delivered as we continue (here, or on another
        // thread a little later: see `RESUME_GRACE`): pi ignores it.
        flag.store(interrupted_before, Ordering::SeqCst);
        guard::arm();
        if let Err(e) = tui.start() {
            self.show_error(&format!("cannot restart the terminal UI: {e}"));
        }
        theme_controller::after_start(tui);
        if let Err(e) = stopped {
            self.show_error(&format!("Suspend failed: {e}"));
        }
        tui.request_render(true);
        self.on_resize(tui);
    }
}
