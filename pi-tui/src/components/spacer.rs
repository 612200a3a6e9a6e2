//! `Spacer`: empty lines.

use crate::component::{Component, Lines};

/// Renders `n` empty strings (not padded).
#[derive(Debug, Clone)]
pub struct Spacer {
    lines: usize,
    cache: Option<Lines>,
}

impl Spacer {
    /// A spacer of `lines` empty lines.
    pub fn new(lines: usize) -> Self {
        Self { lines, cache: None }
    }

    /// Change the number of lines.
    pub fn set_lines(&mut self, lines: usize) {
        self.lines = lines;
        self.cache = None;
    }
}

impl Default for Spacer {
    fn default() -> Self {
        Self::new(1)
    }
}

impl Component for Spacer {
    fn render(&mut self, _width: usize) -> Lines {
        self.cache.get_or_insert_with(|| vec![String::new(); self.lines].into()).clone()
    }
}
