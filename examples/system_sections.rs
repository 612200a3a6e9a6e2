//! The seed's checklist row "系统提示按段 patch": patch a named system-prompt section by appending a
//! system message, replay the head, then delete the section with `null` and show that the other
//! sections did not move.
//!
//! Run: `cargo run -p pi-examples --example system_sections`

use anyhow::Result;
use pi_ai::transcript::{current_system_message, current_system_prompt};
use pi_ai::{Message, SystemMessage, UserMessage};

fn show(title: &str, transcript: &[Message]) -> Result<()> {
    let head = current_system_message(transcript);
    println!("== {title}");
    println!("head: {}", serde_json::to_string_pretty(&head)?);
    println!("prompt:\n{}\n", current_system_prompt(transcript));
    Ok(())
}

fn main() -> Result<()> {
    // The leading system message is the prompt; it declares two named sections.
    let mut transcript = vec![
        Message::System(
            SystemMessage::new("You are a careful coding assistant.")
                .with_sections([
                    ("rules", Some("<rules>Be brief.</rules>".to_owned())),
                    ("skills", Some("<skills>none yet</skills>".to_owned())),
                ])
                .at(1_700_000_000_000)
                .into(),
        ),
        Message::User(UserMessage::new("hello").at(1_700_000_000_001).into()),
    ];
    show("initial head", &transcript)?;

    // Append a system message that patches the `skills` section by name (the seed's example).
    transcript.push(Message::System(
        SystemMessage::new("")
            .with_sections([("skills", Some("<skills>...</skills>".to_owned()))])
            .at(1_700_000_000_002)
            .into(),
    ));
    transcript.push(Message::User(UserMessage::new("继续").at(1_700_000_000_003).into()));
    show("after patching `skills`", &transcript)?;

    // Delete the section with `null`: `rules` stays exactly where it was.
    transcript
        .push(Message::System(SystemMessage::new("").with_sections([("skills", None)]).at(1_700_000_000_004).into()));
    show("after deleting `skills`", &transcript)?;

    let head = current_system_message(&transcript).ok_or_else(|| anyhow::anyhow!("no head"))?;
    let sections = head.sections.unwrap_or_default();
    anyhow::ensure!(sections.get("skills").is_none(), "skills should be gone");
    anyhow::ensure!(sections.get("rules") == Some(Some("<rules>Be brief.</rules>")), "rules should be unchanged");
    println!("ok: `skills` replaced then removed; `rules` untouched");
    Ok(())
}
