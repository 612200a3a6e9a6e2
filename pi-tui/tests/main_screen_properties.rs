//! Property: while a document fits on the screen, whatever sequence of documents the
//! differential renderer draws, the vt100 screen shows exactly the latest document.

mod common;

use common::{parser, static_lines};
use pi_tui::{CaptureTerminal, ScreenMode, Tui};
use proptest::prelude::*;

const COLS: u16 = 12;
const ROWS: u16 = 6;

fn document() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec("[a-z ]{0,12}|\x1b\\[3[1-6]m[a-z]{1,6}\x1b\\[39m|日本", 0..=ROWS as usize)
}

proptest! {
    #[test]
    fn screen_shows_the_latest_document(docs in proptest::collection::vec(document(), 1..8)) {
        let mut tui = Tui::new(CaptureTerminal::new(COLS as usize, ROWS as usize), ScreenMode::Main);
        let doc = static_lines(&[]);
        tui.add_child(doc.clone());
        let mut vt = parser(ROWS, COLS);
        for lines in &docs {
            doc.borrow_mut().set(lines.clone());
            prop_assert!(tui.render_now().is_ok());
            vt.process(tui.terminal_mut().take_output().as_bytes());
            let screen: Vec<String> = vt.screen().rows(0, COLS).collect();
            for (row, text) in screen.iter().enumerate() {
                let expected = lines.get(row).map(|l| pi_tui::ansi::strip_terminal_sequences(l)).unwrap_or_default();
                prop_assert_eq!(text.trim_end(), expected.trim_end(), "row {} after {:?}", row, lines);
            }
        }
    }
}

/// One step of a growing transcript: append lines, or rewrite the last line (a streaming reply).
#[derive(Debug, Clone)]
enum Step {
    Append(Vec<String>),
    EditLast(String),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        proptest::collection::vec("[a-z]{1,10}", 1..5).prop_map(Step::Append),
        "[A-Z]{1,10}".prop_map(Step::EditLast),
    ]
}

proptest! {
    #[test]
    fn growing_transcript_lands_in_scrollback(steps in proptest::collection::vec(step(), 1..12)) {
        let mut tui = Tui::new(CaptureTerminal::new(COLS as usize, ROWS as usize), ScreenMode::Main);
        let doc = static_lines(&[]);
        tui.add_child(doc.clone());
        let mut vt = parser(ROWS, COLS);
        let mut lines: Vec<String> = Vec::new();
        for s in &steps {
            match s {
                Step::Append(new) => lines.extend(new.iter().cloned()),
                Step::EditLast(text) => match lines.last_mut() {
                    Some(last) => *last = text.clone(),
                    None => lines.push(text.clone()),
                },
            }
            doc.borrow_mut().set(lines.clone());
            prop_assert!(tui.render_now().is_ok());
            vt.process(tui.terminal_mut().take_output().as_bytes());
            // The screen shows the document's tail (top-aligned while it is shorter).
            let screen: Vec<String> = vt.screen().rows(0, COLS).map(|r| r.trim_end().to_string()).collect();
            let top = lines.len().saturating_sub(ROWS as usize);
            for (row, text) in screen.iter().enumerate() {
                let expected = lines.get(top + row).cloned().unwrap_or_default();
                prop_assert_eq!(text, &expected, "row {} of {:?}", row, lines);
            }
            // Everything above the screen is in the terminal's scrollback, in order.
            vt.screen_mut().set_scrollback(usize::MAX);
            let back = vt.screen().scrollback();
            let history: Vec<String> = vt.screen().rows(0, COLS).take(back.min(ROWS as usize)).map(|r| r.trim_end().to_string()).collect();
            vt.screen_mut().set_scrollback(0);
            prop_assert_eq!(back, top, "scrollback length");
            prop_assert_eq!(&history[..], &lines[..back.min(ROWS as usize)]);
        }
    }
}
