//! The cost of a streamed delta through the agent, session and extension layers does not grow
//! with the message (issue 20): no layer copies the growing message per delta, with or without a
//! `message_update` handler. Measured without clocks: the bytes allocated while a session streams
//! an answer of N deltas, counted by this binary's allocator, must grow linearly in N (a copy of
//! the partial message per delta makes them grow with N²).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pi_ai::{AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, StopReason, TextContent};
use pi_coding_agent::extensions::{Extension, FnExtension, NotifyEvent};
use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;

struct Counting;

static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout is passed on as it is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.fetch_add(new_size.saturating_sub(layout.size()), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const DELTA: &str = "abcdefg";

/// Start, one text block of `deltas` deltas, done.
fn answer(deltas: usize) -> Vec<AssistantMessageEvent> {
    let mut events = vec![
        AssistantMessageEvent::Start { partial: AssistantMessage::default() },
        AssistantMessageEvent::TextStart { content_index: 0, block: TextContent::default() },
    ];
    events.extend((0..deltas).map(|_| AssistantMessageEvent::TextDelta { content_index: 0, delta: DELTA.into() }));
    let text = DELTA.repeat(deltas);
    events.push(AssistantMessageEvent::TextEnd { content_index: 0, block: TextContent::new(text.clone()) });
    let message = AssistantMessage {
        content: vec![pi_ai::AssistantBlock::Text(TextContent::new(text))],
        stop_reason: StopReason::Stop,
        ..Default::default()
    };
    events.push(AssistantMessageEvent::Done { reason: StopReason::Stop, message });
    events
}

/// A handler of `message_update` that reads the partial's text length (and keeps nothing).
fn reader(seen: Arc<AtomicUsize>) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:reader>", move |pi| {
        let seen = seen.clone();
        pi.on_notify("message_update", move |event, _| {
            if let NotifyEvent::MessageUpdate { message, .. } = event {
                let text = message.as_assistant().map(|a| a.text().len()).unwrap_or(0);
                seen.fetch_max(text, Ordering::Relaxed);
            }
            Box::pin(async { Ok(None) })
        });
        Ok(())
    }))
}

/// Bytes allocated while one prompt streams an answer of `deltas` deltas (the answer's events
/// are built beforehand and not counted).
async fn bytes_for(deltas: usize, handler: bool) -> usize {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.home_dir = Some(dir.path().join("home"));
    loader.reload().await.expect("resources");
    let seen = Arc::new(AtomicUsize::new(0));
    let prepared = Arc::new(std::sync::Mutex::new(Some(answer(deltas))));
    let stream_fn: pi_agent_core::StreamFn = Arc::new(move |_, _, _| {
        let events = prepared.lock().expect("events").take().unwrap_or_default();
        AssistantMessageEventStream::from_events(events)
    });
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(pi_ai::providers::faux::FauxProvider::new(Default::default()).model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir.path())),
        stream_fn: Some(stream_fn),
        extensions: if handler { vec![reader(seen.clone())] } else { Vec::new() },
        ..Default::default()
    })
    .await
    .expect("session");
    let session = created.session;
    session.bind_extensions(|_| {}).await;
    let before = BYTES.load(Ordering::SeqCst);
    session.prompt("go").await.expect("prompt");
    let bytes = BYTES.load(Ordering::SeqCst) - before;
    assert_eq!(session.messages().last().and_then(|m| m.as_assistant()).map(|a| a.text().len()), Some(deltas * 7));
    if handler {
        assert_eq!(seen.load(Ordering::SeqCst), deltas * 7, "the handler saw the whole partial");
    }
    bytes
}

async fn assert_linear(handler: bool) {
    let (small, large) = (2_000, 8_000);
    let a = bytes_for(small, handler).await;
    let b = bytes_for(large, handler).await;
    // Linear: b ≈ 4a (plus the fixed cost of a prompt, which makes the ratio smaller). A copy of
    // the partial per delta makes it ≈ 16a.
    let ratio = b as f64 / a as f64;
    assert!(ratio < 6.0, "handler={handler}: {a} bytes for {small} deltas, {b} for {large} (×{ratio:.1})");
    // And a delta costs a bounded number of bytes, not a copy of the message (56 KB at the end).
    let per_delta = (b - a) / (large - small);
    assert!(per_delta < 2_000, "handler={handler}: {per_delta} bytes allocated per delta");
}

// One test: the allocation counter is the whole process's.
#[tokio::test(flavor = "current_thread")]
async fn delta_cost_is_flat_with_and_without_a_message_update_handler() {
    assert_linear(false).await;
    assert_linear(true).await;
}
