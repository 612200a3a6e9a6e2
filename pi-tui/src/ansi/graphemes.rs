//! Grapheme iteration with pi's fast path: printable ASCII characters that are not followed by a
//! combining character are clusters on their own, so only the stretches around other characters
//! go through the Unicode segmenter (which costs far more per character).

use unicode_segmentation::{GraphemeIndices, UnicodeSegmentation};

fn is_ascii_printable(b: u8) -> bool {
    (0x20..=0x7e).contains(&b)
}

/// End of the stretch starting at `p` that must go through the segmenter: just past the first
/// printable ASCII byte that is followed by another one (or by the end). A Prepend character
/// could join that byte, but never the one after it.
pub(crate) fn complex_end(s: &str, p: usize) -> usize {
    let b = s.as_bytes();
    let mut end = p + 1;
    while end < b.len() && !(is_ascii_printable(b[end]) && b.get(end + 1).is_none_or(|n| is_ascii_printable(*n))) {
        end += 1;
    }
    if end < b.len() {
        end += 1;
    }
    while !s.is_char_boundary(end) {
        end += 1;
    }
    end
}

/// `(byte offset, grapheme)` pairs of `s`, equal to `s.grapheme_indices(true)`.
pub struct FastGraphemes<'a> {
    s: &'a str,
    pos: usize,
    complex: Option<(usize, GraphemeIndices<'a>)>,
}

/// Iterate the grapheme clusters of `s` (with byte offsets) using the ASCII fast path.
pub fn graphemes(s: &str) -> FastGraphemes<'_> {
    FastGraphemes { s, pos: 0, complex: None }
}

impl<'a> Iterator for FastGraphemes<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<(usize, &'a str)> {
        if let Some((base, it)) = self.complex.as_mut() {
            if let Some((i, g)) = it.next() {
                return Some((*base + i, g));
            }
            self.complex = None;
        }
        let b = self.s.as_bytes();
        let p = self.pos;
        if p >= b.len() {
            return None;
        }
        // A printable ASCII byte followed by another (or by the end) is a cluster of its own.
        if is_ascii_printable(b[p]) && b.get(p + 1).is_none_or(|n| is_ascii_printable(*n)) {
            self.pos = p + 1;
            return Some((p, &self.s[p..p + 1]));
        }
        // Otherwise segment up to the next point where two printable ASCII bytes meet.
        let end = complex_end(self.s, p);
        self.pos = end;
        let mut it = self.s[p..end].grapheme_indices(true);
        let first = it.next();
        self.complex = Some((p, it));
        first.map(|(i, g)| (p + i, g))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_segmenter() {
        for s in ["", "abc", "e\u{301}x", "a日b", "👨‍👩‍👧 ok", "a\r\nb", "x\u{20dd}y", "🇺🇸🇯🇵!", "\u{0600}1a", "ab\tc"]
        {
            let fast: Vec<(usize, &str)> = graphemes(s).collect();
            let slow: Vec<(usize, &str)> = s.grapheme_indices(true).collect();
            assert_eq!(fast, slow, "{s:?}");
        }
    }
}
