//! The UI task: owns the terminal and the component tree, waits on one channel, draws at most one
//! frame per tick, restores the terminal on every way out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tui::{CrosstermTerminal, ScreenMode, Terminal, TerminalEvent, Tui};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::InteractiveOptions;
use super::app::{App, UiEvent};
use super::guard;
use crate::sdk::AgentSession;

/// Frame interval while something changes (pi's 16 ms).
const TICK: Duration = Duration::from_millis(16);
/// Wake-up interval while idle (resize checks).
const IDLE: Duration = Duration::from_millis(250);

/// Runs the interactive mode on the process's terminal until the user quits; returns the exit
/// status.
pub async fn run_interactive(session: AgentSession, options: InteractiveOptions) -> i32 {
    run_interactive_on(session, options, CrosstermTerminal::new()).await
}

/// Runs the interactive mode on `terminal` (for example [`CrosstermTerminal::from_io`] over a
/// pseudo-terminal the caller opened). Signals and the panic hook restore only the process's own
/// terminal.
pub async fn run_interactive_on(
    session: AgentSession,
    options: InteractiveOptions,
    terminal: CrosstermTerminal,
) -> i32 {
    let local = tokio::task::LocalSet::new();
    local.run_until(run_local(session, options, terminal)).await
}

async fn run_local(session: AgentSession, options: InteractiveOptions, mut terminal: CrosstermTerminal) -> i32 {
    let (tx, rx) = unbounded_channel::<UiEvent>();
    let process_terminal = terminal.is_process_terminal();
    let wake = tx.clone();
    terminal.set_wakeup(Arc::new(move || {
        let _ = wake.send(UiEvent::Wake);
    }));
    let mode = if options.regular_screen { ScreenMode::Main } else { ScreenMode::Alt };
    let mut tui = Tui::new(terminal, mode);
    if process_terminal {
        guard::arm();
    }
    if let Err(e) = tui.start() {
        guard::restore();
        eprintln!("Error: cannot start the terminal UI: {e}");
        return 1;
    }
    // pi asks the terminal for its colours and builds the header once they arrived (≤ 100 ms).
    let held = super::theme_controller::startup_query(&mut tui);
    let mut app = App::new(session.clone(), tx.clone(), &options, &mut tui);
    // pi reports the status once the UI started, before extensions are bound.
    app.reset_program_status();
    app.sync_program_status(&mut tui);
    app.sync_theme_notifications(&mut tui);
    app.start(options).await;
    for ev in held {
        match ev {
            TerminalEvent::Input(data) => app.on_input(&mut tui, &data),
            TerminalEvent::Resize => app.on_resize(&mut tui),
        }
    }
    let code = event_loop(&mut app, &mut tui, rx).await;
    app.shutdown();
    // pi's `beforeTerminalStop`: no search box or highlights in the transcript left behind.
    app.close_search(&mut tui);
    super::theme_controller::before_stop(&mut tui);
    if let Err(e) = tui.stop() {
        tracing::warn!(error = %e, "stopping the terminal UI failed");
    }
    guard::disarm();
    guard::restore();
    session.dispose().await;
    if let Some(note) = &app.exit_note {
        eprintln!("{note}");
        return code;
    }
    if process_terminal && let Some(line) = app.resume_hint() {
        println!("{line}");
    }
    code
}

async fn event_loop(app: &mut App, tui: &mut Tui<CrosstermTerminal>, mut rx: UnboundedReceiver<UiEvent>) -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hup = signal(SignalKind::hangup()).ok();
    let mut term = signal(SignalKind::terminate()).ok();
    let mut winch = signal(SignalKind::window_change()).ok();
    // An external `kill -TSTP` suspends as Ctrl+Z does, restoring the terminal first.
    let mut tstp = signal(SignalKind::from_raw(nix::sys::signal::Signal::SIGTSTP as i32)).ok();
    // SIGINT (never Ctrl+C, which raw mode reads as a key) ends pi with the terminal restored,
    // except one that arrived while suspended: pi ignores those.
    let interrupted = super::suspend::sigint_flag();
    let mut int = signal(SignalKind::interrupt()).ok();
    let mut last_frame: Option<Instant> = None;
    loop {
        // Terminal input first: it is what the user waits for.
        while let Some(ev) = tui.terminal_mut().poll_event(Duration::ZERO) {
            match ev {
                TerminalEvent::Input(data) => {
                    if !app.consume_terminal_reply(tui, &data) {
                        app.on_input(tui, &data)
                    }
                }
                TerminalEvent::Resize => app.on_resize(tui),
            }
        }
        app.check_color_query_timeouts();
        // A theme chosen in /settings turns light/dark reports on or off (pi's `setThemeSetting`).
        app.sync_theme_notifications(tui);
        while let Ok(ev) = rx.try_recv() {
            app.on_event(tui, ev);
        }
        if let Some(code) = app.quit {
            return code;
        }
        app.sync_program_status(tui);
        app.tick(tui);
        let due = last_frame.is_none_or(|t| t.elapsed() >= TICK);
        if app.needs_frame() && due {
            app.before_frame(tui);
            if let Err(e) = tui.render_now() {
                guard::restore();
                eprintln!("Error: {e}");
                return 1;
            }
            last_frame = Some(Instant::now());
        }
        let mut wait = if app.needs_frame() || app.animating() { TICK } else { IDLE };
        for d in [tui.terminal().input_deadline(), super::theme_controller::next_deadline()].into_iter().flatten() {
            wait = wait.min(d.saturating_duration_since(Instant::now()));
        }
        tokio::select! {
            ev = rx.recv() => match ev {
                Some(ev) => app.on_event(tui, ev),
                None => return 0,
            },
            _ = tokio::time::sleep(wait) => {}
            _ = recv(&mut hup) => return 129,
            _ = recv(&mut term) => return 143,
            _ = recv(&mut winch) => app.on_resize(tui),
            _ = recv(&mut tstp) => app.suspend(tui),
            _ = recv(&mut int) => if interrupted.swap(false, std::sync::atomic::Ordering::SeqCst)
                && !super::suspend::sigint_came_while_suspended()
            {
                return 130;
            },
        }
    }
}

async fn recv(signal: &mut Option<tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}
