//! `TruncatedText`: the first line of a text, truncated to the width.

use crate::ansi::{truncate_to_width, visible_width};
use crate::component::{Component, Lines};

/// Shows only the first line of its text, truncated with an ellipsis and padded to the width.
#[derive(Debug, Clone)]
pub struct TruncatedText {
    text: String,
    padding_x: usize,
    padding_y: usize,
}

impl TruncatedText {
    /// A truncated text with padding (pi's defaults are 0 and 0).
    pub fn new(text: impl Into<String>, padding_x: usize, padding_y: usize) -> Self {
        Self { text: text.into(), padding_x, padding_y }
    }

    /// Replace the text.
    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
    }
}

impl Component for TruncatedText {
    fn render(&mut self, width: usize) -> Lines {
        let empty = " ".repeat(width);
        let mut out = vec![empty.clone(); self.padding_y];
        let avail = width.saturating_sub(self.padding_x * 2).max(1);
        let first = self.text.split('\n').next().unwrap_or("");
        let pad = " ".repeat(self.padding_x);
        let line = format!("{pad}{}{pad}", truncate_to_width(first, avail));
        let fill = width.saturating_sub(visible_width(&line));
        out.push(line + &" ".repeat(fill));
        out.extend(std::iter::repeat_n(empty, self.padding_y));
        out.into()
    }
}
