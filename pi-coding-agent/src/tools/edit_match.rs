//! Matching and applying edits as pi's edit tool does (`edit-diff.ts`): exact match first, else a
//! fuzzy match in a normalized space (NFKC, trailing whitespace per line removed, smart quotes,
//! Unicode dashes and special spaces made ASCII); uniqueness is counted in the fuzzy space; every
//! edit is matched against the original; overlaps are refused; when fuzzy matching was used, the
//! replacements are widened to whole lines so untouched lines keep their bytes.
//!
//! Offsets are byte offsets into Rust strings (pi uses UTF-16 offsets; both index the same
//! strings, so results are the same).

use unicode_normalization::UnicodeNormalization;

/// An edit as the model gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// Text to find.
    pub old_text: String,
    /// Replacement.
    pub new_text: String,
}

/// A replacement of `match_length` bytes at `match_index` by `new_text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    /// Byte offset of the replaced range.
    pub match_index: usize,
    /// Byte length of the replaced range.
    pub match_length: usize,
    /// The text put in its place.
    pub new_text: String,
}

/// Why edits could not be applied; the messages are pi's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// An edit's text was not found.
    #[error("{}", if *.total == 1 {
        format!("Could not find the exact text in {}. The old text must match exactly including all whitespace and newlines.", .path)
    } else {
        format!("Could not find edits[{}] in {}. The oldText must match exactly including all whitespace and newlines.", .index, .path)
    })]
    NotFound {
        /// The path as given.
        path: String,
        /// Index of the edit.
        index: usize,
        /// Number of edits.
        total: usize,
    },
    /// An edit's text occurs more than once.
    #[error("{}", if *.total == 1 {
        format!("Found {} occurrences of the text in {}. The text must be unique. Please provide more context to make it unique.", .occurrences, .path)
    } else {
        format!("Found {} occurrences of edits[{}] in {}. Each oldText must be unique. Please provide more context to make it unique.", .occurrences, .index, .path)
    })]
    Duplicate {
        /// The path as given.
        path: String,
        /// Index of the edit.
        index: usize,
        /// Number of edits.
        total: usize,
        /// How many times it occurs.
        occurrences: usize,
    },
    /// An edit's text is empty.
    #[error("{}", if *.total == 1 {
        format!("oldText must not be empty in {}.", .path)
    } else {
        format!("edits[{}].oldText must not be empty in {}.", .index, .path)
    })]
    EmptyOldText {
        /// The path as given.
        path: String,
        /// Index of the edit.
        index: usize,
        /// Number of edits.
        total: usize,
    },
    /// Two edits overlap.
    #[error(
        "edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit or target disjoint regions."
    )]
    Overlap {
        /// The path as given.
        path: String,
        /// The earlier edit.
        first: usize,
        /// The later edit.
        second: usize,
    },
    /// The edits changed nothing.
    #[error("{}", if *.total == 1 {
        format!("No changes made to {}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.", .path)
    } else {
        format!("No changes made to {}. The replacements produced identical content.", .path)
    })]
    NoChange {
        /// The path as given.
        path: String,
        /// Number of edits.
        total: usize,
    },
    /// Internal consistency failure of line widening.
    #[error("{0}")]
    Internal(&'static str),
}

/// CRLF and lone CR become LF.
pub fn normalize_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// JavaScript's `String.prototype.trimEnd` whitespace.
fn js_is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// pi's `normalizeForFuzzyMatch`.
///
/// ```
/// use pi_coding_agent::tools::edit_match::normalize_for_fuzzy_match;
/// assert_eq!(normalize_for_fuzzy_match("say \u{201C}hi\u{201D} \u{2014} ok  \nx"), "say \"hi\" - ok\nx");
/// ```
pub fn normalize_for_fuzzy_match(text: &str) -> String {
    let nfkc: String = text.nfkc().collect();
    let mut out = String::with_capacity(nfkc.len());
    for (i, line) in nfkc.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line.trim_end_matches(js_is_whitespace));
    }
    out.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

/// Result of [`fuzzy_find_text`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuzzyMatch {
    /// Offset (in `content`, or in its fuzzy normalization when `used_fuzzy_match`).
    pub index: usize,
    /// Length of the match in the same space.
    pub match_length: usize,
    /// Whether the fuzzy space was needed.
    pub used_fuzzy_match: bool,
}

/// pi's `fuzzyFindText`: exact match, else a match in the fuzzy space.
pub fn fuzzy_find_text(content: &str, old_text: &str) -> Option<FuzzyMatch> {
    if let Some(i) = content.find(old_text) {
        return Some(FuzzyMatch { index: i, match_length: old_text.len(), used_fuzzy_match: false });
    }
    let fuzzy_content = normalize_for_fuzzy_match(content);
    let fuzzy_old = normalize_for_fuzzy_match(old_text);
    fuzzy_content.find(&fuzzy_old).map(|i| FuzzyMatch {
        index: i,
        match_length: fuzzy_old.len(),
        used_fuzzy_match: true,
    })
}

/// Occurrences of `old_text` in `content`, both fuzzy-normalized (JavaScript `split` counting).
fn count_occurrences(content: &str, old_text: &str) -> usize {
    let fuzzy_content = normalize_for_fuzzy_match(content);
    let fuzzy_old = normalize_for_fuzzy_match(old_text);
    if fuzzy_old.is_empty() {
        // `"abc".split("")` has one part per UTF-16 unit.
        return super::truncate::utf16_len(&fuzzy_content).saturating_sub(1);
    }
    fuzzy_content.matches(fuzzy_old.as_str()).count()
}

/// Line spans `[start, end)` including each line's `\n`.
fn line_spans(content: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, b) in content.bytes().enumerate() {
        if b == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < content.len() {
        spans.push((start, content.len()));
    }
    spans
}

fn apply_replacements(content: &str, replacements: &[Replacement], offset: usize) -> String {
    let mut result = content.to_owned();
    for r in replacements.iter().rev() {
        let start = r.match_index - offset;
        result.replace_range(start..start + r.match_length, &r.new_text);
    }
    result
}

/// pi's `widenReplacementsToLines`: replacements matched in `base` (fuzzy space) become
/// replacements of whole lines of `original`, rewritten from `base`.
fn widen_replacements_to_lines(
    original: &str,
    base: &str,
    replacements: &[Replacement],
) -> Result<Vec<Replacement>, EditError> {
    let original_lines = line_spans(original);
    let base_lines = line_spans(base);
    if original_lines.len() != base_lines.len() {
        return Err(EditError::Internal(
            "Cannot preserve unchanged lines because the base content has a different line count.",
        ));
    }
    let outside = EditError::Internal("Replacement range is outside the base content.");
    let mut sorted = replacements.to_vec();
    sorted.sort_by_key(|r| r.match_index);
    let mut groups: Vec<(usize, usize, Vec<Replacement>)> = Vec::new();
    for r in sorted {
        let end = r.match_index + r.match_length;
        let start_line = base_lines
            .iter()
            .position(|&(s, e)| r.match_index >= s && r.match_index < e)
            .ok_or_else(|| outside.clone())?;
        let mut end_line = start_line;
        while end_line < base_lines.len() && base_lines[end_line].1 < end {
            end_line += 1;
        }
        if end_line >= base_lines.len() {
            return Err(outside);
        }
        let range_end = end_line + 1;
        match groups.last_mut() {
            Some(g) if start_line < g.1 => {
                g.1 = g.1.max(range_end);
                g.2.push(r);
            }
            _ => groups.push((start_line, range_end, vec![r])),
        }
    }
    Ok(groups
        .into_iter()
        .map(|(start_line, end_line, reps)| {
            let group_start = base_lines[start_line].0;
            let group_end = base_lines[end_line - 1].1;
            let original_start = original_lines[start_line].0;
            Replacement {
                match_index: original_start,
                match_length: original_lines[end_line - 1].1 - original_start,
                new_text: apply_replacements(&base[group_start..group_end], &reps, group_start),
            }
        })
        .collect())
}

/// What applying edits produced: the LF-normalized content before and after, and the
/// replacements (sorted, in `base_content` offsets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppliedEdits {
    /// Content the replacements apply to.
    pub base_content: String,
    /// Content after the replacements.
    pub new_content: String,
    /// The replacements, sorted and disjoint.
    pub replacements: Vec<Replacement>,
}

/// pi's `applyEditsToNormalizedContent`, over LF-normalized content.
pub fn apply_edits_to_normalized_content(
    normalized: &str,
    edits: &[Edit],
    path: &str,
) -> Result<AppliedEdits, EditError> {
    let total = edits.len();
    let edits: Vec<Edit> = edits
        .iter()
        .map(|e| Edit { old_text: normalize_to_lf(&e.old_text), new_text: normalize_to_lf(&e.new_text) })
        .collect();
    for (index, e) in edits.iter().enumerate() {
        if e.old_text.is_empty() {
            return Err(EditError::EmptyOldText { path: path.to_owned(), index, total });
        }
    }
    let used_fuzzy = edits.iter().any(|e| fuzzy_find_text(normalized, &e.old_text).is_some_and(|m| m.used_fuzzy_match));
    let fuzzy_base;
    let replacement_base: &str = if used_fuzzy {
        fuzzy_base = normalize_for_fuzzy_match(normalized);
        &fuzzy_base
    } else {
        normalized
    };
    let mut matched: Vec<(usize, Replacement)> = Vec::with_capacity(total);
    for (index, e) in edits.iter().enumerate() {
        let Some(m) = fuzzy_find_text(replacement_base, &e.old_text) else {
            return Err(EditError::NotFound { path: path.to_owned(), index, total });
        };
        let occurrences = count_occurrences(replacement_base, &e.old_text);
        if occurrences > 1 {
            return Err(EditError::Duplicate { path: path.to_owned(), index, total, occurrences });
        }
        matched.push((
            index,
            Replacement { match_index: m.index, match_length: m.match_length, new_text: e.new_text.clone() },
        ));
    }
    matched.sort_by_key(|(_, r)| r.match_index);
    for pair in matched.windows(2) {
        let (pi, prev) = &pair[0];
        let (ci, cur) = &pair[1];
        if prev.match_index + prev.match_length > cur.match_index {
            return Err(EditError::Overlap { path: path.to_owned(), first: *pi, second: *ci });
        }
    }
    let matched: Vec<Replacement> = matched.into_iter().map(|(_, r)| r).collect();
    let replacements =
        if used_fuzzy { widen_replacements_to_lines(normalized, replacement_base, &matched)? } else { matched };
    let new_content = apply_replacements(normalized, &replacements, 0);
    if new_content == normalized {
        return Err(EditError::NoChange { path: path.to_owned(), total });
    }
    Ok(AppliedEdits { base_content: normalized.to_owned(), new_content, replacements })
}

/// The line ending of the line containing `offset` (pi's `getLineEndingAt`).
fn line_ending_at(content: &str, offset: usize) -> &'static str {
    let bytes = content.as_bytes();
    let line_feed = content[offset.min(content.len())..]
        .find('\n')
        .map(|i| i + offset)
        // No line feed at or after `offset`: the last one before it ends the previous line.
        .or_else(|| content.rfind('\n'));
    match line_feed {
        None => {
            if content.contains('\r') {
                "\r"
            } else {
                "\n"
            }
        }
        Some(lf) => {
            if lf > 0 && bytes[lf - 1] == b'\r' {
                "\r\n"
            } else {
                "\n"
            }
        }
    }
}

/// pi's `applyReplacementsToOriginal`: applies replacements found in the LF-normalized text to the
/// original text, keeping untouched line endings; new line breaks take the ending of the line the
/// replaced range starts on.
pub fn apply_replacements_to_original(original: &str, replacements: &[Replacement]) -> String {
    let crlfs: Vec<usize> = original.match_indices("\r\n").map(|(i, _)| i).collect();
    let mut crlf_before = 0usize;
    let mut to_original = |offset: usize| {
        while crlf_before < crlfs.len() && crlfs[crlf_before] - crlf_before < offset {
            crlf_before += 1;
        }
        offset + crlf_before
    };
    let mut out = String::with_capacity(original.len());
    let mut ends_with_cr = false;
    let mut push = |out: &mut String, part: &str| {
        if part.is_empty() {
            return;
        }
        if ends_with_cr && part.starts_with('\n') {
            out.push('\n');
        }
        out.push_str(part);
        ends_with_cr = part.ends_with('\r');
    };
    let mut position = 0usize;
    for r in replacements {
        let start = to_original(r.match_index);
        push(&mut out, &original[position..start]);
        let ending = line_ending_at(original, start);
        if ending == "\n" {
            push(&mut out, &r.new_text);
        } else {
            push(&mut out, &r.new_text.replace('\n', ending));
        }
        position = to_original(r.match_index + r.match_length);
    }
    push(&mut out, &original[position..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(o: &str, n: &str) -> Edit {
        Edit { old_text: o.into(), new_text: n.into() }
    }

    #[test]
    fn crlf_preserved() {
        let original = "one\r\ntwo\r\nthree\r\n";
        let normalized = normalize_to_lf(original);
        let applied =
            apply_edits_to_normalized_content(&normalized, &[edit("two\nthree", "2\n3\n4")], "c.txt").unwrap();
        assert_eq!(apply_replacements_to_original(original, &applied.replacements), "one\r\n2\r\n3\r\n4\r\n");
    }

    #[test]
    fn fuzzy_widens_to_lines() {
        let content = "say \u{201C}hello\u{201D}   \nkeep\u{2014}this  \nend\n";
        let applied = apply_edits_to_normalized_content(content, &[edit("say \"hello\"", "say \"bye\"")], "q").unwrap();
        assert_eq!(applied.new_content, "say \"bye\"\nkeep\u{2014}this  \nend\n");
    }

    #[test]
    fn errors_use_pi_texts() {
        let e = apply_edits_to_normalized_content("a a", &[edit("a", "b")], "p").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Found 2 occurrences of the text in p. The text must be unique. Please provide more context to make it unique."
        );
    }
}
