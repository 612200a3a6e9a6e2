//! The test vectors V1–V23 of spec §2.7, each checked against pi 1.6.0.
//!
//! Notation of the spec: `sys{…}` has `content:""` and `timestamp:5` unless stated otherwise;
//! `T(a)` is `{name:"a", description:"d", parameters:{type:"object",properties:{}}}`; `a:2` is tool
//! `a` with description `"2"`.

use pi_ai::transcript::*;
use pi_ai::{
    Content, Context, ImageContent, Message, Sections, SystemMessage, TextContent, Tool, ToolReference, UserBlock,
    UserMessage,
};
use serde_json::json;

fn t(name: &str) -> Tool {
    Tool::new(name, "d", json!({"type": "object", "properties": {}}))
}

fn tv(name: &str, description: &str) -> Tool {
    Tool::new(name, description, json!({"type": "object", "properties": {}}))
}

fn u(text: &str) -> Message {
    Message::User(UserMessage::new(text).at(1).into())
}

fn sys() -> SystemMessage {
    SystemMessage::new("").at(5)
}

fn sections(pairs: &[(&str, Option<&str>)]) -> Sections {
    pairs.iter().map(|(k, v)| (*k, v.map(str::to_owned))).collect()
}

fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|t| format!("{}:{}", t.name, t.description)).collect()
}

fn to_json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap()
}

#[test]
fn v1_normalize_folds_prompt_and_tools_into_a_leading_system_message() {
    let tc = normalize_context(Context {
        system_prompt: Some("S".into()),
        messages: vec![u("hi")],
        tools: Some(vec![t("a")]),
    });
    assert_eq!(
        to_json(&tc.messages()),
        json!([
            {"role": "system", "content": "S", "toolsAdded": [{"name": "a", "description": "d", "parameters": {"type": "object", "properties": {}}}], "timestamp": 0},
            {"role": "user", "content": "hi", "timestamp": 1}
        ])
    );
}

#[test]
fn v2_empty_prompt_and_tools_add_nothing() {
    let tc =
        normalize_context(Context { system_prompt: Some(String::new()), messages: vec![u("hi")], tools: Some(vec![]) });
    assert_eq!(tc.messages(), &[u("hi")]);
}

#[test]
fn v3_tools_alone_make_a_system_message() {
    let tc = normalize_context(Context { system_prompt: None, messages: vec![], tools: Some(vec![t("a")]) });
    assert_eq!(
        to_json(&tc.messages()),
        json!([{"role": "system", "content": "", "toolsAdded": [to_json(&t("a"))], "timestamp": 0}])
    );
}

#[test]
fn v4_normalize_never_merges_with_an_existing_system_message() {
    let tc = normalize_context(Context {
        system_prompt: Some("S".into()),
        messages: vec![Message::System(SystemMessage::new("X").at(5).into()), u("hi")],
        tools: None,
    });
    assert_eq!(
        to_json(&tc.messages()),
        json!([
            {"role": "system", "content": "S", "timestamp": 0},
            {"role": "system", "content": "X", "timestamp": 5},
            {"role": "user", "content": "hi", "timestamp": 1}
        ])
    );
}

#[test]
fn v5_content_appends_across_system_messages() {
    let msgs = vec![
        Message::System(SystemMessage::new("A").at(7).into()),
        u("x"),
        Message::System(SystemMessage::new("B").at(9).into()),
        Message::System(
            sys().tap_content(Content::Blocks(vec![TextContent::new("C1"), TextContent::new("C2")])).into(),
        ),
    ];
    assert_eq!(
        to_json(&current_system_message(&msgs)),
        json!({"role": "system", "content": "A\n\nB\n\nC1\nC2", "timestamp": 7})
    );
}

trait Tap {
    fn tap_content(self, c: Content<TextContent>) -> Self;
}
impl Tap for SystemMessage {
    fn tap_content(mut self, c: Content<TextContent>) -> Self {
        self.content = c;
        self
    }
}

#[test]
fn v6_sections_patch_by_name_and_null_deletes() {
    let msgs = vec![
        SystemMessage::new("A").at(5).with_sections([("a", Some("<a>1</a>".into())), ("b", Some("<b>1</b>".into()))]),
        sys().with_sections([("a", None)]),
        sys().with_sections([("a", Some("<a>2</a>".into())), ("b", Some("<b>2</b>".into()))]),
    ];
    let head = current_system_message(&msgs).unwrap();
    assert_eq!(to_json(&head.sections), json!({"b": "<b>2</b>", "a": "<a>2</a>"}));
    assert_eq!(head.sections.unwrap().keys().collect::<Vec<_>>(), ["b", "a"]);
    assert_eq!(current_system_prompt(&msgs), "A\n\n<b>2</b>\n\n<a>2</a>");
}

#[test]
fn v7_no_system_message_means_no_head_and_an_empty_prompt() {
    assert_eq!(current_system_message(&[u("x")]), None);
    assert_eq!(current_system_prompt::<Message>(&[]), "");
}

#[test]
fn v8_an_empty_system_message_still_makes_a_head() {
    assert_eq!(
        to_json(&current_system_message(&[SystemMessage::new("").at(3)])),
        json!({"role": "system", "content": "", "timestamp": 3})
    );
}

#[test]
fn v9_integer_like_section_names_come_first_ascending() {
    let msgs = [sys().with_sections([("z", Some("Z".into())), ("10", Some("ten".into())), ("2", Some("two".into()))])];
    let head = current_system_message(&msgs).unwrap();
    assert_eq!(head.sections.unwrap().keys().collect::<Vec<_>>(), ["2", "10", "z"]);
    // Also as read from JSON and as written.
    let s: Sections = serde_json::from_str(r#"{"z":"Z","10":"ten","2":"two"}"#).unwrap();
    assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"2":"two","10":"ten","z":"Z"}"#);
}

#[test]
fn v10_readding_a_name_keeps_its_slot() {
    let msgs = [sys().with_tools_added(vec![tv("a", "1"), t("b")]), sys().with_tools_added(vec![tv("a", "2")])];
    assert_eq!(names(&current_tools(&msgs)), ["a:2", "b:d"]);
}

#[test]
fn v11_remove_then_add_moves_a_tool_last() {
    let msgs = [
        sys().with_tools_added(vec![tv("a", "1"), t("b")]),
        sys().with_tools_removed(["a"]).with_tools_added(vec![tv("a", "2")]),
    ];
    assert_eq!(names(&current_tools(&msgs)), ["b:d", "a:2"]);
}

#[test]
fn v12_tools_alone_after_a_user_message_make_a_head() {
    let msgs = [u("x"), Message::System(SystemMessage::new("").at(42).with_tools_added(vec![t("a")]).into())];
    assert_eq!(
        to_json(&current_system_message(&msgs)),
        json!({"role": "system", "content": "", "toolsAdded": [to_json(&t("a"))], "timestamp": 42})
    );
}

#[test]
fn v13_render_system_message_update() {
    let m =
        SystemMessage::new("Note").at(5).with_sections([("rules", Some("<rules>new</rules>".into())), ("old", None)]);
    assert_eq!(
        render_system_message_update(&m),
        "Note\n\nUpdated system prompt section \"rules\":\n\n<rules>new</rules>\n\nRemoved system prompt section \"old\"."
    );
}

#[test]
fn v13b_render_keeps_empty_section_values() {
    let m = sys().with_sections([("x", Some(String::new()))]);
    assert_eq!(render_system_message_update(&m), "Updated system prompt section \"x\":\n\n");
}

#[test]
fn v14_system_message_text_drops_empty_parts() {
    let m = sys().with_sections([("a", Some("A".into())), ("b", Some(String::new())), ("c", Some("C".into()))]);
    assert_eq!(system_message_text(&m), "A\n\nC");
}

#[test]
fn v15_content_text_joins_text_blocks() {
    let c = Content::Blocks(vec![
        UserBlock::Text(TextContent::new("a")),
        UserBlock::Image(ImageContent::new("AAA=", "image/png")),
        UserBlock::Text(TextContent::new("b")),
    ]);
    assert_eq!(content_text(&c), "a\nb");
    let c = Content::Blocks(vec![TextContent::new("a"), TextContent::new("b")]);
    assert_eq!(content_text_with(&c, ""), "ab");
}

#[test]
fn v16_collapse_folds_every_system_message_into_the_head() {
    let tc = normalize_context(Context {
        system_prompt: Some("S".into()),
        messages: vec![
            u("u1"),
            Message::System(SystemMessage::new("more").at(9).with_tools_removed(["a"]).into()),
            u("u2"),
        ],
        tools: Some(vec![t("a")]),
    });
    let collapsed = collapse_system_messages(tc);
    assert_eq!(
        to_json(&collapsed.messages()),
        json!([
            {"role": "system", "content": "S\n\nmore", "timestamp": 0},
            {"role": "user", "content": "u1", "timestamp": 1},
            {"role": "user", "content": "u2", "timestamp": 1}
        ])
    );
}

#[test]
fn v17_tool_state_changes_list_a_changed_tool_twice() {
    let c = tool_state_changes(&[tv("a", "1"), t("b"), t("c")], &[tv("a", "2"), t("c"), t("d")]);
    assert_eq!(names(&c.tools_added), ["a:2", "d:d"]);
    assert_eq!(c.tools_removed, [ToolReference::new("a"), ToolReference::new("b")]);
}

#[test]
fn v18_resolve_transcript_tools_per_support_level() {
    let msgs = vec![
        Message::System(sys().with_tools_added(vec![t("a"), t("b")]).into()),
        u("1"),
        Message::System(sys().with_tools_added(vec![t("c")]).into()),
        u("2"),
        Message::System(sys().with_tools_removed(["b"]).into()),
        u("3"),
        Message::System(sys().with_tools_added(vec![t("d")]).into()),
    ];
    let r = resolve_transcript_tools(&msgs, ToolChangeSupport::Additions);
    assert_eq!((names(&r.request_tools), r.folded_system_messages), (vec!["a:d".into(), "c:d".into()], 3));
    let r = resolve_transcript_tools(&msgs, ToolChangeSupport::None);
    assert_eq!(
        (names(&r.request_tools), r.folded_system_messages),
        (vec!["a:d".into(), "c:d".into(), "d:d".into()], 4)
    );
    let r = resolve_transcript_tools(&msgs, ToolChangeSupport::Changes);
    assert_eq!((r.request_tools.len(), r.folded_system_messages), (0, 0));
}

#[test]
fn v19_declared_tools_ignore_removals() {
    let msgs = [
        sys().with_tools_added(vec![tv("a", "1"), t("b")]),
        sys().with_tools_removed(["a"]),
        sys().with_tools_added(vec![tv("a", "2")]),
    ];
    assert_eq!(names(&declared_tools(&msgs)), ["a:2", "b:d"]);
}

#[test]
fn v20_non_additive_changes() {
    let add = |n: &str| sys().with_tools_added(vec![t(n)]);
    assert!(!has_non_additive_tool_changes(&[add("a"), add("b")]));
    assert!(has_non_additive_tool_changes(&[add("a"), add("a")]));
    // A removal alone is non-additive too.
    assert!(has_non_additive_tool_changes(&[add("a"), sys().with_tools_removed(["a"])]));
}

#[test]
fn v21_no_initial_message_without_prompt_or_tools() {
    assert_eq!(create_initial_system_message(None, &[]), None);
    let msgs = [u("x"), Message::System(sys().into())];
    assert!(initial_system_message(&msgs).is_none());
}

#[test]
fn v22_tool_declaration_drops_application_fields() {
    // pi drops `execute`, `label` and `undefined` schema members; in Rust those arrive as unknown
    // fields read into `extra`.
    let tool: Tool = serde_json::from_value(json!({
        "name": "n", "description": "d", "parameters": {"type": "object"}, "label": "Label", "executionMode": "sequential"
    }))
    .unwrap();
    assert_eq!(
        to_json(&to_tool_declaration(&tool)),
        json!({"name": "n", "description": "d", "parameters": {"type": "object"}})
    );
    let mut with_cs = tool.clone();
    with_cs.constrained_sampling = Some(json!(false));
    assert_eq!(to_json(&to_tool_declaration(&with_cs))["constrainedSampling"], json!(false));
}

#[test]
fn v23_deleting_then_readding_a_section_moves_it_last() {
    let deleted = [
        sys().with_sections([("a", Some("A".into())), ("b", Some("B".into()))]),
        sys().with_sections([("a", None)]),
        sys().with_sections([("a", Some("A2".into()))]),
    ];
    let replaced = [
        sys().with_sections([("a", Some("A".into())), ("b", Some("B".into()))]),
        sys().with_sections([("a", Some("A2".into()))]),
    ];
    let head = |m: &[SystemMessage]| current_system_message(m).unwrap().sections.unwrap();
    assert_eq!(head(&deleted), sections(&[("b", Some("B")), ("a", Some("A2"))]));
    assert_eq!(head(&replaced), sections(&[("a", Some("A2")), ("b", Some("B"))]));
    assert_eq!(to_json(&head(&deleted)), json!({"b": "B", "a": "A2"}));
}

#[test]
fn replay_skips_roles_it_does_not_know() {
    #[derive(Debug)]
    enum Entry {
        Known(Box<Message>),
        Unknown(#[allow(dead_code)] serde_json::Value),
    }
    impl TranscriptEntry for Entry {
        fn as_system_message(&self) -> Option<&SystemMessage> {
            match self {
                Entry::Known(m) => m.as_system(),
                Entry::Unknown(_) => None,
            }
        }
    }
    let msgs = [
        Entry::Known(Box::new(Message::System(SystemMessage::new("P").at(1).into()))),
        Entry::Unknown(json!({"role": "auditNote", "text": "not for the model"})),
        Entry::Known(Box::new(Message::System(sys().with_sections([("s", Some("S".into()))]).into()))),
    ];
    assert_eq!(current_system_prompt(&msgs), "P\n\nS");
    assert!(initial_system_message(&msgs).is_some());
}
