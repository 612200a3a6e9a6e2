//! SSE decoding throughput: a realistic chat-completions stream fed in network-sized chunks.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pi_ai::sse::SseParser;
use std::hint::black_box;

fn sample_stream(events: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..events {
        let line = format!(
            "data: {{\"id\":\"chatcmpl-{i}\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\
             \"model\":\"gpt-4o-mini\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"token {i} é\"}},\
             \"finish_reason\":null}}]}}\r\n\r\n"
        );
        out.extend_from_slice(line.as_bytes());
        if i % 50 == 0 {
            out.extend_from_slice(b": keep-alive\n\nevent: ping\ndata: {}\n\n");
        }
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

fn bench_sse(c: &mut Criterion) {
    let input = sample_stream(20_000);
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Bytes(input.len() as u64));
    for chunk_size in [1024usize, 16 * 1024] {
        group.bench_function(format!("chunks_{chunk_size}"), |b| {
            let mut events = Vec::with_capacity(32);
            b.iter(|| {
                let mut parser = SseParser::new();
                let mut count = 0usize;
                for chunk in input.chunks(chunk_size) {
                    parser.push(black_box(chunk), &mut events);
                    count += events.len();
                    events.clear();
                }
                parser.finish(&mut events);
                count + events.len()
            })
        });
    }
    // The borrowing interface the providers use: no allocation per event.
    group.bench_function("borrowed_chunks_16384", |b| {
        b.iter(|| {
            let mut parser = SseParser::new();
            let mut count = 0usize;
            for chunk in input.chunks(16 * 1024) {
                let _ = parser.push_with(black_box(chunk), |event| {
                    count += event.data.len();
                    std::ops::ControlFlow::Continue(())
                });
            }
            count
        })
    });
    group.finish();
}

criterion_group!(benches, bench_sse);
criterion_main!(benches);
