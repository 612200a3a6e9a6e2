//! `context` vs `context_with_system`, as the seed tells them apart:
//!
//! - a `context` handler (pi's `transformContext` for extensions) never sees system messages: it
//!   prunes or injects conversation messages, and the prompt and tool head is put back in front
//!   of whatever it keeps;
//! - a `context_with_system` handler sees the whole transcript, owns the head, and what it changes
//!   is sent for that request only.
//!
//! Runs offline on the faux provider through the SDK and prints what each handler saw and what
//! each request carried.
//!
//! Run: `cargo run -p pi-examples --example context_hooks`

use std::sync::{Arc, Mutex};

use anyhow::Result;
use pi_agent_core::AgentMessage;
use pi_ai::Message;
use pi_ai::providers::faux::{FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text};
use pi_ai::transcript::current_system_prompt;
use pi_coding_agent::extensions::{ContextEvent, ContextWithSystemEvent, Extension, FnExtension};
use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, line: String) {
    if let Ok(mut log) = log.lock() {
        log.push(line);
    }
}

/// Keeps only the newest message in the model's view, and notes a section in the head.
fn hooks_extension(log: Log) -> FnExtension {
    FnExtension::new("context_hooks", move |pi| {
        let l = log.clone();
        pi.on_sync::<ContextEvent>(move |event, _ctx| {
            let roles: Vec<&str> = event.messages.iter().map(|m| m.role()).collect();
            push(&l, format!("  context saw:             {roles:?}"));
            let cut = event.messages.len().saturating_sub(1);
            event.messages.drain(..cut); // prune: the newest message only
            Ok(None)
        });
        let l = log.clone();
        pi.on_sync::<ContextWithSystemEvent>(move |event, _ctx| {
            let roles: Vec<&str> = event.messages.iter().map(|m| m.role()).collect();
            push(&l, format!("  context_with_system saw: {roles:?}"));
            if let Some(AgentMessage::System(head)) = event.messages.first_mut() {
                let note = "<note>answer in one line</note>".to_owned();
                head.sections.get_or_insert_with(Default::default).insert("note", Some(note));
            }
            Ok(None)
        });
        Ok(())
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let log: Log = Arc::default();
    let faux = FauxProvider::new(FauxOptions::default());
    let step = |answer: &'static str| {
        let log = log.clone();
        FauxStep::factory(move |req| {
            let log = log.clone();
            async move {
                let messages = req.context.messages();
                let roles: Vec<&str> = messages.iter().map(Message::role).collect();
                push(&log, format!("  request carried:         {roles:?}"));
                let noted = current_system_prompt(messages).ends_with("<note>answer in one line</note>");
                push(&log, format!("  system prompt has the note section: {noted}"));
                Ok(faux_assistant_message(vec![faux_text(answer)], Default::default()))
            }
        })
    };
    faux.set_responses(vec![step("first answer"), step("second answer")]);

    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.reload().await?;
    let extension: Arc<dyn Extension> = Arc::new(hooks_extension(log.clone()));
    let session = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir.path())),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux))),
        extensions: vec![extension],
        ..Default::default()
    })
    .await?
    .session;
    session.bind_extensions(|_| {}).await;

    for text in ["first question", "second question"] {
        push(&log, format!("prompt {text:?}"));
        session.prompt(text).await?;
    }
    for line in log.lock().map_err(|e| anyhow::anyhow!("{e}"))?.iter() {
        println!("{line}");
    }
    println!("session keeps {} messages (pruning is per request)", session.messages().len());
    println!("stored system prompt has the note: {}", session.transcript_system_prompt().contains("<note>"));
    session.dispose().await;
    Ok(())
}
