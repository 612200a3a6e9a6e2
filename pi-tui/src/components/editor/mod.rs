//! `Editor`: the multi-line prompt editor (borders, wrapping, cursor, paste markers, undo, kill
//! ring, word movement, history and an autocomplete hook).
//!
//! Ported: rendering (borders with `↑/↓ N more` labels, word-aware wrapping with one column kept
//! for the cursor, the visible-row window), submit/new line, bracketed paste with
//! `[paste #N +L lines]` / `[paste #N C chars]` markers and their expansion, the Emacs keys shared
//! with [`crate::components::Input`], history on the first/last line, and a synchronous
//! [`AutocompleteProvider`] shown as a [`SelectList`] under the editor (opened by Tab or `/` at
//! the start), jump-to-character (Ctrl+] / Ctrl+Alt+]) and page keys. Not ported: pi's async,
//! debounced file provider and its `@` attachment completion; sticky visual columns.

use std::collections::BTreeMap;
use std::rc::Rc;

use unicode_segmentation::UnicodeSegmentation;

mod autocomplete;
mod layout;

pub use autocomplete::AutocompleteProvider;

use layout::{paste_markers, scroll_border, segments, word_wrap_line};

use super::select_list::{SelectList, SelectListTheme};
use super::text_edit::{KillRing, LastAction, find_word_backward, find_word_forward};
use crate::ansi::visible_width;
use crate::component::{CURSOR_MARKER, Component, Lines, StyleFn, TextCallback, render_fake_cursor};
use crate::keys::{Keybindings, decode_printable_key};

/// Editor styles.
#[derive(Clone)]
pub struct EditorTheme {
    /// Colours the borders.
    pub border_color: StyleFn,
    /// Styles the autocomplete list.
    pub select_list: SelectListTheme,
}

#[derive(Clone, PartialEq, Eq, Debug)]
struct State {
    lines: Vec<String>,
    line: usize,
    col: usize,
}

/// The multi-line editor.
pub struct Editor {
    state: State,
    theme: EditorTheme,
    padding_x: usize,
    terminal_rows: usize,
    scroll_offset: usize,
    focused: bool,
    pastes: BTreeMap<usize, String>,
    paste_counter: usize,
    paste_buffer: Option<String>,
    kill_ring: KillRing,
    last_action: Option<LastAction>,
    undo: Vec<State>,
    history: Vec<String>,
    history_index: Option<usize>,
    history_draft: Option<State>,
    jump: Option<bool>,
    keys: Rc<Keybindings>,
    autocomplete: Option<Rc<dyn AutocompleteProvider>>,
    autocomplete_list: Option<(SelectList, usize)>,
    autocomplete_max_visible: usize,
    last_width: std::cell::Cell<usize>,
    top_status: Option<String>,
    /// Called with the expanded, trimmed text on Enter (the editor then clears).
    pub on_submit: Option<TextCallback>,
    /// Called with the text after every change.
    pub on_change: Option<TextCallback>,
}

impl Editor {
    /// An editor with pi's defaults (no horizontal padding, 24 terminal rows assumed).
    pub fn new(theme: EditorTheme) -> Self {
        Self {
            state: State { lines: vec![String::new()], line: 0, col: 0 },
            theme,
            padding_x: 0,
            terminal_rows: 24,
            scroll_offset: 0,
            focused: false,
            pastes: BTreeMap::new(),
            paste_counter: 0,
            paste_buffer: None,
            kill_ring: KillRing::default(),
            last_action: None,
            undo: Vec::new(),
            history: Vec::new(),
            history_index: None,
            history_draft: None,
            jump: None,
            keys: Rc::new(Keybindings::default()),
            autocomplete: None,
            autocomplete_list: None,
            autocomplete_max_visible: 5,
            last_width: std::cell::Cell::new(80),
            top_status: None,
            on_submit: None,
            on_change: None,
        }
    }

    /// Horizontal padding inside the borders.
    pub fn set_padding_x(&mut self, padding_x: usize) {
        self.padding_x = padding_x;
    }

    /// The terminal height, which sets the visible rows (`max(5, rows * 0.3)`).
    pub fn set_terminal_rows(&mut self, rows: usize) {
        self.terminal_rows = rows;
    }

    /// Use these keybindings (pi's `keybindings.json` overrides).
    pub fn set_keybindings(&mut self, keys: Rc<Keybindings>) {
        self.keys = keys;
    }

    /// Colour the borders with `style` (pi colours them by thinking level and bash mode).
    pub fn set_border_color(&mut self, style: StyleFn) {
        self.theme.border_color = style;
    }

    /// A styled status drawn into the top border (pi's embedded working indicator); `None`
    /// restores the plain border.
    pub fn set_top_status(&mut self, status: Option<String>) {
        self.top_status = status;
    }

    /// Add a submitted text to the history (up/down on the first/last line browse it).
    pub fn add_to_history(&mut self, text: &str) {
        let t = text.trim();
        if !t.is_empty() && self.history.first().map(String::as_str) != Some(t) {
            self.history.insert(0, t.to_string());
            self.history.truncate(100);
        }
    }

    /// The text with paste markers as typed.
    pub fn text(&self) -> String {
        self.state.lines.join("\n")
    }

    /// The text with paste markers replaced by the pasted content.
    pub fn expanded_text(&self) -> String {
        let mut text = self.text();
        for (id, content) in &self.pastes {
            let lines = content.split('\n').count();
            for marker in
                [format!("[paste #{id} +{lines} lines]"), format!("[paste #{id} {} chars]", content.chars().count())]
            {
                text = text.replace(&marker, content);
            }
        }
        text
    }

    /// Replace the text (cursor at the end).
    pub fn set_text(&mut self, text: &str) {
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let line = lines.len() - 1;
        let col = lines[line].len();
        self.state = State { lines, line, col };
        self.changed();
    }

    fn changed(&mut self) {
        if self.on_change.is_some() {
            let t = self.text();
            if let Some(f) = self.on_change.as_mut() {
                f(&t);
            }
        }
    }

    fn push_undo(&mut self) {
        self.undo.push(self.state.clone());
    }

    fn current(&self) -> &str {
        &self.state.lines[self.state.line]
    }

    fn insert_text(&mut self, text: &str) {
        let (line, col) = (self.state.line, self.state.col);
        let rest = self.state.lines[line].split_off(col);
        let mut parts = text.split('\n');
        self.state.lines[line].push_str(parts.next().unwrap_or(""));
        let mut cur = line;
        for p in parts {
            cur += 1;
            self.state.lines.insert(cur, p.to_string());
        }
        self.state.col = self.state.lines[cur].len();
        self.state.line = cur;
        self.state.lines[cur].push_str(&rest);
        self.changed();
    }

    fn type_text(&mut self, text: &str) {
        self.history_index = None;
        if text.chars().all(char::is_whitespace) || self.last_action != Some(LastAction::TypeWord) {
            self.push_undo();
        }
        self.last_action = Some(LastAction::TypeWord);
        self.insert_text(text);
        let at_start = self.state.line == 0 && self.current().starts_with('/') && !self.current().contains(' ');
        let before = &self.current()[..self.state.col];
        let token_start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        // pi-tui's default trigger characters: `@` (files) and `#` (extension providers).
        let at_file = before[token_start..].starts_with(['@', '#']);
        if at_start || at_file || self.autocomplete_list.is_some() {
            self.update_autocomplete();
        }
    }

    fn paste(&mut self, pasted: &str) {
        self.autocomplete_list = None;
        self.last_action = None;
        self.push_undo();
        let normalized = pasted.replace("\r\n", "\n").replace('\r', "\n").replace('\t', "    ");
        let mut text: String = normalized.chars().filter(|c| *c == '\n' || (*c as u32) >= 32).collect();
        if text.starts_with(['/', '~', '.']) {
            let prev = self.current()[..self.state.col].chars().next_back();
            if prev.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                text.insert(0, ' ');
            }
        }
        let lines = text.split('\n').count();
        let chars = text.chars().count();
        if lines > 10 || chars > 1000 {
            self.paste_counter += 1;
            let id = self.paste_counter;
            let marker = if lines > 10 {
                format!("[paste #{id} +{lines} lines]")
            } else {
                format!("[paste #{id} {chars} chars]")
            };
            self.pastes.insert(id, text);
            self.insert_text(&marker);
        } else {
            self.insert_text(&text);
        }
    }

    fn submit(&mut self) {
        self.autocomplete_list = None;
        let result = self.expanded_text().trim().to_string();
        self.state = State { lines: vec![String::new()], line: 0, col: 0 };
        self.pastes.clear();
        self.paste_counter = 0;
        self.history_index = None;
        self.scroll_offset = 0;
        self.undo.clear();
        self.last_action = None;
        self.changed();
        if let Some(f) = self.on_submit.as_mut() {
            f(&result);
        }
    }

    fn kill(&mut self, line_from: usize, line_to: usize, prepend: bool) {
        let was_kill = self.last_action == Some(LastAction::Kill);
        self.push_undo();
        let l = self.state.line;
        let text: String = self.state.lines[l].drain(line_from..line_to).collect();
        self.kill_ring.push(&text, prepend, was_kill);
        self.last_action = Some(LastAction::Kill);
        self.state.col = line_from;
        self.changed();
    }

    /// pi's `navigateHistory`: up (-1) goes to older entries; the draft comes back at the end.
    fn navigate_history(&mut self, dir: i64) {
        self.last_action = None;
        if self.history.is_empty() {
            return;
        }
        let current = self.history_index.map_or(-1, |i| i as i64);
        let next = current - dir;
        if next < -1 || next >= self.history.len() as i64 {
            return;
        }
        if current == -1 && next >= 0 {
            self.push_undo();
            self.history_draft = Some(self.state.clone());
        }
        if next == -1 {
            self.history_index = None;
            match self.history_draft.take() {
                Some(draft) => {
                    self.state = draft;
                    self.scroll_offset = 0;
                    self.changed();
                }
                None => self.set_text(""),
            }
        } else {
            self.history_index = Some(next as usize);
            let text = self.history[next as usize].clone();
            self.set_text(&text);
            if dir < 0 {
                self.state.line = 0;
                self.state.col = 0;
            }
        }
    }

    fn markers(&self, line: &str) -> Vec<(usize, usize)> {
        paste_markers(line, &|id| self.pastes.contains_key(&id))
    }

    /// Byte length of the segment (grapheme or whole paste marker) before the cursor.
    fn prev_segment_len(&self) -> usize {
        let line = self.current();
        segments(&line[..self.state.col], &self.markers(&line[..self.state.col])).last().map_or(0, |(_, g)| g.len())
    }

    /// Byte length of the segment at the cursor.
    fn next_segment_len(&self) -> usize {
        let line = self.current();
        let markers = self.markers(line);
        segments(line, &markers)
            .into_iter()
            .find(|(i, _)| *i >= self.state.col)
            .map_or(0, |(i, g)| i + g.len() - self.state.col)
    }

    /// pi's `jumpToChar`: the next (or previous) occurrence of `target`, across lines.
    fn jump_to(&mut self, target: &str, forward: bool) {
        self.last_action = None;
        let n = self.state.lines.len();
        let lines: Box<dyn Iterator<Item = usize>> =
            if forward { Box::new(self.state.line..n) } else { Box::new((0..=self.state.line).rev()) };
        for li in lines {
            let line = &self.state.lines[li];
            let found = if li != self.state.line {
                if forward { line.find(target) } else { line.rfind(target) }
            } else if forward {
                let from = self.state.col + 1;
                line.get(from..).and_then(|rest| rest.find(target)).map(|i| i + from)
            } else {
                self.state.col.checked_sub(1).and_then(|to| {
                    // lastIndexOf(char, col - 1): a match may start at col - 1.
                    let end = (to + target.len()).min(line.len());
                    line.get(..end).and_then(|head| head.rfind(target))
                })
            };
            if let Some(i) = found {
                self.state.line = li;
                self.state.col = i;
                return;
            }
        }
    }

    fn layout_width(&self, width: usize) -> (usize, usize, usize) {
        let px = self.padding_x.min(width.saturating_sub(1) / 2);
        let content = width.saturating_sub(px * 2).max(1);
        let layout = content.saturating_sub(if px > 0 { 0 } else { 1 }).max(1);
        (px, content, layout)
    }

    /// Visual rows: (text, Some(cursor byte offset) on the cursor row).
    fn layout(&self, width: usize) -> Vec<(String, Option<usize>)> {
        let mut out = Vec::new();
        for (i, line) in self.state.lines.iter().enumerate() {
            let is_current = i == self.state.line;
            let chunks = word_wrap_line(line, width, &self.markers(line));
            let n = chunks.len();
            for (k, c) in chunks.into_iter().enumerate() {
                let col = self.state.col;
                let cursor = if !is_current {
                    None
                } else if k + 1 == n {
                    (col >= c.start).then(|| col - c.start)
                } else {
                    (col >= c.start && col < c.end).then(|| (col - c.start).min(c.text.len()))
                };
                out.push((c.text, cursor));
            }
        }
        out
    }

    fn move_vertical(&mut self, dir: i64, width: usize) {
        let rows = self.layout(width);
        let Some(cur) = rows.iter().position(|r| r.1.is_some()) else {
            return;
        };
        let target = (cur as i64 + dir).clamp(0, rows.len() as i64 - 1);
        if target == cur as i64 {
            return;
        }
        let col_width = visible_width(&rows[cur].0[..rows[cur].1.unwrap_or(0).min(rows[cur].0.len())]);
        // Map the target visual row back to (line, byte col).
        let mut idx = 0;
        for (li, line) in self.state.lines.iter().enumerate() {
            for c in word_wrap_line(line, width, &self.markers(line)) {
                if idx == target as usize {
                    let mut w = 0;
                    let mut off = c.text.len();
                    for (bi, g) in c.text.grapheme_indices(true) {
                        let gw = visible_width(g);
                        if w + gw > col_width {
                            off = bi;
                            break;
                        }
                        w += gw;
                    }
                    self.state.line = li;
                    self.state.col = c.start + off;
                    return;
                }
                idx += 1;
            }
        }
    }
}

impl Component for Editor {
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
        let data = data.as_str();
        let kb = self.keys.clone();
        if let Some(forward) = self.jump.take() {
            if kb.matches(data, "tui.editor.jumpForward") || kb.matches(data, "tui.editor.jumpBackward") {
                return;
            }
            let printable = decode_printable_key(data)
                .or_else(|| data.chars().next().filter(|c| (*c as u32) >= 32).map(|_| data.to_string()));
            if let Some(target) = printable {
                self.jump_to(&target, forward);
                return;
            }
        }
        if let Some((list, _)) = self.autocomplete_list.as_mut() {
            if kb.matches(data, "tui.select.cancel") {
                self.autocomplete_list = None;
                return;
            }
            if kb.matches(data, "tui.input.tab") {
                self.accept_autocomplete();
                return;
            }
            if kb.matches(data, "tui.select.confirm") {
                // pi: Enter in the command-name menu completes the command and submits it; in
                // path and argument menus it only completes.
                let before = &self.current()[..self.state.col];
                let submits = self.state.line == 0 && before.starts_with('/') && !before.contains(' ');
                self.accept_autocomplete();
                if !submits {
                    return;
                }
                self.submit();
                return;
            }
            if kb.matches(data, "tui.select.up") || kb.matches(data, "tui.select.down") {
                list.handle_input(data);
                return;
            }
        }
        let (_, _, layout_width) = self.layout_width(self.last_width());
        let line_len = self.current().len();
        if kb.matches(data, "tui.input.newLine") {
            self.autocomplete_list = None;
            self.last_action = None;
            self.push_undo();
            self.insert_text("\n");
        } else if kb.matches(data, "tui.input.submit") {
            self.submit();
        } else if kb.matches(data, "tui.input.tab") {
            self.update_autocomplete();
        } else if kb.matches(data, "tui.editor.undo") {
            if let Some(s) = self.undo.pop() {
                self.state = s;
                self.last_action = None;
                self.changed();
            }
        } else if kb.matches(data, "tui.editor.cursorUp") {
            let first = self.state.line == 0 && self.layout(layout_width).iter().position(|r| r.1.is_some()) == Some(0);
            if first && (self.text().is_empty() || self.history_index.is_some() || self.state.col == 0) {
                self.navigate_history(-1);
            } else if first {
                self.state.col = 0;
            } else {
                self.move_vertical(-1, layout_width);
            }
        } else if kb.matches(data, "tui.editor.cursorDown") {
            let rows = self.layout(layout_width);
            let last = rows.last().is_some_and(|r| r.1.is_some());
            if last && self.history_index.is_some() {
                self.navigate_history(1);
            } else if last {
                self.state.col = line_len;
            } else {
                self.move_vertical(1, layout_width);
            }
        } else if kb.matches(data, "tui.editor.deleteCharBackward") {
            self.history_index = None;
            self.last_action = None;
            if self.state.col > 0 {
                self.push_undo();
                let n = self.prev_segment_len();
                let (l, c) = (self.state.line, self.state.col);
                let removed: String = self.state.lines[l].drain(c - n..c).collect();
                if let Some((s, _)) = paste_markers(&removed, &|id| self.pastes.contains_key(&id)).first()
                    && *s == 0
                    && let Some(id) = removed[8..].split([' ', ']']).next().and_then(|d| d.parse::<usize>().ok())
                {
                    self.pastes.remove(&id);
                }
                self.state.col -= n;
                self.changed();
            } else if self.state.line > 0 {
                self.push_undo();
                let removed = self.state.lines.remove(self.state.line);
                self.state.line -= 1;
                self.state.col = self.current().len();
                let l = self.state.line;
                self.state.lines[l].push_str(&removed);
                self.changed();
            }
            if self.autocomplete_list.is_some() {
                self.update_autocomplete();
            }
        } else if kb.matches(data, "tui.editor.deleteCharForward") {
            self.last_action = None;
            if self.state.col < line_len {
                self.push_undo();
                let n = self.next_segment_len();
                let (l, c) = (self.state.line, self.state.col);
                self.state.lines[l].replace_range(c..c + n, "");
                self.changed();
            } else if self.state.line + 1 < self.state.lines.len() {
                self.push_undo();
                let next = self.state.lines.remove(self.state.line + 1);
                let l = self.state.line;
                self.state.lines[l].push_str(&next);
                self.changed();
            }
        } else if kb.matches(data, "tui.editor.deleteWordBackward") {
            if self.state.col > 0 {
                let from = find_word_backward(self.current(), self.state.col);
                self.kill(from, self.state.col, true);
            }
        } else if kb.matches(data, "tui.editor.deleteWordForward") {
            if self.state.col < line_len {
                let to = find_word_forward(self.current(), self.state.col);
                self.kill(self.state.col, to, false);
            }
        } else if kb.matches(data, "tui.editor.deleteToLineStart") {
            if self.state.col > 0 {
                self.kill(0, self.state.col, true);
            }
        } else if kb.matches(data, "tui.editor.deleteToLineEnd") {
            if self.state.col < line_len {
                self.kill(self.state.col, line_len, false);
            }
        } else if kb.matches(data, "tui.editor.yank") {
            if let Some(t) = self.kill_ring.peek().map(str::to_string) {
                self.push_undo();
                self.insert_text(&t);
                self.last_action = Some(LastAction::Yank);
            }
        } else if kb.matches(data, "tui.editor.yankPop") {
            if self.last_action == Some(LastAction::Yank)
                && self.kill_ring.len() > 1
                && !self.kill_ring.peek().unwrap_or("").contains('\n')
            {
                self.push_undo();
                let prev = self.kill_ring.peek().map_or(0, str::len).min(self.state.col);
                let (l, c) = (self.state.line, self.state.col);
                self.state.lines[l].replace_range(c - prev..c, "");
                self.state.col -= prev;
                self.kill_ring.rotate();
                let t = self.kill_ring.peek().unwrap_or("").to_string();
                self.insert_text(&t);
                self.last_action = Some(LastAction::Yank);
            }
        } else if kb.matches(data, "tui.editor.cursorLeft") {
            self.last_action = None;
            if self.state.col > 0 {
                self.state.col -= self.prev_segment_len();
            } else if self.state.line > 0 {
                self.state.line -= 1;
                self.state.col = self.current().len();
            }
        } else if kb.matches(data, "tui.editor.cursorRight") {
            self.last_action = None;
            if self.state.col < line_len {
                self.state.col += self.next_segment_len();
            } else if self.state.line + 1 < self.state.lines.len() {
                self.state.line += 1;
                self.state.col = 0;
            }
        } else if kb.matches(data, "tui.editor.cursorLineStart") {
            self.last_action = None;
            self.state.col = 0;
        } else if kb.matches(data, "tui.editor.cursorLineEnd") {
            self.last_action = None;
            self.state.col = line_len;
        } else if kb.matches(data, "tui.editor.cursorWordLeft") {
            self.last_action = None;
            if self.state.col == 0 && self.state.line > 0 {
                self.state.line -= 1;
                self.state.col = self.current().len();
            } else {
                self.state.col = find_word_backward(self.current(), self.state.col);
            }
        } else if kb.matches(data, "tui.editor.cursorWordRight") {
            self.last_action = None;
            if self.state.col >= line_len && self.state.line + 1 < self.state.lines.len() {
                self.state.line += 1;
                self.state.col = 0;
            } else {
                self.state.col = find_word_forward(self.current(), self.state.col);
            }
        } else if kb.matches(data, "tui.editor.jumpForward") {
            self.jump = Some(true);
        } else if kb.matches(data, "tui.editor.jumpBackward") {
            self.jump = Some(false);
        } else if kb.matches(data, "tui.editor.pageUp") || kb.matches(data, "tui.editor.pageDown") {
            self.last_action = None;
            let page = 5.max(self.terminal_rows * 3 / 10) as i64;
            let dir = if kb.matches(data, "tui.editor.pageUp") { -page } else { page };
            self.move_vertical(dir, layout_width);
        } else if crate::keys::matches_key(data, "shift+space") {
            self.type_text(" ");
        } else if let Some(text) = decode_printable_key(data) {
            self.type_text(&text);
        } else if data.chars().next().is_some_and(|c| (c as u32) >= 32) {
            self.type_text(data);
        }
    }

    fn render(&mut self, width: usize) -> Lines {
        self.last_width.set(width);
        let (px, content, layout_width) = self.layout_width(width);
        let rows = self.layout(layout_width);
        let max_visible = 5.max(self.terminal_rows * 3 / 10);
        let cursor_row = rows.iter().position(|r| r.1.is_some()).unwrap_or(0);
        if cursor_row < self.scroll_offset {
            self.scroll_offset = cursor_row;
        } else if cursor_row >= self.scroll_offset + max_visible {
            self.scroll_offset = cursor_row + 1 - max_visible;
        }
        self.scroll_offset = self.scroll_offset.min(rows.len().saturating_sub(max_visible));
        let visible = &rows[self.scroll_offset..(self.scroll_offset + max_visible).min(rows.len())];
        let border = |hidden: usize, dir: &str| {
            let b = if hidden > 0 { scroll_border(dir, hidden, width) } else { "─".repeat(width) };
            (self.theme.border_color)(&b)
        };
        let pad = " ".repeat(px);
        let status_width = self.top_status.as_deref().map_or(0, visible_width);
        let top = match self.top_status.as_deref() {
            // pi's CustomEditor with an embedded working status: `── ⠋ Working ───…`.
            Some(status) if status_width > 0 && self.scroll_offset == 0 && width >= status_width + 5 => format!(
                "{}{status}{}",
                (self.theme.border_color)("── "),
                (self.theme.border_color)(&format!(" {}", "─".repeat(width - status_width - 4)))
            ),
            _ => border(self.scroll_offset, "↑"),
        };
        let mut out = vec![top];
        let marker = if self.focused { CURSOR_MARKER } else { "" };
        for (text, cursor) in visible {
            let mut display = text.clone();
            let mut w = visible_width(text);
            let mut cursor_in_padding = false;
            if let Some(pos) = cursor {
                let pos = (*pos).min(text.len());
                let (before, after) = text.split_at(pos);
                if let Some(first) = after.graphemes(true).next() {
                    display = format!("{before}{marker}{}{}", render_fake_cursor(first), &after[first.len()..]);
                } else {
                    display = format!("{before}{marker}{}", render_fake_cursor(" "));
                    w += 1;
                    cursor_in_padding = w > content && px > 0;
                }
            }
            let right = if cursor_in_padding { &pad[1..] } else { &pad[..] };
            out.push(format!("{pad}{display}{}{right}", " ".repeat(content.saturating_sub(w))));
        }
        out.push(border(rows.len() - (self.scroll_offset + visible.len()), "↓"));
        if let Some((list, _)) = self.autocomplete_list.as_mut() {
            for line in list.render(content).iter() {
                let fill = content.saturating_sub(visible_width(line));
                out.push(format!("{pad}{line}{}{pad}", " ".repeat(fill)));
            }
        }
        out.into()
    }
}

impl Editor {
    fn last_width(&self) -> usize {
        self.last_width.get()
    }
}

#[cfg(test)]
mod tests;
