//! Fuzzes the SSE decoder: it must never panic, and splitting the input anywhere must not change
//! the events. Run with `cargo fuzz run sse` from this directory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::sse::{SseEvent, SseParser};

fn parse(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        parser.push(chunk, &mut out);
    }
    parser.finish(&mut out);
    out
}

fuzz_target!(|input: &[u8]| {
    let Some((&split, data)) = input.split_first() else { return };
    let whole = parse(&[data]);
    let at = usize::from(split) % (data.len() + 1);
    let (a, b) = data.split_at(at);
    assert_eq!(parse(&[a, b]), whole);
    let bytes: Vec<&[u8]> = data.chunks(1).collect();
    assert_eq!(parse(&bytes), whole);
});
