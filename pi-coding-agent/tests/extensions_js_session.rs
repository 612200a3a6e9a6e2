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
    assert_eq!(members["trusted"], false);
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
    let handoff = entries.iter().find(|e| e["message"]["customType"] == "handoff").expect("the handoff message");
    assert_eq!(handoff["message"]["content"], format!("from {before}"));
    assert_eq!(data_of(&entries, "start").last().unwrap()["reason"], "new");

    // reload: shutdown, the module loads again (a new module instance), session_start reload.
    h.session.prompt("/ctl reload").await.unwrap();
    let entries = h.entries();
    assert_eq!(data_of(&entries, "start").last(), Some(&&serde_json::json!({"reason": "reload", "loads": 2})));
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());
}
