//! The `Terminal` trait, a capturing terminal for tests and the real crossterm-backed one.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use crate::ansi::replace_control_characters;
use crate::error::TuiError;
use crate::keys::{StdinBuffer, StdinEvent, set_kitty_protocol_active};

/// Something that happened at the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalEvent {
    /// One complete input sequence (a key, a mouse report, or a re-wrapped bracketed paste).
    Input(String),
    /// The terminal size changed.
    Resize,
}

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
}

impl CaptureTerminal {
    /// A capturing terminal of the given size.
    pub fn new(columns: usize, rows: usize) -> Self {
        Self { output: String::new(), columns, rows, events: VecDeque::new() }
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
}

/// The real terminal: crossterm for raw mode and size, stdout for output, and a thread reading
/// raw stdin bytes (crossterm's event reader would decode keys lossily) through a [`StdinBuffer`].
pub struct CrosstermTerminal {
    out: Box<dyn Write>,
    size: (usize, usize),
    /// Input other than the process's stdin (taken by [`Terminal::start`]).
    custom_input: Option<Box<dyn Read + Send>>,
    /// Size other than the process terminal's.
    size_fn: Option<Box<dyn Fn() -> (usize, usize)>>,
    /// Whether start/stop switch the process terminal's raw mode.
    manage_raw_mode: bool,
    input: Option<Receiver<Vec<u8>>>,
    buffer: StdinBuffer,
    pending: VecDeque<TerminalEvent>,
    kitty: bool,
    started: bool,
    utf8_tail: Vec<u8>,
    wakeup: Option<std::sync::Arc<dyn Fn() + Send + Sync>>,
}

impl Default for CrosstermTerminal {
    fn default() -> Self {
        Self::new()
    }
}

impl CrosstermTerminal {
    /// A terminal on the process's stdin/stdout (not started).
    pub fn new() -> Self {
        Self {
            out: Box::new(std::io::stdout()),
            size: Self::query_size(),
            custom_input: None,
            size_fn: None,
            manage_raw_mode: true,
            input: None,
            buffer: StdinBuffer::new(escape_timeout()),
            pending: VecDeque::new(),
            kitty: false,
            started: false,
            utf8_tail: Vec::new(),
            wakeup: None,
        }
    }

    /// A terminal over other streams than the process's stdio (a pseudo-terminal opened by the
    /// application or a test): `input` is read on the reader thread, `output` receives the frames,
    /// `size` reports columns and rows. Raw mode is the caller's business.
    pub fn from_io(input: Box<dyn Read + Send>, output: Box<dyn Write>, size: Box<dyn Fn() -> (usize, usize)>) -> Self {
        let mut t = Self::new();
        t.size = size();
        t.out = output;
        t.custom_input = Some(input);
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
    pub fn set_wakeup(&mut self, wakeup: std::sync::Arc<dyn Fn() + Send + Sync>) {
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
                // Kitty flags reply `CSI ? flags u`; DA1 reply `CSI ? ... c`.
                if let Some(flags) = seq.strip_prefix("\x1b[?").and_then(|s| s.strip_suffix('u')) {
                    if flags.parse::<u32>().map(|f| f != 0).unwrap_or(false) {
                        self.kitty = true;
                        set_kitty_protocol_active(true);
                    } else {
                        self.write("\x1b[>4;2m");
                    }
                    return;
                }
                if seq.starts_with("\x1b[?") && seq.ends_with('c') {
                    if !self.kitty {
                        self.write("\x1b[>4;2m");
                    }
                    return;
                }
                self.pending.push_back(TerminalEvent::Input(seq));
            }
        }
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
        if self.manage_raw_mode {
            crossterm::terminal::enable_raw_mode()?;
        }
        self.started = true;
        self.write("\x1b[?2004h");
        self.write("\x1b[>7u\x1b[?u\x1b[c");
        let (tx, rx) = channel();
        let wakeup = self.wakeup.clone();
        let custom = self.custom_input.take();
        std::thread::Builder::new().name("pi-tui-stdin".into()).spawn(move || {
            let mut stdin: Box<dyn Read> = match custom {
                Some(input) => input,
                None => Box::new(std::io::stdin()),
            };
            let mut buf = [0u8; 4096];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                        if let Some(w) = &wakeup {
                            w();
                        }
                    }
                }
            }
        })?;
        self.input = Some(rx);
        Ok(())
    }

    fn stop(&mut self) -> Result<(), TuiError> {
        if !self.started {
            return Ok(());
        }
        self.started = false;
        self.write("\x1b[?2004l\x1b[<u\x1b[>4;0m\x1b[?25h");
        set_kitty_protocol_active(false);
        self.input = None;
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

/// Restores the process's terminal without any state: leaves the alternate screen, re-enables
/// autowrap, turns off bracketed paste and the keyboard protocols, shows the cursor and leaves
/// raw mode. For exit paths that cannot reach the [`crate::Tui`] (a panic hook, a fatal signal).
pub fn emergency_restore() {
    let mut out = std::io::stdout();
    // The terminal may be gone (SIGHUP); nothing useful can be done about a failed write.
    let _ = out.write_all(b"\x1b[?2026l\x1b[?2004l\x1b[<u\x1b[>4;0m\x1b[?1049l\x1b[?7h\x1b[?25h");
    let _ = out.flush();
    set_kitty_protocol_active(false);
    if let Err(e) = crossterm::terminal::disable_raw_mode() {
        tracing::warn!(error = %e, "leaving raw mode failed");
    }
}
