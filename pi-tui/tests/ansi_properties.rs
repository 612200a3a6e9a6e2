//! Properties of the ANSI utilities over generated styled text.

use pi_tui::ansi::{slice_with_width, strip_terminal_sequences, truncate_to_width, visible_width, wrap_text_with_ansi};
use proptest::prelude::*;

/// Words of ASCII, CJK and emoji, some wrapped in SGR codes or links, joined by spaces/newlines.
fn styled_text() -> impl Strategy<Value = String> {
    let word =
        prop_oneof!["[a-z]{1,12}", "[日本語テキスト]{1,4}", Just("👍".to_string()), Just("e\u{301}".to_string()),];
    let styled = (word, 0..4u8).prop_map(|(w, style)| match style {
        0 => w,
        1 => format!("\x1b[1m{w}\x1b[22m"),
        2 => format!("\x1b[44m{w}\x1b[49m"),
        _ => format!("\x1b]8;;http://x\x07{w}\x1b]8;;\x07"),
    });
    proptest::collection::vec((styled, prop_oneof![Just(" "), Just("  "), Just("\n")]), 0..12)
        .prop_map(|parts| parts.into_iter().map(|(w, sep)| format!("{w}{sep}")).collect())
}

proptest! {
    #[test]
    fn fast_graphemes_match_the_segmenter(s in "[a-c1 \\t\u{0300}\u{0600}\u{200d}日👍\u{1f1fa}\u{1f1f8}\u{fe0f}\r\n]{0,24}") {
        use unicode_segmentation::UnicodeSegmentation;
        let fast: Vec<(usize, &str)> = pi_tui::ansi::graphemes(&s).collect();
        let slow: Vec<(usize, &str)> = s.grapheme_indices(true).collect();
        prop_assert_eq!(fast, slow);
    }

    #[test]
    fn wrapped_lines_fit(text in styled_text(), width in 2usize..40) {
        for line in wrap_text_with_ansi(&text, width) {
            prop_assert!(visible_width(&line) <= width, "{line:?} wider than {width}");
        }
    }

    #[test]
    fn wrapping_keeps_every_visible_character(text in styled_text(), width in 2usize..40) {
        let joined: String = wrap_text_with_ansi(&text, width).iter().map(|l| strip_terminal_sequences(l)).collect();
        let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        prop_assert_eq!(squash(&joined), squash(&strip_terminal_sequences(&text)));
    }

    #[test]
    fn truncation_fits(text in styled_text(), width in 0usize..30) {
        let one_line = text.replace('\n', " ");
        prop_assert!(visible_width(&truncate_to_width(&one_line, width)) <= width);
    }

    #[test]
    fn strict_slices_fit(text in styled_text(), start in 0usize..20, len in 0usize..20) {
        let one_line = text.replace('\n', " ");
        let (slice, w) = slice_with_width(&one_line, start, len, true);
        prop_assert!(w <= len);
        prop_assert_eq!(visible_width(&slice), w);
    }
}
