//! Benchmarks of the fullscreen transcript search over a 100 000-line transcript (styled, with
//! links and wide characters): indexing it from scratch, a keystroke (a new query over the
//! cached text), a frame while nothing changed, and a frame after one streamed line (the
//! incremental path: only the changed rows are read again), with the history shared from the
//! last frame or in one segment that is a new one each frame (its lines compared).
//!
//! Run with `cargo bench -p pi-tui --bench alt_search`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pi_tui::Lines;
use pi_tui::alt_search::SearchIndex;

/// 20 000 entries of 5 lines, as one segment of history and a short live segment.
fn transcript() -> (Lines, Vec<String>) {
    let mut history = Vec::with_capacity(100_000);
    for i in 0..20_000 {
        history.push(format!("\x1b[1mentry {i}\x1b[22m: the quick brown fox jumps over the lazy dog"));
        history.push(format!("line two of entry {i}, with \x1b[36mcyan\x1b[39m tool output"));
        history.push("line three: some more words to make a realistic transcript line".to_owned());
        history.push("line four: \x1b]8;;https://example.com\x07a link\x1b]8;;\x07 and 日本語 text".to_owned());
        history.push("line five of five".to_owned());
    }
    (history.into(), vec!["streaming reply: the fox".to_owned()])
}

fn bench(c: &mut Criterion) {
    let (history, live) = transcript();
    let lines = vec![history.clone(), live.clone().into()];
    c.bench_function("alt_search/index_100k_lines", |b| {
        b.iter(|| {
            let mut index = SearchIndex::new();
            black_box(index.search(&lines, "lazy dog"));
        })
    });
    let mut index = SearchIndex::new();
    index.search(&lines, "lazy dog");
    let mut flip = false;
    c.bench_function("alt_search/keystroke_100k_lines", |b| {
        b.iter(|| {
            flip = !flip;
            black_box(index.search(&lines, if flip { "entry 1999" } else { "entry 19999" }));
        })
    });
    c.bench_function("alt_search/frame_unchanged_100k_lines", |b| {
        b.iter(|| black_box(index.search(&lines, "entry 19999")))
    });
    // The live segment gains a line, then loses it again: each frame one row changes at the end.
    let mut longer = live.clone();
    longer.push("another streamed line about the fox".to_owned());
    let states = [vec![history.clone(), longer.into()], lines.clone()];
    let mut step = 0;
    c.bench_function("alt_search/frame_after_a_streamed_line_100k_lines", |b| {
        b.iter(|| {
            step += 1;
            black_box(index.search(&states[step % 2], "entry 19999"));
        })
    });
    // The same in one segment that is new each frame (a container whose child changed): every
    // line is compared with the last frame's, one is indexed again.
    let whole: Vec<String> = history.iter().cloned().chain(live.iter().cloned()).collect();
    let mut whole_longer = whole.clone();
    whole_longer.push("another streamed line about the fox".to_owned());
    let (short, long): (Lines, Lines) = (whole.into(), whole_longer.into());
    c.bench_function("alt_search/frame_after_a_streamed_line_one_segment_100k_lines", |b| {
        b.iter(|| {
            step += 1;
            let segment = [if step % 2 == 0 { short.clone() } else { long.clone() }];
            black_box(index.search(&segment, "entry 19999"));
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
