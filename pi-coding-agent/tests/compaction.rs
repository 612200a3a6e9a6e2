//! Compaction and branch summaries against pi's own results and requests.

use std::path::Path;
use std::sync::{Arc, Mutex};

use pi_ai::options::{CacheRetention, StreamOptions};
use pi_ai::transcript::TranscriptContext;
use pi_ai::{AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Model, StopReason};
use pi_coding_agent::compaction::{
    BranchSummaryOptions, CompactionSettings, Summarizer, collect_entries_for_branch_summary, compact,
    navigate_with_summary, prepare_compaction, should_compact,
};
use pi_coding_agent::session::{SessionEntry, SessionManager};
use serde_json::{Value, json};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions").join(name)
}

fn model() -> Model {
    serde_json::from_value(json!({
        "id": "fake-model", "name": "fake", "api": "openai-completions", "provider": "fake",
        "baseUrl": "http://127.0.0.1:1/v1", "reasoning": false, "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 32000, "maxTokens": 1000
    }))
    .unwrap()
}

fn reply(text: &str, stop: StopReason, error: Option<&str>, tool: bool) -> AssistantMessage {
    let mut content = vec![json!({"type": "text", "text": text})];
    if tool {
        content.push(json!({"type": "toolCall", "id": "x", "name": "read", "arguments": {}}));
    }
    let mut m: AssistantMessage = serde_json::from_value(json!({
        "role": "assistant", "content": content, "api": "openai-completions", "provider": "fake", "model": "fake-model",
        "usage": {"input": 120, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": 5000
    }))
    .unwrap();
    m.stop_reason = stop;
    m.error_message = error.map(str::to_owned);
    m
}

type Seen = Arc<Mutex<Vec<(TranscriptContext, StreamOptions)>>>;

/// A summarizer whose model answers `SUMMARY <n>` (scripted streams), recording each request.
fn scripted(stop: StopReason, error: Option<&'static str>, tool: bool) -> (Summarizer, Seen) {
    let seen: Seen = Arc::default();
    let s2 = seen.clone();
    let f = move |_: &Model, ctx: TranscriptContext, opts: StreamOptions| {
        let n = {
            let mut g = s2.lock().unwrap();
            g.push((ctx, opts));
            g.len()
        };
        let message = reply(&format!("SUMMARY {n}"), stop, error, tool);
        let event = if matches!(stop, StopReason::Error | StopReason::Aborted) {
            AssistantMessageEvent::Error { reason: stop, error: Box::new(message) }
        } else {
            AssistantMessageEvent::Done { reason: stop, message: Box::new(message) }
        };
        AssistantMessageEventStream::from_events(vec![event])
    };
    (Summarizer::with_stream_fn(model(), Arc::new(f)), seen)
}

fn zero_timestamps(mut v: Value) -> Value {
    for m in v.as_array_mut().unwrap() {
        m["timestamp"] = json!(0);
    }
    v
}

#[tokio::test]
async fn compaction_matches_pi() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("compaction-request.json")).unwrap()).unwrap();
    let s = SessionManager::open(fixture("compaction.jsonl"), None, None).unwrap();
    let compaction_at = s.entries().iter().position(|e| matches!(e, SessionEntry::Compaction(_))).unwrap();
    let before = s.entries()[compaction_at - 1].id().to_owned();
    let path = s.get_branch(Some(&before));
    let settings = CompactionSettings { enabled: true, reserve_tokens: 1000, keep_recent_tokens: 1500 };
    let prep = prepare_compaction(&path, settings).unwrap();
    let p = &expected["preparation"];
    assert_eq!(prep.first_kept_entry_id, p["firstKeptEntryId"].as_str().unwrap());
    assert_eq!(prep.is_split_turn, p["isSplitTurn"].as_bool().unwrap());
    assert_eq!(prep.tokens_before, p["tokensBefore"].as_u64().unwrap());
    assert_eq!(prep.messages_to_summarize.len() as u64, p["messagesToSummarize"].as_u64().unwrap());
    assert_eq!(prep.turn_prefix_messages.len() as u64, p["turnPrefixMessages"].as_u64().unwrap());

    let (summarizer, seen) = scripted(StopReason::Stop, None, false);
    let result = compact(&prep, &summarizer, Some("Focus on files.")).await.unwrap();
    let r = &expected["result"];
    assert_eq!(result.summary, r["summary"].as_str().unwrap());
    assert_eq!(result.first_kept_entry_id, r["firstKeptEntryId"].as_str().unwrap());
    assert_eq!(result.tokens_before, r["tokensBefore"].as_u64().unwrap());
    assert_eq!(result.details, r["details"]);
    assert_eq!(serde_json::to_value(result.usage.as_ref().unwrap()).unwrap(), r["usage"]);

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), expected["requests"].as_array().unwrap().len());
    for ((ctx, opts), want) in seen.iter().zip(expected["requests"].as_array().unwrap()) {
        let ours = zero_timestamps(serde_json::to_value(ctx.messages()).unwrap());
        assert_eq!(ours, want["context"]["messages"], "summary request body");
        assert!(matches!(opts.cache_retention, Some(CacheRetention::None)));
        assert!(opts.reasoning.is_none());
        assert!(opts.session_id.is_some());
    }
    insta::assert_snapshot!(seen[0].0.messages()[1].clone().into_user_text());

    // The entry pi wrote from this result is what ours writes.
    let SessionEntry::Compaction(c) = &s.entries()[compaction_at] else { unreachable!() };
    assert_eq!(c.summary, result.summary);
    assert_eq!(c.first_kept_entry_id, result.first_kept_entry_id);
    assert_eq!(c.details.as_ref(), Some(&result.details));
}

trait UserText {
    fn into_user_text(self) -> String;
}

impl UserText for pi_ai::Message {
    fn into_user_text(self) -> String {
        match self {
            pi_ai::Message::User(u) => pi_ai::transcript::content_text(&u.content),
            other => panic!("{other:?}"),
        }
    }
}

fn user(s: &mut SessionManager, text: &str) -> String {
    s.append_message(pi_ai::UserMessage::new(text).into()).unwrap()
}

fn tool_round(s: &mut SessionManager, i: usize, size: usize) {
    let call: AssistantMessage = serde_json::from_value(json!({
        "role": "assistant", "content": [{"type": "toolCall", "id": format!("c{i}"), "name": "write", "arguments": {"path": format!("out{i}.txt")}}],
        "api": "a", "provider": "fake", "model": "fake-model",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "toolUse", "timestamp": 1
    }))
    .unwrap();
    s.append_message(call.into()).unwrap();
    let result: pi_ai::ToolResultMessage = serde_json::from_value(json!({
        "role": "toolResult", "toolCallId": format!("c{i}"), "toolName": "write",
        "content": [{"type": "text", "text": "y".repeat(size)}], "isError": false, "timestamp": 1
    }))
    .unwrap();
    s.append_message(result.into()).unwrap();
}

#[tokio::test]
async fn split_turn_gets_a_prefix_summary() {
    let mut s = SessionManager::in_memory("/p");
    user(&mut s, "old question");
    tool_round(&mut s, 0, 400);
    user(&mut s, "one long turn");
    for i in 1..8 {
        tool_round(&mut s, i, 4000);
    }
    let path = s.get_branch(None);
    let prep =
        prepare_compaction(&path, CompactionSettings { enabled: true, reserve_tokens: 100, keep_recent_tokens: 2500 })
            .unwrap();
    assert!(prep.is_split_turn);
    assert!(!prep.turn_prefix_messages.is_empty());
    let (summarizer, seen) = scripted(StopReason::Stop, None, false);
    let result = compact(&prep, &summarizer, None).await.unwrap();
    assert!(
        result.summary.starts_with("SUMMARY 1\n\n---\n\n**Turn Context (split turn):**\n\nSUMMARY 2"),
        "{}",
        result.summary
    );
    assert!(result.summary.contains("<modified-files>\nout0.txt\nout1.txt"), "{}", result.summary);
    let seen = seen.lock().unwrap();
    let prefix_prompt = seen[1].0.messages()[1].clone().into_user_text();
    assert!(prefix_prompt.starts_with("# Conversation\n[User]: one long turn"), "{prefix_prompt}");
    assert_eq!(result.usage.unwrap().total_tokens, 300);
}

#[tokio::test]
async fn summarization_failures_use_pi_texts() {
    let mut s = SessionManager::in_memory("/p");
    user(&mut s, "q");
    tool_round(&mut s, 0, 40_000);
    user(&mut s, "next");
    let path = s.get_branch(None);
    let prep =
        prepare_compaction(&path, CompactionSettings { enabled: true, reserve_tokens: 100, keep_recent_tokens: 1 })
            .unwrap();
    let (sm, _) = scripted(StopReason::Error, Some("boom"), false);
    assert_eq!(compact(&prep, &sm, None).await.unwrap_err().to_string(), "Summarization failed: boom");
    let (sm, _) = scripted(StopReason::Length, None, false);
    assert_eq!(
        compact(&prep, &sm, None).await.unwrap_err().to_string(),
        "Summarization failed: generation hit the token cap and the summary is incomplete"
    );
    let (sm, _) = scripted(StopReason::Stop, None, true);
    assert_eq!(compact(&prep, &sm, None).await.unwrap_err().to_string(), "Summarization attempted to call a tool");
    assert!(should_compact(31_001, 32_000, &CompactionSettings { reserve_tokens: 1000, ..Default::default() }));
    assert!(!should_compact(31_000, 32_000, &CompactionSettings { reserve_tokens: 1000, ..Default::default() }));
}

#[tokio::test]
async fn navigating_away_summarizes_the_branch() {
    let mut s = SessionManager::in_memory("/p");
    let root = user(&mut s, "start");
    user(&mut s, "explore");
    tool_round(&mut s, 0, 10);
    let (entries, common) = collect_entries_for_branch_summary(&s, s.leaf_id(), &root);
    assert_eq!(common.as_deref(), Some(root.as_str()));
    assert_eq!(entries.len(), 3);
    let old_leaf = s.leaf_id().unwrap().to_owned();
    let (summarizer, seen) = scripted(StopReason::Stop, None, false);
    let id = navigate_with_summary(&mut s, &root, Some(&summarizer), &BranchSummaryOptions::default())
        .await
        .unwrap()
        .unwrap();
    let SessionEntry::BranchSummary(b) = s.entry(&id).unwrap() else { panic!() };
    assert_eq!(b.from_id, old_leaf);
    assert_eq!(b.parent_id.as_deref(), Some(root.as_str()));
    assert_eq!(
        b.summary,
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nSUMMARY 1\n\n<modified-files>\nout0.txt\n</modified-files>"
    );
    let prompt = seen.lock().unwrap()[0].0.messages()[1].clone().into_user_text();
    assert!(prompt.starts_with("<conversation>\n[User]: explore\n\n[Assistant tool calls]: write(path=\"out0.txt\")\n</conversation>\n\nCreate a structured summary"), "{prompt}");
    let ctx = serde_json::to_value(s.build_session_context()).unwrap();
    assert_eq!(ctx["messages"][1]["role"], "branchSummary");
}
