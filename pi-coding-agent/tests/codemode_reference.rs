//! The `codemode` results the model receives, compared with the reference pi 1.6.0's for the same
//! scripts: `tests/fixtures/codemode/results.json`, recorded by `scripts/fixtures/codemode_results.sh`
//! (the scripts are in `scripts/fixtures/codemode_scripts.json`; the reference ran with
//! `--tools codemode,read,bash`). The wall time and the spill file's random name are masked.

mod http_support;

use std::path::PathBuf;
use std::sync::Arc;

use http_support::{Setup, text_reply, tool_reply};
use pi_coding_agent::builtin_extensions::codemode::CodemodeExtension;
use pi_coding_agent::extensions::Extension;
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read_json(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo_root().join(path)).expect(path)).expect(path)
}

/// Masks `Wall time N seconds` and `/tmp/pi-codemode-<hex>.txt`.
fn mask(text: &str) -> String {
    let mut out = text.to_owned();
    if let Some(start) = out.find("Wall time ")
        && let Some(len) = out[start..].find(" seconds")
    {
        out.replace_range(start..start + len, "Wall time <T>");
    }
    while let Some(start) = out.find("/tmp/pi-codemode-") {
        let Some(len) = out[start..].find(".txt") else { break };
        out.replace_range(start..start + len + 4, "<SPILL>");
    }
    out
}

async fn our_result(code: &str) -> String {
    let ext = Arc::new(CodemodeExtension::new(Vec::new(), true, None)) as Arc<dyn Extension>;
    let replies = vec![tool_reply("call_1", "codemode", json!({ "code": code })), text_reply("ok")];
    let h = Setup { replies, extensions: vec![ext], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.set_active_tools_by_name(&["codemode", "read", "bash"]);
    h.session.prompt("go").await.expect("prompt");
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 2);
    let tool =
        bodies[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").cloned().expect("tool message");
    tool["content"].as_str().expect("string content").to_owned()
}

#[tokio::test]
async fn results_match_the_reference() {
    let scripts = read_json("scripts/fixtures/codemode_scripts.json");
    let expected = read_json("pi-coding-agent/tests/fixtures/codemode/results.json");
    let mut mismatches = Vec::new();
    for (name, code) in scripts.as_object().expect("scripts") {
        let ours = mask(&our_result(code.as_str().expect("script")).await);
        let reference = mask(expected[name].as_str().expect("fixture"));
        if ours != reference {
            mismatches.push(format!("{name}:\n  ours:      {ours:?}\n  reference: {reference:?}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
