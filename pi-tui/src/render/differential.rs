//! The main-screen differential renderer (pi's `TuiMainScreen`).
//!
//! The document is every rendered line; the terminal keeps what scrolls off as native scrollback.
//! Each frame rewrites only the changed range inside synchronized output. Width or height changes
//! (and changes above the viewport) redraw everything after clearing screen and scrollback.
//! Kitty images are deleted when their lines change or the screen is cleared, and an image line
//! gets its rows cleared below it before it is drawn (pi's image tracking, [`super::kitty`]).

use std::rc::Rc;

use super::kitty::{delete_changed, delete_images, expand_changed_range, ordered_ids, reserved_rows};
use super::{CursorPos, FrameLine, SYNC_BEGIN, SYNC_END, is_image_line};
use crate::ansi::visible_width;
use crate::error::TuiError;
use crate::terminal::Terminal;

const MAX_WRITE: usize = 1024 * 1024;

/// Frame-level switches from the TUI.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameOptions {
    /// Show the hardware cursor at the cursor marker (otherwise it is hidden but still placed).
    pub show_hardware_cursor: bool,
    /// Full redraw whenever the document is shorter than the most lines ever rendered.
    pub clear_on_shrink: bool,
    /// Overlays are composited into this frame.
    pub has_overlays: bool,
}

/// Main-screen renderer state.
#[derive(Debug, Clone)]
pub struct MainScreen {
    previous_lines: Vec<FrameLine>,
    previous_width: i64,
    previous_height: i64,
    cursor_row: usize,
    hardware_cursor_row: usize,
    max_lines_rendered: usize,
    previous_viewport_top: usize,
    full_redraws: usize,
    termux: bool,
    /// The Kitty image ids of the lines on screen when [`Self::reset`] forgot them (pi keeps
    /// its ids across a reset, so the next clearing redraw deletes those images).
    reset_kitty_ids: Vec<u32>,
}

impl Default for MainScreen {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes `data` to the terminal in chunks of at most 1 MiB, split at character boundaries.
fn write_bounded(term: &mut dyn Terminal, data: &str) {
    let mut start = 0;
    while start < data.len() {
        let mut end = (start + MAX_WRITE).min(data.len());
        while !data.is_char_boundary(end) {
            end -= 1;
        }
        term.write(&data[start..end]);
        start = end;
    }
}

fn move_rows(out: &mut String, diff: i64) {
    if diff > 0 {
        out.push_str(&format!("\x1b[{diff}B"));
    } else if diff < 0 {
        out.push_str(&format!("\x1b[{}A", -diff));
    }
}

impl MainScreen {
    /// A renderer that has drawn nothing yet.
    pub fn new() -> Self {
        Self {
            previous_lines: Vec::new(),
            previous_width: 0,
            previous_height: 0,
            cursor_row: 0,
            hardware_cursor_row: 0,
            max_lines_rendered: 0,
            previous_viewport_top: 0,
            full_redraws: 0,
            termux: std::env::var_os("TERMUX_VERSION").is_some(),
            reset_kitty_ids: Vec::new(),
        }
    }

    /// Forget what is on screen; the next frame is a full redraw with clear (pi's `force`).
    pub fn reset(&mut self) {
        if !self.previous_lines.is_empty() {
            self.reset_kitty_ids = ordered_ids(&self.previous_lines);
        }
        self.previous_lines.clear();
        self.previous_width = -1;
        self.previous_height = -1;
        self.cursor_row = 0;
        self.hardware_cursor_row = 0;
        self.max_lines_rendered = 0;
        self.previous_viewport_top = 0;
    }

    /// How many full redraws happened.
    pub fn full_redraws(&self) -> usize {
        self.full_redraws
    }

    /// The lines currently on screen (with resets appended).
    pub fn previous_lines(&self) -> &[FrameLine] {
        &self.previous_lines
    }

    /// Move below the document before the terminal is restored (pi's `beforeTerminalStop`).
    pub fn before_stop(&mut self, term: &mut dyn Terminal) {
        if self.previous_lines.is_empty() {
            return;
        }
        let mut out = String::from(" ");
        move_rows(&mut out, self.previous_lines.len() as i64 - self.hardware_cursor_row as i64);
        out.push_str("\r\n");
        term.write(&out);
    }

    fn full_render(
        &mut self,
        term: &mut dyn Terminal,
        lines: Vec<FrameLine>,
        cursor: Option<CursorPos>,
        clear: bool,
        (width, height): (usize, usize),
        show_cursor: bool,
    ) {
        self.full_redraws += 1;
        let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 2).sum::<usize>() + 32);
        out.push_str(SYNC_BEGIN);
        if clear {
            let ids = if self.previous_lines.is_empty() {
                std::mem::take(&mut self.reset_kitty_ids)
            } else {
                ordered_ids(&self.previous_lines)
            };
            out.push_str(&delete_images(&ids));
            out.push_str("\x1b[2J\x1b[H\x1b[3J");
        }
        let mut i = 0;
        while i < lines.len() {
            if i > 0 {
                out.push_str("\r\n");
            }
            let line = &lines[i];
            let reserved = if is_image_line(line) { reserved_rows(&lines, i, lines.len() - 1) } else { 1 };
            if reserved > 1 && reserved <= height {
                // The image's rows exist before it is drawn, so drawing it scrolls nothing.
                out.push_str(&"\r\n".repeat(reserved - 1));
                out.push_str(&format!("\x1b[{}A{line}\x1b[{}B", reserved - 1, reserved - 1));
                i += reserved;
                continue;
            }
            out.push_str(line);
            i += 1;
        }
        out.push_str(SYNC_END);
        write_bounded(term, &out);
        self.cursor_row = lines.len().saturating_sub(1);
        self.hardware_cursor_row = self.cursor_row;
        self.max_lines_rendered = if clear { lines.len() } else { self.max_lines_rendered.max(lines.len()) };
        self.previous_viewport_top = height.max(lines.len()) - height;
        self.position_cursor(term, cursor, lines.len(), show_cursor);
        self.reset_kitty_ids.clear();
        self.previous_lines = lines;
        self.previous_width = width as i64;
        self.previous_height = height as i64;
    }

    /// Draw one frame of finished lines.
    pub fn render(
        &mut self,
        term: &mut dyn Terminal,
        lines: Vec<FrameLine>,
        cursor: Option<CursorPos>,
        opts: FrameOptions,
    ) -> Result<(), TuiError> {
        let width = term.columns().max(1);
        let height = term.rows().max(1);
        let show = opts.show_hardware_cursor;
        let width_changed = self.previous_width != 0 && self.previous_width != width as i64;
        let height_changed = self.previous_height != 0 && self.previous_height != height as i64;
        let prev_buffer_len =
            if self.previous_height > 0 { self.previous_viewport_top + self.previous_height as usize } else { height };
        let mut prev_viewport_top =
            if height_changed { prev_buffer_len.saturating_sub(height) } else { self.previous_viewport_top };
        let mut viewport_top = prev_viewport_top;
        let mut hw_row = self.hardware_cursor_row;

        if self.previous_lines.is_empty() && !width_changed && !height_changed {
            self.full_render(term, lines, cursor, false, (width, height), show);
            return Ok(());
        }
        if width_changed || (height_changed && !self.termux) {
            self.full_render(term, lines, cursor, true, (width, height), show);
            return Ok(());
        }
        if opts.clear_on_shrink && lines.len() < self.max_lines_rendered && !opts.has_overlays {
            self.full_render(term, lines, cursor, true, (width, height), show);
            return Ok(());
        }

        let prev = &self.previous_lines;
        let max = lines.len().max(prev.len());
        let mut first: Option<usize> = None;
        let mut last = 0usize;
        for i in 0..max {
            let old = prev.get(i).map_or("", |l| &**l);
            let new = lines.get(i).map_or("", |l| &**l);
            let same = match (prev.get(i), lines.get(i)) {
                (Some(a), Some(b)) => Rc::ptr_eq(a, b) || a == b,
                _ => old == new,
            };
            if !same {
                first.get_or_insert(i);
                last = i;
            }
        }
        let appended = lines.len() > prev.len();
        if appended {
            first.get_or_insert(prev.len());
            last = lines.len() - 1;
        }
        if let Some(f) = first {
            let (lo, hi) = expand_changed_range(prev, &lines, f, last);
            first = Some(lo);
            last = hi;
        }
        let Some(first) = first else {
            self.position_cursor(term, cursor, lines.len(), show);
            self.previous_viewport_top = prev_viewport_top;
            self.previous_height = height as i64;
            return Ok(());
        };
        let append_start = appended && first == prev.len() && first > 0;
        let compute_diff = |target: usize, hw: usize, pvt: usize, vt: usize| -> i64 {
            (target as i64 - vt as i64) - (hw as i64 - pvt as i64)
        };

        if first >= lines.len() {
            if prev.len() > lines.len() {
                let target = lines.len().saturating_sub(1);
                if target < prev_viewport_top {
                    self.full_render(term, lines, cursor, true, (width, height), show);
                    return Ok(());
                }
                let extra = prev.len() - lines.len();
                if extra > height {
                    self.full_render(term, lines, cursor, true, (width, height), show);
                    return Ok(());
                }
                let mut out = String::from(SYNC_BEGIN);
                out.push_str(&delete_changed(prev, first, last));
                move_rows(&mut out, compute_diff(target, hw_row, prev_viewport_top, viewport_top));
                out.push('\r');
                let offset = if lines.is_empty() { 0 } else { 1 };
                if extra > 0 && offset > 0 {
                    out.push_str(&format!("\x1b[{offset}B"));
                }
                for i in 0..extra {
                    out.push_str("\r\x1b[2K");
                    if i + 1 < extra {
                        out.push_str("\x1b[1B");
                    }
                }
                let back = (extra + offset).saturating_sub(1);
                if back > 0 {
                    out.push_str(&format!("\x1b[{back}A"));
                }
                out.push_str(SYNC_END);
                write_bounded(term, &out);
                self.cursor_row = target;
                self.hardware_cursor_row = target;
            }
            self.position_cursor(term, cursor, lines.len(), show);
            self.reset_kitty_ids.clear();
            self.previous_lines = lines;
            self.previous_width = width as i64;
            self.previous_height = height as i64;
            self.previous_viewport_top = prev_viewport_top;
            return Ok(());
        }

        if first < prev_viewport_top {
            self.full_render(term, lines, cursor, true, (width, height), show);
            return Ok(());
        }

        let mut out = String::from(SYNC_BEGIN);
        out.push_str(&delete_changed(prev, first, last));
        let prev_viewport_bottom = prev_viewport_top + height - 1;
        let move_target = if append_start { first - 1 } else { first };
        if move_target > prev_viewport_bottom {
            let current_screen_row = (hw_row as i64 - prev_viewport_top as i64).clamp(0, height as i64 - 1);
            let to_bottom = height as i64 - 1 - current_screen_row;
            if to_bottom > 0 {
                out.push_str(&format!("\x1b[{to_bottom}B"));
            }
            let scroll = move_target - prev_viewport_bottom;
            out.push_str(&"\r\n".repeat(scroll));
            prev_viewport_top += scroll;
            viewport_top += scroll;
            hw_row = move_target;
        }
        move_rows(&mut out, compute_diff(move_target, hw_row, prev_viewport_top, viewport_top));
        out.push_str(if append_start { "\r\n" } else { "\r" });
        let render_end = last.min(lines.len() - 1);
        let mut i = first;
        while i <= render_end {
            if i > first {
                out.push_str("\r\n");
            }
            let line = &lines[i];
            let image = is_image_line(line);
            let reserved = if image { reserved_rows(&lines, i, render_end) } else { 1 };
            if reserved > 1 {
                let top = i as i64 - viewport_top as i64;
                if top < 0 || top + reserved as i64 > height as i64 {
                    // Clearing the image's rows would scroll.
                    self.full_render(term, lines, cursor, true, (width, height), show);
                    return Ok(());
                }
                out.push_str("\x1b[2K");
                out.push_str(&"\r\n\x1b[2K".repeat(reserved - 1));
                out.push_str(&format!("\x1b[{}A{line}\x1b[{}B", reserved - 1, reserved - 1));
                i += reserved;
                continue;
            }
            out.push_str("\x1b[2K");
            if !image {
                let w = visible_width(line);
                if w > width {
                    tracing::error!(line = i, width = w, max = width, "rendered line exceeds terminal width");
                    return Err(TuiError::LineTooWide { line: i, width: w, max: width });
                }
            }
            out.push_str(line);
            i += 1;
        }
        let mut final_row = render_end;
        if prev.len() > lines.len() {
            if render_end < lines.len() - 1 {
                out.push_str(&format!("\x1b[{}B", lines.len() - 1 - render_end));
                final_row = lines.len() - 1;
            }
            let extra = prev.len() - lines.len();
            for _ in 0..extra {
                out.push_str("\r\n\x1b[2K");
            }
            out.push_str(&format!("\x1b[{extra}A"));
        }
        out.push_str(SYNC_END);
        write_bounded(term, &out);
        self.cursor_row = lines.len().saturating_sub(1);
        self.hardware_cursor_row = final_row;
        self.max_lines_rendered = self.max_lines_rendered.max(lines.len());
        self.previous_viewport_top = prev_viewport_top.max((final_row + 1).saturating_sub(height));
        self.position_cursor(term, cursor, lines.len(), show);
        self.reset_kitty_ids.clear();
        self.previous_lines = lines;
        self.previous_width = width as i64;
        self.previous_height = height as i64;
        Ok(())
    }

    fn position_cursor(&mut self, term: &mut dyn Terminal, cursor: Option<CursorPos>, total: usize, show: bool) {
        let Some(pos) = cursor.filter(|_| total > 0) else {
            term.hide_cursor();
            return;
        };
        let row = pos.row.min(total - 1);
        let mut out = String::new();
        move_rows(&mut out, row as i64 - self.hardware_cursor_row as i64);
        out.push_str(&format!("\x1b[{}G", pos.col + 1));
        term.write(&out);
        self.hardware_cursor_row = row;
        if show {
            term.show_cursor();
        } else {
            term.hide_cursor();
        }
    }
}
