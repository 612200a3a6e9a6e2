//! The screen's layout (pi's chat viewport): the document (header, loaded resources,
//! transcript) above a dock (pending messages, status, widgets, editor, footer).
//!
//! In fullscreen mode (pi's default `tuiMode`) the layout fills exactly the terminal's rows: the
//! dock sits at the bottom and the document shows its last lines above it (or earlier lines when
//! scrolled back with Page Up), padded with empty lines while it is short. In regular mode it is
//! the plain concatenation, and the terminal keeps the scrollback.

use std::cell::Cell;
use std::rc::Rc;

use pi_tui::alt_search::AltScreenSearch;
use pi_tui::{Component, ComponentRef, Lines};

pub(crate) use super::transcript_view::TranscriptView;

/// The document above a fixed dock.
pub(crate) struct ChatLayout {
    document: Vec<ComponentRef>,
    dock: Vec<ComponentRef>,
    /// Terminal rows; 0 means regular mode (no fixed height).
    rows: Rc<Cell<usize>>,
    /// The transcript's scroll state (pi's primary `ScrollView`).
    pub(crate) view: TranscriptView,
    /// The fewest rows of each dock part in fullscreen mode (pi's `minSize`: the editor's slot
    /// keeps 3 rows, so a shorter component there is followed by empty rows).
    dock_min: Vec<usize>,
    /// Screen rows of each component drawn in the last fullscreen frame, for mouse hit-testing.
    pub(crate) boxes: Vec<LayoutBox>,
    /// The open transcript search (pi's `activeSearch`), refreshed with the document each frame.
    pub(crate) search: Option<AltScreenSearch>,
}

/// Where a component was drawn in the last frame (pi's layout box): its first screen row, its
/// rows, and the first of its own lines shown there (a scrolled document part starts inside).
#[derive(Clone)]
pub(crate) struct LayoutBox {
    pub(crate) component: ComponentRef,
    pub(crate) top: usize,
    pub(crate) height: usize,
    pub(crate) first_line: usize,
}

impl ChatLayout {
    pub(crate) fn new(document: Vec<ComponentRef>, dock: Vec<ComponentRef>, rows: Rc<Cell<usize>>) -> Self {
        ChatLayout {
            document,
            dock,
            rows,
            view: TranscriptView::default(),
            dock_min: Vec::new(),
            boxes: Vec::new(),
            search: None,
        }
    }

    /// The fewest rows of each dock part (by position) in fullscreen mode, as pi's dock `VStack`
    /// pads an entry to its `minSize`.
    pub(crate) fn with_dock_min_sizes(mut self, min: Vec<usize>) -> Self {
        self.dock_min = min;
        self
    }

    /// Scrolls the document back (positive) or forward (negative); `None` returns to the end.
    pub(crate) fn scroll_by(&mut self, delta: Option<i64>) {
        match delta {
            None => self.view.scroll_to_end(),
            Some(d) => {
                self.view.scroll_lines(-d);
            }
        }
    }

    /// One page of the document view.
    pub(crate) fn page(&self) -> i64 {
        self.view.height.saturating_sub(1).max(1) as i64
    }

    fn lines_of(parts: &[ComponentRef], width: usize) -> Vec<Lines> {
        parts.iter().map(|c| c.borrow_mut().render(width)).collect()
    }
}

impl Component for ChatLayout {
    fn render(&mut self, width: usize) -> Lines {
        let mut out = Vec::new();
        let mut segments = Vec::new();
        self.render_segments(width, &mut segments);
        for s in segments {
            out.extend(s.iter().cloned());
        }
        out.into()
    }

    fn render_segments(&mut self, width: usize, out: &mut Vec<Lines>) {
        let rows = self.rows.get();
        if rows == 0 {
            for c in self.document.iter().chain(&self.dock) {
                c.borrow_mut().render_segments(width, out);
            }
            return;
        }
        let dock: Vec<Lines> = Self::lines_of(&self.dock, width)
            .into_iter()
            .enumerate()
            .map(|(i, seg)| match self.dock_min.get(i) {
                Some(&min) if seg.len() < min => {
                    let mut padded = seg.to_vec();
                    padded.resize(min, String::new());
                    padded.into()
                }
                _ => seg,
            })
            .collect();
        let dock_len: usize = dock.iter().map(|l| l.len()).sum();
        // The dock keeps at least one row for the document; a taller dock loses its top lines.
        let view = rows.saturating_sub(dock_len).max(1);
        let content_width = self.view.content_width(width);
        let document = Self::lines_of(&self.document, content_width);
        let total: usize = document.iter().map(|l| l.len()).sum();
        self.view.update_layout(total, view);
        // pi's `refreshSearch`: the selected match is revealed before the rows are picked.
        if let Some(search) = self.search.as_mut()
            && let Some(top) = search.refresh(&document, self.view.top, view)
        {
            self.view.scroll_to_unfollowed(top);
        }
        self.view.document = document.clone();
        self.boxes.clear();
        let start = self.view.top;
        let end = (start + view).min(total);
        // Pick the document's lines start..end across its segments, sharing whole segments.
        let mut picked: Vec<Lines> = Vec::new();
        let mut index = 0;
        for (component, seg) in self.document.iter().zip(&document) {
            let (a, b) = (index, index + seg.len());
            index = b;
            if b <= start || a >= end || seg.is_empty() {
                continue;
            }
            let (from, to) = (start.max(a) - a, end.min(b) - a);
            self.boxes.push(LayoutBox {
                component: component.clone(),
                top: a + from - start,
                height: to - from,
                first_line: from,
            });
            if from == 0 && to == seg.len() {
                picked.push(seg.clone());
            } else {
                picked.push(seg[from..to].to_vec().into());
            }
        }
        let shown = end - start;
        if shown < view {
            picked.push(vec![String::new(); view - shown].into());
        }
        match self.view.decorate(&picked, width, view, self.search.as_ref()) {
            Some(rows) => out.push(rows.into()),
            None => out.extend(picked),
        }
        let room = rows.saturating_sub(view.min(rows));
        let skip = dock_len.saturating_sub(room);
        let mut skipped = 0;
        let mut row = view;
        for (component, seg) in self.dock.iter().zip(dock) {
            if skipped + seg.len() <= skip {
                skipped += seg.len();
                continue;
            }
            let from = skip.saturating_sub(skipped);
            skipped = skipped.max(skip);
            let height = seg.len() - from;
            self.boxes.push(LayoutBox { component: component.clone(), top: row, height, first_line: from });
            row += height;
            if from > 0 {
                out.push(seg[from..].to_vec().into());
            } else {
                out.push(seg);
            }
        }
    }

    fn invalidate(&mut self) {
        for c in self.document.iter().chain(&self.dock) {
            c.borrow_mut().invalidate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::{Text, shared};

    #[test]
    fn dock_stays_at_the_bottom_and_document_follows_the_end() {
        let rows = Rc::new(Cell::new(6));
        let doc = shared(Text::new("a\nb\nc\nd\ne", 0, 0));
        let dock = shared(Text::new("EDIT", 0, 0));
        let mut layout = ChatLayout::new(vec![doc.clone()], vec![dock], rows.clone());
        // Without a scrollbar (an `auto` one shows a second after each scroll).
        layout.view.mode = pi_tui::render::scrollbar::ScrollbarMode::Hidden;
        let lines = layout.render(4);
        assert_eq!(&lines[..], ["a   ", "b   ", "c   ", "d   ", "e   ", "EDIT"]);
        doc.borrow_mut().set_text("a\nb\nc\nd\ne\nf\ng");
        let lines = layout.render(4);
        assert_eq!(&lines[..], ["c   ", "d   ", "e   ", "f   ", "g   ", "EDIT"]);
        layout.scroll_by(Some(2));
        let lines = layout.render(4);
        assert_eq!(&lines[..], ["a   ", "b   ", "c   ", "d   ", "e   ", "EDIT"]);
        doc.borrow_mut().set_text("a");
        layout.scroll_by(None);
        let lines = layout.render(4);
        assert_eq!(&lines[..], ["a   ", "", "", "", "", "EDIT"]);
        rows.set(0);
        assert_eq!(&layout.render(4)[..], ["a   ", "EDIT"]);
    }

    #[test]
    fn a_dock_part_shorter_than_its_min_size_is_followed_by_empty_rows() {
        let rows = Rc::new(Cell::new(6));
        let doc = shared(Text::new("a", 0, 0));
        let slot = shared(Text::new("ONE\nTWO", 0, 0));
        let footer = shared(Text::new("FOOT", 0, 0));
        let mut layout =
            ChatLayout::new(vec![doc], vec![slot.clone(), footer], rows.clone()).with_dock_min_sizes(vec![3, 0]);
        assert_eq!(&layout.render(4)[..], ["a   ", "", "ONE ", "TWO ", "", "FOOT"]);
        slot.borrow_mut().set_text("1\n2\n3\n4");
        assert_eq!(&layout.render(4)[..], ["a   ", "1   ", "2   ", "3   ", "4   ", "FOOT"]);
        // Regular mode is the plain concatenation (pi's main screen has no dock).
        rows.set(0);
        assert_eq!(&layout.render(4)[..], ["a   ", "1   ", "2   ", "3   ", "4   ", "FOOT"]);
    }
}
