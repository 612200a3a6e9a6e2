//! Snapshots of the texts a model sees: rendered system updates and replayed prompts.

use pi_ai::transcript::{
    current_system_message, current_system_prompt, render_system_message_update, system_message_text,
};
use pi_ai::{Message, SystemMessage, UserMessage};

fn transcript() -> Vec<Message> {
    vec![
        Message::System(
            SystemMessage::new("You are a careful coding assistant.")
                .with_sections([
                    ("rules", Some("<rules>\nBe brief.\n</rules>".to_owned())),
                    ("skills", Some("<skills>\n- read\n</skills>".to_owned())),
                ])
                .at(1)
                .into(),
        ),
        Message::User(UserMessage::new("hello").at(2).into()),
        Message::System(
            SystemMessage::new("Prefer small commits.")
                .with_sections([("skills", Some("<skills>\n- read\n- grep\n</skills>".to_owned())), ("rules", None)])
                .at(3)
                .into(),
        ),
    ]
}

#[test]
fn rendered_update_of_a_later_system_message() {
    let t = transcript();
    let Message::System(update) = &t[2] else { unreachable!() };
    insta::assert_snapshot!(render_system_message_update(update));
}

#[test]
fn replayed_prompt() {
    insta::assert_snapshot!(current_system_prompt(&transcript()));
}

#[test]
fn replayed_head_json() {
    insta::assert_json_snapshot!(serde_json::to_value(current_system_message(&transcript())).unwrap());
}

#[test]
fn leading_message_as_prompt_text() {
    let t = transcript();
    let Message::System(head) = &t[0] else { unreachable!() };
    insta::assert_snapshot!(system_message_text(head));
}
