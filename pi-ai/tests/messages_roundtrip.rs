//! Messages written by the TypeScript pi 1.6.0 round-trip byte for byte.
//!
//! Fixture: `tests/fixtures/messages.json`, made by `scripts/fixtures/pi_ai_messages.mjs` (an Agent
//! run on the faux provider plus hand-built shapes covering every optional field).

use pi_ai::{AssistantBlock, Content, Message, StopReason, UserBlock};

const FIXTURE: &str = include_str!("fixtures/messages.json");

/// Each message's exact bytes as JS wrote them.
fn fixture_messages() -> Vec<Box<serde_json::value::RawValue>> {
    serde_json::from_str(FIXTURE).expect("fixture is JSON")
}

#[test]
fn every_fixture_message_round_trips_byte_for_byte() {
    let values = fixture_messages();
    assert!(values.len() >= 12, "fixture should cover many shapes");
    for raw in values {
        let original = raw.get();
        let message: Message = serde_json::from_str(original).unwrap_or_else(|e| panic!("{e}: {original}"));
        let written = serde_json::to_string(&message).unwrap();
        assert_eq!(written, original);
    }
}

#[test]
fn the_whole_fixture_round_trips_byte_for_byte() {
    let messages: Vec<Message> = serde_json::from_str(FIXTURE).unwrap();
    assert_eq!(serde_json::to_string(&messages).unwrap(), FIXTURE.trim_end());
}

#[test]
fn fixture_fields_are_read_into_typed_fields() {
    let messages: Vec<Message> = serde_json::from_str(FIXTURE).unwrap();
    let Message::System(head) = &messages[0] else { panic!("first is system") };
    assert_eq!(head.tools_added.as_ref().unwrap()[0].name, "echo");
    let Message::Assistant(first) = &messages[2] else { panic!("assistant") };
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert!(matches!(first.content[2], AssistantBlock::ToolCall(_)));
    assert_eq!(first.tool_calls().next().unwrap().arguments["text"], "hi there");
    let Message::System(patch) = &messages[5] else { panic!("patch") };
    let sections = patch.sections.as_ref().unwrap();
    assert_eq!(sections.keys().collect::<Vec<_>>(), ["10", "skills", "old"]);
    assert_eq!(sections.get("old"), Some(None));
    let Message::User(look) = &messages[6] else { panic!("user") };
    let Content::Blocks(blocks) = &look.content else { panic!("blocks") };
    assert!(matches!(&blocks[1], UserBlock::Image(i) if i.mime_type == "image/png"));
    let full = messages.iter().rev().find_map(|m| match m {
        Message::Assistant(a) if a.api == "openai-responses" => Some(a),
        _ => None,
    });
    let full = full.unwrap();
    assert_eq!(full.usage.cache_write_1h, Some(1));
    assert_eq!(full.usage.cost.cache_read, 1.5e-7);
    assert_eq!(full.extra["futureField"]["keep"][1], "two");
}

#[test]
fn unknown_fields_survive_edits_of_known_fields() {
    let messages: Vec<Message> = serde_json::from_str(FIXTURE).unwrap();
    let mut full = messages
        .into_iter()
        .find_map(|m| match m {
            Message::Assistant(a) if a.api == "openai-responses" => Some(a),
            _ => None,
        })
        .unwrap();
    full.error_message = None;
    full.response_id = Some("changed".into());
    let json = serde_json::to_string(&full).unwrap();
    assert!(json.contains(r#""responseId":"changed""#));
    assert!(!json.contains("errorMessage"));
    assert!(json.ends_with(r#""futureField":{"keep":[1,"two"]}}"#), "{json}");
}

#[test]
fn built_messages_omit_absent_optionals_and_never_write_null() {
    let m = pi_ai::AssistantMessage { api: "a".into(), provider: "p".into(), model: "m".into(), ..Default::default() };
    let json = serde_json::to_string(&m).unwrap();
    assert!(!json.contains("null"), "{json}");
    assert_eq!(
        json,
        r#"{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":0}"#
    );
}

#[test]
fn wrong_shapes_give_clear_errors() {
    let err = serde_json::from_str::<Message>(r#"{"role":"user","timestamp":1}"#).unwrap_err();
    assert!(err.to_string().contains("missing field `content`"), "{err}");
    let err = serde_json::from_str::<Message>(r#"{"role":"robot","content":"x","timestamp":1}"#).unwrap_err();
    assert!(err.to_string().contains("unknown variant `robot`"), "{err}");
    let err = serde_json::from_str::<Message>(r#"{"content":"x"}"#).unwrap_err();
    assert!(err.to_string().contains("missing field `role`"), "{err}");
}

#[test]
fn the_tag_may_stand_anywhere() {
    let line = r#"{"content":"hi","timestamp":3,"role":"user"}"#;
    let m: Message = serde_json::from_str(line).unwrap();
    assert_eq!(serde_json::to_string(&m).unwrap(), line);
}
