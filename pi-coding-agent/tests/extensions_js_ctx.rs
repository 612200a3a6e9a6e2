//! What `ctx` shows a TypeScript extension outside commands, compared with pi 1.6.0's own SDK
//! running the same file (`tests/fixtures/js_extensions/ctx-view.ts`, recorded by
//! `scripts/fixtures/extension_ctx.mjs` into `tests/fixtures/extensions_ctx/observations.json`):
//! `ctx.sessionManager` in every handler and in a tool (entries, branch, leaf, header, labels,
//! tree, context entries, projection), `ctx.signal` (absent while idle, the run's signal in
//! handlers and tools, aborted by `ctx.abort()` from a `tool_call` handler),
//! `getSystemPromptOptions()` in a command, and `newSession({setup})` (the setup's appends are in
//! the new session before its `session_start` and `withSession`).

mod http_support;
mod js_support;

use http_support::{Setup, text_reply, tool_reply};
use js_support::{fixture, node_available};
use serde_json::{Value, json};

fn observations(cwd: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(cwd.join("ctx-observations.jsonl")).expect("the extension's observations");
    text.lines().map(|l| serde_json::from_str(l).expect("an observation line")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_in_handlers_tools_and_commands_matches_the_reference() {
    if !node_available() {
        return;
    }
    let h = Setup {
        replies: vec![
            tool_reply("call_1", "probe", json!({})),
            text_reply("done"),
            tool_reply("call_2", "probe", json!({"mode": "abort"})),
        ],
        extension_paths: vec![fixture("ctx-view.ts")],
        files: vec![("AGENTS.md", "Be brief.\n")],
        ..Default::default()
    }
    .start()
    .await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("first prompt");
    h.session.prompt("/view").await.expect("/view");
    h.session.prompt("abort please").await.expect("aborted prompt");
    h.session.prompt("/newsetup").await.expect("/newsetup");
    assert!(h.error_pairs().is_empty(), "{:?}", h.error_pairs());

    let got = observations(&h.cwd);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/extensions_ctx/observations.json");
    let expected: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "observation {i} ({}) differs from the reference", e["what"]);
    }
    assert_eq!(got.len(), expected.len(), "{:#?}", got.iter().map(|o| &o["what"]).collect::<Vec<_>>());

    // The setup's entries are the new session's, in pi-rs's own manager too.
    let types = h.entry_types();
    assert_eq!(types[types.len() - 3..], ["custom:seeded", "message:user", "label"], "{types:?}");
}
