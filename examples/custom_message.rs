//! The seed's 写法一: an application role (`auditNote`) in the transcript.
//!
//! First without a converter: the note is **silently dropped** by the default `convert_to_llm`,
//! no error, it just never reaches the model. Then with a converter that turns warnings into user
//! text and filters the rest. Runs offline on the faux provider and prints what the model received.
//!
//! Run: `cargo run -p pi-examples --example custom_message`

use std::sync::Arc;

use anyhow::Result;
use pi_agent_core::{Agent, AgentMessage, BoxError, CustomMessage, UnknownMessage, provider_stream_fn};
use pi_ai::providers::faux::{FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text};
use pi_ai::{Message, UserMessage};
use serde::{Deserialize, Serialize};

/// The application's own roles (Rust's answer to TypeScript declaration merging).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
enum AppRoles {
    AuditNote {
        text: String,
        level: String,
        timestamp: u64,
    },
    /// Roles written by someone else survive as raw JSON.
    #[serde(untagged)]
    Other(UnknownMessage),
}

impl CustomMessage for AppRoles {
    fn role(&self) -> &str {
        match self {
            AppRoles::AuditNote { .. } => "auditNote",
            AppRoles::Other(u) => u.role(),
        }
    }
}

fn note(text: &str, level: &str) -> AgentMessage<AppRoles> {
    AgentMessage::Custom(AppRoles::AuditNote { text: text.into(), level: level.into(), timestamp: pi_ai::now_ms() })
}

/// Converts `auditNote` warnings to user text; drops every other custom role.
fn convert(messages: Vec<AgentMessage<AppRoles>>) -> Result<Vec<Message>, BoxError> {
    Ok(messages
        .into_iter()
        .flat_map(|m| match m.into_llm() {
            Ok(llm) => vec![llm],
            Err(AppRoles::AuditNote { text, level, timestamp }) if level == "warning" => {
                vec![Message::User(UserMessage::new(format!("[audit warning] {text}")).at(timestamp).into())]
            }
            Err(_) => vec![],
        })
        .collect())
}

async fn run(agent: &Agent<AppRoles>, faux: &FauxProvider, title: &str) -> Result<()> {
    faux.set_responses(vec![FauxStep::factory(|req| async move {
        // Echo back what the model was sent, so the example can print it.
        let sent: Vec<String> = req
            .context
            .messages()
            .iter()
            .map(|m| format!("{}: {}", m.role(), serde_json::to_string(m).unwrap_or_default()))
            .collect();
        Ok(faux_assistant_message(vec![faux_text(sent.join("\n"))], Default::default()))
    })]);
    agent
        .prompt(vec![
            note("skipped 3 generated files", "info"),
            note("disk almost full", "warning"),
            AgentMessage::User(UserMessage::new("跑一下检查").into()),
        ])
        .await?;
    let reply = agent.messages().last().and_then(|m| m.as_assistant().map(|a| a.text())).unwrap_or_default();
    println!("== {title}\nthe model received:\n{reply}\n");
    let in_transcript = agent.messages().iter().filter(|m| m.role() == "auditNote").count();
    println!("auditNote messages in the transcript: {in_transcript}\n");
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let faux = FauxProvider::new(FauxOptions::default());
    let stream_fn = provider_stream_fn(Arc::new(faux.clone()));

    let plain: Agent<AppRoles> = Agent::builder(faux.model(), stream_fn.clone()).system_prompt("Be brief.").build();
    run(&plain, &faux, "1. default converter: both notes silently dropped").await?;

    let converted: Agent<AppRoles> =
        Agent::builder(faux.model(), stream_fn).system_prompt("Be brief.").convert_to_llm(convert).build();
    run(&converted, &faux, "2. with a converter: the warning reaches the model as user text").await?;
    Ok(())
}
