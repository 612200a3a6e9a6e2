//! The index, the matching and the selection of an open search, checked against pi's rules.

use std::rc::Rc;

use proptest::prelude::*;

use super::*;
use crate::component::Component;

fn seg(row: usize, start_col: usize, end_col: usize) -> MatchSegment {
    MatchSegment { row, start_col, end_col }
}

fn segments(lines: &[&str], query: &str) -> Vec<Vec<MatchSegment>> {
    find_matches(lines, query).into_iter().map(|m| m.segments).collect()
}

fn doc(lines: &[&str]) -> Vec<Lines> {
    vec![lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().into()]
}

#[test]
fn matching_ignores_case_and_keeps_every_word_its_own_segment() {
    assert_eq!(segments(&["Item ITEM item"], "iTeM"), [vec![seg(0, 0, 4)], vec![seg(0, 5, 9)], vec![seg(0, 10, 14)]]);
    // pi cuts a match at spaces: "item 3" in "- item 30" is "item" and "3".
    assert_eq!(segments(&["- item 30"], "item 3"), [vec![seg(0, 2, 6), seg(0, 7, 8)]]);
    // Matches do not overlap.
    assert_eq!(segments(&["aaaa"], "aa"), [vec![seg(0, 0, 2)], vec![seg(0, 2, 4)]]);
    assert!(segments(&["abc"], "   ").is_empty(), "a blank query finds nothing");
    // Non-ASCII case folding as RegExp's `iu`: final sigma, long s, Kelvin sign.
    assert_eq!(find_matches(&["ΟΔΟΣ"], "οδος").len(), 1);
    assert_eq!(find_matches(&["ſtop"], "STOP").len(), 1);
    assert_eq!(find_matches(&["\u{212a}elvin"], "kelvin").len(), 1);
}

#[test]
fn whitespace_runs_and_line_ends_are_one_space() {
    let lines = ["the end of foo", "   bar starts here", "", "baz"];
    assert_eq!(segments(&lines, "  foo \t bar "), [vec![seg(0, 11, 14), seg(1, 3, 6)]]);
    assert_eq!(segments(&lines, "here baz"), [vec![seg(1, 14, 18), seg(3, 0, 3)]], "an empty line too");
    assert!(segments(&lines, "foobar").is_empty());
}

#[test]
fn wide_characters_take_their_cells() {
    let lines = ["日本語 text", "a 日本 b"];
    assert_eq!(segments(&lines, "本"), [vec![seg(0, 2, 4)], vec![seg(1, 4, 6)]]);
    // Adjacent graphemes join into one segment.
    assert_eq!(segments(&lines, "日本語 TEXT"), [vec![seg(0, 0, 6), seg(0, 7, 11)]]);
    // A non-ASCII line is indexed by grapheme: a match covers whole clusters.
    assert_eq!(segments(&["café 👍🏽 ok"], "é"), [vec![seg(0, 3, 4)]]);
    assert_eq!(segments(&["café 👍🏽 ok"], "👍🏽 ok"), [vec![seg(0, 5, 7), seg(0, 8, 10)]]);
}

#[test]
fn escape_codes_are_not_text_and_matches_span_styled_segments() {
    let lines = ["a \x1b[31mre\x1b[1md\x1b[0m word \x1b]8;;http://x\x07link\x1b]8;;\x07"];
    assert_eq!(segments(&lines, "red word"), [vec![seg(0, 2, 5), seg(0, 6, 10)]]);
    assert_eq!(segments(&lines, "link"), [vec![seg(0, 11, 15)]]);
    assert!(segments(&lines, "31m").is_empty());
}

#[test]
fn match_keys_name_the_first_and_last_cells() {
    let m = find_matches(&["x foo", "bar"], "foo bar");
    let other = find_matches(&["x foo", "bar"], "foo");
    assert!(match_key(&m[0]).is_some());
    assert_ne!(match_key(&m[0]), match_key(&other[0]));
    assert_eq!(match_key(&m[0]), match_key(&find_matches(&["y foo", "bar"], "FOO BAR")[0]));
}

#[test]
fn the_index_rebuilds_only_from_the_first_changed_row() {
    let mut index = SearchIndex::new();
    let head: Lines = vec!["header foo".to_owned(); 100].into();
    let body = doc(&["foo", "tail foo"]);
    let lines = vec![head.clone(), body[0].clone()];
    assert!(index.search(&lines, "foo"));
    assert_eq!(index.rebuilt_rows(), 102);
    assert_eq!(index.matches().len(), 102);
    assert!(!index.search(&lines, "foo"), "nothing changed");
    assert!(!index.search(&lines, "FOO "), "a query that normalises the same changes nothing");
    // The last segment grows (a streamed reply): only the new row is indexed.
    let grown = vec![head.clone(), doc(&["foo", "tail foo", "bar foo"])[0].clone()];
    assert!(index.search(&grown, "foo"));
    assert_eq!(index.rebuilt_rows(), 1);
    // A changed row is indexed again with the rows after it.
    let edited = vec![head.clone(), doc(&["foo", "tail fox", "bar foo"])[0].clone()];
    assert!(index.search(&edited, "foo"));
    assert_eq!(index.rebuilt_rows(), 2);
    assert_eq!(index.matches(), &find_matches(&flat(&edited), "foo")[..]);
    assert!(index.search(&grown, "foo"));
    assert_eq!(index.matches(), &find_matches(&flat(&grown), "foo")[..]);
    // A match running over the old end into the new row.
    let spanning = vec![head, doc(&["foo", "tail foo", "bar foo", "bar"])[0].clone()];
    assert!(index.search(&spanning, "foo bar"));
    assert!(index.search(&spanning, "foo"));
    let grown2 = vec![spanning[0].clone(), doc(&["foo", "tail foo", "bar foo", "bar", "x"])[0].clone()];
    index.search(&grown2, "foo bar");
    assert_eq!(index.matches(), &find_matches(&flat(&grown2), "foo bar")[..]);
}

fn flat(lines: &[Lines]) -> Vec<String> {
    lines.iter().flat_map(|s| s.iter().cloned()).collect()
}

proptest! {
    /// Whatever changes between two searches, the incremental index finds what a fresh search
    /// of the new lines finds.
    #[test]
    fn incremental_matches_equal_a_fresh_search(
        old in proptest::collection::vec("[ab ]{0,6}", 0..8),
        keep in 0usize..8,
        new_tail in proptest::collection::vec("[ab é]{0,6}", 0..8),
        query in "[ab ]{1,4}",
    ) {
        let keep = keep.min(old.len());
        let mut new: Vec<String> = old[..keep].to_vec();
        new.extend(new_tail);
        let mut index = SearchIndex::new();
        let to_lines = |v: &[String]| -> Vec<Lines> { vec![v.to_vec().into()] };
        index.search(&to_lines(&old), &query);
        index.search(&to_lines(&new), &query);
        prop_assert_eq!(index.matches(), &find_matches(&new, &query)[..]);
    }
}

proptest! {
    /// Typing a query on finds what a fresh search finds (narrowed from the last matches, or
    /// searched again where the last query could overlap itself).
    #[test]
    fn typing_on_matches_a_fresh_search(
        lines in proptest::collection::vec("[abA é]{0,8}", 0..8),
        query in "[ab é]{1,5}",
    ) {
        let lines: Vec<Lines> = vec![lines.into()];
        let mut index = SearchIndex::new();
        for end in query.char_indices().map(|(i, c)| i + c.len_utf8()) {
            index.search(&lines, &query[..end]);
            prop_assert_eq!(index.matches(), &find_matches(&lines[0], &query[..end])[..]);
        }
    }
}

fn open(lines: &[Lines], query: &str, top: usize, height: usize) -> (AltScreenSearch, Option<usize>) {
    let keys = Rc::new(crate::keys::Keybindings::default());
    let component = Rc::new(RefCell::new(SearchBox::new(keys, Rc::new(|s: &str, _| s.to_owned()))));
    let mut search = AltScreenSearch::new(component, top);
    search.update_query(query, top);
    let target = search.refresh(lines, top, height);
    (search, target)
}

#[test]
fn a_query_selects_the_first_match_from_the_view_top_and_next_and_previous_wrap() {
    let rows: Vec<String> = (0..40).map(|i| format!("- item {i}")).collect();
    let lines: Vec<Lines> = vec![rows.into()];
    // Viewing rows 20..30: the first match at or below row 20 is "item 30".
    let (mut search, target) = open(&lines, "item 3", 20, 10);
    assert_eq!(search.matches().len(), 11);
    assert_eq!(search.selected(), Some(1));
    assert_eq!(target, Some(30 - 10 / 3), "row 30 is below the view: it goes a third from the top");
    assert!(search.navigate(Direction::Previous));
    search.refresh(&lines, 27, 10);
    assert_eq!(search.selected(), Some(0));
    search.navigate(Direction::Previous);
    assert_eq!(search.refresh(&lines, 0, 10), Some(36), "wrapped to the last match, item 39");
    assert_eq!(search.selected(), Some(10));
    search.navigate(Direction::Next);
    search.refresh(&lines, 36, 10);
    assert_eq!(search.selected(), Some(0));
    assert_eq!(search.refresh(&lines, 36, 10), None, "nothing to do until something changes");
    // A new query anchors at the selected match's row (3).
    search.update_query("item 1", 0);
    search.refresh(&lines, 0, 10);
    assert_eq!(search.selected(), Some(1), "item 10, the first at or after row 3");
    // A blank query clears everything.
    search.update_query("  ", 0);
    assert_eq!(search.refresh(&lines, 0, 10), None);
    assert!(!search.has_highlights());
    assert!(!search.navigate(Direction::Next) || search.refresh(&lines, 0, 10).is_none());
}

#[test]
fn the_selected_match_is_kept_by_its_position_when_the_transcript_grows() {
    let rows: Vec<String> = (0..10).map(|i| format!("x{i} foo")).collect();
    let lines: Vec<Lines> = vec![rows.clone().into()];
    let (mut search, _) = open(&lines, "foo", 4, 3);
    assert_eq!(search.selected(), Some(4));
    let mut more = rows;
    more.push("foo again".to_owned());
    let grown: Vec<Lines> = vec![more.into()];
    assert_eq!(search.refresh(&grown, 4, 3), None, "kept, not revealed again");
    assert_eq!(search.selected(), Some(4));
    assert_eq!(search.matches().len(), 11);
}

#[test]
fn the_buttons_are_found_where_the_box_is_drawn() {
    let lines: Vec<Lines> = vec![vec!["a".to_owned()].into()];
    let (search, _) = open(&lines, "a", 0, 1);
    let component = search.component();
    // 100 columns: 40 wide at the top right, one cell from the edges (columns 59..99, rows 1..4).
    let _ = component.borrow_mut().render(40);
    assert_eq!(search.navigation_direction_at(59 + 14, 3, 100, 30), Some(Direction::Previous));
    assert_eq!(search.navigation_direction_at(59 + 30, 3, 100, 30), Some(Direction::Next));
    assert_eq!(search.navigation_direction_at(59 + 30, 2, 100, 30), None);
    assert_eq!(search.navigation_direction_at(10, 3, 100, 30), None);
}
