//! The searchable text of the transcript (pi's `buildSearchCorpus`, `findSearchCorpusMatches` and
//! `AltScreenSearchIndex`).
//!
//! The rendered lines are stripped of escape sequences and joined into one text in which every
//! run of whitespace, within a line or across line ends, is a single space, so a query finds
//! words wrapped onto the next row. Each non-space piece of the text keeps where it was drawn
//! (a span: row and columns); a match is turned back into per-row column ranges through them.
//! Printable ASCII lines give one span per word (columns follow the characters), other lines one
//! span per grapheme (columns from its width), so a match covers whole wide characters.
//!
//! Matching is case-insensitive as pi's `RegExp(query, "giu")`: the text is stored case-folded
//! (simple case folding, one character for one) and the folded query is looked for left to
//! right, matches never overlapping.
//!
//! The index is incremental: the text is rebuilt only from the first row that changed (rows
//! before it keep their pieces and spans), and the matches that end before that row's text are
//! kept and the search resumes after them. A query typed on from the last one (that cannot overlap
//! itself) is looked for only where the last one matched; another query searches the cached text.

use std::rc::Rc;

use crate::ansi::{grapheme_width, graphemes, is_printable_ascii, strip_terminal_sequences};
use crate::component::Lines;

/// A stretch of one row covered by a match: columns `start_col..end_col`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchSegment {
    /// The document row.
    pub row: usize,
    /// First column.
    pub start_col: usize,
    /// Column after the last.
    pub end_col: usize,
}

/// One match: its segments in row order (several when it runs over line ends or spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchMatch {
    /// The covered cells, row by row.
    pub segments: Vec<MatchSegment>,
    /// Where the match ends in the folded text (for keeping it across updates).
    text_end: usize,
}

impl SearchMatch {
    /// The first segment's row.
    pub fn first_row(&self) -> usize {
        self.segments.first().map_or(0, |s| s.row)
    }

    /// The last segment's row.
    pub fn last_row(&self) -> usize {
        self.segments.last().map_or(0, |s| s.row)
    }
}

/// pi's `getAltScreenSearchMatchKey`: where a match starts and ends (row and column), which
/// identifies it again after the transcript changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchKey {
    start: (usize, usize),
    end: (usize, usize),
}

/// The key of `m` (`None` for a match without segments, pi's empty key).
pub fn match_key(m: &SearchMatch) -> Option<MatchKey> {
    let first = m.segments.first()?;
    let last = m.segments.last()?;
    Some(MatchKey { start: (first.row, first.start_col), end: (last.row, last.end_col) })
}

#[derive(Debug, Clone, Copy)]
struct Span {
    text_start: usize,
    text_end: usize,
    row: usize,
    start_col: usize,
    end_col: usize,
    linear: bool,
}

/// Where a row starts in the text and in the spans.
#[derive(Debug, Clone, Copy)]
struct RowStart {
    text: usize,
    span: usize,
}

/// The folded text with its spans, and where each row starts in them.
#[derive(Debug, Default)]
struct Corpus {
    text: String,
    spans: Vec<Span>,
    rows: Vec<RowStart>,
}

/// JavaScript's `\s` (what pi's corpus and query normalisation treat as a space).
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// Simple case folding for one character (`RegExp`'s `iu` canonicalisation): the lowercase form
/// when it is one character, plus the lowercase letters that fold to another one.
fn fold_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    match c {
        'ſ' => 's',
        'ς' => 'σ',
        'ϐ' => 'β',
        'ϑ' => 'θ',
        'ϕ' => 'φ',
        'ϖ' => 'π',
        'ϰ' => 'κ',
        'ϱ' => 'ρ',
        'ϵ' => 'ε',
        'ẛ' => 'ṡ',
        'µ' => 'μ',
        '\u{345}' | '\u{1fbe}' => 'ι',
        _ => {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) => l,
                _ => c,
            }
        }
    }
}

fn push_folded(out: &mut String, text: &str) {
    if text.is_ascii() {
        out.extend(text.bytes().map(|b| b.to_ascii_lowercase() as char));
    } else {
        out.extend(text.chars().map(fold_char));
    }
}

/// pi's `normalizeQuery` (whitespace runs as one space, trimmed), case-folded.
pub fn normalize_query(query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    let mut space = false;
    for c in query.chars() {
        if is_js_space(c) {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(fold_char(c));
    }
    out
}

impl Corpus {
    /// Drops rows `row..` (their text and spans).
    fn truncate(&mut self, row: usize) {
        if let Some(start) = self.rows.get(row).copied() {
            self.text.truncate(start.text);
            self.spans.truncate(start.span);
            self.rows.truncate(row);
        }
    }

    /// Appends one row (pi's loop body of `buildSearchCorpus`).
    fn push_row(&mut self, line: &str) {
        let row = self.rows.len();
        self.rows.push(RowStart { text: self.text.len(), span: self.spans.len() });
        let stripped = strip_terminal_sequences(line);
        if is_printable_ascii(&stripped) {
            // Whole words at once: their columns follow their bytes.
            for (column, word) in split_ascii_words(&stripped) {
                if !self.text.is_empty() {
                    self.text.push(' ');
                }
                let start = self.text.len();
                push_folded(&mut self.text, word);
                let end_col = column + word.len();
                self.spans.push(Span {
                    text_start: start,
                    text_end: self.text.len(),
                    row,
                    start_col: column,
                    end_col,
                    linear: true,
                });
            }
            return;
        }
        let mut pending = !self.text.is_empty();
        let mut column = 0;
        for (_, grapheme) in graphemes(&stripped) {
            let width = grapheme_width(grapheme);
            if grapheme.chars().all(is_js_space) {
                pending |= !self.text.is_empty();
                column += width;
                continue;
            }
            if pending {
                self.text.push(' ');
                pending = false;
            }
            let start = self.text.len();
            push_folded(&mut self.text, grapheme);
            let end_col = column + width;
            self.spans.push(Span {
                text_start: start,
                text_end: self.text.len(),
                row,
                start_col: column,
                end_col,
                linear: false,
            });
            column = end_col;
        }
    }
}

/// The space-separated words of a printable ASCII line with their byte (= column) offsets.
fn split_ascii_words(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    line.split(' ').filter_map(move |word| {
        let at = offset;
        offset += word.len() + 1;
        (!word.is_empty()).then_some((at, word))
    })
}

/// Turns the text range `start..end` into row segments (pi's inner loop of
/// `findSearchCorpusMatches`); `span_index` moves past the spans before the range.
fn segments_of(spans: &[Span], span_index: &mut usize, start: usize, end: usize) -> Vec<MatchSegment> {
    while *span_index < spans.len() && spans[*span_index].text_end <= start {
        *span_index += 1;
    }
    let mut segments: Vec<MatchSegment> = Vec::new();
    for span in &spans[*span_index..] {
        if span.text_start >= end {
            break;
        }
        if span.text_end <= start {
            continue;
        }
        let (start_col, end_col) = if span.linear {
            (
                span.start_col + start.max(span.text_start) - span.text_start,
                span.start_col + end.min(span.text_end) - span.text_start,
            )
        } else {
            (span.start_col, span.end_col)
        };
        match segments.last_mut() {
            Some(previous) if previous.row == span.row && start_col <= previous.end_col => {
                previous.end_col = previous.end_col.max(end_col);
            }
            _ => segments.push(MatchSegment { row: span.row, start_col, end_col }),
        }
    }
    while *span_index < spans.len() && spans[*span_index].text_end <= end {
        *span_index += 1;
    }
    segments
}

/// The matches of the folded `query` in `corpus` from text offset `from` on.
fn find_from(corpus: &Corpus, query: &str, from: usize, out: &mut Vec<SearchMatch>) {
    if query.is_empty() {
        return;
    }
    let mut span_index = corpus.spans.partition_point(|s| s.text_end <= from);
    let mut at = from;
    while let Some(offset) = corpus.text.get(at..).and_then(|rest| rest.find(query)) {
        let start = at + offset;
        let end = start + query.len();
        let segments = segments_of(&corpus.spans, &mut span_index, start, end);
        if !segments.is_empty() {
            out.push(SearchMatch { segments, text_end: end });
        }
        at = end;
    }
}

/// Whether the matches of `query` can be found among those of `previous`: it extends `previous`,
/// and `previous` cannot overlap itself (no prefix of it is also its suffix), so its
/// left-to-right matches were every place it occurs.
fn narrows(previous: &str, query: &str) -> bool {
    let p = previous.as_bytes();
    !p.is_empty()
        && query.len() > p.len()
        && query.starts_with(previous)
        && (1..p.len()).all(|k| p[..k] != p[p.len() - k..])
}

/// The left-to-right matches of `query` among the matches of a prefix of it `previous_len`
/// bytes long ([`narrows`]).
fn narrow(corpus: &Corpus, previous: Vec<SearchMatch>, previous_len: usize, query: &str) -> Vec<SearchMatch> {
    let mut out = Vec::new();
    let mut span_index = 0;
    let mut free_from = 0;
    for m in previous {
        let start = m.text_end - previous_len;
        if start < free_from || !corpus.text[start..].starts_with(query) {
            continue;
        }
        let end = start + query.len();
        let segments = segments_of(&corpus.spans, &mut span_index, start, end);
        if !segments.is_empty() {
            out.push(SearchMatch { segments, text_end: end });
        }
        free_from = end;
    }
    out
}

/// pi's `findAltScreenSearchMatches`: the matches of `query` in `lines`, without an index.
pub fn find_matches<S: AsRef<str>>(lines: &[S], query: &str) -> Vec<SearchMatch> {
    let query = normalize_query(query);
    let mut corpus = Corpus::default();
    for line in lines {
        corpus.push_row(line.as_ref());
    }
    let mut out = Vec::new();
    find_from(&corpus, &query, 0, &mut out);
    out
}

/// The first row where `new` differs from `old` (`None`: the same lines). Segments shared with
/// the last frame are skipped by identity.
fn first_difference(old: &[Lines], new: &[Lines]) -> Option<usize> {
    let mut row = 0;
    let mut shared = 0;
    while shared < old.len() && shared < new.len() && Rc::ptr_eq(&old[shared], &new[shared]) {
        row += new[shared].len();
        shared += 1;
    }
    let mut a = old[shared..].iter().flat_map(|s| s.iter());
    let mut b = new[shared..].iter().flat_map(|s| s.iter());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (Some(x), Some(y)) if x == y => row += 1,
            _ => return Some(row),
        }
    }
}

/// pi's `AltScreenSearchIndex`: the corpus and the matches, kept while the lines and the query
/// stay the same.
#[derive(Debug, Default)]
pub struct SearchIndex {
    source: Vec<Lines>,
    corpus: Corpus,
    built: bool,
    query: Option<String>,
    matches: Vec<SearchMatch>,
    rebuilt_rows: usize,
}

impl SearchIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the index up to `lines` (the document as segments) and `query`; returns whether
    /// the matches may have changed (the lines or the normalised query did).
    pub fn search(&mut self, lines: &[Lines], query: &str) -> bool {
        let query = normalize_query(query);
        let query_changed = self.query.as_deref() != Some(query.as_str());
        let changed_row = if self.built { first_difference(&self.source, lines) } else { Some(0) };
        let mut from = 0;
        if let Some(row) = changed_row {
            let row = row.min(self.corpus.rows.len());
            let keep_text = self.corpus.rows.get(row).map_or(self.corpus.text.len(), |r| r.text);
            self.corpus.truncate(row);
            let before = self.corpus.rows.len();
            for line in lines.iter().flat_map(|s| s.iter()).skip(row) {
                self.corpus.push_row(line);
            }
            self.rebuilt_rows = self.corpus.rows.len() - before;
            self.source = lines.to_vec();
            self.built = true;
            // The matches that end in the unchanged text stand. No other match can start before
            // `keep_text - query.len()` (it would end in the unchanged text and be one of them),
            // so the search resumes there, as a full left-to-right search would go on.
            self.matches.retain(|m| m.text_end <= keep_text);
            let mut safe = keep_text.saturating_sub(query.len());
            while !self.corpus.text.is_char_boundary(safe) {
                safe -= 1;
            }
            from = safe.max(self.matches.last().map_or(0, |m| m.text_end));
        }
        if query_changed {
            let previous = self.query.replace(query).unwrap_or_default();
            let query = self.query.as_deref().unwrap_or("");
            if changed_row.is_none() && narrows(&previous, query) {
                // Typing on: the new matches are among the old ones.
                self.matches = narrow(&self.corpus, std::mem::take(&mut self.matches), previous.len(), query);
                return true;
            }
            self.matches.clear();
            from = 0;
        }
        if changed_row.is_none() && !query_changed {
            return false;
        }
        let query = self.query.as_deref().unwrap_or("");
        find_from(&self.corpus, query, from, &mut self.matches);
        true
    }

    /// The matches of the last [`SearchIndex::search`].
    pub fn matches(&self) -> &[SearchMatch] {
        &self.matches
    }

    /// How many rows the last rebuild of the text indexed (for tests of the incremental path).
    pub fn rebuilt_rows(&self) -> usize {
        self.rebuilt_rows
    }
}
