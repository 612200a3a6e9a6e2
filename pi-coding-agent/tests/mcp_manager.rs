//! `/mcp` in the interactive mode: the manager screen driven in a pty (100×30, vt100) and compared
//! with the reference's screens, recorded through tmux from pi 1.6.0 with the same `mcp.json`
//! (`fixtures/mcp_manager/*.ref.txt`): an OAuth server that needs sign-in, a connected stdio
//! server and a disabled one. Then sign-in from the manager (the browser step driven with HTTP
//! GETs), sign-out, and an exposure change saved to `mcp.json`.
//!
//! Servers: `scripts/mcp-servers/{oauth_server,test_server}.py` on the official Python SDK; the
//! interpreter is `PI_MCP_PYTHON`, else `.mcp-venv/bin/python`; `PI_SKIP_MCP_SERVERS=1` skips.

mod cli_support;
mod interactive_support;

use std::io::Read;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use cli_support::{Env, ScriptedServer};
use interactive_support::*;
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repo root")
}

fn python() -> Option<String> {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping the /mcp manager test");
        return None;
    }
    let path =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(path.exists(), "{} is missing: run scripts/mcp-servers/install.sh", path.display());
    Some(path.display().to_string())
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_get(url: &str) -> (u16, Option<String>) {
    use std::io::Write;
    let rest = url.strip_prefix("http://").expect("http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).expect("connect");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n").expect("write");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read");
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let location = text.lines().take_while(|l| !l.is_empty()).find_map(|l| {
        l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("location")).map(|(_, v)| v.trim().to_owned())
    });
    (status, location)
}

/// The manager's frame: from the border above its title to the border below its footer.
fn block(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let titled =
        |l: &str| ["MCP", "Tools of", "Exposure of", "Sign in to"].iter().any(|t| l.starts_with(&format!(" {t}")));
    let Some(start) = (0..lines.len().saturating_sub(1)).find(|&i| lines[i].starts_with('─') && titled(lines[i + 1]))
    else {
        return String::new();
    };
    let end = (start + 2..lines.len()).find(|&i| lines[i].starts_with('─')).unwrap_or(lines.len() - 1);
    lines[start..=end].iter().map(|l| l.trim_end()).collect::<Vec<_>>().join("\n")
}

fn reference(name: &str) -> String {
    let path = repo_root().join("pi-coding-agent/tests/fixtures/mcp_manager").join(format!("{name}.ref.txt"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).trim_end().to_owned()
}

#[test]
fn the_mcp_manager_draws_as_the_reference_and_signs_in() {
    let Some(python) = python() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let oauth = Killed(
        Command::new(&python)
            .arg(repo_root().join("scripts/mcp-servers/oauth_server.py"))
            .args(["--port", &port.to_string()])
            .stderr(Stdio::null())
            .spawn()
            .expect("oauth server"),
    );
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let server = ScriptedServer::start(vec![]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let script = repo_root().join("scripts/mcp-servers/test_server.py").display().to_string();
    let config = json!({"mcpServers": {
        "secure": {"url": format!("http://127.0.0.1:{port}/mcp"), "exposure": "direct"},
        "tools": {"command": python, "args": [script]},
        "off": {"command": python, "args": [script], "enabled": false}
    }});
    std::fs::write(env.agent().join("mcp.json"), config.to_string()).unwrap();
    let agent = env.agent().display().to_string();
    let mask = |text: &str| {
        text.replace(&python, "<PY>")
            .replace(&script, "<SERVER>")
            .replace(&port.to_string(), "<PORT>")
            .replace(&agent, "<AGENT>")
    };
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    pty.send("/mcp");
    pty.wait_for("the command", |s| s.contains("/mcp"));
    pty.send("\r");
    let screen = pty.wait_for("the servers", |s| s.contains("connected · 14 tools"));
    assert_eq!(mask(&block(&screen)), reference("list"));

    pty.send("\r");
    let screen = pty.wait_for("secure's menu", |s| s.contains("MCP server secure"));
    assert_eq!(mask(&block(&screen)), reference("secure"));
    pty.send("\x1b");
    pty.wait_for("the servers", |s| s.contains("enter manage"));
    pty.send("\x1b[B");
    pty.wait_for("tools selected", |s| s.contains("→ tools"));
    pty.send("\r");
    let screen = pty.wait_for("tools' menu", |s| s.contains("MCP server tools"));
    assert_eq!(mask(&block(&screen)), reference("tools"));
    pty.send("\r");
    let screen = pty.wait_for("the tool list", |s| s.contains("Tools of tools"));
    assert_eq!(mask(&block(&screen)), reference("toollist"));
    pty.send("\x1b");
    pty.wait_for("tools' menu", |s| s.contains("MCP server tools"));
    pty.send("\x1b[B\x1b[B");
    pty.wait_for("exposure selected", |s| s.contains("→ Exposure"));
    pty.send("\r");
    let screen = pty.wait_for("the exposure menu", |s| s.contains("Exposure of tools"));
    assert_eq!(mask(&block(&screen)), reference("exposure"));
    // Choosing `direct` saves it to the mcp.json that defines the server.
    pty.send("\x1b[B\x1b[B");
    pty.wait_for("direct selected", |s| s.contains("→   direct"));
    pty.send("\r");
    pty.wait_for("tools' menu", |s| s.contains("MCP server tools"));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(env.agent().join("mcp.json")).unwrap()).unwrap();
    assert_eq!(saved["mcpServers"]["tools"]["exposure"], "direct");
    pty.send("\x1b");
    pty.wait_for("the servers", |s| s.contains("enter manage"));

    // Sign in from the manager: its screen shows the URL; the browser step is two GETs.
    // A menu opens with its first item selected.
    pty.wait_for("secure selected", |s| s.contains("→ secure"));
    pty.send("\r");
    pty.wait_for("secure's menu", |s| s.contains("→ Sign in"));
    pty.send("\r");
    let screen = pty.wait_for("the sign-in screen", |s| s.contains("paste the URL it was redirected to"));
    let shown = mask(&block(&screen));
    let expected = reference("signin");
    let keep = |t: &str| {
        t.lines()
            .filter(|l| {
                !l.starts_with(" http") && !l.starts_with(" &") && !l.contains("%2F") && !l.contains("Ctrl+click")
            })
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(keep(&shown), keep(&expected));
    let url: String = screen
        .lines()
        .skip_while(|l| !l.contains("If it did not open, visit:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    assert!(url.starts_with(&format!("http://127.0.0.1:{port}/authorize?")), "{url}");
    let (status, location) = http_get(&url);
    assert_eq!(status, 302);
    let (status, _) = http_get(&location.expect("callback"));
    assert_eq!(status, 200);
    let screen = pty.wait_for("signed in", |s| s.contains("State: connected · 2 tools"));
    assert!(screen.contains("Sign out") && screen.contains("deletes the stored credentials"), "{screen}");
    let key = format!("mcp__secure|http://127.0.0.1:{port}/mcp");
    let auth = || -> Value {
        serde_json::from_str(&std::fs::read_to_string(env.agent().join("mcp-auth.json")).unwrap()).unwrap()
    };
    assert!(auth()[&key]["tokens"]["access_token"].is_string());

    // Sign out: the credentials are deleted and the server needs sign-in again.
    pty.send("\x1b[B\x1b[B");
    pty.wait_for("sign out selected", |s| s.contains("→ Sign out"));
    pty.send("\r");
    pty.wait_for("needs sign-in", |s| s.contains("State: needs sign-in"));
    assert!(auth().get(&key).is_none());
    pty.send("\x1b");
    pty.wait_for("the servers", |s| s.contains("enter manage"));
    assert_eq!(pty.quit(), 0);
    drop(oauth);
}
