//! Session files on disk: lazy exclusive creation, per-entry appends, layout, and bad input.

use std::path::Path;

use pi_ai::{AssistantMessage, UserMessage};
use pi_coding_agent::session::{
    LoadWarning, NewSessionOptions, SessionEntry, SessionManager, encode_cwd, list_sessions,
};

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect()
}

fn assistant(text: &str) -> AssistantMessage {
    serde_json::from_value(serde_json::json!({
        "role": "assistant", "content": [{"type": "text", "text": text}], "api": "a", "provider": "p", "model": "m",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": 2
    }))
    .unwrap()
}

#[test]
fn nothing_is_written_before_a_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionManager::create("/tmp/p/proj", Some(dir.path()), NewSessionOptions::default()).unwrap();
    let file = s.session_file().unwrap().to_path_buf();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(&format!("_{}.jsonl", s.session_id())), "{name}");
    assert_eq!(uuid::Uuid::parse_str(s.session_id()).unwrap().get_version_num(), 7);
    s.append_model_change("p", "m").unwrap();
    s.append_thinking_level_change("high").unwrap();
    s.append_custom_entry("state", Some(serde_json::json!({"k": 1}))).unwrap();
    assert!(!file.exists());
    s.append_message(UserMessage::new("hi").at(1).into()).unwrap();
    assert_eq!(lines(&file).len(), 5);
    s.append_message(assistant("yo").into()).unwrap();
    let l = lines(&file);
    assert_eq!(l.len(), 6);
    assert!(l[0].starts_with(r#"{"type":"session","version":3,"id":""#), "{}", l[0]);
    assert!(l[0].contains(r#""cwd":"/tmp/p/proj"}"#), "{}", l[0]);
    assert!(l[3].starts_with(r#"{"type":"custom","customType":"state","data":{"k":1},"id":""#), "{}", l[3]);
    assert!(l[5].starts_with(r#"{"type":"message","id":""#), "{}", l[5]);

    // Reopen: same entries, same context, same bytes when written back.
    let before = std::fs::read(&file).unwrap();
    let r = SessionManager::open(&file, None, None).unwrap();
    assert!(r.load_warnings().is_empty());
    assert_eq!(r.entries(), s.entries());
    assert_eq!(r.leaf_id(), s.leaf_id());
    assert_eq!(r.build_session_context(), s.build_session_context());
    assert_eq!(r.cwd(), "/tmp/p/proj");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let mut rewritten = Vec::new();
    for e in std::iter::once(serde_json::to_vec(r.header()).unwrap())
        .chain(r.entries().iter().map(|e| serde_json::to_vec(e).unwrap()))
    {
        rewritten.extend(e);
        rewritten.push(b'\n');
    }
    assert_eq!(rewritten, before);
}

/// Runs the named test of this binary in a child process with extra environment variables (the
/// crate forbids `unsafe`, so `std::env::set_var` is not available in-process).
fn run_child(test: &str, env: &[(&str, &Path)]) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"]).env("PI_SESSION_TEST_CHILD", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "the child ran the test");
}

#[test]
fn default_layout_and_listing() {
    if std::env::var_os("PI_SESSION_TEST_CHILD").is_none() {
        let agent = tempfile::tempdir().unwrap();
        run_child("default_layout_and_listing", &[("PI_CODING_AGENT_DIR", agent.path())]);
        assert!(agent.path().join("sessions/--tmp-p-proj--").is_dir());
        return;
    }
    let agent = pi_coding_agent::session::get_agent_dir();
    let mut s = SessionManager::create("/tmp/p/proj", None, NewSessionOptions::default()).unwrap();
    assert_eq!(s.session_dir(), agent.join("sessions").join("--tmp-p-proj--"));
    assert_eq!(encode_cwd("/tmp/p/proj"), "--tmp-p-proj--");
    s.append_message(UserMessage::new("first question").at(5).into()).unwrap();
    s.append_session_info("  my\r\n\nsession ").unwrap();
    assert_eq!(s.session_name().as_deref(), Some("my session"));
    let list = list_sessions(Path::new("/tmp/p/proj"), None);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].first_message, "first question");
    assert_eq!(list[0].name.as_deref(), Some("my session"));
    let recent = SessionManager::continue_recent("/tmp/p/proj", None).unwrap();
    assert_eq!(recent.session_id(), s.session_id());
    assert_eq!(SessionManager::find_by_id("/tmp/p/proj", s.session_id(), None).as_deref(), s.session_file());
}

#[test]
fn bad_input_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    let good = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"one","timestamp":1}}"#,
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:00.000Z","mess"#,
        r#"{"type":"future_thing","id":"a3","parentId":"a1","timestamp":"2025-01-01T00:00:00.000Z","payload":[1,2]}"#,
        r#"{"type":"message","id":"a4","parentId":"a3","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"two","timestamp":2}}"#,
        r#"{"type":"model_change","id":"a5","parentId":"a4","timestamp":"2025-01-01T00:00:00.000Z","provider":7}"#,
        r#"{"type":"message","id":"a6","parentId":"a5","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","conte"#,
    ];
    let text = good.join("\n"); // no trailing newline: the last line is torn
    std::fs::write(&path, &text).unwrap();
    let mut s = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "opening must not modify the file");
    let ids: Vec<&str> = s.entries().iter().map(SessionEntry::id).collect();
    assert_eq!(ids, ["a1", "a3", "a4", "a5"]);
    let w = s.load_warnings();
    assert!(matches!(w[0], LoadWarning::MalformedLine { line: 3, .. }), "{w:?}");
    assert!(
        matches!(&w[1], LoadWarning::UnknownEntryType { line: 4, entry_type } if entry_type == "future_thing"),
        "{w:?}"
    );
    assert!(
        matches!(&w[2], LoadWarning::UnreadableEntry { line: 6, entry_type, .. } if entry_type == "model_change"),
        "{w:?}"
    );
    assert!(matches!(w[3], LoadWarning::TornLastLine { line: 7, .. }), "{w:?}");
    assert_eq!(w.len(), 4);
    let ctx = serde_json::to_value(s.build_session_context()).unwrap();
    assert_eq!(ctx["messages"].as_array().unwrap().len(), 2);

    // Appending after a torn line terminates it first; the raw entries are written back unchanged.
    let id = s.append_message(UserMessage::new("three").at(3).into()).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.starts_with(&text), "existing bytes are never rewritten");
    let r = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(r.leaf_id(), Some(id.as_str()));
    assert_eq!(r.entries().len(), 5);
    assert_eq!(serde_json::to_string(&r.entries()[1]).unwrap(), good[3]);
}

#[test]
fn newer_version_and_not_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let newer = dir.path().join("newer.jsonl");
    std::fs::write(
        &newer,
        "{\"type\":\"session\",\"version\":9,\"id\":\"n\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\",\"shiny\":true}\n\
         {\"type\":\"message\",\"id\":\"x1\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1},\"newField\":1}\n",
    )
    .unwrap();
    let before = std::fs::read(&newer).unwrap();
    let s = SessionManager::open(&newer, None, None).unwrap();
    assert_eq!(s.load_warnings(), [LoadWarning::NewerVersion { version: 9 }]);
    assert_eq!(s.entries().len(), 1);
    assert_eq!(std::fs::read(&newer).unwrap(), before);

    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "{\"type\":\"message\"}\n").unwrap();
    let err = SessionManager::open(&junk, None, None).unwrap_err();
    assert_eq!(err.to_string(), format!("Session file is not a valid pi session: {}", junk.display()));
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), "{\"type\":\"message\"}\n");

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let s = SessionManager::open(&empty, None, None).unwrap();
    assert_eq!(std::fs::read_to_string(&empty).unwrap().lines().count(), 1);
    assert_eq!(s.entries().len(), 0);

    let missing = dir.path().join("new.jsonl");
    let mut s = SessionManager::open(&missing, None, None).unwrap();
    assert!(!missing.exists());
    s.append_message(UserMessage::new("x").into()).unwrap();
    assert!(missing.exists());
}

/// The writer half of the kill test: appends forever when asked to by the parent test.
#[test]
fn kill_child_writer() {
    let Ok(path) = std::env::var("PI_SESSION_KILL_CHILD_FILE") else { return };
    let mut s = SessionManager::open(&path, None, None).unwrap();
    let background = std::env::var_os("PI_SESSION_KILL_CHILD_BACKGROUND").is_some();
    if background {
        // The SDK's mode: writes and fsyncs on the writer thread, awaited before going on.
        s.write_in_background().unwrap();
    }
    let big = "x".repeat(20_000);
    for i in 0.. {
        s.append_message(UserMessage::new(format!("{i} {big}")).at(i).into()).unwrap();
        futures::executor::block_on(s.take_pending_writes().wait()).unwrap();
        if i == 5 {
            std::fs::write(format!("{path}.ready"), b"1").unwrap();
        }
    }
}

#[cfg(unix)]
#[test]
fn writer_killed_mid_append_loses_at_most_one_entry() {
    killed_writer_rounds(false);
}

/// The same guarantee with the writes on the manager's writer thread (the SDK's mode).
#[cfg(unix)]
#[test]
fn background_writer_killed_mid_append_loses_at_most_one_entry() {
    killed_writer_rounds(true);
}

#[cfg(unix)]
fn killed_writer_rounds(background: bool) {
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    for round in 0..3 {
        // A file per round: one kill each (a line torn by an earlier kill would otherwise be
        // terminated by the next writer and read back as a malformed line in the middle).
        let path = dir.path().join(format!("killed-{round}.jsonl"));
        let mut command = Command::new(std::env::current_exe().unwrap());
        if background {
            command.env("PI_SESSION_KILL_CHILD_BACKGROUND", "1");
        }
        let mut child = command
            .args(["--exact", "kill_child_writer", "--nocapture", "--test-threads=1"])
            .env("PI_SESSION_KILL_CHILD_FILE", &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let ready = dir.path().join(format!("killed-{round}.jsonl.ready"));
        let start = std::time::Instant::now();
        while !ready.exists() && start.elapsed().as_secs() < 60 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(30 + 17 * round));
        // SIGKILL: no destructors, no flush.
        child.kill().unwrap();
        child.wait().unwrap();
        std::fs::remove_file(&ready).unwrap();
        let s = SessionManager::open(&path, None, None).unwrap();
        assert!(s.entries().len() > 5, "round {round}");
        // At most the last line is torn; everything before it is intact and chained.
        let torn = s.load_warnings().iter().filter(|w| matches!(w, LoadWarning::TornLastLine { .. })).count();
        assert!(s.load_warnings().len() == torn && torn <= 1, "{:?}", s.load_warnings());
        let branch = s.get_branch(None);
        assert_eq!(branch.len(), s.entries().len(), "every entry is on one chain");
    }
}

/// In background mode an append returns before anything touches the disk: the write runs on the
/// manager's writer thread. The session file is swapped for a FIFO with no reader, so a write on
/// the caller's thread would block this test forever; here the append returns, the reader then
/// receives the line, and the acknowledgement reports how the write ended.
#[cfg(unix)]
#[test]
fn background_writes_never_run_on_the_callers_thread() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionManager::create(dir.path(), Some(dir.path()), Default::default()).unwrap();
    s.append_message(UserMessage::new("one").at(1).into()).unwrap();
    s.append_message(assistant("two").into()).unwrap();
    let file = s.session_file().unwrap().to_path_buf();
    s.set_session_file(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&file).status().unwrap();
    assert!(made.success());
    s.write_in_background().unwrap();
    s.append_message(UserMessage::new("through the writer thread").at(3).into()).unwrap();
    let pending = s.take_pending_writes();
    assert!(!pending.is_empty());
    let mut received = String::new();
    std::fs::File::open(&file).unwrap().read_to_string(&mut received).unwrap();
    assert!(received.contains("through the writer thread"), "{received}");
    assert!(received.ends_with('\n'));
    // `sync_data` on a FIFO may be refused; either way the outcome is reported, not lost.
    let _ = futures::executor::block_on(pending.wait());
}
