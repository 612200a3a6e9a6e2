//! The `Terminal` trait, a capturing terminal for tests and the real crossterm-backed one.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use crate::ansi::replace_control_characters;
use crate::error::TuiError;
use crate::input_reader::{InputSource, ReaderThread};
use crate::keys::{StdinBuffer, StdinEvent, set_kitty_protocol_active};
use crate::program_status::{
    PROGRAM_STATUS_QUERY, ProgramState, ProgramStatus, format_program_status, is_program_status_reply,
};

/// Something that happened at the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalEvent {
    /// One complete input sequence (a key, a mouse report, or a re-wrapped bracketed paste).
    Input(String),
    /// The terminal size changed.
    Resize,
}

/// A program status is shown by the terminal (reported and not cleared yet), so an emergency
/// restore clears it.
static PROGRAM_STATUS_SHOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What the renderers need from a terminal. Default methods write pi's escape sequences.
pub trait Terminal {
    /// Enter raw mode and enable pi's input modes.
    fn start(&mut self) -> Result<(), TuiError> {
        Ok(())
    }
    /// Restore the terminal.
    fn stop(&mut self) -> Result<(), TuiError> {
        Ok(())
    }
    /// Write raw output.
    fn write(&mut self, data: &str);
    /// Width in columns.
    fn columns(&self) -> usize;
    /// Height in rows.
    fn rows(&self) -> usize;
    /// Whether the Kitty keyboard protocol was confirmed.
    fn kitty_protocol_active(&self) -> bool {
        false
    }
    /// Wait up to `timeout` for the next event.
    fn poll_event(&mut self, _timeout: Duration) -> Option<TerminalEvent> {
        None
    }
    /// Move the cursor by `lines` rows (positive = down).
    fn move_by(&mut self, lines: i64) {
        if lines > 0 {
            self.write(&format!("\x1b[{lines}B"));
        } else if lines < 0 {
            self.write(&format!("\x1b[{}A", -lines));
        }
    }
    /// Hide the hardware cursor.
    fn hide_cursor(&mut self) {
        self.write("\x1b[?25l");
    }
    /// Show the hardware cursor.
    fn show_cursor(&mut self) {
        self.write("\x1b[?25h");
    }
    /// Clear the current line from the cursor.
    fn clear_line(&mut self) {
        self.write("\x1b[K");
    }
    /// Clear from the cursor to the end of the screen.
    fn clear_from_cursor(&mut self) {
        self.write("\x1b[J");
    }
    /// Clear the screen and home the cursor.
    fn clear_screen(&mut self) {
        self.write("\x1b[2J\x1b[H");
    }
    /// Set the window title (control characters are replaced).
    fn set_title(&mut self, title: &str) {
        self.write(&format!("\x1b]0;{}\x07", replace_control_characters(title)));
    }
    /// Report the program's status (OSC 7501) when the terminal supports it; kept and reported
    /// again after a restart. The default does nothing.
    fn set_program_status(&mut self, _status: &ProgramStatus) {}
}

/// A terminal that records everything written, for tests. Input can be queued with
/// [`CaptureTerminal::push_input`].
#[derive(Debug, Clone)]
pub struct CaptureTerminal {
    /// Everything written since the last [`CaptureTerminal::take_output`].
    pub output: String,
    columns: usize,
    rows: usize,
    events: VecDeque<TerminalEvent>,
    /// Every program status reported, in order.
    pub program_statuses: Vec<ProgramStatus>,
}

impl CaptureTerminal {
    /// A capturing terminal of the given size.
    pub fn new(columns: usize, rows: usize) -> Self {
        Self { output: String::new(), columns, rows, events: VecDeque::new(), program_statuses: Vec::new() }
    }

    /// Change the size and queue a resize event.
    pub fn resize(&mut self, columns: usize, rows: usize) {
        self.columns = columns;
        self.rows = rows;
        self.events.push_back(TerminalEvent::Resize);
    }

    /// Queue an input sequence.
    pub fn push_input(&mut self, data: &str) {
        self.events.push_back(TerminalEvent::Input(data.to_string()));
    }

    /// Return and clear the captured output.
    pub fn take_output(&mut self) -> String {
        std::mem::take(&mut self.output)
    }
}

impl Terminal for CaptureTerminal {
    fn write(&mut self, data: &str) {
        self.output.push_str(data);
    }
    fn columns(&self) -> usize {
        self.columns
    }
    fn rows(&self) -> usize {
        self.rows
    }
    fn poll_event(&mut self, _timeout: Duration) -> Option<TerminalEvent> {
        self.events.pop_front()
    }
    fn set_program_status(&mut self, status: &ProgramStatus) {
        self.program_statuses.push(status.clone());
    }
}

/// The real terminal: crossterm for raw mode and size, stdout for output, and a thread reading
/// raw stdin bytes (crossterm's event reader would decode keys lossily) through a [`StdinBuffer`].
///
/// The terminal can be stopped and started again any number of times (an external editor, a
/// suspend): the reader thread waits on the input with `poll(2)` and a wake pipe, so after
/// [`Terminal::stop`] nothing reads the terminal, and bytes read before the stop are delivered
/// after the next [`Terminal::start`].
pub struct CrosstermTerminal {
    out: Box<dyn Write>,
    size: (usize, usize),
    /// The input: the process's stdin unless the terminal was built over other streams.
    source: Option<InputSource>,
    /// Size other than the process terminal's.
    size_fn: Option<Box<dyn Fn() -> (usize, usize)>>,
    /// Whether start/stop switch the process terminal's raw mode.
    manage_raw_mode: bool,
    tx: Sender<Vec<u8>>,
    input: Option<Receiver<Vec<u8>>>,
    reader: Option<ReaderThread>,
    buffer: StdinBuffer,
    pending: VecDeque<TerminalEvent>,
    kitty: bool,
    /// The Kitty protocol was pushed (`CSI > 7 u`) and not popped yet.
    kitty_pushed: bool,
    /// xterm's modifyOtherKeys is on (`CSI > 4 ; 2 m`).
    modify_other_keys: bool,
    /// DA1 replies owed to the keyboard protocol queries; later ones answer other queries (the
    /// colour query) and are passed on as input, as pi's `ProcessTerminal` does.
    owed_device_attributes: usize,
    /// The latest program status, kept across stops so a start reports it again.
    program_status: Option<ProgramStatus>,
    /// The terminal answered the program status query since the last start (or
    /// `PI_PROGRAM_STATUS=1`).
    program_status_supported: bool,
    /// The program status query was sent and its DA1 sentinel has not come back yet.
    program_status_query_pending: bool,
    started: bool,
    utf8_tail: Vec<u8>,
    wakeup: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Default for CrosstermTerminal {
    fn default() -> Self {
        Self::new()
    }
}

impl CrosstermTerminal {
    /// A terminal on the process's stdin/stdout (not started).
    pub fn new() -> Self {
        let (tx, rx) = channel();
        Self {
            out: Box::new(std::io::stdout()),
            size: Self::query_size(),
            source: None,
            size_fn: None,
            manage_raw_mode: true,
            tx,
            input: Some(rx),
            reader: None,
            buffer: StdinBuffer::new(escape_timeout()),
            pending: VecDeque::new(),
            kitty: false,
            kitty_pushed: false,
            modify_other_keys: false,
            owed_device_attributes: 0,
            program_status: None,
            program_status_supported: false,
            program_status_query_pending: false,
            started: false,
            utf8_tail: Vec::new(),
            wakeup: None,
        }
    }

    /// A terminal over a descriptor the caller opened (a pseudo-terminal's slave side): `input`
    /// is polled like the process's stdin, so the terminal stops and restarts cleanly; `output`
    /// receives the frames, `size` reports columns and rows. Raw mode is the caller's business.
    pub fn from_fd(input: OwnedFd, output: Box<dyn Write>, size: Box<dyn Fn() -> (usize, usize)>) -> Self {
        let mut t = Self::new();
        t.size = size();
        t.out = output;
        t.source = Some(InputSource::Fd(Arc::new(input)));
        t.size_fn = Some(size);
        t.manage_raw_mode = false;
        t
    }

    /// A terminal over other streams than the process's stdio: `input` is read on a thread of its
    /// own until it ends (a reader cannot be polled, so this terminal cannot hand its input to
    /// another program; prefer [`CrosstermTerminal::from_fd`]), `output` receives the frames,
    /// `size` reports columns and rows. Raw mode is the caller's business.
    pub fn from_io(input: Box<dyn Read + Send>, output: Box<dyn Write>, size: Box<dyn Fn() -> (usize, usize)>) -> Self {
        let mut t = Self::new();
        t.size = size();
        t.out = output;
        t.source = Some(InputSource::Reader(Some(input)));
        t.size_fn = Some(size);
        t.manage_raw_mode = false;
        t
    }

    /// Whether this terminal is the process's own (stdin/stdout).
    pub fn is_process_terminal(&self) -> bool {
        self.manage_raw_mode
    }

    /// Call `wakeup` from the stdin reader thread after each read (set before
    /// [`Terminal::start`]), so an event loop can sleep until input arrives instead of polling.
    pub fn set_wakeup(&mut self, wakeup: Arc<dyn Fn() + Send + Sync>) {
        self.wakeup = Some(wakeup);
    }

    /// When a buffered partial escape sequence becomes a key of its own (the escape timeout).
    pub fn input_deadline(&self) -> Option<Instant> {
        self.buffer.deadline()
    }

    /// Read whatever the stdin thread has delivered, without waiting.
    fn drain_input(&mut self) {
        let mut chunks = Vec::new();
        if let Some(rx) = &self.input {
            while let Ok(bytes) = rx.try_recv() {
                chunks.push(bytes);
            }
        }
        for bytes in chunks {
            self.feed(bytes);
        }
    }

    fn query_size() -> (usize, usize) {
        match crossterm::terminal::size() {
            Ok((c, r)) if c > 0 && r > 0 => (c as usize, r as usize),
            _ => (80, 24),
        }
    }

    fn check_resize(&mut self) {
        let size = match &self.size_fn {
            Some(f) => f(),
            None => Self::query_size(),
        };
        if size != self.size {
            self.size = size;
            self.pending.push_back(TerminalEvent::Resize);
        }
    }

    fn handle_sequence(&mut self, ev: StdinEvent) {
        match ev {
            StdinEvent::Paste(text) => {
                self.pending.push_back(TerminalEvent::Input(format!("\x1b[200~{text}\x1b[201~")))
            }
            StdinEvent::Data(seq) => {
                if is_program_status_reply(&seq) {
                    if self.program_status_query_pending {
                        self.program_status_query_pending = false;
                        self.program_status_supported = true;
                        self.write_program_status();
                    }
                    return;
                }
                // Kitty flags reply `CSI ? flags u`; DA1 reply `CSI ? ... c`.
                if let Some(flags) = seq.strip_prefix("\x1b[?").and_then(|s| s.strip_suffix('u')) {
                    if flags.parse::<u32>().map(|f| f != 0).unwrap_or(false) {
                        self.disable_modify_other_keys();
                        self.kitty = true;
                        set_kitty_protocol_active(true);
                    } else {
                        self.enable_modify_other_keys();
                    }
                    return;
                }
                if seq.starts_with("\x1b[?") && seq.ends_with('c') && self.owed_device_attributes > 0 {
                    self.owed_device_attributes -= 1;
                    // The last owed DA1 answers the latest query, which got no program status
                    // reply before it.
                    if self.owed_device_attributes == 0 {
                        self.program_status_query_pending = false;
                    }
                    if !self.kitty {
                        self.enable_modify_other_keys();
                    }
                    return;
                }
                self.pending.push_back(TerminalEvent::Input(seq));
            }
        }
    }

    fn write_program_status(&mut self) {
        if self.program_status_supported
            && let Some(status) = self.program_status.clone()
        {
            self.write(&format_program_status(&status));
            PROGRAM_STATUS_SHOWN.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn enable_modify_other_keys(&mut self) {
        if self.kitty || self.modify_other_keys {
            return;
        }
        self.write("\x1b[>4;2m");
        self.modify_other_keys = true;
    }

    fn disable_modify_other_keys(&mut self) {
        if self.modify_other_keys {
            self.write("\x1b[>4;0m");
            self.modify_other_keys = false;
        }
    }

    /// The input source, made on first use: a duplicate of the process's stdin descriptor, or
    /// (stdin closed or not a descriptor) a blocking reader of it.
    fn source(&mut self) -> &mut InputSource {
        self.source.get_or_insert_with(|| match std::io::stdin().as_fd().try_clone_to_owned() {
            Ok(fd) => InputSource::Fd(Arc::new(fd)),
            Err(_) => InputSource::Reader(Some(Box::new(std::io::stdin()))),
        })
    }

    fn feed(&mut self, bytes: Vec<u8>) {
        let mut data = std::mem::take(&mut self.utf8_tail);
        data.extend(bytes);
        let (text, tail) = match std::str::from_utf8(&data) {
            Ok(s) => (s.to_string(), Vec::new()),
            Err(e) if e.error_len().is_none() => {
                let valid = e.valid_up_to();
                (String::from_utf8_lossy(&data[..valid]).into_owned(), data[valid..].to_vec())
            }
            Err(_) => (String::from_utf8_lossy(&data).into_owned(), Vec::new()),
        };
        self.utf8_tail = tail;
        for ev in self.buffer.process(&text) {
            self.handle_sequence(ev);
        }
    }
}

/// pi's escape timeout: 10 ms, 100 ms over SSH, `PI_TUI_ESC_TIMEOUT` overrides.
pub fn escape_timeout() -> Duration {
    if let Some(ms) = std::env::var("PI_TUI_ESC_TIMEOUT").ok().and_then(|v| v.parse::<u64>().ok()) {
        return Duration::from_millis(ms);
    }
    let ssh = std::env::var_os("SSH_CONNECTION").is_some() || std::env::var_os("SSH_TTY").is_some();
    Duration::from_millis(if ssh { 100 } else { 10 })
}

impl Terminal for CrosstermTerminal {
    fn start(&mut self) -> Result<(), TuiError> {
        if self.started {
            return Ok(());
        }
        if self.manage_raw_mode {
            crossterm::terminal::enable_raw_mode()?;
        }
        self.started = true;
        // pi's ProcessTerminal.start: bracketed paste, then the Kitty query (push flags 7, ask
        // for the flags) with a DA1 sentinel; a DA1 reply without Kitty flags turns on xterm's
        // modifyOtherKeys instead. The program status query (OSC 7501) shares the sentinel: a
        // terminal that supports it answers before DA1; `PI_PROGRAM_STATUS=1` or `0` skips it.
        self.write("\x1b[?2004h");
        let override_ = std::env::var("PI_PROGRAM_STATUS").ok();
        self.program_status_supported = override_.as_deref() == Some("1");
        self.program_status_query_pending = !matches!(override_.as_deref(), Some("1" | "0"));
        let query = if self.program_status_query_pending { PROGRAM_STATUS_QUERY } else { "" };
        self.write(&format!("\x1b[>7u\x1b[?u{query}\x1b[c"));
        self.write_program_status();
        self.kitty_pushed = true;
        self.owed_device_attributes += 1;
        let tx = self.tx.clone();
        let wakeup = self.wakeup.clone();
        self.reader = Some(ReaderThread::start(self.source(), tx, wakeup)?);
        // The size may have changed while stopped (SIGWINCH is lost while suspended).
        self.check_resize();
        Ok(())
    }

    fn stop(&mut self) -> Result<(), TuiError> {
        if !self.started {
            return Ok(());
        }
        self.started = false;
        // The status is removed while stopped (after exit, while suspended); a start reports it
        // again.
        if self.program_status_supported && self.program_status.is_some() {
            self.write(&format_program_status(&ProgramStatus::new(ProgramState::Clear)));
        }
        PROGRAM_STATUS_SHOWN.store(false, std::sync::atomic::Ordering::Relaxed);
        self.program_status_supported = false;
        self.program_status_query_pending = false;
        // pi's ProcessTerminal.stop: bracketed paste off, the Kitty flags popped if pushed,
        // modifyOtherKeys off if on; the cursor is shown by the caller (`Tui::stop`).
        let mut seq = String::from("\x1b[?2004l");
        if self.kitty_pushed || self.kitty {
            seq.push_str("\x1b[<u");
        }
        if self.modify_other_keys {
            seq.push_str("\x1b[>4;0m");
        }
        seq.push_str("\x1b[?25h");
        self.write(&seq);
        self.kitty_pushed = false;
        self.kitty = false;
        self.modify_other_keys = false;
        set_kitty_protocol_active(false);
        // After this nothing reads the terminal until the next start.
        if let Some(reader) = self.reader.take() {
            reader.stop();
        }
        if self.manage_raw_mode {
            crossterm::terminal::disable_raw_mode()?;
        }
        Ok(())
    }

    fn write(&mut self, data: &str) {
        // Output errors (closed stdout) cannot be reported anywhere useful; log them.
        if let Err(e) = self.out.write_all(data.as_bytes()).and_then(|_| self.out.flush()) {
            tracing::warn!(error = %e, "terminal write failed");
        }
    }

    fn columns(&self) -> usize {
        self.size.0
    }

    fn rows(&self) -> usize {
        self.size.1
    }

    fn kitty_protocol_active(&self) -> bool {
        self.kitty
    }

    fn set_program_status(&mut self, status: &ProgramStatus) {
        self.program_status = (status.state != ProgramState::Clear).then(|| status.clone());
        if self.program_status_supported {
            self.write(&format_program_status(status));
            PROGRAM_STATUS_SHOWN.store(self.program_status.is_some(), std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn poll_event(&mut self, timeout: Duration) -> Option<TerminalEvent> {
        let deadline = Instant::now() + timeout;
        loop {
            self.check_resize();
            if let Some(ev) = self.pending.pop_front() {
                return Some(ev);
            }
            let now = Instant::now();
            if now >= deadline {
                self.drain_input();
                if let Some(ev) = self.pending.pop_front() {
                    return Some(ev);
                }
                for ev in self.buffer.flush_if_stale(now) {
                    self.handle_sequence(ev);
                }
                return self.pending.pop_front();
            }
            // Wake at least every 50 ms to notice resizes, and at the escape timeout.
            let wait = (deadline - now).min(Duration::from_millis(50));
            let wait = match self.buffer.deadline() {
                Some(d) => wait.min(d.saturating_duration_since(now)),
                None => wait,
            };
            let Some(rx) = &self.input else {
                std::thread::sleep(wait);
                continue;
            };
            match rx.recv_timeout(wait) {
                Ok(bytes) => self.feed(bytes),
                Err(RecvTimeoutError::Timeout) => {
                    for ev in self.buffer.flush_if_stale(Instant::now()) {
                        self.handle_sequence(ev);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.input = None;
                }
            }
        }
    }
}

impl Drop for CrosstermTerminal {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            tracing::warn!(error = %e, "restoring the terminal failed");
        }
    }
}

/// Restores the process's terminal without any state: turns mouse reporting off, leaves the
/// alternate screen, re-enables
/// autowrap, turns off bracketed paste and the keyboard protocols, shows the cursor and leaves
/// raw mode. For exit paths that cannot reach the [`crate::Tui`] (a panic hook, a fatal signal).
pub fn emergency_restore() {
    let mut out = std::io::stdout();
    if PROGRAM_STATUS_SHOWN.swap(false, std::sync::atomic::Ordering::Relaxed) {
        let _ = out.write_all(format_program_status(&ProgramStatus::new(ProgramState::Clear)).as_bytes());
    }
    // The terminal may be gone (SIGHUP); nothing useful can be done about a failed write.
    let _ = out.write_all(b"\x1b[?2026l\x1b[?1006l\x1b[?1004l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?2004l\x1b[<u\x1b[>4;0m\x1b[?1049l\x1b[?7h\x1b[?25h");
    let _ = out.flush();
    set_kitty_protocol_active(false);
    if let Err(e) = crossterm::terminal::disable_raw_mode() {
        tracing::warn!(error = %e, "leaving raw mode failed");
    }
}
