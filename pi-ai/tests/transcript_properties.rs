//! Properties of the system-head replay, checked over generated transcripts.

use pi_ai::transcript::{current_system_message, current_tools};
use pi_ai::{Message, SystemMessage, Tool, UserMessage};
use proptest::prelude::*;
use serde_json::json;

fn tool(name: &str, version: u8) -> Tool {
    Tool::new(name, format!("v{version}"), json!({"type": "object"}))
}

fn arb_system() -> impl Strategy<Value = SystemMessage> {
    let names = prop::sample::select(vec!["a", "b", "c", "d"]);
    let section_keys = prop::sample::select(vec!["rules", "skills", "z", "1", "10"]);
    (
        prop::sample::select(vec!["", "", "Base.", "More.", "x"]),
        prop::collection::vec((section_keys, prop::option::of(prop::sample::select(vec!["S1", "S2", ""]))), 0..3),
        prop::collection::vec((names.clone(), 0u8..3), 0..3),
        prop::collection::vec(names, 0..2),
        0u64..100,
    )
        .prop_map(|(content, sections, added, removed, ts)| {
            let mut m = SystemMessage::new(content).at(ts);
            if !sections.is_empty() {
                m = m.with_sections(sections.into_iter().map(|(k, v)| (k, v.map(str::to_owned))));
            }
            if !added.is_empty() {
                m = m.with_tools_added(added.into_iter().map(|(n, v)| tool(n, v)).collect());
            }
            if !removed.is_empty() {
                m = m.with_tools_removed(removed);
            }
            m
        })
}

fn arb_message() -> impl Strategy<Value = Message> {
    prop_oneof![
        3 => arb_system().prop_map(Message::from),
        1 => "[a-z]{0,5}".prop_map(|t| Message::User(UserMessage::new(t).at(1).into())),
    ]
}

fn arb_transcript() -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec(arb_message(), 0..12)
}

proptest! {
    #[test]
    fn non_system_messages_never_change_the_head(
        transcript in arb_transcript(),
        inserts in prop::collection::vec((0usize..20, "[a-z]{0,4}"), 0..6),
    ) {
        let before = current_system_message(&transcript);
        let mut with_users = transcript.clone();
        for (pos, text) in inserts {
            let at = pos % (with_users.len() + 1);
            with_users.insert(at, Message::User(UserMessage::new(text).at(2).into()));
        }
        prop_assert_eq!(current_system_message(&with_users), before);
    }

    #[test]
    fn replaying_a_prefix_then_the_rest_equals_replaying_the_whole(
        transcript in arb_transcript(),
        split in 0usize..13,
    ) {
        let split = split.min(transcript.len());
        let whole = current_system_message(&transcript);
        let mut stepwise: Vec<Message> = current_system_message(&transcript[..split]).map(Message::from).into_iter().collect();
        stepwise.extend_from_slice(&transcript[split..]);
        let stepwise = current_system_message(&stepwise);
        // The replayed head equals, field by field (JSON compares section and tool order too).
        prop_assert_eq!(serde_json::to_value(&stepwise).unwrap(), serde_json::to_value(&whole).unwrap());
    }

    #[test]
    fn removing_and_readding_a_tool_moves_it_last(transcript in arb_transcript(), pick in 0usize..4) {
        let tools = current_tools(&transcript);
        prop_assume!(!tools.is_empty());
        let name = tools[pick % tools.len()].name.clone();
        let mut t = transcript.clone();
        t.push(Message::System(SystemMessage::new("").with_tools_removed([name.clone()]).with_tools_added(vec![tool(&name, 9)]).into()));
        let after = current_tools(&t);
        prop_assert_eq!(after.len(), tools.len());
        prop_assert_eq!(&after.last().unwrap().name, &name);
        prop_assert_eq!(&after.last().unwrap().description, "v9");
    }

    #[test]
    fn a_null_section_never_appears_in_the_result(transcript in arb_transcript()) {
        if let Some(head) = current_system_message(&transcript) {
            if let Some(sections) = &head.sections {
                prop_assert!(!sections.is_empty());
                prop_assert!(sections.iter().all(|(_, v)| v.is_some()));
            }
            let json = serde_json::to_string(&head).unwrap();
            prop_assert!(!json.contains("null"));
        }
    }

    #[test]
    fn messages_round_trip_through_json(transcript in arb_transcript()) {
        let json = serde_json::to_string(&transcript).unwrap();
        let back: Vec<Message> = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }
}
