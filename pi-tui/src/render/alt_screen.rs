//! The alternate-screen renderer (pi's `TuiAltScreen`, core viewport only).
//!
//! The app owns the viewport: the document is laid out into exactly `rows` lines (an end-following
//! scroll view that can be scrolled back with [`AltScreen::scroll_by`]), and each frame rewrites
//! the rows that differ with `CSI row;1H CSI 2K line`. A size change clears and redraws all rows.
//! Stopping leaves the alternate screen and prints the whole document into the main buffer so the
//! transcript lands in scrollback. Mouse reporting is turned on when entering (unless disabled)
//! and off again when leaving; the events themselves are parsed by [`crate::mouse`] and handled
//! by the application, which also draws the transcript search ([`crate::alt_search`]) over its
//! rows. Rows and Kitty images are drawn by [`super::kitty_alt::AltImages`].

use super::kitty_alt::{AltImages, ImageProtocol};
use super::{CursorPos, FrameLine, SYNC_BEGIN, SYNC_END};
use crate::ansi::{slice_by_column, visible_width};
use crate::terminal::Terminal;

/// Enter the alternate screen and disable autowrap.
pub const ENTER_ALT_SCREEN: &str = "\x1b[?1049h\x1b[?7l";

/// Alternate-screen renderer state.
#[derive(Debug, Clone, Default)]
pub struct AltScreen {
    previous_screen: Vec<FrameLine>,
    previous_size: (usize, usize),
    scroll_offset: usize,
    document_len: usize,
    active: bool,
    full_redraws: usize,
    /// The mouse enable sequence written on entering (`None`: mouse reporting off).
    mouse: Option<&'static str>,
    images: AltImages,
}

impl AltScreen {
    /// A renderer that has not entered the alternate screen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Report the mouse with `enable` (one of [`crate::mouse::ENABLE_ALL_MOTION_MOUSE`] and
    /// [`crate::mouse::ENABLE_BUTTON_MOTION_MOUSE`]) from the next [`AltScreen::enter`] on, or
    /// not at all (`None`, pi's `mouse: false`).
    pub fn set_mouse(&mut self, enable: Option<&'static str>) {
        self.mouse = enable;
    }

    /// The terminal's image protocol (pi's capabilities when the screen starts): Kitty images
    /// are deleted, placed again and drawn last as pi does.
    pub fn set_image_protocol(&mut self, protocol: Option<ImageProtocol>) {
        self.images.set_protocol(protocol);
    }

    /// Whether mouse reporting is turned on while this screen is active.
    pub fn mouse_enabled(&self) -> bool {
        self.mouse.is_some()
    }

    /// Enter the alternate screen (pi writes this on start), with mouse reporting if enabled.
    pub fn enter(&mut self, term: &mut dyn Terminal) {
        let mouse = self.mouse.unwrap_or("");
        term.write(&format!("{ENTER_ALT_SCREEN}{mouse}\x1b[2J\x1b[H\x1b[?25l"));
        self.active = true;
        self.previous_screen.clear();
        self.images.clear();
    }

    /// Forget the screen contents; the next frame redraws every row.
    pub fn reset(&mut self) {
        self.previous_screen.clear();
        self.previous_size = (0, 0);
    }

    /// How many full redraws happened.
    pub fn full_redraws(&self) -> usize {
        self.full_redraws
    }

    /// Scroll the viewport back (positive) or forward (negative) by `delta` lines.
    pub fn scroll_by(&mut self, delta: i64, rows: usize) {
        let max = self.document_len.saturating_sub(rows);
        let next = (self.scroll_offset as i64 + delta).clamp(0, max as i64);
        self.scroll_offset = next as usize;
    }

    /// Lines scrolled back from the end (0 = following the end).
    pub fn scroll_offset(&self) -> usize {
        self.scroll_offset
    }

    /// The rows of the viewport for a document: the window ending `scroll_offset` lines before
    /// the end, padded with empty lines at the bottom to the terminal height.
    pub fn viewport<'a>(&mut self, document: &'a [FrameLine], rows: usize) -> (usize, &'a [FrameLine]) {
        self.document_len = document.len();
        let max = document.len().saturating_sub(rows);
        self.scroll_offset = self.scroll_offset.min(max);
        let top = max - self.scroll_offset;
        let end = (top + rows).min(document.len());
        (top, &document[top..end])
    }

    /// Draw one screen of exactly `rows` finished lines (`cursor` row is screen-relative).
    pub fn render(
        &mut self,
        term: &mut dyn Terminal,
        mut screen: Vec<FrameLine>,
        cursor: Option<CursorPos>,
        show_hardware_cursor: bool,
    ) {
        let width = term.columns().max(1);
        let height = term.rows().max(1);
        screen.resize(height, FrameLine::from(""));
        for line in screen.iter_mut() {
            if visible_width(line) > width && !super::is_image_line(line) {
                *line = FrameLine::from(slice_by_column(line, 0, width, true));
            }
        }
        let full = self.previous_size != (width, height) || self.previous_screen.len() != height;
        let mut out = String::from(SYNC_BEGIN);
        if full {
            self.full_redraws += 1;
        }
        out.push_str(&self.images.draw(&screen, &self.previous_screen, full));
        match cursor {
            Some(pos) => {
                out.push_str(&format!("\x1b[{};{}H", pos.row + 1, pos.col.min(width) + 1));
                out.push_str(if show_hardware_cursor { "\x1b[?25h" } else { "\x1b[?25l" });
            }
            None => out.push_str("\x1b[?25l"),
        }
        out.push_str(SYNC_END);
        term.write(&out);
        self.previous_screen = screen;
        self.previous_size = (width, height);
    }

    /// Leave the alternate screen; unless `preserve_screen`, print `document` to the main buffer.
    pub fn leave(&mut self, term: &mut dyn Terminal, document: &[FrameLine], preserve_screen: bool) {
        if !self.active {
            return;
        }
        self.active = false;
        // pi's `beforeTerminalStop`: mouse reporting off and autowrap back on first.
        let mouse_off = if self.mouse.is_some() { crate::mouse::DISABLE_MOUSE } else { "" };
        let images = self.images.leave();
        term.write(&format!("{SYNC_BEGIN}{images}{mouse_off}\x1b[?7h{SYNC_END}"));
        if preserve_screen {
            term.write(&format!("{SYNC_BEGIN}\x1b[?1049l\x1b[?25h{SYNC_END}"));
            return;
        }
        let width = term.columns().max(1);
        let mut out = format!("{SYNC_BEGIN}\x1b[?1049l\x1b[?7l");
        for (row, line) in document.iter().enumerate() {
            if row > 0 {
                out.push_str("\r\n");
            }
            out.push_str("\r\x1b[2K");
            if super::is_image_line(line) || visible_width(line) <= width {
                out.push_str(line);
            } else {
                out.push_str(&slice_by_column(line, 0, width, true));
            }
        }
        out.push_str(&format!("\x1b[0m\x1b[?7h\r\n\x1b[?25h{SYNC_END}"));
        term.write(&out);
    }
}
