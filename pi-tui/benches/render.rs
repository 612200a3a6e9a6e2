//! Benchmarks: one changed line in a 10 000-line document (a full frame through the main-screen
//! differential renderer), and `wrap_text_with_ansi` throughput.
//!
//! Run with `cargo bench -p pi-tui --bench render`.

use std::cell::RefCell;
use std::hint::black_box;
use std::rc::Rc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pi_tui::ansi::wrap_text_with_ansi;
use pi_tui::{CaptureTerminal, ScreenMode, Text, Tui};

const WIDTH: usize = 100;

/// A transcript of 2 000 entries of 5 lines each: 10 000 lines.
fn transcript() -> (Tui<CaptureTerminal>, Rc<RefCell<Text>>) {
    let mut tui = Tui::new(CaptureTerminal::new(WIDTH, 40), ScreenMode::Main);
    let mut last = None;
    for i in 0..2000 {
        let body = format!(
            "\x1b[1mentry {i}\x1b[22m: the quick brown fox jumps over the lazy dog\n\
             line two of entry {i}, with \x1b[36mcyan\x1b[39m tool output\n\
             line three: some more words to make a realistic transcript line\n\
             line four: \x1b]8;;https://example.com\x07a link\x1b]8;;\x07 and 日本語 text\n\
             line five of five"
        );
        let text = Rc::new(RefCell::new(Text::new(body, 0, 0)));
        tui.add_child(text.clone());
        last = Some(text);
    }
    let last = last.unwrap_or_else(|| Rc::new(RefCell::new(Text::new("", 0, 0))));
    (tui, last)
}

fn frame_one_line_changed(c: &mut Criterion) {
    let (mut tui, last) = transcript();
    if let Err(e) = tui.render_now() {
        panic!("first frame failed: {e}");
    }
    let lines = tui.main_screen().previous_lines().len();
    assert!(lines >= 10_000, "document has {lines} lines");
    tui.terminal_mut().take_output();
    let mut n = 0u64;
    c.bench_function("frame: 1 changed line of 10k", |b| {
        b.iter(|| {
            n += 1;
            last.borrow_mut().set_text(format!("spinner frame {n}"));
            if let Err(e) = tui.render_now() {
                panic!("frame failed: {e}");
            }
            black_box(tui.terminal_mut().take_output());
        })
    });
}

fn wrap_throughput(c: &mut Criterion) {
    let paragraph = "Lorem ipsum \x1b[1mdolor sit\x1b[22m amet, consectetur adipiscing elit, sed do \
        \x1b[4meiusmod tempor\x1b[24m incididunt ut labore et dolore magna aliqua. 日本語のテキスト. "
        .repeat(100);
    let ascii = "The quick brown fox jumps over the lazy dog. ".repeat(200);
    let mut group = c.benchmark_group("wrap_text_with_ansi");
    group.throughput(Throughput::Bytes(paragraph.len() as u64));
    group.bench_function("styled + CJK, width 80", |b| {
        b.iter(|| black_box(wrap_text_with_ansi(black_box(&paragraph), 80)))
    });
    group.throughput(Throughput::Bytes(ascii.len() as u64));
    group.bench_function("plain ASCII, width 80", |b| b.iter(|| black_box(wrap_text_with_ansi(black_box(&ascii), 80))));
    group.finish();
    let mut group = c.benchmark_group("visible_width");
    group.throughput(Throughput::Bytes(paragraph.len() as u64));
    group.bench_function("styled + CJK paragraph", |b| {
        b.iter(|| black_box(pi_tui::ansi::visible_width(black_box(&paragraph))))
    });
    group.finish();
}

/// The same 10 000 lines as one component (no per-child identity to reuse).
fn frame_one_line_changed_single_component(c: &mut Criterion) {
    struct Doc {
        lines: Vec<String>,
    }
    impl pi_tui::Component for Doc {
        fn render(&mut self, _width: usize) -> pi_tui::Lines {
            self.lines.clone().into()
        }
    }
    let lines: Vec<String> =
        (0..10_000).map(|i| format!("\x1b[2mline {i:>5}\x1b[22m of a long single-component document")).collect();
    let doc = Rc::new(RefCell::new(Doc { lines }));
    let mut tui = Tui::new(CaptureTerminal::new(WIDTH, 40), ScreenMode::Main);
    tui.add_child(doc.clone());
    if let Err(e) = tui.render_now() {
        panic!("first frame failed: {e}");
    }
    tui.terminal_mut().take_output();
    let mut n = 0u64;
    c.bench_function("frame: 1 changed line of 10k, one component", |b| {
        b.iter(|| {
            n += 1;
            doc.borrow_mut().lines[9_999] = format!("last line, version {n}");
            if let Err(e) = tui.render_now() {
                panic!("frame failed: {e}");
            }
            black_box(tui.terminal_mut().take_output());
        })
    });
}

criterion_group!(benches, frame_one_line_changed, frame_one_line_changed_single_component, wrap_throughput);
criterion_main!(benches);
