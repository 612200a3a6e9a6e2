//! The lines after a current file's header, read in blocks and parsed on two threads.
//!
//! One thread reads the next block while both parse the current one: the block is cut into
//! pieces of whole lines that each thread takes in turn, one at a time, until none is left, so
//! neither waits for the other for longer than a piece however the work divides (reading a block
//! costs the reading thread a share of its time that varies from file to file and machine to
//! machine). Entries and warnings come out in file order, with the line numbers a line-by-line
//! read gives them.

use std::io::{BufRead, Read};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{LoadWarning, Parsed, parse_line, take_entry};
use crate::session::entries::SessionEntry;

/// Bytes read per block after the header.
pub(super) const BLOCK_BYTES: usize = 8 << 20;
/// Blocks smaller than this are parsed on the calling thread alone.
const SPLIT_MIN_BYTES: usize = 256 << 10;
/// A block is cut into about this many pieces (a thread left without one waits at most for the
/// piece the other is parsing).
const PIECES_PER_BLOCK: usize = 32;
/// The smallest piece.
const PIECE_MIN_BYTES: usize = 8 << 10;

/// What [`read_blocks`] learnt about the end of the file.
pub(super) struct Tail {
    /// The file does not end with a newline (the next append must start with one).
    pub(super) needs_newline: bool,
}

/// Reads the lines after the header (`line_no`: the header's line; `needs_newline`: whether it
/// was unterminated) in blocks of whole lines (about `block_bytes` each), each parsed on two
/// threads while the next block is read; entries and warnings come out in file order, exactly as
/// a line-by-line read gives them.
pub(super) fn read_blocks<R: BufRead>(
    reader: &mut R,
    block_bytes: usize,
    mut line_no: usize,
    mut needs_newline: bool,
    entries: &mut Vec<SessionEntry>,
    warnings: &mut Vec<LoadWarning>,
) -> std::io::Result<Tail> {
    // Two buffers, reused: one parsed while the other is filled (a buffer allocated per block
    // had every block's pages faulted in afresh).
    let mut current: Vec<u8> = Vec::with_capacity(block_bytes + READ_SLACK);
    let mut next: Vec<u8> = Vec::with_capacity(block_bytes + READ_SLACK);
    let mut eof = fill_block(reader, block_bytes, &mut current)?;
    loop {
        if current.is_empty() {
            return Ok(Tail { needs_newline });
        }
        let end = if eof {
            needs_newline = current.last() != Some(&b'\n');
            current.len()
        } else {
            match current.iter().rposition(|b| *b == b'\n') {
                Some(last) => {
                    needs_newline = false;
                    last + 1
                }
                // One line longer than the block: read on until it ends.
                None => {
                    eof = fill_block(reader, block_bytes, &mut current)?;
                    continue;
                }
            }
        };
        next.clear();
        next.extend_from_slice(&current[end..]);
        let torn_tail = eof && needs_newline;
        let (last, read) = parse_block(&current[..end], line_no, torn_tail, entries, warnings, || {
            if eof { Ok(true) } else { fill_block(reader, block_bytes, &mut next) }
        });
        line_no = last;
        if eof {
            return Ok(Tail { needs_newline });
        }
        eof = read?;
        std::mem::swap(&mut current, &mut next);
    }
}

/// Room beyond a block in its buffer: a read that fills a buffer exactly probes for more.
const READ_SLACK: usize = 64 << 10;

/// Reads into `buf` (which may hold the unparsed tail of the last block) until it holds
/// `block_bytes`, or twice what it held when that is more (a line longer than a block); whether
/// the file ended.
fn fill_block<R: BufRead>(reader: &mut R, block_bytes: usize, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let wanted = block_bytes.saturating_sub(buf.len()).max(buf.len().min(block_bytes * 64));
    let read = reader.by_ref().take(wanted as u64).read_to_end(buf)?;
    Ok(read < wanted)
}

/// Parses the lines of `block` (whole lines; the last one unterminated when `torn_tail`), the
/// first being line `after + 1`, while this thread also runs `meanwhile`: a second thread starts
/// on the block's pieces at once, this one joins it once `meanwhile` returns. Returns the number
/// of the last line and what `meanwhile` returned.
fn parse_block<T>(
    block: &[u8],
    after: usize,
    torn_tail: bool,
    entries: &mut Vec<SessionEntry>,
    warnings: &mut Vec<LoadWarning>,
    meanwhile: impl FnOnce() -> T,
) -> (usize, T) {
    let pieces = if block.len() >= SPLIT_MIN_BYTES {
        pieces_of(block, (block.len() / PIECES_PER_BLOCK).max(PIECE_MIN_BYTES))
    } else {
        std::iter::once(0..block.len()).collect()
    };
    let parse_piece = |k: usize| parse_lines(&block[pieces[k].clone()], 0, torn_tail && k + 1 == pieces.len());
    let mut parsed: Vec<Option<ParsedLines>> = Vec::new();
    let result = if pieces.len() < 2 {
        let result = meanwhile();
        parsed.push(Some(parse_piece(0)));
        result
    } else {
        let taken = AtomicUsize::new(0);
        // Each thread takes the next piece nobody has taken, until none is left.
        let take_pieces = || {
            let mut mine = Vec::new();
            loop {
                let k = taken.fetch_add(1, Ordering::Relaxed);
                if k >= pieces.len() {
                    return mine;
                }
                mine.push((k, parse_piece(k)));
            }
        };
        let (ours, theirs, result) = std::thread::scope(|scope| {
            let helper = scope.spawn(take_pieces);
            let result = meanwhile();
            let ours = take_pieces();
            (ours, helper.join(), result)
        });
        parsed.resize_with(pieces.len(), || None);
        // A parser thread that panicked: the pieces it took are parsed again below.
        for (k, part) in ours.into_iter().chain(theirs.unwrap_or_default()) {
            parsed[k] = Some(part);
        }
        result
    };
    // Pieces are numbered from 0 and shifted in order once the lines before them are counted
    // (counting beforehand was a pass over the bytes of its own).
    let mut line = after;
    for (k, part) in parsed.into_iter().enumerate() {
        let mut part = part.unwrap_or_else(|| parse_piece(k));
        part.shift_lines(line);
        line = part.last_line;
        entries.append(&mut part.entries);
        warnings.append(&mut part.warnings);
    }
    (line, result)
}

/// `block` cut after the first newline at or past every `piece_bytes` bytes: ranges of whole
/// lines covering it in order (the last one ends where the block does).
fn pieces_of(block: &[u8], piece_bytes: usize) -> Vec<Range<usize>> {
    let mut pieces = Vec::with_capacity(block.len() / piece_bytes + 1);
    let mut start = 0;
    while start < block.len() {
        let end = block
            .get(start + piece_bytes..)
            .and_then(find_newline)
            .map_or(block.len(), |i| start + piece_bytes + i + 1);
        pieces.push(start..end);
        start = end;
    }
    pieces
}

/// The entries and warnings of a run of lines.
struct ParsedLines {
    entries: Vec<SessionEntry>,
    warnings: Vec<LoadWarning>,
    last_line: usize,
}

impl ParsedLines {
    /// Renumbers lines parsed as if the run began the file: `by` lines come before it.
    fn shift_lines(&mut self, by: usize) {
        self.last_line += by;
        for warning in &mut self.warnings {
            if let Some(line) = warning.line_mut() {
                *line += by;
            }
        }
    }
}

fn parse_lines(bytes: &[u8], after: usize, torn_tail: bool) -> ParsedLines {
    // The list grows as lines are read (counting them first was a pass over the bytes of its own).
    let mut out = ParsedLines { entries: Vec::new(), warnings: Vec::new(), last_line: after };
    let mut rest = bytes;
    while !rest.is_empty() {
        let (line, terminated) = match find_newline(rest) {
            Some(i) => {
                let line = &rest[..i];
                rest = &rest[i + 1..];
                (line, true)
            }
            None => {
                let line = rest;
                rest = &[];
                (line, false)
            }
        };
        out.last_line += 1;
        let last_unterminated = !terminated && torn_tail;
        if let Parsed::Entry(e) = parse_line(line, out.last_line, last_unterminated, &mut out.warnings) {
            take_entry(e, out.last_line, &mut out.entries, &mut out.warnings);
        }
    }
    out
}

/// The position of the first `\n` in `bytes`, eight bytes at a time (a session's lines are long:
/// a byte-by-byte search was a visible part of reading a large file).
fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ (ONES * u64::from(b'\n'));
        // The lowest flagged byte is exact (borrows only run upwards from a zero byte).
        let zeros = x.wrapping_sub(ONES) & !x & HIGHS;
        if zeros != 0 {
            return Some(i + (zeros.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes[i..].iter().position(|b| *b == b'\n').map(|p| i + p)
}

#[cfg(test)]
mod tests {
    use super::{find_newline, pieces_of, read_blocks};
    use crate::session::load::tests::{generated, warning_lines};

    #[test]
    fn small_blocks_read_as_one_line_by_line_pass() {
        // Lines cut at block ends, lines longer than a block, malformed lines and a torn tail all
        // come out as the whole-file read gives them.
        let (file, expected) = generated(2000, 89, |n| if n % 250 == 0 { 20_000 } else { n % 300 });
        let wanted: Vec<String> =
            expected.iter().filter(|(k, _)| *k == "unknown").map(|(_, n)| n.to_string()).collect();
        // 4 KiB blocks are parsed whole; 300 KB ones in pieces on two threads, 600 KB ones too
        // (the whole file: its last piece ends in the torn line).
        for block_bytes in [4096, 300_000, 600_000] {
            let mut entries = Vec::new();
            let mut warnings = Vec::new();
            let mut reader = std::io::Cursor::new(file.as_bytes());
            let tail = read_blocks(&mut reader, block_bytes, 1, false, &mut entries, &mut warnings).expect("read");
            assert!(tail.needs_newline);
            assert_eq!(warning_lines(&warnings), expected, "blocks of {block_bytes}");
            let ids: Vec<&str> = entries.iter().map(|e| e.id()).collect();
            assert_eq!(ids, wanted, "blocks of {block_bytes}");
        }
    }

    #[test]
    fn pieces_are_whole_lines_covering_the_block_in_order() {
        let block = b"aaaa\nbb\ncccccccccccc\nd\n\neeeeeee";
        for piece_bytes in 1..=block.len() + 1 {
            let pieces = pieces_of(block, piece_bytes);
            assert_eq!(pieces.first().map(|r| r.start), Some(0), "pieces of {piece_bytes}");
            assert_eq!(pieces.last().map(|r| r.end), Some(block.len()), "pieces of {piece_bytes}");
            for pair in pieces.windows(2) {
                assert_eq!(pair[0].end, pair[1].start, "pieces of {piece_bytes}");
                assert_eq!(block[pair[0].end - 1], b'\n', "a piece of {piece_bytes} ends mid-line");
            }
            for piece in &pieces {
                // Every piece but the last reaches `piece_bytes`, then ends at the next newline.
                assert!(!piece.is_empty());
                if piece.end < block.len() {
                    assert!(piece.len() > piece_bytes);
                    assert_eq!(
                        find_newline(&block[piece.start + piece_bytes..]),
                        Some(piece.end - 1 - piece.start - piece_bytes)
                    );
                }
            }
        }
        assert!(pieces_of(b"", 4).is_empty());
    }

    #[test]
    fn find_newline_agrees_with_a_byte_search() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..80usize {
            for _ in 0..40 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        // Mostly ordinary bytes, some newlines, neighbours of `\n` and high bytes.
                        let k = (seed % 24) as usize;
                        if k >= 8 { b'a' } else { [b'a', b'\n', 0x0b, 0x09, 0x8a, 0xff, b'"', 0x00][k] }
                    })
                    .collect();
                assert_eq!(find_newline(&bytes), bytes.iter().position(|b| *b == b'\n'), "{bytes:?}");
            }
        }
    }
}
