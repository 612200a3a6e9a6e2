//! One prompt streamed through the SDK, like `pi -p`, with or without a Rust `message_update`
//! handler: the whole-process measure of issue 20's "CPU per streamed delta, with a handler"
//! (`scripts/bench-budget.sh` runs it beside `pi -p`).
//!
//! The answer comes from an OpenAI-compatible server (`BASE_URL`, e.g. llama.cpp's
//! `http://127.0.0.1:8080/v1`, or `scripts/bench/instant_server.py`) through the real
//! `openai-completions` provider, the agent loop, the session (in memory) and the extension
//! runner; the handler reads each partial message's last block, as a progress display would. The
//! answer is printed at the end, as print mode does.
//!
//! Run: `cargo run -p pi-examples --example stream_handler -- BASE_URL [--handler] [PROMPT]`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context as _, Result, bail};
use pi_coding_agent::extensions::{Extension, FnExtension, NotifyEvent};
use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;

/// A `message_update` handler that reads the streaming message and counts the events.
fn progress(events: Arc<AtomicUsize>) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("progress", move |pi| {
        let events = events.clone();
        pi.on_notify("message_update", move |event, _| {
            if let NotifyEvent::MessageUpdate { message, .. } = event
                && let Some(last) = message.as_assistant().and_then(|a| a.content.last())
            {
                std::hint::black_box(last);
                events.fetch_add(1, Ordering::Relaxed);
            }
            Box::pin(async { Ok(None) })
        });
        Ok(())
    }))
}

/// The `openai-completions` provider at `base_url`, keyless.
fn stream_fn(base_url: &str) -> (pi_agent_core::StreamFn, pi_ai::Model) {
    let mut models = pi_ai::registry::Models::from_catalog();
    for api in pi_ai::providers::http_apis() {
        models.register_api(api);
    }
    let model = pi_ai::Model {
        id: "m".into(),
        name: "m".into(),
        api: "openai-completions".into(),
        provider: "local".into(),
        base_url: base_url.to_owned(),
        context_window: 8_192_000,
        max_tokens: 256,
        ..Default::default()
    };
    models.set_provider(pi_ai::registry::ProviderEntry {
        id: "local".into(),
        models: vec![model.clone()].into(),
        auth: pi_ai::registry::ProviderAuth::Keyless,
        apis: Default::default(),
    });
    let models = Arc::new(models);
    let stream: pi_agent_core::StreamFn = Arc::new(move |model: &pi_ai::Model, transcript, mut options| {
        options.api_key = Some("none".into());
        let context = pi_ai::Context { system_prompt: None, messages: transcript.into_messages(), tools: None };
        models.stream_simple(model, context, options)
    });
    (stream, model)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(base_url) = args.first() else {
        bail!("usage: stream_handler BASE_URL [--handler] [PROMPT]");
    };
    let handler = args.iter().any(|a| a == "--handler");
    let prompt = args.iter().skip(1).find(|a| *a != "--handler").map_or("Go on.", String::as_str);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let events = Arc::new(AtomicUsize::new(0));
    let answer = runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
        loader.home_dir = Some(dir.path().join("home"));
        loader.reload().await?;
        let (stream_fn, model) = stream_fn(base_url);
        let created = create_agent_session(CreateAgentSessionOptions {
            cwd: Some(dir.path().to_path_buf()),
            model: Some(model),
            resource_loader: Some(loader),
            session_manager: Some(SessionManager::in_memory(dir.path())),
            stream_fn: Some(stream_fn),
            extensions: if handler { vec![progress(events.clone())] } else { Vec::new() },
            ..Default::default()
        })
        .await?;
        let session = created.session;
        session.bind_extensions(|_| {}).await;
        session.prompt(prompt).await?;
        session.get_last_assistant_text().context("no answer")
    })?;
    println!("{answer}");
    if handler {
        eprintln!("message_update events: {}", events.load(Ordering::Relaxed));
    }
    Ok(())
}
