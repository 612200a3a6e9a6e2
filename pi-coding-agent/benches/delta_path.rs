//! Per-delta cost of the agent, session and extension layers (issue 20): one prompt whose answer
//! streams N 7-character text deltas from a stream function that has them ready, through the
//! agent loop, the session's event handling and the extension runner, with and without a
//! `message_update` handler, at two message lengths (14 KB and 350 KB). Throughput is in deltas:
//! a flat cost gives the same figure at both lengths.
//!
//! `whole_path` adds the provider: the same answer as Chat Completions SSE from a server on
//! 127.0.0.1, read by the real `openai-completions` provider (HTTP body, SSE parsing, the chunk's
//! JSON) before the same layers; the session setup is outside the measured time, the request
//! and the whole response inside it.
//!
//! The time reported is CPU time (user + system, from `clock_gettime`'s process clock, less what
//! the server thread measured of its own) of every thread but the server's, not wall time: on a
//! shared, loaded machine only CPU time compares.
//!
//! `cargo bench -p pi-coding-agent --bench delta_path`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use nix::time::{ClockId, clock_gettime};
use pi_ai::TextContent;
use pi_ai::{AssistantBlock, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, StopReason};
use pi_coding_agent::extensions::{Extension, FnExtension, NotifyEvent};
use pi_coding_agent::sdk::{AgentSession, CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;

const DELTA: &str = "abcdefg";

/// The answer's events, made as they are read (a list of 50 000 prepared deltas, each with its own
/// heap string, was a cache miss per delta of the benchmark's own making: the cost then grew with
/// the length of the answer).
fn answer(deltas: usize) -> impl Iterator<Item = AssistantMessageEvent> + Send + 'static {
    let head = [
        AssistantMessageEvent::Start { partial: Box::new(AssistantMessage::default()) },
        AssistantMessageEvent::TextStart { content_index: 0, block: TextContent::default() },
    ];
    let body = (0..deltas).map(|_| AssistantMessageEvent::TextDelta { content_index: 0, delta: DELTA.into() });
    let tail = std::iter::once(()).flat_map(move |()| {
        let text = DELTA.repeat(deltas);
        let message = AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::new(text.clone()))],
            stop_reason: StopReason::Stop,
            ..Default::default()
        };
        [
            AssistantMessageEvent::TextEnd { content_index: 0, block: TextContent::new(text) },
            AssistantMessageEvent::Done { reason: StopReason::Stop, message: Box::new(message) },
        ]
    });
    head.into_iter().chain(body).chain(tail)
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

/// The server thread's name.
const SERVER_THREAD: &str = "bench-server";

/// CPU time the server threads have used so far, as each last measured its own after answering
/// (left out of the figures), and how many requests they have answered.
static SERVER_CPU_NS: AtomicU64 = AtomicU64::new(0);
static SERVED: AtomicU64 = AtomicU64::new(0);

fn clock(id: ClockId) -> Duration {
    clock_gettime(id).map(|t| Duration::new(t.tv_sec() as u64, t.tv_nsec() as u32)).expect("clock_gettime")
}

/// CPU time so far of this process, the server thread's excepted.
///
/// `clock_gettime`'s CPU clocks count to the nanosecond, the running thread included. The
/// per-thread `/proc/…/schedstat` this bench read before is brought up to date only at a tick
/// or a context switch: a prompt shorter than a tick measured too little, which made the short
/// answer look cheaper per delta than the long one.
fn cpu_time() -> Duration {
    clock(ClockId::CLOCK_PROCESS_CPUTIME_ID).saturating_sub(Duration::from_nanos(SERVER_CPU_NS.load(Ordering::Acquire)))
}

/// Waits until the servers counted their CPU time for `requests` requests in all.
fn await_served(requests: u64) {
    while SERVED.load(Ordering::Acquire) < requests {
        std::thread::yield_now();
    }
}

/// The answer as Chat Completions SSE: a role chunk, `deltas` content chunks, finish, usage.
fn sse_answer(deltas: usize) -> Vec<u8> {
    let chunk = |delta: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n"
        )
    };
    let mut body = chunk(r#"{"role":"assistant","content":""}"#);
    let delta = chunk(&format!("{{\"content\":\"{DELTA}\"}}"));
    for _ in 0..deltas {
        body.push_str(&delta);
    }
    body.push_str("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
    body.push_str("data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}\n\ndata: [DONE]\n\n");
    body.into_bytes()
}

/// A server on 127.0.0.1 answering every request with `body` as `text/event-stream`; its port.
fn serve(body: Vec<u8>) -> u16 {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let server = std::thread::Builder::new().name(SERVER_THREAD.into());
    server.spawn(move || {
        let mut counted = 0u64;
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("stream"));
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut request = vec![0; length];
            let _ = reader.read_exact(&mut request);
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&body));
            let used = clock(ClockId::CLOCK_THREAD_CPUTIME_ID).as_nanos() as u64;
            SERVER_CPU_NS.fetch_add(used - counted, Ordering::AcqRel);
            counted = used;
            SERVED.fetch_add(1, Ordering::AcqRel);
        }
    })
    .expect("server thread");
    port
}

/// The real `openai-completions` provider, pointed at the server on `port`.
fn http_stream_fn(port: u16) -> (pi_agent_core::StreamFn, pi_ai::Model) {
    let mut models = pi_ai::registry::Models::from_catalog();
    for api in pi_ai::providers::http_apis() {
        models.register_api(api);
    }
    let model = pi_ai::Model {
        id: "m".into(),
        name: "m".into(),
        api: "openai-completions".into(),
        provider: "local".into(),
        base_url: format!("http://127.0.0.1:{port}/v1"),
        context_window: 8_192_000,
        max_tokens: 256,
        ..Default::default()
    };
    // The registry streams only for providers it knows: "local" is keyless.
    models.set_provider(pi_ai::registry::ProviderEntry {
        id: "local".into(),
        models: vec![model.clone()].into(),
        auth: pi_ai::registry::ProviderAuth::Keyless,
        apis: Default::default(),
    });
    let models = Arc::new(models);
    let stream_fn: pi_agent_core::StreamFn = Arc::new(move |model: &pi_ai::Model, transcript, mut options| {
        options.api_key = Some("none".into());
        let context = pi_ai::Context { system_prompt: None, messages: transcript.into_messages(), tools: None };
        models.stream_simple(model, context, options)
    });
    (stream_fn, model)
}

/// A fresh in-memory session whose next answer streams `deltas` deltas.
async fn session(dir: &std::path::Path, deltas: usize, handler: bool) -> AgentSession {
    let stream_fn: pi_agent_core::StreamFn =
        Arc::new(move |_, _, _| AssistantMessageEventStream::new(futures::stream::iter(answer(deltas))));
    let model = pi_ai::providers::faux::FauxProvider::new(Default::default()).model();
    session_with(dir, stream_fn, model, handler).await
}

/// A fresh in-memory session streaming through `stream_fn`.
async fn session_with(
    dir: &std::path::Path,
    stream_fn: pi_agent_core::StreamFn,
    model: pi_ai::Model,
    handler: bool,
) -> AgentSession {
    let mut loader = DefaultResourceLoader::new(dir, dir.join("agent"));
    loader.home_dir = Some(dir.join("home"));
    loader.reload().await.expect("resources");
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.to_path_buf()),
        model: Some(model),
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
                        let session = runtime.block_on(session(dir.path(), deltas, handler));
                        let start = cpu_time();
                        runtime.block_on(session.prompt("go")).expect("prompt");
                        total += cpu_time().saturating_sub(start);
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

/// The whole path: HTTP, SSE, the provider's chunk reading, then the same layers.
fn whole_path(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut group = c.benchmark_group("whole_path_delta");
    group.sample_size(10);
    for handler in [false, true] {
        for deltas in [2_000usize, 50_000] {
            let port = serve(sse_answer(deltas));
            group.throughput(Throughput::Elements(deltas as u64));
            let name = if handler { "message_update_handler" } else { "no_handler" };
            group.bench_function(BenchmarkId::new(name, format!("{}KB", deltas * 7 / 1000)), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let (stream_fn, model) = http_stream_fn(port);
                        let session = runtime.block_on(session_with(dir.path(), stream_fn, model, handler));
                        let served = SERVED.load(Ordering::Acquire);
                        let start = cpu_time();
                        runtime.block_on(session.prompt("go")).expect("prompt");
                        await_served(served + 1);
                        total += cpu_time().saturating_sub(start);
                        let text = session.get_last_assistant_text().unwrap_or_default();
                        assert_eq!(text.len(), deltas * DELTA.len(), "the whole answer streamed");
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, delta_path, whole_path);
criterion_main!(benches);
