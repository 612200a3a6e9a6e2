//! `/mcp` in the interactive mode, driven in a real pty: the command of the built-in mcp
//! extension (not a built-in of the interactive mode), against a real stdio MCP server on the
//! official Python SDK (`scripts/mcp-servers/test_server.py`): the manager screen (its screens are
//! compared with the reference's in `mcp_manager.rs`), `reconnect`, and the usage line. The interpreter is `PI_MCP_PYTHON`, else `.mcp-venv/bin/python` of the
//! repository; `PI_SKIP_MCP_SERVERS=1` skips.

mod cli_support;
mod interactive_support;

use std::path::PathBuf;

use cli_support::{Env, ScriptedServer};
use interactive_support::Pty;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> Option<String> {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping the /mcp test");
        return None;
    }
    let path =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(
        path.exists(),
        "{} is missing: run scripts/mcp-servers/install.sh (or set PI_SKIP_MCP_SERVERS=1)",
        path.display()
    );
    Some(path.display().to_string())
}

#[test]
fn slash_mcp_shows_status_and_reconnects() {
    let Some(python) = python() else { return };
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    std::fs::write(env.agent().join("settings.json"), r#"{"theme":"dark"}"#).unwrap();
    let script = repo_root().join("scripts/mcp-servers/test_server.py").canonicalize().unwrap();
    let config = serde_json::json!({"mcpServers": {"t": {"command": python, "args": [script.display().to_string()]}}});
    std::fs::write(env.agent().join("mcp.json"), config.to_string()).unwrap();
    let mut pty = Pty::spawn_offline(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty.send("/mcp");
    pty.wait_for("the typed command", |s| s.contains("/mcp"));
    pty.send("\r");
    let manager = pty.wait_for("the manager", |s| s.contains("MCP servers") && s.contains("connected · "));
    let line = manager.lines().find(|l| l.contains("→ t ")).unwrap().trim().to_owned();
    assert!(line.ends_with(" tools · resources · codemode · global"), "{line}");
    pty.send("\x1b");
    pty.wait_for("the editor", |s| !s.contains("enter manage"));
    pty.send("/mcp reconnect t");
    pty.wait_for("the typed command", |s| s.contains("/mcp reconnect t"));
    pty.send("\r");
    let reconnected =
        pty.wait_for("the reconnect notice", |s| s.contains("Reconnected to MCP server \"t\" (connected · "));
    assert!(reconnected.contains(" tools · resources)."), "{reconnected}");
    pty.send("/mcp nope x y");
    pty.wait_for("the typed command", |s| s.contains("/mcp nope x y"));
    pty.send("\r");
    pty.wait_for("the usage", |s| {
        s.contains("Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]")
    });
    pty.send("\x03\x03");
    pty.wait_exit();
}
