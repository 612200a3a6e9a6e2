//! `Markdown`: GFM rendered to styled lines the way pi renders marked's tokens.
//!
//! Parsing uses comrak; the token walk (headings, paragraphs, code blocks, lists, task items,
//! quotes, rules, tables, links) is pi's, including its spacing rules and style re-opening, so
//! output matches pi byte for byte on the committed fixtures. Not ported: LaTeX rendering and
//! marked's CJK-friendly emphasis extension. Links print `text (url)` unless
//! [`Markdown::set_hyperlinks`] says the terminal supports OSC 8 (pi detects that from the
//! environment).

mod ast;
mod highlight;
mod math;
mod math_source;
mod render;

pub use highlight::{HighlightFn, MAX_HIGHLIGHT_BYTES, highlight_code, highlighter};

use std::collections::HashMap;
use std::rc::Rc;

use crate::ansi::{apply_background_to_line, visible_width, wrap_text_with_ansi};
use crate::component::{Component, Lines, StyleFn};
use crate::theme::{self, Theme};

/// Styles used by [`Markdown`] (pi's `MarkdownTheme`).
#[derive(Clone)]
pub struct MarkdownTheme {
    /// Headings.
    pub heading: StyleFn,
    /// Link text.
    pub link: StyleFn,
    /// The ` (url)` after a link.
    pub link_url: StyleFn,
    /// Inline code.
    pub code: StyleFn,
    /// Code block lines (when not highlighted).
    pub code_block: StyleFn,
    /// The ```` ``` ```` fences.
    pub code_block_border: StyleFn,
    /// Quote text.
    pub quote: StyleFn,
    /// The `│ ` quote border.
    pub quote_border: StyleFn,
    /// Horizontal rules.
    pub hr: StyleFn,
    /// List bullets and numbers.
    pub list_bullet: StyleFn,
    /// Bold.
    pub bold: StyleFn,
    /// Italic.
    pub italic: StyleFn,
    /// Strikethrough.
    pub strikethrough: StyleFn,
    /// Underline.
    pub underline: StyleFn,
    /// Optional code highlighter.
    pub highlight_code: Option<HighlightFn>,
    /// Indent of code block lines (default two spaces).
    pub code_block_indent: String,
}

impl MarkdownTheme {
    /// pi's `getMarkdownTheme()` for a theme, with syntect highlighting.
    pub fn from_theme(t: &Rc<Theme>) -> Self {
        let fg = |token: &'static str| -> StyleFn {
            let t = t.clone();
            Rc::new(move |s: &str| t.fg(token, s))
        };
        Self {
            heading: fg("mdHeading"),
            link: fg("mdLink"),
            link_url: fg("mdLinkUrl"),
            code: fg("mdCode"),
            code_block: fg("mdCodeBlock"),
            code_block_border: fg("mdCodeBlockBorder"),
            quote: fg("mdQuote"),
            quote_border: fg("mdQuoteBorder"),
            hr: fg("mdHr"),
            list_bullet: fg("mdListBullet"),
            bold: Rc::new(|s: &str| theme::bold(s)),
            italic: Rc::new(|s: &str| theme::italic(s)),
            strikethrough: Rc::new(|s: &str| theme::strikethrough(s)),
            underline: Rc::new(|s: &str| theme::underline(s)),
            highlight_code: Some(highlighter(t.clone())),
            code_block_indent: "  ".into(),
        }
    }
}

/// Base style applied to all text (pi's `DefaultTextStyle`).
#[derive(Clone, Default)]
pub struct DefaultTextStyle {
    /// Foreground.
    pub color: Option<StyleFn>,
    /// Background, applied to whole padded lines.
    pub bg_color: Option<StyleFn>,
    /// Bold.
    pub bold: bool,
    /// Italic.
    pub italic: bool,
    /// Strikethrough.
    pub strikethrough: bool,
    /// Underline.
    pub underline: bool,
}

/// Rendered markdown with padding, cached per text and width, and per top-level block.
pub struct Markdown {
    text: String,
    padding_x: usize,
    padding_y: usize,
    theme: MarkdownTheme,
    default_style: Option<DefaultTextStyle>,
    cache: Option<(usize, Lines)>,
    blocks: HashMap<(String, usize, &'static str), Vec<String>>,
    hyperlinks: bool,
    transform: Option<MarkdownTransform>,
    options: MarkdownOptions,
}

/// pi-tui's Markdown options beyond `transform`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkdownOptions {
    /// `preserveOrderedListMarkers`: list markers as written (`3)`, `*`), not renumbered `N.`/`-`
    /// (default off).
    pub preserve_ordered_list_markers: bool,
    /// `preserveBackslashEscapes`: `\*` drawn with its backslash (default off).
    pub preserve_backslash_escapes: bool,
    /// `renderLatex`: math drawn as Unicode text rather than its source (default on).
    pub render_latex: bool,
}

impl Default for MarkdownOptions {
    fn default() -> Self {
        Self { preserve_ordered_list_markers: false, preserve_backslash_escapes: false, render_latex: true }
    }
}

/// Rewrites the Markdown before it is drawn, given the content width (pi-tui's `transform`
/// option).
pub type MarkdownTransform = Rc<dyn Fn(&str, usize) -> String>;

impl Markdown {
    /// Markdown with padding and a theme.
    pub fn new(text: impl Into<String>, padding_x: usize, padding_y: usize, theme: MarkdownTheme) -> Self {
        Self {
            text: text.into(),
            padding_x,
            padding_y,
            theme,
            default_style: None,
            cache: None,
            blocks: HashMap::new(),
            hyperlinks: false,
            transform: None,
            options: MarkdownOptions::default(),
        }
    }

    /// pi-tui's `preserveOrderedListMarkers` / `preserveBackslashEscapes` / `renderLatex` options.
    pub fn set_options(&mut self, options: MarkdownOptions) {
        self.options = options;
        self.invalidate();
    }

    /// Rewrites the text before each render (pi-tui's `transform` option): called with the text
    /// and the content width (the width minus the horizontal padding).
    pub fn set_transform(&mut self, transform: Option<MarkdownTransform>) {
        self.transform = transform;
        self.cache = None;
    }

    /// Set the default text style.
    pub fn set_default_style(&mut self, style: Option<DefaultTextStyle>) {
        self.default_style = style;
        self.invalidate();
    }

    /// Emit links as OSC 8 hyperlinks (for terminals that support them).
    pub fn set_hyperlinks(&mut self, on: bool) {
        self.hyperlinks = on;
        self.invalidate();
    }

    /// Replace the text (blocks that did not change keep their rendered lines).
    pub fn set_text(&mut self, text: impl Into<String>) {
        let text = text.into();
        if text != self.text {
            self.text = text;
            self.cache = None;
        }
    }

    fn pad_line(&self, line: &str, width: usize) -> String {
        let margin = " ".repeat(self.padding_x);
        let with_margins = format!("{margin}{line}{margin}");
        match self.default_style.as_ref().and_then(|d| d.bg_color.as_ref()) {
            Some(bg) => apply_background_to_line(&with_margins, width, &**bg),
            None => {
                let pad = width.saturating_sub(visible_width(&with_margins));
                with_margins + &" ".repeat(pad)
            }
        }
    }
}

impl Component for Markdown {
    fn render(&mut self, width: usize) -> Lines {
        if let Some((w, lines)) = &self.cache
            && *w == width
        {
            return lines.clone();
        }
        let content_width = width.saturating_sub(self.padding_x * 2).max(1);
        let transformed = self.transform.as_ref().map(|t| t(&self.text, content_width));
        let text = transformed.as_deref().unwrap_or(&self.text);
        if text.trim().is_empty() {
            let empty: Lines = Vec::new().into();
            self.cache = Some((width, empty.clone()));
            return empty;
        }
        let normalized = text.replace("\r\n", "\n").replace('\r', "\n").replace('\t', "   ");
        let blocks = math_source::parse(&normalized, self.options.preserve_backslash_escapes);
        let renderer = render::Renderer {
            theme: &self.theme,
            default_style: self.default_style.as_ref(),
            hyperlinks: self.hyperlinks,
            keep_markers: self.options.preserve_ordered_list_markers,
            render_latex: self.options.render_latex,
        };
        let mut content = Vec::new();
        let mut fresh = HashMap::new();
        for (i, block) in blocks.iter().enumerate() {
            let next = blocks.get(i + 1).map(ast::Block::kind);
            let key = (format!("{block:?}"), width, next.unwrap_or("none"));
            let lines = match self.blocks.remove(&key) {
                Some(lines) => lines,
                None => {
                    let mut lines = Vec::new();
                    for line in renderer.block(block, content_width, next, None) {
                        for wrapped in wrap_text_with_ansi(&line, content_width) {
                            lines.push(self.pad_line(&wrapped, width));
                        }
                    }
                    lines
                }
            };
            content.extend(lines.iter().cloned());
            fresh.insert(key, lines);
        }
        self.blocks = fresh;
        let blank = self.pad_line("", width);
        let mut out = vec![blank.clone(); self.padding_y];
        out.extend(content);
        out.extend(std::iter::repeat_n(blank, self.padding_y));
        let lines: Lines = out.into();
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
        self.blocks.clear();
    }
}
