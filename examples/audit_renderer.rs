//! The seed's 写法二: audit records as session **entries** plus an entry renderer.
//!
//! An in-process extension appends an `audit-note` entry after every tool result (state for the
//! UI, never sent to the model) and registers an entry renderer that draws it as a box. The
//! session runs offline on the faux provider (one `bash` call, then an answer); the example then
//! renders the session branch with the extension's renderer and prints it, and shows that no
//! request carried the audit notes.
//!
//! Run: `cargo run -p pi-examples --example audit_renderer` (add `-- --expanded` for details).

use std::rc::Rc;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use pi_ai::providers::faux::{FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text, faux_tool_call};
use pi_coding_agent::extensions::{Extension, FnExtension, ToolResultEvent};
use pi_coding_agent::render::{RenderOptions, TranscriptRenderer, render_lines, to_terminal_bytes};
use pi_coding_agent::sdk::{CreateAgentSessionOptions, DefaultResourceLoader, create_agent_session};
use pi_coding_agent::session::SessionManager;
use pi_tui::{Box as TuiBox, ColorMode, Component, Text, Theme, shared};
use serde_json::json;

/// The audit extension: `append_entry` on every tool result, and a renderer for those entries.
fn audit_extension() -> FnExtension {
    FnExtension::new("audit_extension", |pi| {
        let api = pi.clone();
        pi.on_sync::<ToolResultEvent>(move |event, _ctx| {
            let data = json!({ "toolName": event.tool_name, "toolCallId": event.tool_call_id, "at": pi_ai::now_ms() });
            api.append_entry("audit-note", data)?;
            Ok(None)
        });
        pi.register_entry_renderer("audit-note", |entry, options, theme| {
            let data = entry.data.clone().unwrap_or_default();
            let bg = theme.clone();
            let mut b = TuiBox::new(1, 1, Some(Rc::new(move |t: &str| bg.bg("customMessageBg", t))));
            let tool = data["toolName"].as_str().unwrap_or("unknown");
            b.add_child(shared(Text::new(format!("{} {tool}", theme.fg("accent", "[audit]")), 0, 0)));
            if options.expanded {
                let detail = format!("call {} at {} ms", data["toolCallId"], data["at"]);
                b.add_child(shared(Text::new(theme.fg("dim", &detail), 0, 0)));
            }
            Some(Box::new(b) as Box<dyn Component>)
        })?;
        Ok(())
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let expanded = std::env::args().any(|a| a == "--expanded");
    let dir = tempfile::tempdir()?;
    let faux = FauxProvider::new(FauxOptions::default());
    let requests = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = |reply: pi_ai::AssistantMessage| {
        let requests = requests.clone();
        FauxStep::factory(move |req| {
            let requests = requests.clone();
            let reply = reply.clone();
            async move {
                let sent = serde_json::to_string(req.context.messages()).unwrap_or_default();
                requests.lock().map_err(|e| e.to_string())?.push(sent);
                Ok(reply)
            }
        })
    };
    let call = faux_tool_call("bash", json!({ "command": "echo checks passed" }), Some("call-1"));
    faux.set_responses(vec![
        record(faux_assistant_message(vec![call], Default::default())),
        record(faux_assistant_message(vec![faux_text("All checks passed.")], Default::default())),
    ]);

    let mut loader = DefaultResourceLoader::new(dir.path(), dir.path().join("agent"));
    loader.reload().await?; // the SDK does not reload a loader you pass in
    let extension: Arc<dyn Extension> = Arc::new(audit_extension());
    let created = create_agent_session(CreateAgentSessionOptions {
        cwd: Some(dir.path().to_path_buf()),
        model: Some(faux.model()),
        resource_loader: Some(loader),
        session_manager: Some(SessionManager::in_memory(dir.path())),
        stream_fn: Some(pi_agent_core::provider_stream_fn(Arc::new(faux))),
        extensions: vec![extension],
        ..Default::default()
    })
    .await?;
    let session = created.session;
    // Without binding, the handler's append_entry fails: extensions have no session to act on.
    session.bind_extensions(|_| {}).await;
    session.prompt("跑一下检查").await?;

    let theme = Rc::new(Theme::dark(ColorMode::Truecolor)?);
    let renderer = TranscriptRenderer::new(
        theme,
        session.extension_runner().cloned(),
        RenderOptions { expanded, output_pad: 1, ..Default::default() },
    );
    let (branch_len, mut transcript) =
        session.with_session_manager(|sm| (sm.get_branch(None).len(), renderer.render_branch(sm.get_branch(None))));
    print!("{}", to_terminal_bytes(&render_lines(&mut transcript, 72)));
    println!();
    println!("session entries: {branch_len}");
    let leaked = requests.lock().map_err(|e| anyhow::anyhow!("{e}"))?.iter().any(|r| r.contains("audit-note"));
    println!("audit notes sent to the model: {}", if leaked { "yes (bug!)" } else { "none" });
    session.dispose().await;
    Ok(())
}
