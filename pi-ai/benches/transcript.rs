//! System-head replay and normalisation over a long transcript.
//!
//! `cargo bench -p pi-ai --bench transcript`

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use pi_ai::transcript::{collapse_system_messages, current_system_message, normalize_context};
use pi_ai::{AssistantBlock, AssistantMessage, Context, Message, SystemMessage, TextContent, Tool, UserMessage};
use serde_json::json;
use std::hint::black_box;

/// `n` messages of which one in 50 is a system message patching sections and tools.
fn transcript(n: usize) -> Vec<Message> {
    let mut out = Vec::with_capacity(n);
    out.push(Message::System(
        SystemMessage::new("You are a coding agent.")
            .with_sections([("rules", Some("<rules>r</rules>".to_owned())), ("skills", Some("<skills/>".to_owned()))])
            .with_tools_added(
                (0..8)
                    .map(|i| Tool::new(format!("tool{i}"), "d", json!({"type": "object", "properties": {}})))
                    .collect(),
            )
            .into(),
    ));
    for i in 1..n {
        let m = if i % 50 == 0 {
            Message::System(
                SystemMessage::new(if i % 100 == 0 { "More." } else { "" })
                    .with_sections([("skills", Some(format!("<skills>{i}</skills>")))])
                    .with_tools_removed([format!("tool{}", i % 8)])
                    .with_tools_added(vec![Tool::new(format!("tool{}", i % 8), format!("v{i}"), json!({}))])
                    .into(),
            )
        } else if i % 2 == 0 {
            Message::User(UserMessage::new(format!("question {i} about the code base")).into())
        } else {
            Message::Assistant(
                AssistantMessage {
                    content: vec![AssistantBlock::Text(TextContent::new(format!(
                        "answer {i} with a few words of text"
                    )))],
                    ..Default::default()
                }
                .into(),
            )
        };
        out.push(m);
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("transcript");
    for n in [1_000usize, 10_000] {
        let t = transcript(n);
        assert_eq!(t.iter().filter(|m| m.role() == "system").count(), n / 50);
        group.bench_with_input(BenchmarkId::new("current_system_message", n), &t, |b, t| {
            b.iter(|| black_box(current_system_message(black_box(t))))
        });
        group.bench_with_input(BenchmarkId::new("normalize_context", n), &t, |b, t| {
            b.iter_batched(
                || Context { system_prompt: Some("S".into()), messages: t.clone(), tools: None },
                |ctx| black_box(normalize_context(ctx)),
                BatchSize::LargeInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("normalize_and_collapse", n), &t, |b, t| {
            b.iter_batched(
                || Context { system_prompt: None, messages: t.clone(), tools: None },
                |ctx| black_box(collapse_system_messages(normalize_context(ctx))),
                BatchSize::LargeInput,
            )
        });
        let json = serde_json::to_string(&t).unwrap_or_default();
        group.bench_with_input(BenchmarkId::new("parse_messages_json", n), &json, |b, json| {
            b.iter(|| black_box(serde_json::from_str::<Vec<Message>>(json).map(|v| v.len()).unwrap_or(0)))
        });
        group.bench_with_input(BenchmarkId::new("write_messages_json", n), &t, |b, t| {
            b.iter(|| black_box(serde_json::to_vec(t).map(|v| v.len()).unwrap_or(0)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
