//! Files and getters as pi 1.6.0 has them: compaction and branch-summary entries carry
//! `"fromHook": false`, a bash result without truncation has no `details`, every assistant
//! message has `durationMs` (also when building the body takes a while), and `system_prompt()`
//! is the prompt the options build now.

mod http_support;

use std::sync::Arc;

use http_support::{Setup, text_reply, tool_reply};
use pi_coding_agent::extensions::{BeforeProviderRequestEvent, Extension, FnExtension};
use pi_coding_agent::sdk::{NavigateTreeOptions, SessionSettings};
use serde_json::{Value, json};

fn entry_of_type<'a>(entries: &'a [Value], kind: &str) -> &'a Value {
    entries.iter().find(|e| e["type"] == kind).unwrap_or_else(|| panic!("no {kind} entry"))
}

#[tokio::test]
async fn summaries_record_from_hook_false() {
    let replies = vec![text_reply("one"), text_reply("two"), text_reply("SUMMARY"), text_reply("BRANCH")];
    let mut settings = SessionSettings::manual();
    settings.compaction.keep_recent_tokens = 1;
    let h = Setup { replies, settings: Some(settings), ..Default::default() }.start().await;
    h.session.prompt("first").await.unwrap();
    h.session.prompt("second").await.unwrap();
    h.session.compact(None).await.unwrap();
    let entries = h.entries();
    assert_eq!(entry_of_type(&entries, "compaction")["fromHook"], json!(false));

    let first_user =
        entries.iter().find(|e| e["message"]["role"] == "user").unwrap()["id"].as_str().unwrap().to_owned();
    let options = NavigateTreeOptions { summarize: true, ..Default::default() };
    h.session.navigate_tree(&first_user, options).await.unwrap();
    let entries = h.entries();
    assert_eq!(entry_of_type(&entries, "branch_summary")["fromHook"], json!(false));
}

#[tokio::test]
async fn a_bash_result_without_truncation_has_no_details() {
    let replies = vec![tool_reply("c1", "bash", json!({"command": "echo hi"})), text_reply("done")];
    let h = Setup { replies, ..Default::default() }.start().await;
    h.session.prompt("run it").await.unwrap();
    let entries = h.entries();
    let result = entries.iter().find(|e| e["message"]["role"] == "toolResult").unwrap();
    assert_eq!(result["message"]["content"][0]["text"], "hi\n");
    assert!(result["message"].get("details").is_none(), "{}", result["message"]);
}

#[tokio::test]
async fn assistant_messages_keep_their_duration_when_the_body_is_slow_to_build() {
    // A `before_provider_request` handler that takes a while: the body is built by then.
    let slow: Arc<dyn Extension> = Arc::new(FnExtension::new("<inline:slow>", |pi| {
        pi.on_sync::<BeforeProviderRequestEvent>(|_, _| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            Ok(None)
        });
        Ok(())
    }));
    let h = Setup { replies: vec![text_reply("slow")], extensions: vec![slow], ..Default::default() }.start().await;
    h.session.prompt("hi").await.unwrap();
    let entries = h.entries();
    let assistant = entries.iter().find(|e| e["message"]["role"] == "assistant").unwrap();
    assert!(assistant["message"]["durationMs"].is_u64(), "{}", assistant["message"]);
}

#[tokio::test]
async fn system_prompt_is_what_the_options_build_now() {
    let h = Setup::default().start().await;
    // Before the first prompt the transcript holds no prompt; the getter still answers.
    assert_eq!(h.session.transcript_system_prompt(), "");
    assert!(h.session.system_prompt().starts_with("You are"), "{}", h.session.system_prompt());
    assert!(!h.session.system_prompt().contains("- grep:"));
    h.session.set_active_tools_by_name(&["read", "grep"]);
    assert!(h.session.system_prompt().contains("- grep:"), "a tool change shows at once");
}

#[tokio::test]
async fn dispose_waits_for_the_tasks_the_session_spawned() {
    let heard = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = heard.clone();
    let slow: Arc<dyn Extension> = Arc::new(FnExtension::new("<inline:slow-listener>", move |pi| {
        let flag = flag.clone();
        pi.on_notify("session_info_changed", move |_, _| {
            let flag = flag.clone();
            Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(None)
            })
        });
        Ok(())
    }));
    let h = Setup { extensions: vec![slow], ..Default::default() }.start().await;
    h.session.set_session_name("named").unwrap();
    // The handler runs detached (pi's `void runner.emit(…)`); dispose waits for it.
    h.session.dispose().await;
    assert!(heard.load(std::sync::atomic::Ordering::SeqCst), "dispose returned before the detached handler ended");
}
