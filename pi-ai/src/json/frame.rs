//! The frame of a streamed chunk: its text around one string value (issue 20).
//!
//! A provider streams a text answer as a run of chunks that differ only in the delta's text:
//! `{"id":"c1",…,"delta":{"content":"` + text + `"},"finish_reason":null}]}`. Reading each one
//! whole cost about half of a streamed delta's instructions. Once a chunk has been read whole
//! and found to be such a delta, its bytes before and after the text's string are kept here;
//! the next chunk that starts and ends with exactly those bytes, with one string between them
//! that closes where the kept end begins, is that same chunk with another text:
//!
//! - a JSON reader's state at any byte depends only on the bytes before it, so at the string's
//!   opening quote the new chunk stands where the framed one stood;
//! - the string then closes exactly where the framed one did in its text, and a string is a
//!   string whatever it holds, so the reader stands again where it stood after the framed one;
//! - the bytes after it are the framed ones: they read as they did (the same members, the same
//!   values, the same syntax checks, none repeated).
//!
//! So the chunk holds what the framed chunk held, but for that one string; its text is read (and
//! its escapes undone) here, which is all that is left to check of it. The caller decides which
//! chunks are framed: one whose other members have no effect when they are applied again.

use std::borrow::Cow;

use super::scan::Scanner;

/// The bytes around one string value of the last chunk framed; empty when none is.
#[derive(Clone, Debug, Default)]
pub(crate) struct StringFrame {
    /// The text before the string (ending with its opening quote), then the text from its
    /// closing quote on.
    around: Vec<u8>,
    /// Where the text before the string ends in `around`.
    split: usize,
}

impl StringFrame {
    /// Frames `text` around the string whose raw text (between its quotes) is `span`.
    pub(crate) fn set(&mut self, text: &str, span: std::ops::Range<usize>) {
        let bytes = text.as_bytes();
        debug_assert!(span.start > 0 && bytes.get(span.start - 1) == Some(&b'"') && bytes.get(span.end) == Some(&b'"'));
        self.around.clear();
        self.around.extend_from_slice(&bytes[..span.start]);
        self.around.extend_from_slice(&bytes[span.end..]);
        self.split = span.start;
    }

    /// Forgets the frame.
    pub(crate) fn clear(&mut self) {
        self.around.clear();
        self.split = 0;
    }

    /// The string of `text` when `text` is the framed chunk with another string in its place.
    #[inline]
    pub(crate) fn string<'t>(&self, text: &'t str) -> Option<Cow<'t, str>> {
        if self.around.is_empty() {
            return None;
        }
        let (before, after) = self.around.split_at(self.split);
        let bytes = text.as_bytes();
        if bytes.len() < self.around.len() || !bytes.starts_with(before) || !bytes.ends_with(after) {
            return None;
        }
        // The opening quote is the last byte before the string: an ASCII byte, so a boundary.
        let mut s = Scanner::at(text, self.split - 1);
        let value = s.string().ok()?;
        (s.pos() == bytes.len() - after.len() + 1).then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAMED: &str = r#"{"id":"c1","choices":[{"delta":{"content":"abc"},"finish_reason":null}]}"#;

    fn framed() -> StringFrame {
        let start = FRAMED.find("abc").expect("the text");
        let mut frame = StringFrame::default();
        frame.set(FRAMED, start..start + 3);
        frame
    }

    #[test]
    fn the_same_chunk_with_another_string_is_read_in_its_frame() {
        let frame = framed();
        let read = |text: &str| frame.string(text).map(Cow::into_owned);
        assert_eq!(read(FRAMED).as_deref(), Some("abc"));
        let with = |s: &str| FRAMED.replace("abc", s);
        assert_eq!(read(&with("")).as_deref(), Some(""));
        assert_eq!(read(&with("longer text, é and 😀")).as_deref(), Some("longer text, é and 😀"));
        assert_eq!(read(&with(r#"q \"x\" \n\u00e9\ud83d\ude00"#)).as_deref(), Some("q \"x\" \né😀"));
        assert!(matches!(frame.string(&with("plain")), Some(Cow::Borrowed("plain"))));
    }

    #[test]
    fn anything_else_is_not_read_in_the_frame() {
        let frame = framed();
        let with = |s: &str| FRAMED.replace("abc", s);
        for text in [
            // The string closes early: a second member, a string that ends before the frame's end.
            with(r#"a","content":"b"#),
            with(r#"a"},"x":{"y":"b"#),
            // Not a string: a raw control character, a bad escape, a lone surrogate, an escaped
            // closing quote that leaves the string open.
            with("a\nb"),
            with(r"a\qb"),
            with(r"\ud800"),
            with(r"a\"),
            // Other bytes around the string.
            FRAMED.replace("c1", "c2").replace("abc", "x"),
            FRAMED.replace("null", "\"stop\""),
            format!("{FRAMED} "),
            format!(" {FRAMED}"),
            FRAMED[..FRAMED.len() - 1].to_owned(),
            String::new(),
        ] {
            assert_eq!(frame.string(&text), None, "{text}");
        }
        let mut cleared = framed();
        cleared.clear();
        assert_eq!(cleared.string(FRAMED), None);
    }
}
