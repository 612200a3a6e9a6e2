//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;

use pi_tui::{Component, Lines};

/// Load a committed fixture generated from the reference package.
pub fn fixture(name: &str) -> serde_json::Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {path}: {e}"))
}

/// A component whose lines are set directly.
#[derive(Default)]
pub struct StaticLines {
    lines: Vec<String>,
    cache: Option<Lines>,
}

impl StaticLines {
    pub fn set(&mut self, lines: Vec<String>) {
        if lines != self.lines {
            self.lines = lines;
            self.cache = None;
        }
    }
}

impl Component for StaticLines {
    fn render(&mut self, _width: usize) -> Lines {
        self.cache.get_or_insert_with(|| self.lines.clone().into()).clone()
    }
}

pub fn static_lines(lines: &[&str]) -> Rc<RefCell<StaticLines>> {
    let mut s = StaticLines::default();
    s.set(lines.iter().map(|l| l.to_string()).collect());
    Rc::new(RefCell::new(s))
}

/// Replay bytes into a vt100 screen and describe it: visible rows, cursor, then scrollback.
pub fn screen_dump(parser: &mut vt100::Parser) -> String {
    let (rows, cols) = parser.screen().size();
    let (rows, cols) = (rows.get(), cols.get());
    let mut out = String::new();
    for (i, row) in parser.screen().rows(0, cols).enumerate() {
        out.push_str(&format!("{i:>2}|{row}\n"));
    }
    let (cr, cc) = parser.screen().cursor_position();
    out.push_str(&format!("cursor: ({cr}, {cc}) hidden: {}\n", parser.screen().hide_cursor()));
    parser.screen_mut().set_scrollback(usize::MAX);
    let back = parser.screen().scrollback();
    if back > 0 {
        out.push_str(&format!("scrollback ({back} lines):\n"));
        for (i, row) in parser.screen().rows(0, cols).take(back.min(rows as usize)).enumerate() {
            out.push_str(&format!("{i:>2}|{row}\n"));
        }
    }
    parser.screen_mut().set_scrollback(0);
    out
}

/// A vt100 parser of the given size with 100 lines of scrollback.
pub fn parser(rows: u16, cols: u16) -> vt100::Parser {
    let nz = |v: u16| std::num::NonZeroU16::new(v.max(1)).unwrap_or(std::num::NonZeroU16::MIN);
    vt100::Parser::new(nz(rows), nz(cols), 100)
}

fn sgr(on: u8, off: u8) -> pi_tui::StyleFn {
    Rc::new(move |t: &str| format!("\x1b[{on}m{t}\x1b[{off}m"))
}

/// The Markdown theme the fixtures were recorded with: each style as its SGR on/off pair.
pub fn sgr_markdown_theme() -> pi_tui::MarkdownTheme {
    pi_tui::MarkdownTheme {
        heading: sgr(33, 39),
        link: sgr(34, 39),
        link_url: sgr(90, 39),
        code: sgr(35, 39),
        code_block: sgr(32, 39),
        code_block_border: sgr(90, 39),
        quote: sgr(36, 39),
        quote_border: sgr(90, 39),
        hr: sgr(90, 39),
        list_bullet: sgr(36, 39),
        bold: sgr(1, 22),
        italic: sgr(3, 23),
        strikethrough: sgr(9, 29),
        underline: sgr(4, 24),
        highlight_code: None,
        code_block_indent: "  ".into(),
    }
}
