//! JSON mode (`--mode json`): the session header, then every session event as one JSON line.

use std::sync::{Arc, Mutex};

use super::json_event::{JsonEventEncoder, agent_settled};
use super::output::write_record;
use super::print::{report_extension_errors, report_persist_error};
use crate::sdk::{AgentSession, PromptOptions};

/// Runs the prompts, streaming events to stdout; returns the exit status.
pub async fn run_json(session: &AgentSession, initial: Option<(String, PromptOptions)>, rest: &[String]) -> i32 {
    let header = session.with_session_manager(|sm| serde_json::to_value(sm.header())).unwrap_or_default();
    write_record(&header);
    let encoder = Arc::new(Mutex::new(JsonEventEncoder::new()));
    let enc = encoder.clone();
    let _sub = session.subscribe(move |event| {
        // pi's `agent_settled` follows a run (a prompt's, or one an extension started), not a
        // prompt an extension command or an `input` handler took.
        if let crate::sdk::SessionEvent::AgentSettled { aborted } = event {
            write_record(&agent_settled(*aborted));
            return;
        }
        let record = enc.lock().unwrap_or_else(|e| e.into_inner()).encode(event);
        if let Some(record) = record {
            write_record(&record);
        }
    });
    // As pi: the header, the subscription, then the extensions bound (errors on stderr).
    let _errors = report_extension_errors(session);
    // Errors are reported by the listener registered above.
    session.bind_extensions(|_| {}).await;
    let mut prompts: Vec<(String, PromptOptions)> = initial.into_iter().collect();
    prompts.extend(rest.iter().map(|m| (m.clone(), PromptOptions::default())));
    for (text, options) in prompts {
        if let Err(e) = session.prompt_with(&text, options).await {
            eprintln!("{e}");
            report_persist_error(session);
            return 1;
        }
    }
    if report_persist_error(session) { 1 } else { 0 }
}
