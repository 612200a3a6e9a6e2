//! The cost of a streamed delta through the agent, session and extension layers does not grow
//! with the message (issue 20): a `message_update` handler is lent the session's own partial
//! message, updated in place, not a copy of it per delta. Checked without clocks: every update of
//! a streamed answer hands the handler the same message (one allocation, growing), and its text
//! grows by exactly one delta each time.

use std::sync::{Arc, Mutex};

use pi_ai::{AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, StopReason, TextContent};
use pi_coding_agent::extensions::{Extension, FnExtension, NotifyEvent};
use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;

const DELTA: &str = "abcdefg";

/// Start, one text block of `deltas` deltas, done.
fn answer(deltas: usize) -> Vec<AssistantMessageEvent> {
    let mut events = vec![
        AssistantMessageEvent::Start { partial: Box::default() },
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
    events.push(AssistantMessageEvent::Done { reason: StopReason::Stop, message: Box::new(message) });
    events
}

/// (address of the partial message, its text's length, its text's capacity) per
/// `message_update`.
type Seen = Arc<Mutex<Vec<(usize, usize, usize)>>>;

/// A handler of `message_update` that notes where the partial is and how long its text is (and
/// keeps nothing).
fn reader(seen: Seen) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("<inline:reader>", move |pi| {
        let seen = seen.clone();
        pi.on_notify("message_update", move |event, _| {
            if let NotifyEvent::MessageUpdate { message, .. } = event
                && let Some(a) = message.as_assistant()
            {
                let address = std::ptr::from_ref::<AssistantMessage>(a) as usize;
                let (len, capacity) = match a.content.first() {
                    Some(pi_ai::AssistantBlock::Text(t)) => (t.text.len(), t.text.capacity()),
                    _ => (0, 0),
                };
                seen.lock().expect("seen").push((address, len, capacity));
            }
            Box::pin(async { Ok(None) })
        });
        Ok(())
    }))
}

/// A session in a temporary directory whose model streams [`answer`]`(deltas)` once, with
/// `extension` loaded and bound.
async fn session_with(
    deltas: usize,
    extension: Arc<dyn Extension>,
) -> (pi_coding_agent::sdk::AgentSession, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.home_dir = Some(dir.path().join("home"));
    loader.reload().await.expect("resources");
    let prepared = Arc::new(Mutex::new(Some(answer(deltas))));
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
        extensions: vec![extension],
        ..Default::default()
    })
    .await
    .expect("session");
    let session = created.session;
    session.bind_extensions(|_| {}).await;
    (session, dir)
}

#[tokio::test(flavor = "current_thread")]
async fn message_update_handlers_get_the_partial_itself_not_a_copy_per_delta() {
    let deltas = 3_000;
    let seen: Seen = Arc::default();
    let (session, _dir) = session_with(deltas, reader(seen.clone())).await;
    session.prompt("go").await.expect("prompt");
    let last = session.messages().last().and_then(|m| m.as_assistant()).map(|a| a.text().len());
    assert_eq!(last, Some(deltas * DELTA.len()));
    let seen = seen.lock().expect("seen").clone();
    // text_start, the deltas, text_end.
    assert_eq!(seen.len(), deltas + 2);
    let deltas_seen = &seen[1..=deltas];
    for (i, (_, len, _)) in deltas_seen.iter().enumerate() {
        assert_eq!(*len, (i + 1) * DELTA.len(), "update {i} saw the text so far");
    }
    // One message, updated in place. A copy per delta would be a new message each time (which the
    // allocator may well put at the same address), with a text of exactly its length: the text
    // of the partial itself grows by doubling, so its capacity is never exactly a multiple of 7.
    let first = deltas_seen[0].0;
    let moved = deltas_seen.iter().filter(|(address, _, _)| *address != first).count();
    assert_eq!(moved, 0, "the partial moved on {moved} of {deltas} deltas");
    let exact = deltas_seen.iter().filter(|(_, len, capacity)| len == capacity).count();
    assert_eq!(exact, 0, "{exact} of {deltas} updates saw an exact-size copy of the text");
}

/// With a handler that answers at once (`on_notify_sync`), the delta it is lent comes back to
/// the session's listeners (no copy per delta): every delta reaches them, as the handler left it
/// (pi's listeners get the very event object its handlers were given), and the message is the
/// stream's own.
#[tokio::test(flavor = "current_thread")]
async fn listeners_hear_every_delta_a_sync_handler_was_lent() {
    let deltas = 500;
    let marker: Arc<dyn Extension> = Arc::new(FnExtension::new("<inline:marker>", |pi| {
        pi.on_notify_sync("message_update", |event, _| {
            if let NotifyEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
                ..
            } = event
            {
                delta.push('!');
            }
            Ok(None)
        });
        Ok(())
    }));
    let (session, _dir) = session_with(deltas, marker).await;
    let heard: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = heard.clone();
    let _listener = session.subscribe(move |event| {
        if let pi_coding_agent::sdk::SessionEvent::Agent(pi_agent_core::AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
        }) = event
        {
            sink.lock().expect("heard").push(delta.clone());
        }
    });
    session.prompt("go").await.expect("prompt");
    let heard = heard.lock().expect("heard").clone();
    assert_eq!(heard.len(), deltas, "every delta reached the listeners");
    assert!(heard.iter().all(|d| d == "abcdefg!"), "as the handler left them: {:?}", &heard[..3]);
    let text = session.messages().last().and_then(|m| m.as_assistant()).map(|a| a.text());
    assert_eq!(text, Some(DELTA.repeat(deltas)), "the message is the stream's");
}

/// A Rust handler that puts another event in the delta's place is reported as an extension
/// error on every delta it took (its listeners cannot be given it); the message is whole.
#[tokio::test(flavor = "current_thread")]
async fn a_sync_handler_that_replaces_the_event_is_reported() {
    let deltas = 20;
    let replacer: Arc<dyn Extension> = Arc::new(FnExtension::new("<inline:replacer>", |pi| {
        pi.on_notify_sync("message_update", |event, _| {
            *event = NotifyEvent::AgentStart;
            Ok(None)
        });
        Ok(())
    }));
    let (session, _dir) = session_with(deltas, replacer).await;
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = errors.clone();
    let runner = session.extension_runner().expect("a runner").clone();
    let _errors = runner.on_error(move |e| sink.lock().expect("errors").push(e.error.clone()));
    session.prompt("go").await.expect("prompt");
    let errors = errors.lock().expect("errors").clone();
    // text_start, the deltas, text_end: every update was replaced.
    assert_eq!(errors.len(), deltas + 2, "{errors:?}");
    assert!(errors[0].contains("replaced the event"), "{}", errors[0]);
    let text = session.messages().last().and_then(|m| m.as_assistant()).map(|a| a.text());
    assert_eq!(text, Some(DELTA.repeat(deltas)));
}
