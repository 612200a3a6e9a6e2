//! Corrupt session files (issue 18, items 8 and 9): parent cycles are broken at the first repeat
//! and reported; skipped lines and a newer format version are said once, with line numbers.

mod cli_support;

use cli_support::{Env, ScriptedServer, text_reply};
use pi_coding_agent::session::{LoadWarning, SessionManager, summarize_load_warnings};
use serde_json::json;

fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:00.000Z",
        "message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":1}})
    .to_string()
}

fn header(cwd: &std::path::Path, version: u64) -> String {
    json!({"type":"session","version":version,"id":"0193f1a2-0000-7000-8000-000000000001",
        "timestamp":"2026-01-01T00:00:00.000Z","cwd":cwd.display().to_string()})
    .to_string()
}

/// `a ← b ← c ← a` (a cycle) and `d` a child of `c`, the leaf.
fn cyclic_session(cwd: &std::path::Path) -> String {
    [
        header(cwd, 3),
        user("a", Some("c"), "one"),
        user("b", Some("a"), "two"),
        user("c", Some("b"), "three"),
        user("d", Some("c"), "four"),
    ]
    .join("\n")
        + "\n"
}

fn texts(manager: &SessionManager) -> Vec<String> {
    manager
        .build_session_context()
        .messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap()["content"][0]["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_parent_cycle_is_broken_at_the_first_repeat_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cycle.jsonl");
    std::fs::write(&path, cyclic_session(dir.path())).unwrap();
    let manager = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(manager.load_warnings(), [LoadWarning::ParentCycle { id: "a".into() }]);
    // Every entry once, the cycle cut where it closes: d ← c ← b ← a (← c again: stop).
    assert_eq!(texts(&manager), ["one", "two", "three", "four"]);
    let branch: Vec<&str> = manager.get_branch(None).iter().map(|e| e.id()).collect();
    assert_eq!(branch, ["a", "b", "c", "d"]);
    assert_eq!(
        summarize_load_warnings(manager.load_warnings()).unwrap(),
        "entry \"a\": parent links form a cycle; the branch stops at its first repeated entry"
    );
}

#[test]
fn skipped_lines_and_a_newer_version_are_summarized_with_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("torn.jsonl");
    let text =
        [header(dir.path(), 9), user("a", None, "one"), "{not json".into(), "[1]".into(), user("b", Some("a"), "two")]
            .join("\n")
            + "\n{\"type\":\"message\",\"id\":\"c\",\"par";
    std::fs::write(&path, text).unwrap();
    let manager = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(texts(&manager), ["one", "two"]);
    assert_eq!(
        summarize_load_warnings(manager.load_warnings()).unwrap(),
        "line 3: malformed JSON skipped; line 4: not a JSON object, skipped; line 6: torn last line skipped; \
         session format version 9 is newer than 3"
    );
}

#[test]
fn pi_says_once_on_stderr_what_the_session_file_lost() {
    let server = ScriptedServer::start(vec![text_reply(&["ok"]), text_reply(&["ok"])]);
    let env = Env::new(&server.base_url);
    let path = env.dir.path().join("cycle.jsonl");
    std::fs::write(&path, cyclic_session(&env.proj())).unwrap();
    let out = env
        .pi()
        .args(["-p", "--model", "local/smollm2-135m", "--no-tools", "--session"])
        .arg(&path)
        .arg("next")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "Warning: session file {}: entry \"a\": parent links form a cycle; the branch stops at its first repeated entry\n",
            path.display()
        )
    );
    // The model saw each message once.
    let body = server.requests.lock().unwrap()[0].clone();
    let users: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().or_else(|| m["content"][0]["text"].as_str()).unwrap_or_default())
        .collect();
    assert_eq!(users, ["one", "two", "three", "four", "next"]);

    let torn = env.dir.path().join("torn.jsonl");
    std::fs::write(&torn, [header(&env.proj(), 3), user("a", None, "one"), "{oops".into()].join("\n") + "\n").unwrap();
    let out = env
        .pi()
        .args(["--mode", "json", "--model", "local/smollm2-135m", "--no-tools", "--session"])
        .arg(&torn)
        .arg("x")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("Warning: session file {}: line 3: malformed JSON skipped\n", torn.display())
    );
}
