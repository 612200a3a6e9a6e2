//! Kitty graphics bookkeeping of the renderers (pi-tui's `deleteKittyImage`,
//! `deleteAllKittyImages`, `deleteAllKittyPlacements` and the main screen's image tracking):
//! which image ids a line transmits, how many rows an image line reserves below it, how a
//! changed range grows to cover whole images, and the delete commands for images whose lines
//! changed or scrolled away.

use std::collections::BTreeSet;

use super::is_image_line;
use crate::ansi::visible_width;

/// The Kitty graphics escape prefix (APC `G`).
pub const KITTY_PREFIX: &str = "\x1b_G";

/// Delete every Kitty image and free its data (pi's `deleteAllKittyImages`).
pub const DELETE_ALL_KITTY_IMAGES: &str = "\x1b_Ga=d,d=A,q=2\x1b\\";

/// Delete every Kitty placement, keeping the uploaded data (pi's `deleteAllKittyPlacements`).
pub const DELETE_ALL_KITTY_PLACEMENTS: &str = "\x1b_Ga=d,d=a,q=2\x1b\\";

/// Delete the Kitty image `id` and free its data (pi's `deleteKittyImage`).
pub fn delete_kitty_image(id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={id},q=2\x1b\\")
}

/// The image ids (`i=`) and rows (`r=`, 1 without it) of a line's first Kitty command (pi's
/// `parseKittyImageHeader`): values that are not integers in 1..=2³²−1 are ignored.
pub fn kitty_header(line: &str) -> Option<(Vec<u32>, usize)> {
    let start = line.find(KITTY_PREFIX)? + KITTY_PREFIX.len();
    let end = start + line[start..].find(';')?;
    let mut ids = Vec::new();
    let mut rows = 1usize;
    for param in line[start..end].split(',') {
        let Some((key, value)) = param.split_once('=') else { continue };
        let Some(number) = parse_positive(value) else { continue };
        match key {
            "i" => ids.push(number),
            "r" => rows = number as usize,
            _ => {}
        }
    }
    Some((ids, rows))
}

/// A decimal in 1..=0xffffffff, as JavaScript's `Number(value)` reads it for these parameters.
fn parse_positive(value: &str) -> Option<u32> {
    let trimmed = value.trim();
    if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = trimmed.parse().ok()?;
    u32::try_from(n).ok().filter(|&n| n > 0)
}

/// The image ids a line transmits.
pub fn kitty_ids(line: &str) -> Vec<u32> {
    kitty_header(line).map(|(ids, _)| ids).unwrap_or_default()
}

/// Every image id in `lines`, first seen first (the order of pi's `Set`).
pub fn ordered_ids<S: AsRef<str>>(lines: &[S]) -> Vec<u32> {
    let mut seen = BTreeSet::new();
    lines.iter().flat_map(|l| kitty_ids(l.as_ref())).filter(|&id| seen.insert(id)).collect()
}

/// The delete commands for `ids`, in order.
pub fn delete_images(ids: &[u32]) -> String {
    ids.iter().map(|&id| delete_kitty_image(id)).collect()
}

/// How many rows the image line at `index` reserves (pi's `getKittyImageReservedRows`): its
/// `r=` rows, cut at `max_index`, at the end of `lines` and at the first row below it that is
/// not empty.
pub fn reserved_rows<S: AsRef<str>>(lines: &[S], index: usize, max_index: usize) -> usize {
    let rows = lines.get(index).and_then(|l| kitty_header(l.as_ref())).map_or(1, |(_, rows)| rows);
    if rows <= 1 {
        return 1;
    }
    let max_rows = rows.min((max_index + 1).saturating_sub(index)).min(lines.len() - index);
    let mut reserved = 1;
    while reserved < max_rows {
        let line = lines[index + reserved].as_ref();
        if is_image_line(line) || visible_width(line) > 0 {
            break;
        }
        reserved += 1;
    }
    reserved
}

/// Grow the changed range `first..=last` to whole images, old and new (pi's
/// `expandChangedRangeForKittyImages`).
pub fn expand_changed_range<A: AsRef<str>, B: AsRef<str>>(
    previous: &[A],
    next: &[B],
    first: usize,
    last: usize,
) -> (usize, usize) {
    let range = grow_to_images(previous, first, last, (first, last));
    grow_to_images(next, first, last, range)
}

/// `range` grown to the image blocks of `lines` that touch `first..=last`: every image from
/// `first` on, and one above it whose reserved rows reach `first` (only empty rows can lie
/// between, so the walk up stops at the first row that is not empty).
fn grow_to_images<S: AsRef<str>>(lines: &[S], first: usize, last: usize, range: (usize, usize)) -> (usize, usize) {
    let (mut lo, mut hi) = range;
    let mut grow = |i: usize| {
        let line = lines[i].as_ref();
        if !line.contains(KITTY_PREFIX) || kitty_ids(line).is_empty() {
            return;
        }
        let block_end = i + reserved_rows(lines, i, lines.len() - 1) - 1;
        if i >= first || (i <= last && block_end >= first) {
            lo = lo.min(i);
            hi = hi.max(block_end);
        }
    };
    for i in first..lines.len() {
        grow(i);
    }
    let empty = |line: &str| !is_image_line(line) && visible_width(line) == 0;
    if lines.get(first).is_some_and(|l| empty(l.as_ref())) {
        let mut i = first;
        while i > 0 {
            i -= 1;
            if !empty(lines[i].as_ref()) {
                grow(i);
                break;
            }
        }
    }
    (lo, hi)
}

/// The delete commands for the images of `previous` lines `first..=last` (pi's
/// `deleteChangedKittyImages`).
pub fn delete_changed<S: AsRef<str>>(previous: &[S], first: usize, last: usize) -> String {
    if last < first || first >= previous.len() {
        return String::new();
    }
    let end = last.min(previous.len() - 1);
    delete_images(&ordered_ids(&previous[first..=end]))
}

/// The cells an image line draws over, relative to it (pi's `getImageLineExtent`): rows
/// `first..=last` and columns `start..end` (`usize::MAX`: to the right edge). Kitty images extend
/// down from their line (`r=` rows, `c=` columns); iTerm2 lines move up (`CSI n A`) first, so
/// their image ends at the line.
fn image_extent(line: &str) -> Option<(i64, i64, usize, usize)> {
    const ITERM2_PREFIX: &str = "\x1b]1337;File=";
    if let Some(start) = line.find(KITTY_PREFIX) {
        let controls = line[start + KITTY_PREFIX.len()..].split(';').next().unwrap_or("");
        let value = |key: &str| {
            controls.split(',').find_map(|c| c.strip_prefix(key).and_then(|v| v.strip_prefix('='))).and_then(digits)
        };
        let col = visible_width(&line[..start]);
        let rows = value("r").filter(|&r| r > 0).unwrap_or(1);
        let end = value("c").map_or(usize::MAX, |c| col + c);
        return Some((0, rows as i64 - 1, col, end));
    }
    let start = line.find(ITERM2_PREFIX)?;
    let before = &line[..start];
    let up = before.rfind("\x1b[").filter(|&at| {
        let tail = &before[at + 2..];
        tail.ends_with('A') && tail.len() > 1 && tail[..tail.len() - 1].bytes().all(|b| b.is_ascii_digit())
    });
    let lines_up = up.and_then(|at| digits(&before[at + 2..before.len() - 1])).unwrap_or(0);
    let col = visible_width(up.map_or(before, |at| &before[..at]));
    let rest = &line[start..];
    let width = ["=width=", ";width="].iter().find_map(|key| {
        let at = rest.find(key)? + key.len();
        let number: String = rest[at..].chars().take_while(char::is_ascii_digit).collect();
        let next = rest[at + number.len()..].chars().next();
        (!number.is_empty() && matches!(next, Some(';' | ':'))).then(|| digits(&number)).flatten()
    });
    Some((-(lines_up as i64), 0, col, width.map_or(usize::MAX, |w| col + w)))
}

fn digits(text: &str) -> Option<usize> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

/// A line without its Kitty and iTerm2 image sequences (and iTerm2's cursor-up), its text kept
/// (pi's `stripImageSequences`).
fn strip_image_sequences(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix(KITTY_PREFIX)
            && let Some(end) = after.find('\x1b').filter(|&e| after[e..].starts_with("\x1b\\"))
        {
            rest = &after[end + 2..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("\x1b]1337;File=")
            && let Some(end) = after.find('\x07')
        {
            rest = &after[end + 1..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("\x1b[") {
            let n = after.bytes().take_while(u8::is_ascii_digit).count();
            if n > 0
                && let Some(tail) = after[n..].strip_prefix("A\x1b]1337;File=")
                && let Some(end) = tail.find('\x07')
            {
                rest = &tail[end + 1..];
                continue;
            }
        }
        let ch = rest.chars().next().unwrap_or_default();
        out.push(ch);
        rest = &rest[ch.len_utf8()..];
    }
    out
}

/// Drop the images that an overlay at `row`, `col` (viewport rows), `width` × `height` covers
/// (pi's `hideImagesUnderOverlay`): terminals draw images above text, so the overlay could not
/// paint over them; the renderers delete such an image when its line changes and draw it again
/// once the overlay is gone.
pub fn hide_images_under_overlay(
    lines: &mut [String],
    (row, col, width, height): (usize, usize, usize, usize),
    viewport_start: usize,
) {
    if height == 0 {
        return;
    }
    let (row, height) = (row as i64, height as i64);
    for (index, line) in lines.iter_mut().enumerate() {
        let Some((first, last, start, end)) = image_extent(line) else { continue };
        let first = index as i64 + first - viewport_start as i64;
        let last = index as i64 + last - viewport_start as i64;
        if first < row + height && last >= row && start < col + width && end > col {
            *line = strip_image_sequences(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_ids_and_rows() {
        let line = "\x1b_Ga=T,f=100,q=2,C=1,c=10,r=3,i=42;AAAA\x1b\\";
        assert_eq!(kitty_header(line), Some((vec![42], 3)));
        assert_eq!(kitty_header("\x1b_Ga=T,i=0,r=x;A\x1b\\"), Some((vec![], 1)));
        assert_eq!(kitty_header("\x1b_Ga=T,i=4294967296;A"), Some((vec![], 1)));
        assert_eq!(kitty_header("plain"), None);
        let lines = [line, "", "", "text"];
        assert_eq!(reserved_rows(&lines, 0, 3), 3);
        assert_eq!(reserved_rows(&lines, 0, 1), 2);
        assert_eq!(expand_changed_range(&lines, &lines, 2, 2), (0, 2));
        assert_eq!(delete_changed(&lines, 0, 9), "\x1b_Ga=d,d=I,i=42,q=2\x1b\\");
        let mut lines =
            vec!["ab\x1b_Ga=T,c=4,r=2,i=1;AA\x1b\\cd".to_owned(), "\x1b[1A\x1b]1337;File=width=3;x:AA\x07z".to_owned()];
        hide_images_under_overlay(&mut lines, (1, 2, 2, 1), 0);
        assert_eq!(lines, ["abcd", "z"]);
        assert_eq!(ordered_ids(&["\x1b_Gi=7;", "\x1b_Gi=3;", "\x1b_Gi=7;"]), [7, 3]);
    }
}
