//! Text selection in the fullscreen transcript (pi's `TuiAltScreen` selection): a drag selects
//! characters, a double click a word (with pi's joiners `/ - + \ ~ _ .`), a triple click a line;
//! the selection is kept in document rows, so it scrolls with the transcript, drawn in reverse
//! video, and its text is the document's (styles removed, line ends trimmed).

use std::time::{Duration, Instant};

use pi_tui::ansi::{extract_ansi_code, slice_by_column, strip_terminal_sequences, visible_width};

/// Two clicks closer than this on the same word count as a double click (pi: 500 ms).
const DOUBLE_CLICK_INTERVAL: Duration = Duration::from_millis(500);
const WORD_JOINERS: &[char] = &['/', '-', '+', '\\', '~', '_', '.'];

/// A cell of the document: its row and column; `boundary` marks an exclusive end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Point {
    pub(crate) row: usize,
    pub(crate) col: usize,
    pub(crate) boundary: bool,
}

impl Point {
    pub(crate) fn at(row: usize, col: usize) -> Self {
        Point { row, col, boundary: false }
    }

    fn before(&self, other: &Point) -> bool {
        self.row < other.row || (self.row == other.row && self.col < other.col)
    }
}

/// What a press selects: characters, or whole words or lines from a double or triple click.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Granularity {
    Character,
    Word,
    Line,
}

struct LastClick {
    at: Instant,
    count: u32,
    row: usize,
    word: (usize, usize),
}

/// The selection and the gesture making it.
pub(crate) struct Selection {
    anchor: Option<Point>,
    focus: Option<Point>,
    granularity: Granularity,
    initial: Option<(Point, Point)>,
    pub(crate) pressed: bool,
    pub(crate) dragged: bool,
    last_click: Option<LastClick>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            anchor: None,
            focus: None,
            granularity: Granularity::Character,
            initial: None,
            pressed: false,
            dragged: false,
            last_click: None,
        }
    }
}

/// The word under `col` of `line` (pi's `getWordSelection`): word characters joined across the
/// joiners; `None` past the end of the line.
pub(crate) fn word_at(line: &str, col: usize) -> Option<(usize, usize)> {
    let text = strip_terminal_sequences(line);
    // Segments: runs of word characters, or single other characters, with their cells.
    let mut segments: Vec<(usize, usize, bool, bool)> = Vec::new();
    let mut start = 0;
    let mut word = String::new();
    let flush = |word: &mut String, start: &mut usize, segments: &mut Vec<(usize, usize, bool, bool)>| {
        if !word.is_empty() {
            let end = *start + visible_width(word);
            segments.push((*start, end, true, false));
            *start = end;
            word.clear();
        }
    };
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            word.push(ch);
            continue;
        }
        flush(&mut word, &mut start, &mut segments);
        let end = start + visible_width(ch.encode_utf8(&mut [0; 4]));
        let joiner = WORD_JOINERS.contains(&ch);
        segments.push((start, end, joiner, joiner));
        start = end;
    }
    flush(&mut word, &mut start, &mut segments);
    let hit = segments.iter().position(|s| col >= s.0 && col < s.1)?;
    let can_join = |l: &(usize, usize, bool, bool), r: &(usize, usize, bool, bool)| l.2 && r.2 && (l.3 || r.3);
    let (mut from, mut to) = (segments[hit].0, segments[hit].1);
    let mut i = hit;
    while i > 0 && can_join(&segments[i - 1], &segments[i]) {
        from = segments[i - 1].0;
        i -= 1;
    }
    let mut i = hit;
    while i + 1 < segments.len() && can_join(&segments[i], &segments[i + 1]) {
        to = segments[i + 1].1;
        i += 1;
    }
    Some((from, to))
}

impl Selection {
    /// Forget the selection (a new press elsewhere, focus lost, the view replaced).
    pub(crate) fn clear(&mut self) {
        self.anchor = None;
        self.focus = None;
        self.granularity = Granularity::Character;
        self.initial = None;
        self.pressed = false;
        self.dragged = false;
    }

    /// A left press at `point` of `line` (pi's press branch): a click, or with a second or third
    /// click on the same word a word or line selection.
    pub(crate) fn press(&mut self, point: Point, line: &str) {
        let word = word_at(line, point.col);
        let now = Instant::now();
        let count = match (&self.last_click, word) {
            (Some(last), Some(w))
                if now - last.at <= DOUBLE_CLICK_INTERVAL && last.row == point.row && last.word == w =>
            {
                last.count % 3 + 1
            }
            _ => 1,
        };
        self.last_click = word.map(|w| LastClick { at: now, count, row: point.row, word: w });
        let range = match count {
            2 => word.map(|(a, b)| (Point::at(point.row, a), Point { row: point.row, col: b, boundary: true })),
            3 => Some(line_range(point.row, line)),
            _ => None,
        };
        self.granularity = match (count, range) {
            (2, Some(_)) => Granularity::Word,
            (3, Some(_)) => Granularity::Line,
            _ => Granularity::Character,
        };
        self.initial = range;
        self.anchor = Some(range.map_or(point, |r| r.0));
        self.focus = Some(range.map_or(point, |r| r.1));
        self.pressed = true;
        self.dragged = false;
    }

    /// The pointer moved to `point` of `line` with the button down (pi's `updateSelectionFocus`).
    pub(crate) fn extend(&mut self, point: Point, line: &str) {
        let Some(initial) = self.initial.filter(|_| self.granularity != Granularity::Character) else {
            self.focus = Some(point);
            return;
        };
        let range = match self.granularity {
            Granularity::Word => match word_at(line, point.col) {
                Some((a, b)) => (Point::at(point.row, a), Point { row: point.row, col: b, boundary: true }),
                None => return,
            },
            _ => line_range(point.row, line),
        };
        if range.0.before(&initial.0) {
            self.anchor = Some(initial.1);
            self.focus = Some(range.0);
        } else {
            self.anchor = Some(initial.0);
            self.focus = Some(range.1);
        }
    }

    /// Start and end in document order; `None` when nothing is selected.
    pub(crate) fn bounds(&self) -> Option<(Point, Point)> {
        let (a, f) = (self.anchor?, self.focus?);
        if (a.row, a.col) == (f.row, f.col) {
            return None;
        }
        Some(if a.before(&f) { (a, f) } else { (f, a) })
    }

    /// Whether the press that is ending was a click: no drag, released where it started.
    pub(crate) fn is_click_at(&self, point: &Point) -> bool {
        !self.dragged && self.anchor.is_some_and(|a| (a.row, a.col) == (point.row, point.col))
    }

    /// The click count of the last press (1 to 3).
    pub(crate) fn click_count(&self) -> u32 {
        self.last_click.as_ref().map_or(1, |c| c.count)
    }
}

fn line_range(row: usize, line: &str) -> (Point, Point) {
    (Point::at(row, 0), Point { row, col: visible_width(line), boundary: true })
}

/// The selected columns of `line` (document row `row`), pi's `getSelectionColumns`.
pub(crate) fn columns(line: &str, row: usize, (start, end): (Point, Point)) -> (usize, usize) {
    let width = visible_width(line);
    let from = if row == start.row { start.col.min(width) } else { 0 };
    let to =
        if row == end.row { if end.boundary { end.col.min(width) } else { (end.col + 1).min(width) } } else { width };
    (from, to)
}

/// The selected text of `lines` (the document's), pi's `getActiveSelectionText`.
pub(crate) fn selected_text(lines: &[&str], bounds: (Point, Point)) -> Option<String> {
    let mut out = Vec::new();
    for row in bounds.0.row..=bounds.1.row {
        let line = lines.get(row).copied().unwrap_or_default();
        let (from, to) = columns(line, row, bounds);
        let part = strip_terminal_sequences(&slice_by_column(line, from, to.saturating_sub(from), true));
        out.push(part.trim_end().to_owned());
    }
    let text = out.join("\n");
    (!text.is_empty()).then_some(text)
}

/// Reverse video over `text`, re-applied after each style change inside it (pi's
/// `applySelectionHighlight`).
pub(crate) fn highlight(text: &str) -> String {
    let mut out = String::from("\x1b[7m");
    let mut i = 0;
    while i < text.len() {
        match extract_ansi_code(text, i) {
            Some(code) => {
                out.push_str(code);
                if code.ends_with('m') {
                    out.push_str("\x1b[7m");
                }
                i += code.len();
            }
            None => {
                let ch = text[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8().max(1);
            }
        }
    }
    out.push_str("\x1b[27m");
    out
}

/// `line` with the selected columns highlighted.
pub(crate) fn highlight_line(line: &str, from: usize, to: usize) -> String {
    if to <= from {
        return line.to_owned();
    }
    let width = visible_width(line);
    let before = slice_by_column(line, 0, from, true);
    let selected = slice_by_column(line, from, to - from, true);
    let after = slice_by_column(line, to, width.saturating_sub(to), true);
    format!("{before}{}{after}", highlight(&selected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_join_across_path_characters() {
        assert_eq!(word_at("see src/main.rs now", 6), Some((4, 15)));
        assert_eq!(word_at("see src/main.rs now", 1), Some((0, 3)));
        assert_eq!(word_at("a b", 1), Some((1, 2)), "a space is its own segment");
        assert_eq!(word_at("ab", 5), None);
    }

    #[test]
    fn a_drag_selects_across_lines_in_document_order() {
        let lines = ["first line", "second line"];
        let mut s = Selection::default();
        s.press(Point::at(1, 3), lines[1]);
        assert!(s.bounds().is_none(), "a press alone selects nothing");
        s.extend(Point::at(0, 6), lines[0]);
        let bounds = s.bounds().expect("a selection");
        assert_eq!(selected_text(&lines, bounds).as_deref(), Some("line\nseco"));
        assert_eq!(columns(lines[0], 0, bounds), (6, 10));
        assert_eq!(columns(lines[1], 1, bounds), (0, 4));
    }

    #[test]
    fn double_and_triple_clicks_select_words_and_lines() {
        let line = "open src/lib.rs please";
        let mut s = Selection::default();
        s.press(Point::at(0, 7), line);
        s.press(Point::at(0, 7), line);
        assert_eq!(selected_text(&[line], s.bounds().expect("word")).as_deref(), Some("src/lib.rs"));
        s.press(Point::at(0, 7), line);
        assert_eq!(selected_text(&[line], s.bounds().expect("line")).as_deref(), Some(line));
        assert_eq!(s.click_count(), 3);
    }

    #[test]
    fn the_highlight_survives_style_changes() {
        assert_eq!(highlight("a\x1b[31mb"), "\x1b[7ma\x1b[31m\x1b[7mb\x1b[27m");
        assert_eq!(highlight_line("abcd", 1, 3), "a\x1b[7mbc\x1b[27md");
    }
}
