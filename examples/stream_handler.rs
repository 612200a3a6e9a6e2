//! One prompt streamed through the SDK, like `pi -p`, with or without a Rust `message_update`
//! handler: the whole-process measure of issue 20's "CPU per streamed delta, with a handler"
//! (`scripts/bench-budget.sh` runs it beside `pi -p`).
//!
//! The answer comes from an OpenAI-compatible server (`BASE_URL`, e.g. llama.cpp's
//! `http://127.0.0.1:8080/v1`, or `scripts/bench/instant_server.py`), named in a models.json as a
//! user's would be, through `SessionBuilder` (settings, models, resources, as `pi` builds a
//! session), the real `openai-completions` provider, the agent loop, the session (in memory) and
//! the extension runner; the handler reads each partial message's last block, as a progress display would. The
//! answer is printed at the end, as print mode does.
//!
//! Run: `cargo run -p pi-examples --example stream_handler -- BASE_URL [--handler] [PROMPT]`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context as _, Result, bail};
use pi_coding_agent::extensions::{Extension, FnExtension, NotifyEvent};
use pi_coding_agent::sdk::SessionBuilder;

/// A `message_update` handler that reads the streaming message and counts the events.
fn progress(events: Arc<AtomicUsize>) -> Arc<dyn Extension> {
    Arc::new(FnExtension::new("progress", move |pi| {
        let events = events.clone();
        // It answers at once: registered without a future, it is called directly on every delta.
        pi.on_notify_sync("message_update", move |event, _| {
            if let NotifyEvent::MessageUpdate { message, .. } = event
                && let Some(last) = message.as_assistant().and_then(|a| a.content.last())
            {
                std::hint::black_box(last);
                events.fetch_add(1, Ordering::Relaxed);
            }
            Ok(None)
        });
        Ok(())
    }))
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
        // An agent dir whose models.json names the server, as a user's would.
        let dir = tempfile::tempdir()?;
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(&agent)?;
        let models = serde_json::json!({"providers": {"local": {"baseUrl": base_url, "api": "openai-completions",
            "apiKey": "none", "models": [{"id": "m", "contextWindow": 8_192_000, "maxTokens": 256}]}}});
        std::fs::write(agent.join("models.json"), models.to_string())?;
        let extensions = if handler { vec![progress(events.clone())] } else { Vec::new() };
        let built = SessionBuilder::new(dir.path())
            .agent_dir(&agent)
            .model("local", "m")
            .in_memory()
            .options(|o| o.extensions = extensions)
            .build()
            .await?;
        let session = built.session;
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
