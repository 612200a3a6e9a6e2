//! Drawing the matches over the view's rows (pi's `applySearchHighlights` and
//! `applySearchTextHighlight`): each match's cells are cut out of the row and styled, the
//! selected match with the current-match style; escape codes inside the cut pass through between
//! the styled runs, so a match over several styled segments keeps their colours under its own.

use crate::ansi::{ansi_code_len, slice_by_column, visible_width};
use crate::component::StyleFn;
use crate::render::is_image_line;

use super::index::SearchMatch;

/// The two styles of matches (pi's `searchMatchStyle` and `searchCurrentMatchStyle`).
#[derive(Clone)]
pub struct MatchStyles {
    /// Every match but the selected one (pi's default: underline).
    pub matched: StyleFn,
    /// The selected match (pi's default: bold and reverse video).
    pub current: StyleFn,
}

impl Default for MatchStyles {
    /// pi-tui's defaults: `ESC[4m … ESC[24m` and `ESC[1;7m … ESC[22;27m`.
    fn default() -> Self {
        MatchStyles {
            matched: std::rc::Rc::new(|s: &str| format!("\x1b[4m{s}\x1b[24m")),
            current: std::rc::Rc::new(|s: &str| format!("\x1b[1;7m{s}\x1b[22;27m")),
        }
    }
}

/// The view a highlight is drawn into: which document row its first row shows, how many rows
/// it has, and the columns before `max_column` (a shown scrollbar's column is left alone).
#[derive(Debug, Clone, Copy)]
pub struct ViewWindow {
    /// The document row of the first view row (the scroll top).
    pub top: usize,
    /// Rows of the view.
    pub height: usize,
    /// The first column not highlighted.
    pub max_column: usize,
}

/// pi's `applySearchTextHighlight`: `style` around each run of text between escape codes.
pub fn style_text_runs(text: &str, style: &dyn Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut plain_start = 0;
    let mut index = 0;
    while index < text.len() {
        let len = if text.as_bytes()[index] == 0x1b { ansi_code_len(text, index) } else { 0 };
        if len == 0 {
            index += 1;
            continue;
        }
        if index > plain_start {
            out.push_str(&style(&text[plain_start..index]));
        }
        out.push_str(&text[index..index + len]);
        index += len;
        plain_start = index;
    }
    if plain_start < text.len() {
        out.push_str(&style(&text[plain_start..]));
    }
    out
}

/// The column ranges to highlight on each view row: `(view row, start, end, current)`.
fn ranges(matches: &[SearchMatch], selected: usize, view: ViewWindow) -> Vec<(usize, usize, usize, bool)> {
    let mut out = Vec::new();
    if view.height == 0 {
        return out;
    }
    let last_content_row = view.top + view.height - 1;
    let first = matches.partition_point(|m| m.last_row() < view.top);
    for (index, m) in matches.iter().enumerate().skip(first) {
        if m.first_row() > last_content_row {
            break;
        }
        for segment in &m.segments {
            if segment.row < view.top || segment.row > last_content_row {
                continue;
            }
            let end_col = segment.end_col.min(view.max_column);
            if end_col <= segment.start_col {
                continue;
            }
            out.push((segment.row - view.top, segment.start_col, end_col, index == selected));
        }
    }
    out
}

/// Highlights the matches shown in `rows` (the view's rows, `rows[0]` showing document row
/// `view.top`); `selected` is drawn with the current-match style.
pub fn apply_highlights(
    rows: &mut [String],
    matches: &[SearchMatch],
    selected: usize,
    view: ViewWindow,
    styles: &MatchStyles,
) {
    let mut ranges = ranges(matches, selected, view);
    // Right to left within a row, so earlier columns stay where they are.
    ranges.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    for (row, start, end, current) in ranges {
        let Some(line) = rows.get_mut(row) else { continue };
        if is_image_line(line) {
            continue;
        }
        let width = visible_width(line);
        let (start, end) = (start.min(width), end.min(width));
        if end <= start {
            continue;
        }
        let style: &dyn Fn(&str) -> String = if current { &*styles.current } else { &*styles.matched };
        let before = slice_by_column(line, 0, start, true);
        let cut = slice_by_column(line, start, end - start, true);
        let after = slice_by_column(line, end, width - end, true);
        *line = format!("{before}{}{after}", style_text_runs(&cut, style));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alt_search::find_matches;

    #[test]
    fn codes_inside_a_match_pass_between_styled_runs() {
        let style = |s: &str| format!("<{s}>");
        assert_eq!(style_text_runs("ab\x1b[1mcd\x1b[22m", &style), "<ab>\x1b[1m<cd>\x1b[22m");
        assert_eq!(style_text_runs("\x1b[31m", &style), "\x1b[31m");
    }

    #[test]
    fn matches_are_styled_and_the_selected_one_differs() {
        let lines = ["one \x1b[1mtwo\x1b[22m one", "x one"];
        let matches = find_matches(&lines, "ONE");
        assert_eq!(matches.len(), 3);
        let mut rows: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let styles = MatchStyles {
            matched: std::rc::Rc::new(|s: &str| format!("[{s}]")),
            current: std::rc::Rc::new(|s: &str| format!("{{{s}}}")),
        };
        apply_highlights(&mut rows, &matches, 1, ViewWindow { top: 0, height: 2, max_column: 80 }, &styles);
        // The codes before a cut come along with it (as pi's `sliceByColumn`), outside the style.
        assert_eq!(rows[0], "[one] \x1b[1mtwo\x1b[22m \x1b[1m\x1b[22m{one}");
        assert_eq!(rows[1], "x [one]");
        // Scrolled by one row, two rows high: only the second line shows, in view row 0.
        let mut rows = vec![lines[1].to_string()];
        apply_highlights(&mut rows, &matches, 0, ViewWindow { top: 1, height: 2, max_column: 3 }, &styles);
        assert_eq!(rows[0], "x [o]ne", "cut at the scrollbar's column");
    }
}
