//! Spec §2.4 vectors V1–V4 for `build_session_context`, plus migrations.

use pi_coding_agent::session::{
    FileEntry, Leaf, NewSessionOptions, ReadOutcome, SessionEntry, SessionManager, build_session_context,
    index_entries, migrate_values, read_session,
};
use serde_json::{Value, json};

const T: &str = "2025-01-01T00:00:00.000Z";

/// Entries as the file reader sees them (unreadable ones kept raw, as on disk).
fn entries(values: Vec<Value>) -> Vec<SessionEntry> {
    let mut text =
        String::from(r#"{"type":"session","version":3,"id":"t","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#);
    for v in values {
        text.push('\n');
        text.push_str(&v.to_string());
    }
    match read_session(text.as_bytes()).unwrap() {
        ReadOutcome::Session(f) => f.entries,
        other => panic!("{other:?}"),
    }
}

fn msg(id: &str, parent: Option<&str>, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": T, "message": message})
}

fn user(text: &str, ts: u64) -> Value {
    json!({"role": "user", "content": text, "timestamp": ts})
}

fn assistant(text: &str, ts: u64) -> Value {
    json!({
        "role": "assistant", "content": [{"type": "text", "text": text}], "api": "openai-completions",
        "provider": "p", "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": ts
    })
}

fn context(values: Vec<Value>, leaf: Leaf<'_>) -> Value {
    let e = entries(values);
    serde_json::to_value(build_session_context(&e, leaf, &index_entries(&e))).unwrap()
}

fn roles(ctx: &Value) -> Vec<String> {
    ctx["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn v1_compaction_with_system_message() {
    let ctx = context(
        vec![
            msg("s1", None, json!({"role": "system", "content": "", "sections": {"preamble": "P"}, "timestamp": 1})),
            json!({"type": "model_change", "id": "mc", "parentId": "s1", "timestamp": T, "provider": "anthropic", "modelId": "claude"}),
            json!({"type": "thinking_level_change", "id": "th", "parentId": "mc", "timestamp": T, "thinkingLevel": "high"}),
            msg("u1", Some("th"), user("one", 2)),
            msg("a1", Some("u1"), assistant("r1", 3)),
            msg(
                "s2",
                Some("a1"),
                json!({"role": "system", "content": "", "sections": {"skills": "S"}, "timestamp": 4}),
            ),
            msg("u2", Some("s2"), user("two", 5)),
            msg("a2", Some("u2"), assistant("r2", 6)),
            json!({"type": "compaction", "id": "c1", "parentId": "a2", "timestamp": T, "summary": "SUM",
                   "firstKeptEntryId": "u2", "tokensBefore": 100,
                   "systemMessage": {"role": "system", "content": "", "sections": {"preamble": "P", "skills": "S"}, "timestamp": 7}}),
            json!({"type": "custom", "customType": "state", "data": {"x": 1}, "id": "cu", "parentId": "c1", "timestamp": T}),
            json!({"type": "custom_message", "customType": "note", "content": "NOTE", "display": true, "id": "cm", "parentId": "cu", "timestamp": T}),
            msg("u3", Some("cm"), user("three", 8)),
        ],
        Leaf::Last,
    );
    assert_eq!(roles(&ctx), ["system", "compactionSummary", "user", "assistant", "custom", "user"]);
    assert_eq!(ctx["messages"][0]["sections"], json!({"preamble": "P", "skills": "S"}));
    assert_eq!(ctx["messages"][1]["summary"], "SUM");
    assert_eq!(ctx["messages"][2]["content"], "two");
    assert_eq!(ctx["messages"][4]["content"], "NOTE");
    assert_eq!(ctx["thinkingLevel"], "high");
    assert_eq!(ctx["model"], json!({"provider": "p", "modelId": "m"}));
    insta::assert_json_snapshot!(ctx);
}

fn v2() -> Vec<Value> {
    vec![
        msg("u1", None, user("q", 1)),
        msg("a1", Some("u1"), assistant("r", 2)),
        msg("u2", Some("a1"), user("abandoned", 3)),
        msg("a2", Some("u2"), assistant("r2", 4)),
        json!({"type": "branch_summary", "id": "b1", "parentId": "a1", "timestamp": T, "fromId": "a2", "summary": "BS"}),
        msg("u3", Some("b1"), user("new", 5)),
    ]
}

#[test]
fn v2_branch_summary_and_leaves() {
    let ctx = context(v2(), Leaf::Id("u3"));
    assert_eq!(roles(&ctx), ["user", "assistant", "branchSummary", "user"]);
    assert_eq!(
        ctx["messages"][2],
        json!({"role": "branchSummary", "summary": "BS", "fromId": "a2", "timestamp": 1735689600000u64})
    );
    let ctx = context(v2(), Leaf::Id("a2"));
    assert_eq!(roles(&ctx), ["user", "assistant", "user", "assistant"]);
    assert_eq!(ctx["messages"][2]["content"], "abandoned");
    let ctx = context(v2(), Leaf::Empty);
    assert_eq!(ctx, json!({"messages": [], "thinkingLevel": "off", "model": null}));
}

#[test]
fn v3_context_edits() {
    let ctx = context(
        vec![
            msg("u1", None, user("orig", 1)),
            msg("a1", Some("u1"), assistant("r", 2)),
            json!({"type": "context_edit", "id": "e1", "parentId": "a1", "timestamp": T, "targetId": "a1", "replacement": null}),
            json!({"type": "context_edit", "id": "e2", "parentId": "e1", "timestamp": T, "targetId": "u1", "replacement": {"content": "REPLACED"}}),
        ],
        Leaf::Last,
    );
    assert_eq!(ctx["messages"], json!([{"role": "user", "content": "REPLACED", "timestamp": 1}]));
}

#[test]
fn v4_retain_none_compaction() {
    let ctx = context(
        vec![
            msg("u1", None, user("before", 1)),
            msg("a1", Some("u1"), assistant("r", 2)),
            json!({"type": "compaction", "id": "c1", "parentId": "a1", "timestamp": T, "summary": "S", "firstKeptEntryId": "c1", "tokensBefore": 5}),
            msg("u2", Some("c1"), user("after", 3)),
        ],
        Leaf::Last,
    );
    assert_eq!(roles(&ctx), ["compactionSummary", "user"]);
    assert_eq!(ctx["messages"][1]["content"], "after");
}

#[test]
fn empty_summary_branch_adds_nothing_and_null_content_is_normalized() {
    let ctx = context(
        vec![
            json!({"type": "branch_summary", "id": "b1", "parentId": null, "timestamp": T, "fromId": "root", "summary": ""}),
            msg("u1", Some("b1"), json!({"role": "user", "content": null, "timestamp": 1})),
            msg("s1", Some("u1"), json!({"role": "system", "timestamp": 2})),
        ],
        Leaf::Last,
    );
    assert_eq!(
        ctx["messages"],
        json!([{"role": "user", "content": [], "timestamp": 1}, {"role": "system", "timestamp": 2, "content": ""}])
    );
}

#[test]
fn manager_context_edit_rules() {
    let mut s = SessionManager::in_memory("/tmp/x");
    let u = s.append_message(pi_ai::UserMessage::new("hi").at(1).into()).unwrap();
    let m = s.append_model_change("p", "m").unwrap();
    assert_eq!(s.append_context_edit("nope", None).unwrap_err().to_string(), "Entry nope not found");
    assert_eq!(
        s.append_context_edit(&m, None).unwrap_err().to_string(),
        format!("Entry {m} does not contribute editable model content")
    );
    assert_eq!(
        s.append_context_edit(&u, Some(json!(5))).unwrap_err().to_string(),
        "Context edit replacement must be null or contain string/array content"
    );
    s.append_context_edit(&u, Some(json!("X"))).unwrap();
    assert_eq!(serde_json::to_value(&s.build_session_context().messages).unwrap()[0]["content"], "X");
    s.reset_leaf();
    s.append_message(pi_ai::UserMessage::new("other").into()).unwrap();
    assert_eq!(
        s.append_context_edit(&u, None).unwrap_err().to_string(),
        format!("Entry {u} is not on the active branch")
    );
}

#[test]
fn migration_v1_to_v3() {
    let mut lines = vec![
        json!({"type": "session", "id": "old", "timestamp": T, "cwd": "/p"}),
        json!({"type": "message", "timestamp": T, "message": {"role": "user", "content": "hi", "timestamp": 1}}),
        json!({"type": "message", "timestamp": T, "message": {"role": "hookMessage", "customType": "h", "content": "x", "display": true, "timestamp": 2}}),
        json!({"type": "compaction", "timestamp": T, "summary": "S", "firstKeptEntryIndex": 2, "tokensBefore": 10}),
    ];
    assert!(migrate_values(&mut lines));
    assert_eq!(lines[0]["version"], 3);
    let ids: Vec<&str> = lines[1..].iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert!(ids.iter().all(|i| i.len() == 8));
    assert_eq!(lines[1]["parentId"], Value::Null);
    assert_eq!(lines[2]["parentId"], ids[0]);
    assert_eq!(lines[3]["parentId"], ids[1]);
    assert_eq!(lines[2]["message"]["role"], "custom");
    assert_eq!(lines[3]["firstKeptEntryId"], ids[1]);
    assert!(lines[3].get("firstKeptEntryIndex").is_none());
    let all: Vec<FileEntry> = lines.into_iter().map(|v| serde_json::from_value(v).unwrap()).collect();
    let s = SessionManager::in_memory_with("/p", NewSessionOptions::default(), all).unwrap();
    let ctx = serde_json::to_value(s.build_session_context()).unwrap();
    assert_eq!(roles(&ctx), ["compactionSummary", "custom"]);
}

#[test]
fn migrated_file_is_rewritten_and_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.jsonl");
    let v2 = [
        json!({"type": "session", "version": 2, "id": "old", "timestamp": T, "cwd": "/p"}),
        json!({"type": "message", "id": "aaaaaaaa", "parentId": null, "timestamp": T, "message": {"role": "hookMessage", "customType": "h", "content": "x", "display": true, "timestamp": 2}}),
    ];
    let text: String = v2.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let s = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(s.entries()[0].as_message().unwrap().role(), "custom");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.starts_with(r#"{"type":"session","version":3,"id":"old""#), "{written}");
    assert!(written.contains(r#""role":"custom""#));
}

#[test]
fn a_duplicated_id_resolves_to_its_last_entry_even_when_an_earlier_one_comes_just_before() {
    // `c`'s parent `b` is the entry just before it, but a later entry has the id `b` too: the
    // last one wins, as in pi.
    let values = vec![
        msg("u1", None, user("one", 1)),
        msg("b", Some("u1"), assistant("first b", 2)),
        msg("c", Some("b"), user("two", 3)),
        msg("b", Some("u1"), assistant("second b", 4)),
    ];
    let ctx = context(values.clone(), Leaf::Id("c"));
    let texts: Vec<String> = ctx["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["content"].as_str().map_or_else(|| m["content"][0]["text"].as_str().unwrap().to_owned(), str::to_owned)
        })
        .collect();
    assert_eq!(texts, ["one", "second b", "two"]);
    // The manager's cached branch agrees.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut text =
        String::from(r#"{"type":"session","version":3,"id":"t","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#);
    for v in &values[..3] {
        text.push('\n');
        text.push_str(&v.to_string());
    }
    text.push('\n');
    text.push_str(&values[3].to_string());
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    let mut s = SessionManager::open(&path, None, None).unwrap();
    s.branch("c").unwrap();
    let branch: Vec<String> = s.get_branch(None).iter().map(|e| e.id().to_owned()).collect();
    assert_eq!(branch, ["u1", "b", "c"]);
    assert_eq!(roles(&serde_json::to_value(s.build_session_context()).unwrap()), ["user", "assistant", "user"]);
}

#[test]
fn a_cycle_through_a_duplicated_id_is_found_though_each_parent_comes_just_before() {
    // `b`'s parent `a` is the entry just before it, but the last `a` is `b`'s child: a cycle.
    let text = [
        r#"{"type":"session","version":3,"id":"t","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
        msg("a", None, user("one", 1)).to_string(),
        msg("b", Some("a"), user("two", 2)).to_string(),
        msg("a", Some("b"), user("three", 3)).to_string(),
    ]
    .join("\n");
    let ReadOutcome::Session(file) = read_session(text.as_bytes()).unwrap() else { panic!("not a session") };
    assert!(
        file.warnings.iter().any(|w| matches!(w, pi_coding_agent::session::LoadWarning::ParentCycle { .. })),
        "{:?}",
        file.warnings
    );
}
