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

/// Bytes scanned together by [`escaped_len`] and [`Escapes`].
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

/// The positions of the bytes of a string that need an escape, in order: clean blocks of
/// [`SCAN_BLOCK`] bytes skipped whole, then eight bytes at a time, jumping to the first flagged
/// byte of a flagged word, then byte by byte for the tail. [`write_str`] scans
/// with it.
struct Escapes<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Escapes<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Escapes { bytes, at: 0 }
    }
}

impl Iterator for Escapes<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        let bytes = self.bytes;
        // Clean blocks are skipped whole; a flagged one is searched eight bytes at a time.
        while let Some(block) = bytes.get(self.at..self.at + SCAN_BLOCK) {
            if any_escape(block) {
                break;
            }
            self.at += SCAN_BLOCK;
        }
        while let Some(chunk) = bytes.get(self.at..self.at + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let mask = escape_mask(u64::from_le_bytes(word));
            if mask == 0 {
                self.at += 8;
                continue;
            }
            let j = self.at + (mask.trailing_zeros() / 8) as usize;
            self.at = j + 1;
            if needs_escape(bytes[j]) {
                return Some(j);
            }
        }
        while let Some(&b) = bytes.get(self.at) {
            let j = self.at;
            self.at += 1;
            if needs_escape(b) {
                return Some(j);
            }
        }
        None
    }
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

/// High bits set on bytes of `w` (little-endian) that need an escape. The lowest set bit is exact
/// (borrows only run upwards from a flagged byte), higher ones may be false positives.
fn escape_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
    below_space | has_zero(w ^ (ONES * u64::from(b'"'))) | has_zero(w ^ (ONES * u64::from(b'\\')))
}

fn write_escape(out: &mut Vec<u8>, b: u8) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        }
    }
}

/// Appends `s` as a JSON string, escaped exactly as `serde_json` escapes it.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    if s.len() >= MEASURED_MIN && MEASURED.with(|m| m.get().map(|n| m.set(Some(n + escaped_len(s)))).is_some()) {
        return;
    }
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for j in Escapes::new(bytes) {
        out.extend_from_slice(&bytes[start..j]);
        write_escape(out, bytes[j]);
        start = j + 1;
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
