//! The binary installs a `tracing` subscriber: a warning (dropped before) reaches
//! `<agent_dir>/pi.log` by default, leaving stderr to pi's own messages; with `PI_LOG` set, print
//! mode writes it to stderr, filtered.

mod cli_support;

use cli_support::{Env, ScriptedServer, text_reply};

/// A session with one torn line, which the reader skips with a warning.
fn env_with_torn_session(server: &ScriptedServer) -> Env {
    let env = Env::new(&server.base_url);
    let out = env.run(&["-p", "first"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let file = env.session_files().pop().expect("a session file");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("{\"type\":\"message\",\"torn\n");
    std::fs::write(&file, text).unwrap();
    env
}

#[test]
fn warnings_reach_the_log_file_or_stderr_in_print_mode() {
    let server = ScriptedServer::start(vec![
        text_reply(&["one"]),
        text_reply(&["two"]),
        text_reply(&["three"]),
        text_reply(&["four"]),
    ]);
    let env = env_with_torn_session(&server);
    let out = env.pi().env_remove("PI_LOG").env_remove("RUST_LOG").args(["-p", "-c", "again"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("WARN"), "no log lines on stderr by default: {stderr}");
    let log = std::fs::read_to_string(env.agent().join("pi.log")).unwrap_or_default();
    assert!(log.contains("WARN") && log.contains("pi_coding_agent::session"), "{log}");

    let out = env.pi().env("PI_LOG", "warn").args(["-p", "-c", "loud"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("WARN") && stderr.contains("pi_coding_agent::session"), "PI_LOG=warn: {stderr}");
    assert!(!stderr.contains('\x1b'), "no colours when stderr is not a terminal: {stderr}");

    let out = env.pi().env("PI_LOG", "error").args(["-p", "-c", "quiet"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("WARN"), "PI_LOG=error filters warnings: {stderr}");
}
