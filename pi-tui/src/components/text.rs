//! `Text`: multi-line text with word wrapping, padding and an optional background.

use crate::ansi::{apply_background_to_line, visible_width, wrap_text_with_ansi};
use crate::component::{Component, Lines, StyleFn};

/// Wrapped text with `padding_x` columns left and right and `padding_y` rows above and below.
/// Empty or whitespace-only text renders nothing.
pub struct Text {
    text: String,
    padding_x: usize,
    padding_y: usize,
    bg: Option<StyleFn>,
    cache: Option<(usize, Lines)>,
}

impl Text {
    /// Text with the given padding (pi's defaults are 1 and 1).
    pub fn new(text: impl Into<String>, padding_x: usize, padding_y: usize) -> Self {
        Self { text: text.into(), padding_x, padding_y, bg: None, cache: None }
    }

    /// Text whose padded lines are wrapped by `bg`.
    pub fn with_bg(text: impl Into<String>, padding_x: usize, padding_y: usize, bg: StyleFn) -> Self {
        let mut t = Self::new(text, padding_x, padding_y);
        t.bg = Some(bg);
        t
    }

    /// The current text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Replace the text; identical text keeps the cached lines.
    pub fn set_text(&mut self, text: impl Into<String>) {
        let text = text.into();
        if text != self.text {
            self.text = text;
            self.cache = None;
        }
    }

    /// Replace the background function.
    pub fn set_bg(&mut self, bg: Option<StyleFn>) {
        self.bg = bg;
        self.cache = None;
    }

    /// Change the horizontal padding.
    pub fn set_padding_x(&mut self, padding_x: usize) {
        self.padding_x = padding_x;
        self.cache = None;
    }
}

impl Component for Text {
    fn render(&mut self, width: usize) -> Lines {
        if let Some((w, lines)) = &self.cache
            && *w == width
        {
            return lines.clone();
        }
        let lines: Lines = if self.text.trim().is_empty() {
            Vec::new().into()
        } else {
            let normalized = self.text.replace('\t', "   ");
            let px = self.padding_x.min(width.saturating_sub(1) / 2);
            let content_width = width.saturating_sub(px * 2).max(1);
            let margin = " ".repeat(px);
            let mut out = Vec::new();
            let empty = " ".repeat(width);
            let blank = match &self.bg {
                Some(bg) => apply_background_to_line(&empty, width, &**bg),
                None => empty,
            };
            out.extend(std::iter::repeat_n(blank.clone(), self.padding_y));
            for line in wrap_text_with_ansi(&normalized, content_width) {
                let with_margins = format!("{margin}{line}{margin}");
                out.push(match &self.bg {
                    Some(bg) => apply_background_to_line(&with_margins, width, &**bg),
                    None => {
                        let pad = width.saturating_sub(visible_width(&with_margins));
                        with_margins + &" ".repeat(pad)
                    }
                });
            }
            out.extend(std::iter::repeat_n(blank, self.padding_y));
            out.into()
        };
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(t: &mut Text, w: usize) -> Vec<String> {
        t.render(w).to_vec()
    }

    #[test]
    fn spec_text() {
        assert_eq!(render(&mut Text::new("hello", 1, 1), 10), ["          ", " hello    ", "          "]);
        assert!(render(&mut Text::new("", 1, 1), 10).is_empty());
        assert!(render(&mut Text::new("   ", 1, 1), 10).is_empty());
        assert_eq!(render(&mut Text::new("hello", 5, 0), 3), [" h ", " e ", " l ", " l ", " o "]);
        assert_eq!(
            render(&mut Text::new("The quick brown fox jumps over the lazy dog", 0, 0), 10),
            ["The quick ", "brown fox ", "jumps over", "the lazy  ", "dog       "]
        );
    }
}
