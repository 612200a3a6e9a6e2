//! The command context and the session-reaching `pi.*` members over the JavaScript host:
//! `ctx.newSession({withSession})`, `ctx.navigateTree`, `ctx.fork`, `ctx.reload()` (the module
//! loads again), `pi.getCommands`, `pi.getSettings`, `pi.registerProvider` + `pi.setModel`,
//! thinking level; and the reference's `reload-runtime.ts` example, unmodified, driven by a
//! scripted model on 127.0.0.1 (its tool ends the run, `agent_settled` sends `/reload-runtime`).

mod http_support;
mod js_support;

use http_support::{Setup, text_reply};
use js_support::{fixture, node_available};
use serde_json::Value;

fn data_of<'a>(entries: &'a [Value], custom_type: &str) -> Vec<&'a Value> {
    entries.iter().filter(|e| e["customType"] == custom_type).map(|e| &e["data"]).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_command_drives_the_session_controls() {
    if !node_available() {
        return;
    }
    let h = Setup {
        replies: vec![text_reply("one")],
        extension_paths: vec![fixture("session-controls.ts")],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("hello").await.expect("prompt");
    let entries = h.entries();
    assert_eq!(data_of(&entries, "start"), vec![&serde_json::json!({"reason": "startup", "loads": 1})]);
    let user_id = entries.iter().find(|e| e["message"]["role"] == "user").unwrap()["id"].as_str().unwrap().to_owned();

    // navigateTree to the user message: the leaf moves to its parent.
    h.session.prompt(&format!("/ctl tree {user_id}")).await.unwrap();
    let tree = h.entries();
    assert_eq!(data_of(&tree, "tree"), vec![&serde_json::json!({"cancelled": false})]);

    // members
    h.session.prompt("/ctl members").await.unwrap();
    let entries = h.entries();
    let members = data_of(&entries, "members")[0].clone();
    assert_eq!(members["names"], serde_json::json!(["extension:ctl"]));
    assert_eq!(members["settings"], "object");
    assert_eq!(members["unknown"], false);
    assert_eq!(members["known"], true);
    assert_eq!(members["thinking"], "off");
    assert_eq!(members["trusted"], h.session.settings_manager().is_project_trusted());
    assert_eq!(h.session.model().id, "extra-model");

    // newSession with withSession: the replacement context reaches the new session.
    let before = h.session.session_id();
    h.session.prompt("/ctl new").await.unwrap();
    let after = h.session.session_id();
    assert_ne!(before, after);
    let entries = h.entries();
    let ids = data_of(&entries, "ids");
    assert_eq!(ids.len(), 1, "{entries:#?}");
    assert_eq!(ids[0]["before"], before.as_str());
    assert_eq!(ids[0]["after"], after.as_str());
    assert_eq!(data_of(&entries, "new"), vec![&serde_json::json!({"cancelled": false})]);
    let handoff = entries
        .iter()
        .find(|e| e["type"] == "custom_message" && e["customType"] == "handoff")
        .unwrap_or_else(|| panic!("the handoff message: {entries:#?}"));
    assert_eq!(handoff["content"], format!("from {before}"));
    assert_eq!(data_of(&entries, "start").last().unwrap()["reason"], "new");

    // reload: shutdown, the module loads again (a new module instance), session_start reload.
    h.session.prompt("/ctl reload").await.unwrap();
    let entries = h.entries();
    assert_eq!(data_of(&entries, "start").last(), Some(&&serde_json::json!({"reason": "reload", "loads": 2})));
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}

/// The reference's `reload-runtime.ts`, unmodified: the model calls `reload_runtime`, whose
/// result ends the run (`terminate`), so one request is sent; `agent_settled` then sends
/// `/reload-runtime`, which runs as a command and reloads: `session_shutdown` and
/// `session_start` with reason `reload`, and the example's tool and command registered again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reload_runtime_example_reloads_after_its_tool_ends_the_run() {
    use std::sync::{Arc, Mutex};
    if !node_available() {
        return;
    }
    let Some(example) = examples_dir().map(|d| d.join("reload-runtime.ts")) else {
        assert!(std::env::var_os("CI").is_none(), "the reference pi 1.6.0 is missing: CI must install it");
        eprintln!("SKIP: the reference's examples are not installed");
        return;
    };
    let heard: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = heard.clone();
    let listener = Arc::new(pi_coding_agent::extensions::FnExtension::new("<inline:listener>", move |pi| {
        for event in ["session_start", "session_shutdown"] {
            let sink = sink.clone();
            pi.on_notify(event, move |e, _| {
                sink.lock()
                    .unwrap()
                    .push(serde_json::to_value(&*e).unwrap()["reason"].as_str().unwrap_or("").to_owned());
                Box::pin(async { Ok(None) })
            });
        }
        Ok(())
    })) as Arc<dyn pi_coding_agent::extensions::Extension>;
    let h = Setup {
        replies: vec![http_support::tool_reply("call_1", "reload_runtime", serde_json::json!({}))],
        extension_paths: vec![example],
        extensions: vec![listener],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.set_active_tools_by_name(&["read", "reload_runtime"]);
    h.session.prompt("reload please").await.expect("prompt");
    h.wait_until("the reload", |_| heard.lock().unwrap().len() >= 3).await;
    h.session.wait_for_idle().await;
    assert_eq!(*heard.lock().unwrap(), vec!["startup", "reload", "reload"]);
    assert_eq!(h.server.count(), 1, "terminate ends the run after the tool");
    let result = h.entries().into_iter().find(|e| e["message"]["role"] == "toolResult").expect("the tool result");
    assert_eq!(result["message"]["content"][0]["text"], "Reload requested. Pi reloads after this response.");
    let runner = h.session.extension_runner().unwrap();
    assert!(runner.tool("reload_runtime").is_some());
    assert!(runner.command("reload-runtime").is_some());
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}

/// The reference's examples folder (`anchor.sh path`; `PI_ANCHOR_DIR` overrides the default).
fn examples_dir() -> Option<std::path::PathBuf> {
    let root = std::env::var_os("PI_ANCHOR_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/pi-anchor")))?;
    let dir = root.join("node_modules/@earendil-works/pi-coding-agent/examples/extensions");
    dir.is_dir().then_some(dir)
}
