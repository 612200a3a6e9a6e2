//! Renderers: turning the component tree's lines into terminal output.
//!
//! [`MainScreen`] diffs lines into the normal buffer (the terminal owns scrollback);
//! [`AltScreen`] owns a viewport on the alternate screen. Both receive finished frame lines
//! from [`crate::Tui`], which resolves fake cursors, composites overlays, extracts the cursor
//! marker and appends the per-line reset.

mod alt_screen;
pub mod differential;
pub mod kitty;
pub mod kitty_alt;
mod overlay;
pub mod scrollbar;

pub use alt_screen::AltScreen;
pub use differential::MainScreen;
pub use overlay::{Anchor, OverlayOptions, SizeValue, resolve_overlay_layout};

use std::borrow::Cow;
use std::rc::Rc;

use crate::ansi::{SEGMENT_RESET, normalize_terminal_output, visible_width};
use crate::component::{CURSOR_MARKER, FAKE_CURSOR_END, FAKE_CURSOR_START};

/// A finished output line. Shared so unchanged lines cost a reference count, not a copy.
pub type FrameLine = Rc<str>;

/// Where the hardware cursor goes: a document row and a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorPos {
    /// Row within the document (or screen, for the alt screen).
    pub row: usize,
    /// Visible column.
    pub col: usize,
}

/// Synchronized output begin (CSI ? 2026 h).
pub const SYNC_BEGIN: &str = "\x1b[?2026h";
/// Synchronized output end (CSI ? 2026 l).
pub const SYNC_END: &str = "\x1b[?2026l";

const KITTY_PREFIX: &str = "\x1b_G";
const ITERM2_PREFIX: &str = "\x1b]1337;File=";

/// Whether a line carries an inline image (Kitty or iTerm2 graphics).
pub fn is_image_line(line: &str) -> bool {
    line.contains(KITTY_PREFIX) || line.contains(ITERM2_PREFIX)
}

/// Drop leading OSC 133 prompt markers (`ESC]133;A|B|C` + BEL or ST).
pub fn strip_osc133_prefix(line: &str) -> &str {
    let mut s = line;
    loop {
        let Some(rest) = s.strip_prefix("\x1b]133;") else {
            return s;
        };
        let Some(kind) = rest.chars().next() else {
            return s;
        };
        if !matches!(kind, 'A' | 'B' | 'C') {
            return s;
        }
        let after = &rest[1..];
        if let Some(r) = after.strip_prefix('\x07') {
            s = r;
        } else if let Some(r) = after.strip_prefix("\x1b\\") {
            s = r;
        } else {
            return s;
        }
    }
}

/// Turn fake-cursor markers into reverse video. With the hardware cursor shown, the fake cursor
/// directly after the cursor marker is dropped (its text kept).
pub fn resolve_fake_cursor(line: &str, show_hardware_cursor: bool) -> Cow<'_, str> {
    if !line.contains(FAKE_CURSOR_START) {
        return Cow::Borrowed(line);
    }
    let mut s = line.to_string();
    if show_hardware_cursor {
        let focused = format!("{CURSOR_MARKER}{FAKE_CURSOR_START}");
        if let Some(at) = s.find(&focused) {
            let text_start = at + focused.len();
            let (text_end, close_end) = match s[text_start..].find(FAKE_CURSOR_END) {
                Some(off) => (text_start + off, text_start + off + FAKE_CURSOR_END.len()),
                None => (s.len(), s.len()),
            };
            let text = s[text_start..text_end].to_string();
            s.replace_range(at..close_end, &format!("{CURSOR_MARKER}{text}"));
        }
    }
    Cow::Owned(s.replace(FAKE_CURSOR_START, "\x1b[7m").replace(FAKE_CURSOR_END, "\x1b[27m"))
}

/// Strip cursor markers, normalise for output and append the segment reset (image lines pass).
pub fn finish_line(line: &str) -> FrameLine {
    if is_image_line(line) {
        return Rc::from(line);
    }
    let stripped: Cow<'_, str> =
        if line.contains(CURSOR_MARKER) { Cow::Owned(line.replace(CURSOR_MARKER, "")) } else { Cow::Borrowed(line) };
    let mut out = normalize_terminal_output(&stripped);
    out.push_str(SEGMENT_RESET);
    Rc::from(out)
}

/// Find the cursor marker in the last `height` lines (bottom-up): its row and the visible width
/// of the text before it.
pub fn find_cursor<S: AsRef<str>>(lines: &[S], height: usize) -> Option<CursorPos> {
    let top = lines.len().saturating_sub(height);
    (top..lines.len()).rev().find_map(|row| {
        let line = lines[row].as_ref();
        line.find(CURSOR_MARKER).map(|at| CursorPos { row, col: visible_width(&line[..at]) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_cursor_resolution() {
        let line = format!("x{CURSOR_MARKER}{FAKE_CURSOR_START} {FAKE_CURSOR_END}");
        assert_eq!(resolve_fake_cursor(&line, false), format!("x{CURSOR_MARKER}\x1b[7m \x1b[27m"));
        assert_eq!(resolve_fake_cursor(&line, true), format!("x{CURSOR_MARKER} "));
        assert_eq!(strip_osc133_prefix("\x1b]133;A\x07\x1b]133;B\x1b\\x"), "x");
        assert_eq!(&*finish_line(&format!("a\t{CURSOR_MARKER}b")), "a   b\x1b[0m\x1b]8;;\x07");
    }
}
