//! Editing helpers shared by `Input` and `Editor`: grapheme steps, word navigation (pi's
//! `word-navigation.ts`), the kill ring and the undo stack.

use unicode_segmentation::UnicodeSegmentation;

const PUNCTUATION: &str = "(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`";

fn is_whitespace(s: &str) -> bool {
    !s.is_empty() && s.chars().all(char::is_whitespace)
}

fn is_word_like(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

/// Byte length of the grapheme before `cursor`.
pub fn prev_grapheme_len(text: &str, cursor: usize) -> usize {
    text[..cursor].graphemes(true).next_back().map_or(0, str::len)
}

/// Byte length of the grapheme at `cursor`.
pub fn next_grapheme_len(text: &str, cursor: usize) -> usize {
    text[cursor..].graphemes(true).next().map_or(0, str::len)
}

/// Start of the word before `cursor` (skips whitespace, stops at punctuation inside words).
pub fn find_word_backward(text: &str, cursor: usize) -> usize {
    if cursor == 0 {
        return 0;
    }
    let mut segs: Vec<&str> = text[..cursor].split_word_bounds().collect();
    let mut pos = cursor;
    while let Some(last) = segs.last().copied().filter(|s| is_whitespace(s)) {
        pos -= last.len();
        segs.pop();
    }
    let Some(last) = segs.last().copied() else {
        return pos;
    };
    if is_word_like(last) {
        match last.rfind(|c| PUNCTUATION.contains(c)) {
            None => pos -= last.len(),
            Some(i) => {
                let end = i + last[i..].chars().next().map_or(1, char::len_utf8);
                pos -= last.len() - end;
            }
        }
    } else {
        while let Some(last) = segs.last().copied().filter(|s| !is_word_like(s) && !is_whitespace(s)) {
            pos -= last.len();
            segs.pop();
        }
    }
    pos
}

/// End of the word after `cursor`.
pub fn find_word_forward(text: &str, cursor: usize) -> usize {
    if cursor >= text.len() {
        return text.len();
    }
    let mut segs = text[cursor..].split_word_bounds().peekable();
    let mut pos = cursor;
    while let Some(s) = segs.peek().copied().filter(|s| is_whitespace(s)) {
        pos += s.len();
        segs.next();
    }
    let Some(first) = segs.peek().copied() else {
        return pos;
    };
    if is_word_like(first) {
        pos += first.find(|c| PUNCTUATION.contains(c)).unwrap_or(first.len());
    } else {
        while let Some(s) = segs.peek().copied().filter(|s| !is_word_like(s) && !is_whitespace(s)) {
            pos += s.len();
            segs.next();
        }
    }
    pos
}

/// Emacs-style kill ring.
#[derive(Debug, Clone, Default)]
pub struct KillRing {
    ring: Vec<String>,
}

impl KillRing {
    /// Add killed text; with `accumulate` it joins the last entry (before it when `prepend`).
    pub fn push(&mut self, text: &str, prepend: bool, accumulate: bool) {
        if text.is_empty() {
            return;
        }
        match self.ring.pop() {
            Some(last) if accumulate => self.ring.push(if prepend { format!("{text}{last}") } else { last + text }),
            last => {
                self.ring.extend(last);
                self.ring.push(text.to_string());
            }
        }
    }

    /// The most recent entry.
    pub fn peek(&self) -> Option<&str> {
        self.ring.last().map(String::as_str)
    }

    /// Move the last entry to the front (yank-pop).
    pub fn rotate(&mut self) {
        if self.ring.len() > 1
            && let Some(last) = self.ring.pop()
        {
            self.ring.insert(0, last);
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether the ring is empty.
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}

/// What the last edit was (typing groups into one undo step; kills accumulate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastAction {
    /// Typing a word.
    TypeWord,
    /// A kill command.
    Kill,
    /// A yank.
    Yank,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_navigation() {
        let t = "hello world.foo  bar";
        assert_eq!(find_word_backward(t, t.len()), 17);
        assert_eq!(find_word_backward(t, 17), 12);
        assert_eq!(find_word_forward(t, 0), 5);
        assert_eq!(find_word_forward(t, 5), 11);
        let mut k = KillRing::default();
        k.push("a", false, false);
        k.push("b", true, true);
        assert_eq!(k.peek(), Some("ba"));
    }
}
