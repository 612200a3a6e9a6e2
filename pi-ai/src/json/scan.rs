//! A strict pull reader over one JSON text, for the providers' typed reads of their common streamed
//! chunk (issue 20).
//!
//! `serde_json`'s derived readers cost about 3 000 instructions for a 150-byte chunk of
//! `openai-completions` (a visitor per field, a seed per value, the fields of every struct moved
//! through `Option`s); the chunk is read once per streamed delta, so that was the largest part of
//! a delta's cost. [`Scanner`] walks the text in place: keys and strings are borrowed (allocated
//! only to unescape), unknown members are skipped with their syntax checked, nothing else is built.
//!
//! It never explains a failure: on anything it does not read exactly as `serde_json` would (not
//! JSON, a type the caller does not expect, a number with an exponent, nesting past
//! [`MAX_DEPTH`]) it answers [`Reject`], and the caller reads the text with `serde_json`, which
//! handles every text and words every error. So it only ever accepts valid JSON, and it accepts
//! less than `serde_json` does.

use std::borrow::Cow;

/// The reader declined the text: not JSON, or not a shape the caller reads without `serde_json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reject;

/// A read that may be declined.
pub(crate) type Scan<T> = Result<T, Reject>;

/// How deep [`Scanner::skip`] follows nested arrays and objects before it declines.
pub(crate) const MAX_DEPTH: u32 = 64;

/// The reader, at a byte position of its text (always on a character boundary).
pub(crate) struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    /// A reader at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    /// A reader at byte `pos` of `text`, which must be a character boundary.
    pub(crate) fn at(text: &'a str, pos: usize) -> Self {
        debug_assert!(text.is_char_boundary(pos));
        Self { text, pos }
    }

    /// The position: the byte after what was read.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The next byte after whitespace, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                _ => return Some(b),
            }
        }
        None
    }

    /// Consumes `byte`, the next after whitespace.
    #[inline]
    fn expect(&mut self, byte: u8) -> Scan<()> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Reject)
        }
    }

    /// Consumes `word` (a literal), which must come next.
    fn literal(&mut self, word: &[u8]) -> Scan<()> {
        if self.text.as_bytes()[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(Reject)
        }
    }

    /// Consumes a `null` when one comes next; whether it did.
    #[inline]
    pub(crate) fn null(&mut self) -> Scan<bool> {
        if self.peek() == Some(b'n') {
            self.literal(b"null")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Reads an object: `member` is called with each key and must read or skip its value.
    pub(crate) fn object(&mut self, mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Scan<()>) -> Scan<()> {
        self.expect(b'{')?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(Reject);
            }
            let key = self.string()?;
            self.expect(b':')?;
            member(self, key)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(Reject),
            }
        }
    }

    /// Reads an array: `element` is called with each index and must read or skip the element.
    pub(crate) fn array(&mut self, mut element: impl FnMut(&mut Self, usize) -> Scan<()>) -> Scan<()> {
        self.expect(b'[')?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        let mut index = 0;
        loop {
            element(self, index)?;
            index += 1;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(Reject),
            }
        }
    }

    /// Reads a string: borrowed from the text, owned when it had escapes to undo.
    #[inline]
    pub(crate) fn string(&mut self) -> Scan<Cow<'a, str>> {
        let (raw, escaped) = self.raw_string()?;
        if escaped { Ok(Cow::Owned(unescape(raw)?)) } else { Ok(Cow::Borrowed(raw)) }
    }

    /// Reads a string as its raw text between the quotes, its escapes checked but not undone,
    /// and whether it has any.
    #[inline]
    fn raw_string(&mut self) -> Scan<(&'a str, bool)> {
        self.expect(b'"')?;
        let start = self.pos;
        let end = plain_run(self.text.as_bytes(), start)?;
        if self.text.as_bytes()[end] == b'"' {
            self.pos = end + 1;
            return Ok((&self.text[start..end], false));
        }
        self.pos = end;
        self.escaped_string(start)
    }

    /// The rest of [`Self::raw_string`] from the first backslash of a string opened at `start`.
    #[cold]
    #[inline(never)]
    fn escaped_string(&mut self, start: usize) -> Scan<(&'a str, bool)> {
        let bytes = self.text.as_bytes();
        loop {
            self.escape()?;
            let end = plain_run(bytes, self.pos)?;
            self.pos = end;
            if bytes[end] == b'"' {
                self.pos = end + 1;
                return Ok((&self.text[start..end], true));
            }
        }
    }

    /// Reads a string and where its raw text lies in the scanned text: from just after the
    /// opening quote to the closing quote (the position [`Self::string`] leaves is one past it).
    #[inline]
    pub(crate) fn string_span(&mut self) -> Scan<(Cow<'a, str>, std::ops::Range<usize>)> {
        let (raw, escaped) = self.raw_string()?;
        let end = self.pos - 1;
        let span = end - raw.len()..end;
        let value = if escaped { Cow::Owned(unescape(raw)?) } else { Cow::Borrowed(raw) };
        Ok((value, span))
    }

    /// Reads a string with where its raw text lies ([`Self::string_span`]), or a `null` (`None`).
    #[inline]
    pub(crate) fn null_or_string_span(&mut self) -> Scan<Option<(Cow<'a, str>, std::ops::Range<usize>)>> {
        if self.null()? { Ok(None) } else { self.string_span().map(Some) }
    }

    /// Reads a string or a `null` (`None`).
    #[inline]
    pub(crate) fn null_or_string(&mut self) -> Scan<Option<Cow<'a, str>>> {
        if self.null()? { Ok(None) } else { self.string().map(Some) }
    }

    /// Reads an integer that fits an `i64` (as `serde_json` reads one into an `i64`); a fraction,
    /// an exponent or a larger integer is declined.
    pub(crate) fn integer(&mut self) -> Scan<i64> {
        self.peek();
        let bytes = self.text.as_bytes();
        let negative = bytes.get(self.pos) == Some(&b'-');
        let mut i = self.pos + usize::from(negative);
        let digits = i;
        let mut value: i64 = 0;
        while let Some(&d @ b'0'..=b'9') = bytes.get(i) {
            let digit = i64::from(d - b'0');
            value = value
                .checked_mul(10)
                .and_then(|v| if negative { v.checked_sub(digit) } else { v.checked_add(digit) })
                .ok_or(Reject)?;
            i += 1;
        }
        let count = i - digits;
        if count == 0 || (count > 1 && bytes[digits] == b'0') || matches!(bytes.get(i), Some(b'.' | b'e' | b'E')) {
            return Err(Reject);
        }
        self.pos = i;
        Ok(value)
    }

    /// Skips one value of any kind, checking its syntax.
    pub(crate) fn skip(&mut self) -> Scan<()> {
        self.skip_at(0)
    }

    fn skip_at(&mut self, depth: u32) -> Scan<()> {
        match self.peek().ok_or(Reject)? {
            b'"' => self.raw_string().map(drop),
            b'{' if depth < MAX_DEPTH => self.object(|s, _| s.skip_at(depth + 1)),
            b'[' if depth < MAX_DEPTH => self.array(|s, _| s.skip_at(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Reject),
        }
    }

    /// Declines unless only whitespace is left.
    pub(crate) fn end(&mut self) -> Scan<()> {
        if self.peek().is_none() { Ok(()) } else { Err(Reject) }
    }

    /// Reads the escape at the position (a backslash) and the character it stands for.
    fn escape(&mut self) -> Scan<char> {
        let escaped = *self.text.as_bytes().get(self.pos + 1).ok_or(Reject)?;
        self.pos += 2;
        Ok(match escaped {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(),
            _ => return Err(Reject),
        })
    }

    /// After `\u`: four hex digits, a surrogate pair's second half after a first; a lone
    /// surrogate (which `serde_json` does not read into a string) declines.
    fn unicode_escape(&mut self) -> Scan<char> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.text.as_bytes()[self.pos..].starts_with(b"\\u") {
                    return Err(Reject);
                }
                self.pos += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(Reject);
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(Reject),
            _ => first,
        };
        char::from_u32(code).ok_or(Reject)
    }

    fn hex4(&mut self) -> Scan<u32> {
        let digits = self.text.as_bytes().get(self.pos..self.pos + 4).ok_or(Reject)?;
        let mut value = 0;
        for &d in digits {
            value = value * 16 + char::from(d).to_digit(16).ok_or(Reject)?;
        }
        self.pos += 4;
        Ok(value)
    }

    /// Skips a number: JSON's grammar, with at most 18 integer digits and no exponent (a number
    /// `serde_json` would read as out of range is declined rather than judged here).
    fn number(&mut self) -> Scan<()> {
        let bytes = self.text.as_bytes();
        let mut i = self.pos + usize::from(bytes.get(self.pos) == Some(&b'-'));
        let digits = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let count = i - digits;
        if count == 0 || count > 18 || (count > 1 && bytes[digits] == b'0') {
            return Err(Reject);
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            let fraction = i;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == fraction {
                return Err(Reject);
            }
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            return Err(Reject);
        }
        self.pos = i;
        Ok(())
    }
}

/// The position of the first `"` or `\` at or after `from`; a control character (which JSON
/// strings may not hold raw) or the end of the text declines. Eight bytes are tested at a time:
/// the word's lowest flagged byte is always one of those (a flag can be false only above a true
/// one), so the first flagged word gives the answer without a byte loop.
#[inline]
fn plain_run(bytes: &[u8], from: usize) -> Scan<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut i = from;
    while let Some(word) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let word = u64::from_le_bytes(*word);
        let special = zero_byte(word ^ (ONES * u64::from(b'"')))
            | zero_byte(word ^ (ONES * u64::from(b'\\')))
            | (word.wrapping_sub(ONES * 0x20) & !word & HIGH);
        if special != 0 {
            let at = i + (special.trailing_zeros() / 8) as usize;
            return if bytes[at] < 0x20 { Err(Reject) } else { Ok(at) };
        }
        i += 8;
    }
    loop {
        match bytes.get(i) {
            Some(b'"' | b'\\') => return Ok(i),
            Some(0..=0x1f) | None => return Err(Reject),
            Some(_) => i += 1,
        }
    }
}

/// The text of a string read by [`Scanner::raw_string`], its escapes undone.
fn unescape(raw: &str) -> Scan<String> {
    let mut out = String::with_capacity(raw.len());
    let mut s = Scanner::new(raw);
    loop {
        let run = s.pos;
        let end = raw[run..].find('\\').map_or(raw.len(), |at| run + at);
        out.push_str(&raw[run..end]);
        if end == raw.len() {
            return Ok(out);
        }
        s.pos = end;
        out.push(s.escape()?);
    }
}

/// Marks a member as read; a second member of the same name declines (serde's derived readers
/// reject a duplicate field, and the `Value` path keeps the last one).
pub(crate) fn once(seen: &mut bool) -> Scan<()> {
    if std::mem::replace(seen, true) { Err(Reject) } else { Ok(()) }
}

/// Reads a member that may come once: a second one declines, else `read` reads its value into
/// `slot`.
pub(crate) fn read_once<'a, T>(
    s: &mut Scanner<'a>,
    seen: &mut bool,
    slot: &mut T,
    read: impl FnOnce(&mut Scanner<'a>) -> Scan<T>,
) -> Scan<()> {
    once(seen)?;
    *slot = read(s)?;
    Ok(())
}

#[cfg(test)]
mod tests;
