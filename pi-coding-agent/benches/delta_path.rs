//! Per-delta cost of the agent, session and extension layers (issue 20): one prompt whose answer
//! streams N 7-character text deltas from a stream function that has them ready, through the
//! agent loop, the session's event handling and the extension runner, with and without a
//! `message_update` handler, at two message lengths (14 KB and 350 KB). Throughput is in deltas:
//! a flat cost gives the same figure at both lengths.
//!
//! `cargo bench -p pi-coding-agent --bench delta_path`

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pi_ai::TextContent;
use pi_ai::{AssistantBlock, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, StopReason};
use pi_coding_agent::extensions::{Extension, FnExtension, NotifyEvent};
use pi_coding_agent::sdk::{AgentSession, CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;

const DELTA: &str = "abcdefg";

fn answer(deltas: usize) -> Vec<AssistantMessageEvent> {
    let mut events = vec![
        AssistantMessageEvent::Start { partial: Box::new(AssistantMessage::default()) },
        AssistantMessageEvent::TextStart { content_index: 0, block: TextContent::default() },
    ];
    events.extend((0..deltas).map(|_| AssistantMessageEvent::TextDelta { content_index: 0, delta: DELTA.into() }));
    let text = DELTA.repeat(deltas);
    events.push(AssistantMessageEvent::TextEnd { content_index: 0, block: TextContent::new(text.clone()) });
    let message = AssistantMessage {
        content: vec![AssistantBlock::Text(TextContent::new(text))],
        stop_reason: StopReason::Stop,
        ..Default::default()
    };
    events.push(AssistantMessageEvent::Done { reason: StopReason::Stop, message: Box::new(message) });
    events
}

fn reader() -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:reader>", |pi| {
        pi.on_notify("message_update", |event, _| {
            if let NotifyEvent::MessageUpdate { message, .. } = event {
                std::hint::black_box(message.as_assistant().map(|a| a.content.len()));
            }
            Box::pin(async { Ok(None) })
        });
        Ok(())
    }))
}

/// A fresh in-memory session whose next answer is `events`.
async fn session(dir: &std::path::Path, events: Vec<AssistantMessageEvent>, handler: bool) -> AgentSession {
    let mut loader = DefaultResourceLoader::new(dir, dir.join("agent"));
    loader.home_dir = Some(dir.join("home"));
    loader.reload().await.expect("resources");
    let prepared = Arc::new(std::sync::Mutex::new(Some(events)));
    let stream_fn: pi_agent_core::StreamFn = Arc::new(move |_, _, _| {
        let events = prepared.lock().expect("events").take().unwrap_or_default();
        AssistantMessageEventStream::from_events(events)
    });
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.to_path_buf()),
        model: Some(pi_ai::providers::faux::FauxProvider::new(Default::default()).model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir)),
        stream_fn: Some(stream_fn),
        extensions: if handler { vec![reader()] } else { Vec::new() },
        ..Default::default()
    })
    .await
    .expect("session");
    created.session.bind_extensions(|_| {}).await;
    created.session
}

fn delta_path(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut group = c.benchmark_group("session_delta");
    group.sample_size(10);
    for handler in [false, true] {
        for deltas in [2_000usize, 50_000] {
            group.throughput(Throughput::Elements(deltas as u64));
            let name = if handler { "message_update_handler" } else { "no_handler" };
            group.bench_function(BenchmarkId::new(name, format!("{}KB", deltas * 7 / 1000)), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let session = runtime.block_on(session(dir.path(), answer(deltas), handler));
                        let start = Instant::now();
                        runtime.block_on(session.prompt("go")).expect("prompt");
                        total += start.elapsed();
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, delta_path);
criterion_main!(benches);
