//! `AgentSession` as pi 1.6.0's around the prompt: manual and automatic compaction
//! (`session_before_compact`, `session_compact`), auto-retry, tree navigation with branch
//! summaries, new / forked / switched sessions and stats. Sessions are real files in a temp dir.

use std::sync::{Arc, Mutex};

use pi_ai::StopReason;
use pi_ai::providers::faux::{FauxMessageOptions, faux_assistant_message, faux_text};
use pi_coding_agent::compaction::CompactionSettings;
use pi_coding_agent::extensions::*;
use pi_coding_agent::sdk::NavigateTreeOptions;
use sdk_support::{Log, ext, harness, small_settings, step, summarizing_model, text, user_texts};
use serde_json::{Value, json};

#[path = "sdk_support/mod.rs"]
mod sdk_support;

#[tokio::test]
async fn manual_compaction_summarizes_with_the_model_and_reports_pi_errors() {
    let h = harness(vec![], Some(small_settings()), false).await;
    h.reply(vec![
        step(&h.seen, text("a")),
        step(&h.seen, text("b")),
        step(&h.seen, text("THE SUMMARY")),
        step(&h.seen, text("THE TURN PREFIX")),
    ]);
    let err = h.session.compact(None).await.unwrap_err();
    assert_eq!(err.to_string(), "Nothing to compact (session too small)");
    assert_eq!(
        h.records.lock().unwrap()[1]["errorMessage"],
        "Compaction failed: Nothing to compact (session too small)"
    );
    h.session.prompt("first").await.unwrap();
    h.session.prompt("second").await.unwrap();
    let result = h.session.compact(Some("keep names")).await.unwrap();
    // Keeping 1 token cuts inside the last turn: a history summary and a turn-prefix summary.
    assert!(result.summary.starts_with("THE SUMMARY"), "{}", result.summary);
    assert!(result.summary.contains("THE TURN PREFIX"), "{}", result.summary);
    assert!(result.tokens_before > 0);
    let prompt = user_texts(&h.seen.lock().unwrap()[2]).join("\n");
    assert!(prompt.contains("keep names"), "custom instructions reach the summary prompt");
    assert_eq!(h.entry_types().last().unwrap(), "compaction");
    let context = h.session.messages();
    assert!(context.iter().any(|m| m.role() == "compactionSummary"));
    assert_eq!(h.record_types()[2..], ["compaction_start", "compaction_end"]);
    assert_eq!(h.records.lock().unwrap()[3]["result"]["summary"], json!(result.summary));
    let err = h.session.compact(None).await.unwrap_err();
    assert_eq!(err.to_string(), "Already compacted");
}

#[tokio::test]
async fn session_before_compact_handlers_cancel_or_supply_the_summary() {
    let cancel = Arc::new(Mutex::new(true));
    let c = cancel.clone();
    let compacted: Log = Arc::new(Mutex::new(Vec::new()));
    let done = compacted.clone();
    let h = harness(
        vec![ext(move |pi| {
            let c = c.clone();
            pi.on_notify("session_before_compact", move |e, _| {
                let cancel = *c.lock().unwrap();
                let first_kept = match e {
                    NotifyEvent::Other { payload, .. } => payload["preparation"]["firstKeptEntryId"].clone(),
                    _ => Value::Null,
                };
                Box::pin(async move {
                    Ok(Some(if cancel {
                        json!({"cancel": true})
                    } else {
                        json!({"compaction": {"summary": "from extension", "firstKeptEntryId": first_kept, "tokensBefore": 7}})
                    }))
                })
            });
            let done = done.clone();
            pi.on_notify("session_compact", move |e, _| {
                if let NotifyEvent::Other { payload, .. } = e {
                    done.lock().unwrap().push(format!("{}:{}", payload["compactionEntry"]["summary"], payload["fromExtension"]));
                }
                Box::pin(async { Ok(None) })
            });
        })],
        Some(small_settings()),
        false,
    )
    .await;
    h.reply(vec![step(&h.seen, text("a")), step(&h.seen, text("b"))]);
    h.session.prompt("first").await.unwrap();
    h.session.prompt("second").await.unwrap();
    let err = h.session.compact(None).await.unwrap_err();
    assert_eq!(err.to_string(), "Compaction cancelled");
    let end = h.records.lock().unwrap().last().unwrap().clone();
    assert_eq!(end["aborted"], true);
    assert!(end.get("errorMessage").is_none());
    *cancel.lock().unwrap() = false;
    let result = h.session.compact(None).await.unwrap();
    assert_eq!(result.summary, "from extension");
    assert_eq!(result.tokens_before, 7);
    assert_eq!(h.seen.lock().unwrap().len(), 2, "no summary request");
    assert_eq!(*compacted.lock().unwrap(), ["\"from extension\":true"]);
    let entry = serde_json::to_value(h.session.with_session_manager(|sm| sm.leaf_entry().cloned()).unwrap()).unwrap();
    assert_eq!(entry["fromHook"], true);
}

#[tokio::test]
async fn retryable_errors_are_retried_and_hidden_from_the_model() {
    let h = harness(vec![], Some(small_settings()), false).await;
    h.reply(vec![
        step(&h.seen, || {
            faux_assistant_message(
                vec![],
                FauxMessageOptions {
                    stop_reason: Some(StopReason::Error),
                    error_message: Some("503 Service Unavailable".into()),
                    ..Default::default()
                },
            )
        }),
        step(&h.seen, text("recovered")),
    ]);
    h.session.prompt("hi").await.unwrap();
    let mut records = h.records.lock().unwrap().clone();
    // pi announces the context edit hiding the failed attempt (`entry_appended`).
    let edit = records.remove(1);
    assert_eq!(edit["type"], "entry_appended");
    assert_eq!(edit["entry"]["type"], "context_edit");
    assert_eq!(edit["entry"]["replacement"], Value::Null);
    assert_eq!(
        records,
        [
            json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 2, "delayMs": 1,
                   "errorMessage": "503 Service Unavailable"}),
            json!({"type": "auto_retry_end", "success": true, "attempt": 1}),
        ]
    );
    let second = h.seen.lock().unwrap()[1].clone();
    assert!(!second.as_array().unwrap().iter().any(|m| m["role"] == "assistant"), "the failed attempt is omitted");
    assert!(h.entry_types().contains(&"context_edit".to_owned()));
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("recovered"));
}

#[tokio::test]
async fn non_retryable_errors_and_disabled_retry_stop_at_once() {
    let mut settings = small_settings();
    settings.retry.enabled = false;
    let h = harness(vec![], Some(settings), false).await;
    let failing = || {
        faux_assistant_message(
            vec![],
            FauxMessageOptions {
                stop_reason: Some(StopReason::Error),
                error_message: Some("503 Service Unavailable".into()),
                ..Default::default()
            },
        )
    };
    h.reply(vec![step(&h.seen, failing)]);
    h.session.prompt("hi").await.unwrap();
    assert_eq!(h.seen.lock().unwrap().len(), 1);
    assert!(h.records.lock().unwrap().is_empty());
}

#[tokio::test]
async fn navigate_tree_moves_the_leaf_and_summarizes_the_abandoned_branch() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let h = harness(
        vec![ext(move |pi| {
            let l = l.clone();
            pi.on_notify("session_tree", move |e, _| {
                if let NotifyEvent::Other { payload, .. } = e {
                    l.lock().unwrap().push(format!("tree:{}", payload.contains_key("summaryEntry")));
                }
                Box::pin(async { Ok(None) })
            });
        })],
        None,
        false,
    )
    .await;
    h.reply(vec![step(&h.seen, text("a")), step(&h.seen, text("b")), step(&h.seen, text("BRANCH SUMMARY"))]);
    h.session.prompt("first").await.unwrap();
    h.session.prompt("second").await.unwrap();
    let second_user = {
        let branch = h.session.branch(None);
        branch
            .iter()
            .filter(|e| serde_json::to_value(e).unwrap()["message"]["role"] == "user")
            .nth(1)
            .unwrap()
            .id()
            .to_owned()
    };
    let err = h.session.navigate_tree("nope", NavigateTreeOptions::default()).await.unwrap_err();
    assert_eq!(err.to_string(), "Entry nope not found");
    let out = h
        .session
        .navigate_tree(&second_user, NavigateTreeOptions { summarize: true, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(out.editor_text.as_deref(), Some("second"));
    assert!(!out.cancelled);
    let summary_id = out.summary_entry_id.unwrap();
    assert_eq!(h.session.leaf_id().as_deref(), Some(summary_id.as_str()));
    assert_eq!(h.entry_types().last().unwrap(), "branch_summary");
    let texts: Vec<String> = h.session.messages().iter().filter_map(|m| m.as_assistant().map(|a| a.text())).collect();
    assert_eq!(texts, ["a"]);
    // Only the entries after the common ancestor (the target) are summarized.
    let summary_prompt = user_texts(&h.seen.lock().unwrap()[2]).join("");
    assert!(summary_prompt.contains("<conversation>") && !summary_prompt.contains("first"), "{summary_prompt}");
    assert_eq!(*log.lock().unwrap(), ["tree:true"]);
}

#[tokio::test]
async fn sessions_can_be_replaced_forked_and_counted() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let block = Arc::new(Mutex::new(true));
    let b = block.clone();
    let h = harness(
        vec![ext(move |pi| {
            let b = b.clone();
            pi.on_notify("session_before_switch", move |_, _| {
                let cancel = *b.lock().unwrap();
                Box::pin(async move { Ok(cancel.then(|| json!({"cancel": true}))) })
            });
            let l = l.clone();
            pi.on_notify("session_start", move |e, _| {
                if let NotifyEvent::SessionStart { reason, previous_session_file } = e {
                    l.lock().unwrap().push(format!("{reason}:{}", previous_session_file.is_some()));
                }
                Box::pin(async { Ok(None) })
            });
        })],
        None,
        true,
    )
    .await;
    h.reply(vec![step(&h.seen, text("a")), step(&h.seen, text("b"))]);
    h.session.prompt("one").await.unwrap();
    h.session.prompt("two").await.unwrap();
    let stats = h.session.get_session_stats();
    assert_eq!((stats.user_messages, stats.assistant_messages, stats.tool_calls), (2, 2, 0));
    let json = stats.to_json();
    assert_eq!(json["sessionId"], json!(h.session.session_id()));
    assert!(json["tokens"]["total"].is_u64());
    let forkable = h.session.get_fork_messages();
    assert_eq!(forkable.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(), ["one", "two"]);
    let original = h.session.session_file().unwrap();

    assert!(h.session.new_session(None).await.unwrap().cancelled);
    assert_eq!(h.session.session_file().unwrap(), original);
    *block.lock().unwrap() = false;

    let fork = h.session.fork(&forkable[1].entry_id).await.unwrap();
    assert_eq!(fork.selected_text.as_deref(), Some("two"));
    let forked = h.session.session_file().unwrap();
    assert_ne!(forked, original);
    assert_eq!(h.session.get_fork_messages().iter().map(|m| m.text.clone()).collect::<Vec<_>>(), ["one"]);
    let header = std::fs::read_to_string(&forked).unwrap();
    assert!(header.lines().next().unwrap().contains("parentSession"));
    let err = h.session.fork("missing").await.unwrap_err();
    assert_eq!(err.to_string(), "Invalid entry ID for forking");

    h.session.new_session(None).await.unwrap();
    assert_eq!(h.entry_types(), ["model_change", "thinking_level_change"]);
    assert!(h.session.messages().is_empty());

    let fresh_id = h.session.session_id();
    assert_eq!(h.session.agent().session_id(), Some(fresh_id.clone()), "requests carry the new session's id");

    h.session.switch_session(&original).await.unwrap();
    assert_eq!(h.session.session_file().unwrap(), original);
    assert_ne!(h.session.session_id(), fresh_id);
    assert_eq!(h.session.agent().session_id(), Some(h.session.session_id()));
    assert_eq!(h.session.get_fork_messages().len(), 2);
    assert_eq!(*log.lock().unwrap(), ["startup:false", "fork:true", "new:true", "resume:true"]);
}

#[tokio::test]
async fn context_overflow_compacts_and_retries_the_turn_once() {
    let mut settings = small_settings();
    settings.compaction.enabled = true;
    let h = harness(vec![], Some(settings), false).await;
    let overflow = faux_assistant_message(
        vec![],
        FauxMessageOptions {
            stop_reason: Some(StopReason::Error),
            error_message: Some("prompt is too long: 200000 tokens > 100000 maximum".into()),
            ..Default::default()
        },
    );
    let ok = |t: &str| faux_assistant_message(vec![faux_text(t.to_owned())], Default::default());
    summarizing_model(&h, vec![ok("a"), overflow, ok("recovered")]);
    h.session.prompt("one").await.unwrap();
    h.session.prompt("two").await.unwrap();
    let records = h.records.lock().unwrap().clone();
    let kinds: Vec<(String, String)> =
        records.iter().map(|r| (r["type"].as_str().unwrap().to_owned(), r["reason"].to_string())).collect();
    assert!(kinds.contains(&("compaction_start".into(), "\"overflow\"".into())), "{records:?}");
    let end = records.iter().rfind(|r| r["type"] == "compaction_end").unwrap();
    assert_eq!(end["willRetry"], true);
    assert!(end["result"]["summary"].as_str().unwrap().starts_with("SUMMARY"));
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("recovered"));
    let types = h.entry_types();
    assert!(types.contains(&"compaction".to_owned()) && types.contains(&"context_edit".to_owned()), "{types:?}");
}

#[tokio::test]
async fn crossing_the_threshold_compacts_after_the_run_without_retrying() {
    let mut settings = small_settings();
    settings.compaction = CompactionSettings { enabled: true, reserve_tokens: 127_999, keep_recent_tokens: 1 };
    let h = harness(vec![], Some(settings), false).await;
    let ok = |t: &str| faux_assistant_message(vec![faux_text(t.to_owned())], Default::default());
    summarizing_model(&h, vec![ok("a"), ok("b")]);
    h.session.prompt("one").await.unwrap();
    let records = h.records.lock().unwrap().clone();
    assert_eq!(records[0], json!({"type": "compaction_start", "reason": "threshold"}));
    assert_eq!(records[1]["willRetry"], false);
    assert_eq!(records[1]["aborted"], false);
    assert_eq!(h.entry_types().last().unwrap(), "compaction");
    assert_eq!(h.session.get_last_assistant_text().as_deref(), Some("a"), "the response is kept");
    // Disabled: nothing happens.
    h.session.set_auto_compaction_enabled(false);
    h.session.prompt("two").await.unwrap();
    assert_eq!(h.records.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn before_fork_and_before_tree_handlers_cancel() {
    let h = harness(
        vec![ext(|pi| {
            pi.on_notify("session_before_fork", |e, _| {
                let at = matches!(e, NotifyEvent::SessionBeforeFork { position, .. } if position == "before");
                Box::pin(async move { Ok(at.then(|| json!({"cancel": true}))) })
            });
            pi.on_notify("session_before_tree", |e, _| {
                let wants = match e {
                    NotifyEvent::Other { payload, .. } => payload["preparation"]["userWantsSummary"] == true,
                    _ => false,
                };
                Box::pin(
                    async move { Ok(Some(if wants { json!({"cancel": true}) } else { json!({"label": "here"}) })) },
                )
            });
        })],
        None,
        true,
    )
    .await;
    h.reply(vec![step(&h.seen, text("a")), step(&h.seen, text("b"))]);
    h.session.prompt("one").await.unwrap();
    h.session.prompt("two").await.unwrap();
    let file = h.session.session_file();
    let first = h.session.get_fork_messages()[0].entry_id.clone();
    let fork = h.session.fork(&first).await.unwrap();
    assert!(fork.cancelled && fork.selected_text.is_none());
    assert_eq!(h.session.session_file(), file);

    let leaf = h.session.leaf_id();
    let wanted = NavigateTreeOptions { summarize: true, ..Default::default() };
    assert!(h.session.navigate_tree(&first, wanted).await.unwrap().cancelled);
    assert_eq!(h.session.leaf_id(), leaf);
    // Without a summary the handler's label lands on the target.
    let out = h.session.navigate_tree(&first, NavigateTreeOptions::default()).await.unwrap();
    assert_eq!(out.editor_text.as_deref(), Some("one"));
    assert_eq!(h.session.with_session_manager(|sm| sm.label(&first).map(str::to_owned)).as_deref(), Some("here"));
    assert_eq!(h.seen.lock().unwrap().len(), 2, "no summary request");
}
