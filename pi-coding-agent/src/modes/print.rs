//! Print mode (`-p`): run the prompts, write each text block of the last assistant message
//! followed by `\n`; errors on stderr with pi's exit codes.

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantBlock, StopReason};

use super::output::write_text;
use crate::sdk::{AgentSession, PromptOptions};

/// pi's message for a reply cut at the output limit.
pub const TRUNCATED_MESSAGE: &str = "Response was truncated: the model reached its output token limit.";

/// Runs `initial` (with images) then each further message; returns the exit status.
pub async fn run_print(session: &AgentSession, initial: Option<(String, PromptOptions)>, rest: &[String]) -> i32 {
    let _errors = report_extension_errors(session);
    // Errors are reported by the listener registered above.
    session.bind_extensions(|_| {}).await;
    if let Some((text, options)) = initial
        && let Err(e) = session.prompt_with(&text, options).await
    {
        eprintln!("{e}");
        report_persist_error(session);
        return 1;
    }
    for message in rest {
        if let Err(e) = session.prompt(message).await {
            eprintln!("{e}");
            report_persist_error(session);
            return 1;
        }
    }
    let code = finish(session);
    if report_persist_error(session) { code.max(1) } else { code }
}

/// pi's print- and json-mode `onError`: every extension error (a failing, panicking or hanging
/// handler, protocol garbage, a process that died) as `Extension error (<path>): <error>` on
/// stderr. The listener lives as long as the returned handle is not removed.
pub fn report_extension_errors(session: &AgentSession) -> Option<crate::extensions::ErrorListenerHandle> {
    let runner = session.extension_runner()?;
    Some(runner.on_error(|e| eprintln!("Extension error ({}): {}", e.extension_path, e.error)))
}

/// Prints a failure to save the session (`Error: …` on stderr); whether there was one. The answer
/// has been shown, but the exit status must say that the session is not on disk.
pub fn report_persist_error(session: &AgentSession) -> bool {
    match session.take_persist_error() {
        Some(e) => {
            eprintln!("Error: {e}");
            true
        }
        None => false,
    }
}

/// Writes the last assistant message and computes the exit status.
pub fn finish(session: &AgentSession) -> i32 {
    let messages = session.messages();
    let Some(last) = messages.iter().rev().find_map(|m| match m {
        AgentMessage::Assistant(a) => Some(a),
        _ => None,
    }) else {
        return 0;
    };
    match last.stop_reason {
        StopReason::Error | StopReason::Aborted => {
            let fallback = if last.stop_reason == StopReason::Aborted { "Request aborted" } else { "Request failed" };
            eprintln!("{}", last.error_message.as_deref().unwrap_or(fallback));
            return 1;
        }
        _ => {}
    }
    for block in &last.content {
        if let AssistantBlock::Text(t) = block {
            write_text(&format!("{}\n", t.text));
        }
    }
    if last.stop_reason == StopReason::Length {
        eprintln!("{TRUNCATED_MESSAGE}");
        return 1;
    }
    0
}
