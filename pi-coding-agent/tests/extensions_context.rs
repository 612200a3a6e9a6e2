//! `context` vs `context_with_system` (spec §3.4): every verified consequence, one test each.

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::{Content, UserBlock};
use pi_coding_agent::extensions::{
    ContextEvent, ContextWithSystemEvent, Extension, ExtensionError, ExtensionRunner, FnExtension,
    REMOVED_LEADING_SYSTEM_MESSAGE,
};
use pi_coding_agent::messages::CodingAgentMessage;
use serde_json::{Value, json};

fn msg(v: Value) -> CodingAgentMessage {
    serde_json::from_value(v).expect("message")
}

fn sys(section: &str, text: &str, ts: u64) -> CodingAgentMessage {
    msg(json!({"role": "system", "content": "", "sections": {section: text}, "timestamp": ts}))
}

fn user(text: &str, ts: u64) -> CodingAgentMessage {
    msg(json!({"role": "user", "content": text, "timestamp": ts}))
}

fn assistant(text: &str, ts: u64) -> CodingAgentMessage {
    msg(json!({
        "role": "assistant", "content": [{"type": "text", "text": text}], "api": "faux", "provider": "faux", "model": "m",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": ts
    }))
}

/// `[sys{preamble}, user one, assistant ok, sys{skills}, user two]`
fn base() -> Vec<CodingAgentMessage> {
    vec![sys("preamble", "P", 1), user("one", 2), assistant("ok", 3), sys("skills", "S", 4), user("two", 5)]
}

fn merged_head() -> CodingAgentMessage {
    msg(json!({"role": "system", "content": "", "sections": {"preamble": "P", "skills": "S"}, "timestamp": 1}))
}

fn describe(messages: &[CodingAgentMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            AgentMessage::System(s) => {
                let names: Vec<String> = s.sections.iter().flat_map(|x| x.iter().map(|(k, _)| k.to_owned())).collect();
                format!("sys{{{}}}", names.join("+"))
            }
            AgentMessage::User(u) => format!("user {}", content_text(&u.content)),
            AgentMessage::Assistant(a) => format!("assistant {}", a.text()),
            other => other.role().to_owned(),
        })
        .collect()
}

fn content_text(c: &Content<UserBlock>) -> String {
    match c {
        Content::Text(t) => t.clone(),
        Content::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                UserBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(""),
    }
}

async fn runner(exts: Vec<FnExtension>) -> (ExtensionRunner, Arc<Mutex<Vec<ExtensionError>>>) {
    let exts: Vec<Arc<dyn Extension>> = exts.into_iter().map(|e| Arc::new(e) as Arc<dyn Extension>).collect();
    let runner = ExtensionRunner::load(exts, "/tmp").await;
    assert!(runner.load_errors().is_empty(), "{:?}", runner.load_errors());
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    runner.on_error(move |e| sink.lock().unwrap().push(e.clone()));
    (runner, errors)
}

fn ext(path: &str, setup: impl Fn(&pi_coding_agent::extensions::ExtensionApi) + Send + Sync + 'static) -> FnExtension {
    FnExtension::new(path, move |pi| {
        setup(pi);
        Ok(())
    })
}

#[tokio::test]
async fn handler_sees_the_conversation_without_system_messages() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let (r, _) = runner(vec![ext("/ext0.ts", move |pi| {
        let s = s.clone();
        pi.on_sync::<ContextEvent>(move |e, _| {
            *s.lock().unwrap() = describe(&e.messages.to_vec());
            Ok(None)
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(*seen.lock().unwrap(), ["user one", "assistant ok", "user two"]);
    assert_eq!(out, base());
}

#[tokio::test]
async fn no_op_returning_the_list_or_a_copy_keeps_system_messages_in_place() {
    for mode in 0..3 {
        let (r, errors) = runner(vec![ext("/ext0.ts", move |pi| {
            pi.on_sync::<ContextEvent>(move |e, _| {
                Ok(match mode {
                    0 => None,
                    1 => Some(e.messages.clone()), // `return {messages: e.messages}`
                    _ => Some(e.messages.filtered(|_| true)), // `[...e.messages]`
                })
            });
        })])
        .await;
        assert_eq!(r.emit_context(base()).await, base(), "mode {mode}");
        assert!(errors.lock().unwrap().is_empty());
    }
}

#[tokio::test]
async fn returning_the_last_message_gives_the_merged_head_and_it() {
    let (r, _) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextEvent>(|e, _| {
            let cut = e.messages.len() - 1;
            Ok(Some(e.messages.split_off(cut)))
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(out, vec![merged_head(), user("two", 5)]);
}

#[tokio::test]
async fn splicing_in_place_without_return_restores_the_merged_head() {
    let (r, _) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextEvent>(|e, _| {
            e.messages.remove(0);
            Ok(None)
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(out, vec![merged_head(), assistant("ok", 3), user("two", 5)]);
}

#[tokio::test]
async fn editing_a_message_in_place_keeps_system_messages_in_place() {
    let (r, _) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextEvent>(|e, _| {
            if let Some(AgentMessage::User(u)) = e.messages.get_mut(0) {
                u.content = Content::Text("edited".into());
            }
            Ok(None)
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    let mut expected = base();
    expected[1] = user("edited", 2);
    assert_eq!(out, expected);
    assert_eq!(describe(&out), ["sys{preamble}", "user edited", "assistant ok", "sys{skills}", "user two"]);
}

#[tokio::test]
async fn chained_handlers_see_the_previous_result() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let (r, _) = runner(vec![ext("/ext0.ts", move |pi| {
        pi.on_sync::<ContextEvent>(|e, _| {
            let rest = e.messages.split_off(1);
            Ok(Some(rest))
        });
        let s = s.clone();
        pi.on_sync::<ContextEvent>(move |e, _| {
            *s.lock().unwrap() = describe(&e.messages.to_vec());
            Ok(None)
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(*seen.lock().unwrap(), ["assistant ok", "user two"]);
    assert_eq!(out, vec![merged_head(), assistant("ok", 3), user("two", 5)]);
}

#[tokio::test]
async fn a_failing_handler_is_reported_and_the_next_still_runs() {
    let (r, errors) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextEvent>(|e, _| {
            e.messages.clear();
            Err("boom".into())
        });
        pi.on_sync::<ContextEvent>(|e, _| {
            e.messages.remove(0);
            Ok(None)
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(*errors.lock().unwrap(), vec![ExtensionError::new("/ext0.ts", "context", "boom")]);
    assert_eq!(out, vec![merged_head(), assistant("ok", 3), user("two", 5)]);
}

#[tokio::test]
async fn a_panicking_handler_is_reported_and_the_value_before_it_kept() {
    let (r, errors) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextEvent>(|e, _| {
            e.messages.clear();
            panic!("kaboom");
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(*errors.lock().unwrap(), vec![ExtensionError::new("/ext0.ts", "context", "kaboom")]);
    assert_eq!(out, base());
}

#[tokio::test]
async fn all_context_handlers_run_before_any_context_with_system_handler() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let (o1, o2, o3) = (order.clone(), order.clone(), order.clone());
    let (r, _) = runner(vec![
        ext("/a.ts", move |pi| {
            let o = o1.clone();
            pi.on_sync::<ContextWithSystemEvent>(move |_, _| {
                o.lock().unwrap().push("a:context_with_system");
                Ok(None)
            });
            let o = o2.clone();
            pi.on_sync::<ContextEvent>(move |_, _| {
                o.lock().unwrap().push("a:context");
                Ok(None)
            });
        }),
        ext("/b.ts", move |pi| {
            let o = o3.clone();
            pi.on_sync::<ContextEvent>(move |_, _| {
                o.lock().unwrap().push("b:context");
                Ok(None)
            });
        }),
    ])
    .await;
    r.emit_context(base()).await;
    assert_eq!(*order.lock().unwrap(), ["a:context", "b:context", "a:context_with_system"]);
}

#[tokio::test]
async fn context_with_system_sees_everything_and_dropping_the_head_is_reported_but_used() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let (r, errors) = runner(vec![ext("/ext0.ts", move |pi| {
        let s = s.clone();
        pi.on_sync::<ContextWithSystemEvent>(move |e, _| {
            *s.lock().unwrap() = describe(&e.messages);
            Ok(Some(e.messages[1..].to_vec()))
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(*seen.lock().unwrap(), ["sys{preamble}", "user one", "assistant ok", "sys{skills}", "user two"]);
    assert_eq!(out, vec![user("one", 2), assistant("ok", 3), sys("skills", "S", 4), user("two", 5)]);
    assert_eq!(
        *errors.lock().unwrap(),
        vec![ExtensionError::new("/ext0.ts", "context_with_system", REMOVED_LEADING_SYSTEM_MESSAGE)]
    );
}

#[tokio::test]
async fn context_with_system_returning_empty_sends_empty_and_reports() {
    let (r, errors) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextWithSystemEvent>(|_, _| Ok(Some(Vec::new())));
    })])
    .await;
    assert!(r.emit_context(base()).await.is_empty());
    assert_eq!(errors.lock().unwrap().len(), 1);
    assert_eq!(errors.lock().unwrap()[0].error, REMOVED_LEADING_SYSTEM_MESSAGE);
}

#[tokio::test]
async fn context_with_system_in_place_edits_are_used() {
    let (r, errors) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextWithSystemEvent>(|e, _| {
            e.messages.remove(3);
            Ok(None)
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(describe(&out), ["sys{preamble}", "user one", "assistant ok", "user two"]);
    assert!(errors.lock().unwrap().is_empty());
}

#[tokio::test]
async fn without_system_messages_a_changed_list_is_used_as_is() {
    let (r, _) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextEvent>(|e, _| {
            e.messages.remove(0);
            Ok(None)
        });
    })])
    .await;
    let out = r.emit_context(vec![user("one", 2), assistant("ok", 3), user("two", 5)]).await;
    assert_eq!(out, vec![assistant("ok", 3), user("two", 5)]);
}

#[tokio::test]
async fn system_messages_a_context_handler_returns_are_kept_after_the_head() {
    let (r, _) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextEvent>(|e, _| {
            let mut list = e.messages.split_off(2);
            list.insert(0, sys("extra", "X", 9));
            Ok(Some(list))
        });
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(out, vec![merged_head(), sys("extra", "X", 9), user("two", 5)]);
}

#[tokio::test]
async fn an_excluded_bash_execution_still_appears_in_context() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let (r, _) = runner(vec![ext("/ext0.ts", move |pi| {
        let s = s.clone();
        pi.on_sync::<ContextEvent>(move |e, _| {
            *s.lock().unwrap() = e.messages.iter().map(|m| m.role().to_owned()).collect();
            Ok(None)
        });
    })])
    .await;
    let bash = msg(json!({"role": "bashExecution", "command": "ls", "output": "", "cancelled": false,
        "truncated": false, "excludeFromContext": true, "timestamp": 6}));
    let mut input = base();
    input.push(bash);
    let out = r.emit_context(input.clone()).await;
    assert_eq!(*seen.lock().unwrap(), ["user", "assistant", "user", "bashExecution"]);
    assert_eq!(out, input);
}

#[tokio::test]
async fn a_new_list_with_equal_content_counts_as_changed() {
    // pi compares identity: `e.messages.map(m => ({...m}))` is a different list.
    let (r, _) = runner(vec![ext("/ext0.ts", |pi| {
        pi.on_sync::<ContextEvent>(|e, _| Ok(Some(e.messages.to_vec().into())));
    })])
    .await;
    let out = r.emit_context(base()).await;
    assert_eq!(out, vec![merged_head(), user("one", 2), assistant("ok", 3), user("two", 5)]);
}

#[tokio::test]
async fn no_handlers_returns_the_input() {
    let (r, _) = runner(vec![]).await;
    assert_eq!(r.emit_context(base()).await, base());
}
