//! The binary installs a `tracing` subscriber: in print mode a warning reaches stderr (it was
//! dropped before), `PI_LOG` filters it, and rpc mode writes it to `<agent_dir>/pi.log`.

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
fn warnings_reach_stderr_in_print_mode() {
    let server = ScriptedServer::start(vec![text_reply(&["one"]), text_reply(&["two"]), text_reply(&["three"])]);
    let env = env_with_torn_session(&server);
    let out = env.run(&["-p", "-c", "again"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("WARN") && stderr.contains("pi_coding_agent::session"), "{stderr}");

    let out = env.pi().env("PI_LOG", "error").args(["-p", "-c", "quiet"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("WARN"), "PI_LOG=error filters warnings: {stderr}");
}
