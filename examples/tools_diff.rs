//! The seed's tool change: the tool set lives in the transcript. Changing the active tools between
//! two prompts records a system message with `toolsRemoved` before the next request, and replaying
//! the transcript gives the new tool set (the provider declares exactly those tools).
//!
//! Runs offline on the faux provider through the SDK.
//!
//! Run: `cargo run -p pi-examples --example tools_diff`

use std::sync::{Arc, Mutex};

use anyhow::Result;
use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text};
use pi_ai::transcript::current_tools;
use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let faux = FauxProvider::new(FauxOptions::default());
    // Each request: the tool names its replayed transcript declares.
    let declared = Arc::new(Mutex::new(Vec::<Vec<String>>::new()));
    let step = |answer: &'static str| {
        let declared = declared.clone();
        FauxStep::factory(move |req| {
            let declared = declared.clone();
            async move {
                let names = current_tools(req.context.messages()).into_iter().map(|t| t.name).collect();
                declared.lock().map_err(|e| e.to_string())?.push(names);
                Ok(faux_assistant_message(vec![faux_text(answer)], Default::default()))
            }
        })
    };
    faux.set_responses(vec![step("first answer"), step("second answer")]);

    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.reload().await?;
    let session = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir.path())),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux))),
        ..Default::default()
    })
    .await?
    .session;

    session.prompt("look around").await?;
    // Read-only from now on: edit and write are removed before the next request.
    session.set_active_tools_by_name(&["read", "bash"]);
    session.prompt("and now?").await?;

    for (i, names) in declared.lock().map_err(|e| anyhow::anyhow!("{e}"))?.iter().enumerate() {
        println!("request {} declares: {}", i + 1, names.join(", "));
    }
    for message in session.messages() {
        if let AgentMessage::System(system) = message {
            let added = system.tools_added.as_ref().map(|t| t.iter().map(|t| t.name.clone()).collect::<Vec<_>>());
            let removed = system.tools_removed.as_ref().map(|t| t.iter().map(|t| t.name.clone()).collect::<Vec<_>>());
            println!("system message: toolsAdded={added:?} toolsRemoved={removed:?}");
        }
    }
    session.dispose().await;
    Ok(())
}
