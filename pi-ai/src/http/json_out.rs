//! A small JSON writer for request bodies: literal keys, a fast string escaper producing exactly
//! what `serde_json` writes, and `serde_json` itself for embedded `Value`s (so numbers keep their
//! formatting).

use std::cell::Cell;

use serde::Serialize;

/// Strings at least this long are only measured while [`Measuring`] is active.
const MEASURED_MIN: usize = 256;

thread_local! {
    /// While a [`Measuring`] scope is active on this thread: the escaped length of the long
    /// strings that [`write_str`] measured instead of writing.
    static MEASURED: Cell<Option<u64>> = const { Cell::new(None) };
}

/// A scope in which [`write_str`] only counts long strings (their JSON text is not written, its
/// length is added up): for a body that is written once to learn its `Content-Length`, then again
/// into the connection. Whatever is written in the scope is only measured, never sent.
pub(crate) struct Measuring {
    outer: Option<u64>,
}

impl Measuring {
    /// Starts measuring on this thread.
    pub(crate) fn start() -> Self {
        Measuring { outer: MEASURED.with(|m| m.replace(Some(0))) }
    }

    /// Ends the scope; the bytes measured but not written.
    pub(crate) fn finish(self) -> u64 {
        MEASURED.with(Cell::get).unwrap_or(0)
    }
}

impl Drop for Measuring {
    fn drop(&mut self) {
        MEASURED.with(|m| m.set(self.outer));
    }
}

/// Runs `f` with measuring suspended (for text that is read back, not sent).
pub(crate) fn unmeasured<R>(f: impl FnOnce() -> R) -> R {
    let outer = MEASURED.with(|m| m.replace(None));
    let result = f();
    MEASURED.with(|m| m.set(outer));
    result
}

/// The length of `s` written as a JSON string by [`write_str`], quotes included.
///
/// Counted 32 bytes at a time without visiting each escape: every byte adds what its escape adds
/// ([`escape_extra`]), summed into per-lane byte counters that the compiler turns into vector
/// operations (the counters are emptied before they can overflow). A large request's long strings
/// are measured this way before the body is written; the scan is bound by memory, not by the
/// count.
fn escaped_len(s: &str) -> u64 {
    // 51 blocks of at most 5 per lane stay below 256.
    const BLOCKS_PER_SUM: usize = 51;
    let bytes = s.as_bytes();
    let mut extra = 0u64;
    let mut lanes = [0u8; SCAN_BLOCK];
    let mut blocks = bytes.chunks_exact(SCAN_BLOCK);
    let mut pending = 0;
    for block in &mut blocks {
        for (lane, &b) in lanes.iter_mut().zip(block) {
            *lane += escape_extra(b);
        }
        pending += 1;
        if pending == BLOCKS_PER_SUM {
            extra += lanes.iter().map(|&n| u64::from(n)).sum::<u64>();
            lanes = [0; SCAN_BLOCK];
            pending = 0;
        }
    }
    extra += lanes.iter().map(|&n| u64::from(n)).sum::<u64>();
    extra += blocks.remainder().iter().map(|&b| u64::from(escape_extra(b))).sum::<u64>();
    bytes.len() as u64 + 2 + extra
}

/// Bytes scanned together by [`escaped_len`] and [`write_str`] (over a clean stretch).
const SCAN_BLOCK: usize = 32;

/// What escaping `b` adds to its one byte: 1 for a two-byte escape, 5 for `\u00XX`, else 0.
/// Branch-free, so a loop over a block of bytes vectorizes.
#[inline(always)]
const fn escape_extra(b: u8) -> u8 {
    let control = b < 0x20;
    let short = b == b'\n' || b == b'\r' || b == b'\t' || b == 0x08 || b == 0x0c;
    let quote = b == b'"' || b == b'\\';
    (control as u8) * 5 - (short as u8) * 4 + quote as u8
}

/// Whether any byte of `block` needs an escape (branch-free, so it vectorizes).
#[inline(always)]
fn any_escape(block: &[u8]) -> bool {
    block.iter().fold(false, |any, &b| any | needs_escape(b))
}

/// Something that writes itself as compact JSON.
pub(crate) trait WriteJson {
    /// Appends the JSON text to `out`.
    fn write_json(&self, out: &mut Vec<u8>);

    /// [`WriteJson::write_json`], calling `flush` with the buffer wherever the text may be cut
    /// (between the items of a list), so a caller can hand off what is written so far.
    fn write_json_flushing(&self, out: &mut Vec<u8>, flush: &mut dyn FnMut(&mut Vec<u8>)) {
        self.write_json(out);
        flush(out);
    }
}

impl<T: WriteJson> WriteJson for [T] {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.write_json(out);
        }
        out.push(b']');
    }

    fn write_json_flushing(&self, out: &mut Vec<u8>, flush: &mut dyn FnMut(&mut Vec<u8>)) {
        out.push(b'[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.write_json(out);
            flush(out);
        }
        out.push(b']');
    }
}

impl<T: WriteJson> WriteJson for Vec<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.as_slice().write_json(out);
    }

    fn write_json_flushing(&self, out: &mut Vec<u8>, flush: &mut dyn FnMut(&mut Vec<u8>)) {
        self.as_slice().write_json_flushing(out, flush);
    }
}

/// Whether a byte needs an escape in a JSON string (as `serde_json` decides).
const fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// High bits set on exactly the bytes of `w` (little-endian) that need an escape. Each byte is
/// tested on its own (no borrow crosses a byte), so every flagged byte of a word is taken in turn.
#[inline(always)]
fn escape_mask(w: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // High bit set on the zero bytes of `x`: the low seven bits plus 0x7f carry into the high
    // bit unless they are all zero, and the byte's own high bit is or-ed in.
    let zero = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\'))) | zero(w & (ONES * 0xe0))
}

/// The second byte of a two-byte escape (0 for `\u00XX`), by byte below 0x60 (`\` is 0x5c).
const SHORT_ESCAPE: [u8; 0x60] = {
    let mut table = [0u8; 0x60];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table
};

#[inline(always)]
fn write_escape(out: &mut Vec<u8>, b: u8) {
    match SHORT_ESCAPE.get(usize::from(b)) {
        Some(&c) if c != 0 => out.extend_from_slice(&[b'\\', c]),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]);
        }
    }
}

/// Appends `bytes[from..to]`, a run between escapes. A run of at most [`SCAN_BLOCK`] bytes is
/// copied as a whole block and cut back: a copy of a fixed size is two stores, one of a variable
/// size a call to `memcpy`, and the runs between escapes in code or JSON are short.
#[inline(always)]
fn copy_run(out: &mut Vec<u8>, bytes: &[u8], from: usize, to: usize) {
    if to - from <= SCAN_BLOCK
        && let Some(block) = bytes.get(from..).and_then(<[u8]>::first_chunk::<SCAN_BLOCK>)
    {
        let len = out.len();
        out.extend_from_slice(block);
        out.truncate(len + (to - from));
    } else {
        out.extend_from_slice(&bytes[from..to]);
    }
}

/// Appends `s` as a JSON string, escaped exactly as `serde_json` escapes it.
///
/// Eight bytes are tested at a time, and every byte of a word that needs an escape is taken in
/// turn; after a few clean words in a row the text is skipped in clean 32-byte blocks (prose has
/// few escapes, code one every 20 bytes or so, JSON text one every few bytes).
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    if s.len() >= MEASURED_MIN && MEASURED.with(|m| m.get().map(|n| m.set(Some(n + escaped_len(s)))).is_some()) {
        return;
    }
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // `start`: the first byte not yet written; `i`: the next word to test.
    let mut start = 0;
    let mut i = 0;
    let mut clean_words = 0u32;
    while let Some(word) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let mut mask = escape_mask(u64::from_le_bytes(*word));
        if mask == 0 {
            i += 8;
            clean_words += 1;
            if clean_words == 4 {
                while let Some(block) = bytes.get(i..i + SCAN_BLOCK) {
                    if any_escape(block) {
                        break;
                    }
                    i += SCAN_BLOCK;
                }
                clean_words = 0;
            }
            continue;
        }
        clean_words = 0;
        while mask != 0 {
            let j = i + (mask.trailing_zeros() / 8) as usize;
            copy_run(out, bytes, start, j);
            write_escape(out, bytes[j]);
            start = j + 1;
            mask &= mask - 1;
        }
        i += 8;
    }
    for (j, &b) in bytes.iter().enumerate().skip(i) {
        if needs_escape(b) {
            copy_run(out, bytes, start, j);
            write_escape(out, b);
            start = j + 1;
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends any serializable value through `serde_json` (for `Value`s and maps).
pub(crate) fn write_serde<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing to a Vec only fails for maps with non-string keys, which `Value`s cannot hold.
    if let Err(error) = serde_json::to_writer(&mut *out, value) {
        tracing::error!(%error, "request value did not serialize");
        out.extend_from_slice(b"null");
    }
}

/// An object being written: `{` on creation, `}` on [`Obj::end`].
pub(crate) struct Obj<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> Obj<'o> {
    /// Opens an object.
    pub(crate) fn new(out: &'o mut Vec<u8>) -> Self {
        out.push(b'{');
        Obj { out, first: true }
    }

    /// Writes `"key":` (the key is a literal that needs no escape) and returns the buffer for the
    /// value.
    pub(crate) fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    /// `"key":"value"` with the value escaped.
    pub(crate) fn str(&mut self, key: &str, value: &str) {
        write_str(self.key(key), value);
    }

    /// `"key":` followed by a nested writer's JSON.
    pub(crate) fn json<T: WriteJson + ?Sized>(&mut self, key: &str, value: &T) {
        value.write_json(self.key(key));
    }

    /// `"key":` followed by a `serde_json` value.
    pub(crate) fn serde<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        write_serde(self.key(key), value);
    }

    /// Closes the object.
    pub(crate) fn end(self) {
        self.out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_as_serde_json_does() {
        let mut all = String::new();
        for c in (0u32..0x80).filter_map(char::from_u32) {
            all.push(c);
        }
        let samples = [
            "",
            "plain ascii text that is long enough for words",
            "quote \" backslash \\ newline \n tab \t",
            "\u{1F600} emoji and é accents, \u{7f} del, \u{0} nul",
            all.as_str(),
            "12345678\"2345678\\2345678\n",
            "fn main() { println!(\"hello\"); }\n",
        ];
        for s in samples {
            for cut in 0..s.len().min(9) {
                let Some(piece) = s.get(cut..) else { continue };
                let mut out = Vec::new();
                write_str(&mut out, piece);
                assert_eq!(out, serde_json::to_vec(piece).unwrap_or_default(), "{piece:?}");
                assert_eq!(escaped_len(piece), out.len() as u64, "{piece:?}");
            }
        }
    }

    #[test]
    fn long_strings_of_escapes_measure_exactly() {
        // Far past the 51 blocks whose per-lane counts are summed at once.
        for unit in ["\u{1}", "\u{1}\"", "\n", "a\u{1f}\\", "\u{1}\u{1}\u{1}x"] {
            for n in [1usize, 31, 33, 1631, 1633, 5000] {
                let s = unit.repeat(n);
                let expected = serde_json::to_vec(&s).unwrap_or_default();
                assert_eq!(escaped_len(&s), expected.len() as u64, "{unit:?} x {n}");
                let mut out = Vec::new();
                write_str(&mut out, &s);
                assert_eq!(out, expected, "{unit:?} x {n}");
            }
        }
    }

    #[test]
    fn generated_strings_escape_as_serde_json_does() {
        let alphabet = ['a', 'Z', ' ', '"', '\\', '\n', '\t', '\u{1}', '\u{1f}', '\u{7f}', 'é', '\u{1F600}', '0', '/'];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 80) as usize;
            let s: String =
                (0..len).map(|k| alphabet[((seed >> (k % 50)) as usize + k * 7) % alphabet.len()]).collect();
            let mut out = Vec::new();
            write_str(&mut out, &s);
            assert_eq!(out, serde_json::to_vec(&s).unwrap_or_default(), "{s:?}");
            assert_eq!(escaped_len(&s), out.len() as u64, "{s:?}");
        }
    }

    #[test]
    fn clean_stretches_and_runs_of_escapes_of_every_length_escape_as_serde_json_does() {
        // Clean runs of 0..120 bytes (past the four clean words after which blocks are skipped,
        // and past a block) between single escapes or runs of them, multi-byte characters at
        // every offset.
        let escapes = ['"', '\\', '\n', '\t', '\u{1}', '\u{1f}', '\u{8}', '\u{c}', '\r'];
        let clean = ['a', 'é', '😀', '/', '\u{7f}', ' '];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..3000 {
            let mut s = String::new();
            for _ in 0..next(6) {
                for _ in 0..next(120) {
                    s.push(clean[next(clean.len() as u64) as usize]);
                }
                for _ in 0..next(4) {
                    s.push(escapes[next(escapes.len() as u64) as usize]);
                }
            }
            let mut out = b"prefix".to_vec();
            write_str(&mut out, &s);
            let mut expected = b"prefix".to_vec();
            expected.extend(serde_json::to_vec(&s).unwrap_or_default());
            assert_eq!(out, expected, "{s:?}");
        }
    }

    #[test]
    fn a_measuring_scope_counts_long_strings_exactly_and_writes_the_short_ones() {
        let long: String = "line \"one\"\twith\\ escapes \u{1} é\n".repeat(40);
        let short = "short \"one\"\n";
        let mut whole = Vec::new();
        for s in [long.as_str(), short, long.as_str()] {
            write_str(&mut whole, s);
        }
        let mut partial = Vec::new();
        let scope = Measuring::start();
        for s in [long.as_str(), short, long.as_str()] {
            write_str(&mut partial, s);
        }
        let inner = unmeasured(|| {
            let mut v = Vec::new();
            write_str(&mut v, &long);
            v
        });
        let measured = scope.finish();
        assert_eq!(partial, serde_json::to_vec(short).unwrap_or_default());
        assert_eq!(measured + partial.len() as u64, whole.len() as u64);
        assert_eq!(inner, serde_json::to_vec(&long).unwrap_or_default());
        // After the scope, strings are written again.
        let mut after = Vec::new();
        write_str(&mut after, &long);
        assert_eq!(after, inner);
    }
}
