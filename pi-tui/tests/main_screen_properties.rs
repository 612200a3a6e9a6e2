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
