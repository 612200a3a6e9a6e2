//! pi's `ProgramStatusReporter`: the interactive mode's state reported to terminals that support
//! the Program Status Protocol (OSC 7501): `working` during runs and compaction, `blocked` while a
//! dialog waits for the user, then `done`, `error` or `idle` once the run settles. Reports carry
//! only the session name, dialog titles and the first line of errors, never prompts or output.

use pi_agent_core::{AgentEvent, AgentMessage};
use pi_ai::StopReason;
use pi_tui::program_status::{BlockedKind, ProgramState, ProgramStatus};

use pi_tui::{CrosstermTerminal, Terminal, Tui};

use super::app::App;
use crate::sdk::{CompactionReason, SessionEvent};

/// The name reported as `app` (pi's `APP_NAME`).
const APP_NAME: &str = "pi";

pub(crate) use crate::ui::BlockedStatus as Blocked;

/// State and outcome of the session's runs, and the dialogs that block on the user.
#[derive(Debug)]
pub(crate) struct ProgramStatusReporter {
    run_active: bool,
    compacting: bool,
    /// The current run's outcome, reported once it settles.
    run_result: ProgramStatus,
    /// The status while no run is active.
    resting: ProgramStatus,
    /// Open dialogs by source, in the order they opened; the last is reported.
    blocked: Vec<(String, Blocked)>,
    last: Option<ProgramStatus>,
    pending: Option<ProgramStatus>,
}

impl Default for ProgramStatusReporter {
    fn default() -> Self {
        Self {
            run_active: false,
            compacting: false,
            run_result: ProgramStatus::new(ProgramState::Done),
            resting: ProgramStatus::new(ProgramState::Idle),
            blocked: Vec::new(),
            last: None,
            pending: None,
        }
    }
}

/// pi's `firstLine`: an error's first line, trimmed, or "Error".
fn first_line(text: Option<&str>) -> String {
    let line = text.and_then(|t| t.split('\n').next()).map(str::trim).unwrap_or("");
    if line.is_empty() { "Error".to_owned() } else { line.to_owned() }
}

fn error(message: Option<&str>) -> ProgramStatus {
    ProgramStatus::new(ProgramState::Error).with_message(Some(first_line(message)))
}

impl ProgramStatusReporter {
    /// Follows a session event; `session_name` reads the session's name, only for the events that
    /// change what is reported (not for streamed deltas).
    pub(crate) fn handle_event(&mut self, event: &SessionEvent, session_name: impl FnOnce() -> Option<String>) {
        match event {
            SessionEvent::Agent(AgentEvent::AgentStart) => {
                self.run_active = true;
                self.run_result = ProgramStatus::new(ProgramState::Done);
            }
            // The latest response decides the outcome: a retried error is replaced by its retry.
            SessionEvent::Agent(AgentEvent::MessageEnd { message: AgentMessage::Assistant(a) }) => {
                self.run_result = if a.stop_reason == StopReason::Error {
                    error(a.error_message.as_deref())
                } else {
                    ProgramStatus::new(ProgramState::Done)
                };
            }
            SessionEvent::CompactionStart { .. } => self.compacting = true,
            SessionEvent::CompactionEnd(end) => {
                self.compacting = false;
                if self.run_active {
                    // A failed recovery compaction ends the run unless a later response succeeds.
                    if end.aborted {
                        self.run_result = ProgramStatus::new(ProgramState::Idle);
                    } else if end.error_message.is_some() {
                        self.run_result = error(end.error_message.as_deref());
                    }
                } else if end.aborted {
                    self.resting = ProgramStatus::new(ProgramState::Idle);
                } else if end.reason == CompactionReason::Manual {
                    self.resting = match &end.error_message {
                        Some(e) => error(Some(e)),
                        None => ProgramStatus::new(ProgramState::Done),
                    };
                }
            }
            SessionEvent::AgentSettled { aborted } => {
                self.run_active = false;
                self.resting = if *aborted { ProgramStatus::new(ProgramState::Idle) } else { self.run_result.clone() };
            }
            // The session name is part of working and done reports.
            SessionEvent::SessionInfoChanged { .. } => {}
            _ => return,
        }
        self.report(session_name());
    }

    /// Reports `blocked` for `source` until it is cleared with `None`; reopening a source moves
    /// it last.
    pub(crate) fn set_blocked(&mut self, source: &str, status: Option<Blocked>, session_name: Option<String>) {
        let current = self.blocked.iter().position(|(s, _)| s == source);
        if current.is_none() && status.is_none() {
            return;
        }
        if let Some(at) = current {
            self.blocked.remove(at);
        }
        if let Some(status) = status {
            self.blocked.push((source.to_owned(), status));
        }
        self.report(session_name);
    }

    /// Whether `source` is reported as blocked now with `status`.
    pub(crate) fn is_blocked_by(&self, source: &str, status: Option<&Blocked>) -> bool {
        self.blocked.iter().find(|(s, _)| s == source).map(|(_, b)| b) == status
    }

    /// Forgets the previous session's run (after switching sessions).
    pub(crate) fn reset(&mut self, session_name: Option<String>) {
        self.run_active = false;
        self.compacting = false;
        self.run_result = ProgramStatus::new(ProgramState::Done);
        self.resting = ProgramStatus::new(ProgramState::Idle);
        self.report(session_name);
    }

    /// Computes the status; a change is kept for [`ProgramStatusReporter::take_pending`].
    pub(crate) fn report(&mut self, session_name: Option<String>) {
        let mut status = self.current(session_name);
        status.app = Some(APP_NAME.to_owned());
        if self.last.as_ref() != Some(&status) {
            self.last = Some(status.clone());
            self.pending = Some(status);
        }
    }

    /// The status to send to the terminal, once per change.
    pub(crate) fn take_pending(&mut self) -> Option<ProgramStatus> {
        self.pending.take()
    }

    fn current(&self, session_name: Option<String>) -> ProgramStatus {
        if let Some((_, blocked)) = self.blocked.last() {
            let mut status = ProgramStatus::new(ProgramState::Blocked).with_message(Some(blocked.message.clone()));
            status.kind = Some(blocked.kind);
            return status;
        }
        if self.compacting {
            return ProgramStatus::new(ProgramState::Working).with_message(Some("Compacting context".to_owned()));
        }
        let status = if self.run_active { ProgramStatus::new(ProgramState::Working) } else { self.resting.clone() };
        match status.state {
            ProgramState::Working | ProgramState::Done => status.with_message(session_name),
            _ => status,
        }
    }
}

/// The source of the extension dialog on top (pi's `extension-dialog`).
const EXTENSION_DIALOG: &str = "extension-dialog";

impl App {
    /// Forgets the previous session's run (pi's `rebindCurrentSession`).
    pub(crate) fn reset_program_status(&mut self) {
        self.program_status.reset(self.session.session_name());
    }

    /// An overlay opened with pi's `blocked` option reports it until it is done.
    pub(crate) fn set_overlay_blocked(&mut self, token: u64, blocked: Option<Blocked>) {
        let source = format!("extension-overlay:{token}");
        self.program_status.set_blocked(&source, blocked, self.session.session_name());
    }

    /// A login waits for the user while its dialog is open (`None`: it ended).
    pub(crate) fn set_login_blocked(&mut self, provider_name: Option<&str>) {
        let blocked = provider_name.map(|name| Blocked::new(BlockedKind::Auth, format!("Log in to {name}")));
        self.program_status.set_blocked("login", blocked, self.session.session_name());
    }

    /// Reports the extension dialog on top (if it blocks), then sends a changed status to the
    /// terminal. Called once per turn of the UI loop.
    pub(crate) fn sync_program_status(&mut self, tui: &mut Tui<CrosstermTerminal>) {
        let top = self.dialog.as_ref().filter(|d| d.extension).and_then(|d| d.blocked.clone());
        if !self.program_status.is_blocked_by(EXTENSION_DIALOG, top.as_ref()) {
            self.program_status.set_blocked(EXTENSION_DIALOG, top, self.session.session_name());
        }
        if let Some(status) = self.program_status.take_pending() {
            tui.terminal_mut().set_program_status(&status);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(stop: StopReason, error: Option<&str>) -> SessionEvent {
        let message = pi_ai::AssistantMessage {
            stop_reason: stop,
            error_message: error.map(str::to_owned),
            ..Default::default()
        };
        SessionEvent::Agent(AgentEvent::MessageEnd { message: AgentMessage::Assistant(message.into()) })
    }

    fn taken(r: &mut ProgramStatusReporter) -> Option<(ProgramState, Option<String>)> {
        r.take_pending().map(|s| (s.state, s.message))
    }

    #[test]
    fn a_run_is_working_then_done_or_its_errors_first_line() {
        let mut r = ProgramStatusReporter::default();
        r.report(None);
        assert_eq!(taken(&mut r), Some((ProgramState::Idle, None)));
        r.handle_event(&SessionEvent::Agent(AgentEvent::AgentStart), || Some("named".into()));
        assert_eq!(taken(&mut r), Some((ProgramState::Working, Some("named".into()))));
        r.handle_event(&assistant(StopReason::Error, Some("\n  boom  \nmore")), || Some("named".into()));
        // Unchanged while the run is active: nothing new to send.
        assert_eq!(taken(&mut r), None);
        r.handle_event(&SessionEvent::AgentSettled { aborted: false }, || Some("named".into()));
        assert_eq!(taken(&mut r), Some((ProgramState::Error, Some("Error".into()))));
        r.handle_event(&SessionEvent::Agent(AgentEvent::AgentStart), || None);
        r.handle_event(&assistant(StopReason::Error, Some("rate limited\ndetails")), || None);
        r.handle_event(&assistant(StopReason::Stop, None), || None);
        r.handle_event(&SessionEvent::AgentSettled { aborted: false }, || None);
        assert_eq!(taken(&mut r), Some((ProgramState::Done, None)));
        r.handle_event(&SessionEvent::Agent(AgentEvent::AgentStart), || None);
        r.handle_event(&SessionEvent::AgentSettled { aborted: true }, || None);
        assert_eq!(taken(&mut r), Some((ProgramState::Idle, None)));
    }

    #[test]
    fn the_latest_blocking_dialog_wins_until_it_closes() {
        let mut r = ProgramStatusReporter::default();
        r.set_blocked("login", Some(Blocked::new(BlockedKind::Auth, "Log in to X")), None);
        r.set_blocked("extension-dialog", Some(Blocked::new(BlockedKind::Permission, "Delete?")), None);
        let s = r.take_pending().expect("a report");
        assert_eq!(
            (s.state, s.kind, s.message.as_deref()),
            (ProgramState::Blocked, Some(BlockedKind::Permission), Some("Delete?"))
        );
        r.set_blocked("extension-dialog", None, None);
        assert_eq!(taken(&mut r), Some((ProgramState::Blocked, Some("Log in to X".into()))));
        // Clearing a source that is not blocking changes nothing.
        r.set_blocked("other", None, None);
        assert_eq!(taken(&mut r), None);
        r.set_blocked("login", None, Some("s".into()));
        assert_eq!(taken(&mut r), Some((ProgramState::Idle, None)));
    }
}
