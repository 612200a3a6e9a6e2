//! `Input`: a one-line text field with horizontal scrolling, a fake cursor, Emacs keys, a kill
//! ring and undo.

use std::rc::Rc;

use unicode_segmentation::UnicodeSegmentation;

use super::text_edit::{
    KillRing, LastAction, find_word_backward, find_word_forward, next_grapheme_len, prev_grapheme_len,
};
use crate::ansi::{slice_by_column, truncate_to_width_with, visible_width};
use crate::component::{CURSOR_MARKER, Component, Lines, StyleFn, TextCallback, render_fake_cursor};
use crate::keys::{Keybindings, decode_printable_key};

/// A single-line input.
pub struct Input {
    value: String,
    cursor: usize,
    prompt: String,
    placeholder: String,
    placeholder_style: StyleFn,
    focused: bool,
    paste_buffer: Option<String>,
    kill_ring: KillRing,
    last_action: Option<LastAction>,
    undo: Vec<(String, usize)>,
    keys: Rc<Keybindings>,
    /// Called with the value on Enter.
    pub on_submit: Option<TextCallback>,
    /// Called on Escape / Ctrl+C.
    pub on_escape: Option<Box<dyn FnMut()>>,
}

impl Default for Input {
    fn default() -> Self {
        Self::new("> ", "")
    }
}

impl Input {
    /// An input with a prompt (pi's default `"> "`) and placeholder.
    pub fn new(prompt: impl Into<String>, placeholder: impl Into<String>) -> Self {
        Self {
            value: String::new(),
            cursor: 0,
            prompt: prompt.into(),
            placeholder: placeholder.into(),
            placeholder_style: Rc::new(|s: &str| s.to_string()),
            focused: false,
            paste_buffer: None,
            kill_ring: KillRing::default(),
            last_action: None,
            undo: Vec::new(),
            keys: Rc::new(Keybindings::default()),
            on_submit: None,
            on_escape: None,
        }
    }

    /// Style the placeholder.
    pub fn set_placeholder_style(&mut self, style: StyleFn) {
        self.placeholder_style = style;
    }

    /// The current value.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Replace the value (the cursor is clamped).
    pub fn set_value(&mut self, value: impl Into<String>) {
        self.value = value.into();
        self.cursor = self.cursor.min(self.value.len());
        while !self.value.is_char_boundary(self.cursor) {
            self.cursor -= 1;
        }
    }

    /// Cursor byte offset.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Use these keybindings for the `tui.editor.*` and `tui.input.*` actions (pi's
    /// `getKeybindings()`, with the user's overrides).
    pub fn set_keybindings(&mut self, keys: Rc<Keybindings>) {
        self.keys = keys;
    }

    fn push_undo(&mut self) {
        self.undo.push((self.value.clone(), self.cursor));
    }

    fn insert(&mut self, text: &str) {
        if text.chars().all(char::is_whitespace) || self.last_action != Some(LastAction::TypeWord) {
            self.push_undo();
        }
        self.last_action = Some(LastAction::TypeWord);
        self.value.insert_str(self.cursor, text);
        self.cursor += text.len();
    }

    fn kill(&mut self, from: usize, to: usize, prepend: bool) {
        let was_kill = self.last_action == Some(LastAction::Kill);
        self.push_undo();
        let text: String = self.value.drain(from..to).collect();
        self.kill_ring.push(&text, prepend, was_kill);
        self.last_action = Some(LastAction::Kill);
        self.cursor = from;
    }

    fn paste(&mut self, text: &str) {
        self.last_action = None;
        self.push_undo();
        let clean = text.replace(['\r', '\n'], "").replace('\t', "    ");
        self.value.insert_str(self.cursor, &clean);
        self.cursor += clean.len();
    }
}

impl Component for Input {
    fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    fn handle_input(&mut self, data: &str) {
        let mut data = data.to_string();
        if let Some(at) = data.find("\x1b[200~") {
            data.replace_range(at..at + 6, "");
            self.paste_buffer = Some(String::new());
        }
        if let Some(buf) = self.paste_buffer.as_mut() {
            buf.push_str(&data);
            if let Some(end) = buf.find("\x1b[201~") {
                let content = buf[..end].to_string();
                let rest = buf[end + 6..].to_string();
                self.paste_buffer = None;
                self.paste(&content);
                if !rest.is_empty() {
                    self.handle_input(&rest);
                }
            }
            return;
        }
        let kb = self.keys.clone();
        let data = data.as_str();
        if kb.matches(data, "tui.select.cancel") {
            if let Some(f) = self.on_escape.as_mut() {
                f();
            }
        } else if kb.matches(data, "tui.editor.undo") {
            if let Some((v, c)) = self.undo.pop() {
                self.value = v;
                self.cursor = c;
                self.last_action = None;
            }
        } else if kb.matches(data, "tui.input.submit") || data == "\n" {
            let v = self.value.clone();
            if let Some(f) = self.on_submit.as_mut() {
                f(&v);
            }
        } else if kb.matches(data, "tui.editor.deleteCharBackward") {
            self.last_action = None;
            if self.cursor > 0 {
                self.push_undo();
                let n = prev_grapheme_len(&self.value, self.cursor);
                self.value.replace_range(self.cursor - n..self.cursor, "");
                self.cursor -= n;
            }
        } else if kb.matches(data, "tui.editor.deleteCharForward") {
            self.last_action = None;
            if self.cursor < self.value.len() {
                self.push_undo();
                let n = next_grapheme_len(&self.value, self.cursor);
                self.value.replace_range(self.cursor..self.cursor + n, "");
            }
        } else if kb.matches(data, "tui.editor.deleteWordBackward") {
            if self.cursor > 0 {
                let from = find_word_backward(&self.value, self.cursor);
                self.kill(from, self.cursor, true);
            }
        } else if kb.matches(data, "tui.editor.deleteWordForward") {
            if self.cursor < self.value.len() {
                let to = find_word_forward(&self.value, self.cursor);
                self.kill(self.cursor, to, false);
            }
        } else if kb.matches(data, "tui.editor.deleteToLineStart") {
            if self.cursor > 0 {
                self.kill(0, self.cursor, true);
            }
        } else if kb.matches(data, "tui.editor.deleteToLineEnd") {
            if self.cursor < self.value.len() {
                self.kill(self.cursor, self.value.len(), false);
            }
        } else if kb.matches(data, "tui.editor.yank") {
            if let Some(text) = self.kill_ring.peek().map(str::to_string) {
                self.push_undo();
                self.value.insert_str(self.cursor, &text);
                self.cursor += text.len();
                self.last_action = Some(LastAction::Yank);
            }
        } else if kb.matches(data, "tui.editor.yankPop") {
            if self.last_action == Some(LastAction::Yank) && self.kill_ring.len() > 1 {
                self.push_undo();
                let prev = self.kill_ring.peek().map_or(0, str::len);
                self.value.replace_range(self.cursor - prev..self.cursor, "");
                self.cursor -= prev;
                self.kill_ring.rotate();
                let text = self.kill_ring.peek().unwrap_or("").to_string();
                self.value.insert_str(self.cursor, &text);
                self.cursor += text.len();
            }
        } else if kb.matches(data, "tui.editor.cursorLeft") {
            self.last_action = None;
            self.cursor -= prev_grapheme_len(&self.value, self.cursor);
        } else if kb.matches(data, "tui.editor.cursorRight") {
            self.last_action = None;
            self.cursor += next_grapheme_len(&self.value, self.cursor);
        } else if kb.matches(data, "tui.editor.cursorLineStart") {
            self.last_action = None;
            self.cursor = 0;
        } else if kb.matches(data, "tui.editor.cursorLineEnd") {
            self.last_action = None;
            self.cursor = self.value.len();
        } else if kb.matches(data, "tui.editor.cursorWordLeft") {
            self.last_action = None;
            self.cursor = find_word_backward(&self.value, self.cursor);
        } else if kb.matches(data, "tui.editor.cursorWordRight") {
            self.last_action = None;
            self.cursor = find_word_forward(&self.value, self.cursor);
        } else if let Some(text) = decode_printable_key(data) {
            self.insert(&text);
        } else if !data.chars().any(|c| (c as u32) < 32 || c == '\x7f' || (0x80..=0x9f).contains(&(c as u32))) {
            self.insert(data);
        }
    }

    fn render(&mut self, width: usize) -> Lines {
        let prompt_width = visible_width(&self.prompt);
        if width <= prompt_width {
            return vec![truncate_to_width_with(&self.prompt, width, "", false)].into();
        }
        let avail = width - prompt_width;
        let marker = if self.focused { CURSOR_MARKER } else { "" };
        if self.value.is_empty() && !self.placeholder.is_empty() {
            let ph = truncate_to_width_with(&self.placeholder, avail, "", false);
            let at = ph.graphemes(true).next().unwrap_or(" ").to_string();
            let after = ph.get(at.len()..).unwrap_or("");
            let text = format!(
                "{marker}{}{}",
                render_fake_cursor(&(self.placeholder_style)(&at)),
                (self.placeholder_style)(after)
            );
            let pad = avail.saturating_sub(visible_width(&text));
            return vec![format!("{}{text}{}", self.prompt, " ".repeat(pad))].into();
        }
        let total = visible_width(&self.value);
        let (visible, cursor_display) = if total < avail {
            (self.value.clone(), self.cursor)
        } else {
            let scroll = if self.cursor == self.value.len() { avail - 1 } else { avail };
            let cursor_col = visible_width(&self.value[..self.cursor]);
            if scroll > 0 {
                let half = scroll / 2;
                let start = if cursor_col < half {
                    0
                } else if cursor_col > total.saturating_sub(half) {
                    total.saturating_sub(scroll)
                } else {
                    cursor_col - half
                };
                let visible = slice_by_column(&self.value, start, scroll, true);
                let before = slice_by_column(&self.value, start, cursor_col.saturating_sub(start), true);
                (visible, before.len())
            } else {
                (String::new(), 0)
            }
        };
        let cursor_display = cursor_display.min(visible.len());
        let at = visible[cursor_display..].graphemes(true).next().unwrap_or(" ").to_string();
        let before = &visible[..cursor_display];
        let after = visible.get(cursor_display + at.len()..).unwrap_or("");
        let text = format!("{before}{marker}{}{after}", render_fake_cursor(&at));
        let pad = avail.saturating_sub(visible_width(&text));
        vec![format!("{}{text}{}", self.prompt, " ".repeat(pad))].into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::{FAKE_CURSOR_END as E, FAKE_CURSOR_START as S};

    #[test]
    fn types_edits_and_renders() {
        let mut i = Input::default();
        for k in ["h", "e", "l", "l", "o", " ", "w"] {
            i.handle_input(k);
        }
        assert_eq!(i.value(), "hello w");
        i.handle_input("\x17"); // ctrl+w
        assert_eq!(i.value(), "hello ");
        i.handle_input("\x19"); // ctrl+y
        assert_eq!(i.value(), "hello w");
        i.handle_input("\x1f"); // ctrl+- undo
        assert_eq!(i.value(), "hello ");
        i.handle_input("\x1b[200~a\nb\tc\x1b[201~");
        assert_eq!(i.value(), "hello ab    c");
        i.set_focused(true);
        assert_eq!(&i.render(20)[..], [format!("> hello ab    c{CURSOR_MARKER}{S} {E}    ")]);
        let mut long = Input::default();
        long.set_value("abcdefghijklmnopqrstuvwxyz");
        long.handle_input("\x05");
        assert_eq!(&long.render(10)[..], [format!("> tuvwxyz{S} {E}")]);
    }
}
