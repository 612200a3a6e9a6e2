//! `pi mcp add|remove|list` replayed on our binary: the same steps as the reference pi 1.6.0
//! (`scripts/fixtures/pi_mcp_cli.sh`) give the same stdout, stderr, exit codes and `mcp.json`.
//!
//! `list` connects to the MCP test server (see `mcp_servers.rs`); `PI_SKIP_MCP_SERVERS=1` skips.
//! Also: `pi -p` declares a direct server's tools, and `--no-mcp` drops them.

mod http_support;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use http_support::{ScriptedServer, models_json, tool_names};
use serde_json::json;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repo root")
}

fn fixture(name: &str) -> Option<String> {
    std::fs::read_to_string(repo_root().join("pi-coding-agent/tests/fixtures/mcp_cli").join(name)).ok()
}

#[test]
fn pi_mcp_commands_match_the_reference() {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping");
        return;
    }
    let python =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(python.exists(), "{} is missing: run scripts/mcp-servers/install.sh", python.display());
    let python = python.display().to_string();
    let server = repo_root().join("scripts/mcp-servers/test_server.py").display().to_string();
    let work = tempfile::tempdir().expect("work dir");
    let root = work.path().canonicalize().expect("canonical");
    let (agent, proj) = (root.join("agent"), root.join("proj"));
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    let mask = |text: &str| {
        text.replace(&agent.display().to_string(), "<AGENT>")
            .replace(&proj.display().to_string(), "<PROJ>")
            .replace(&python, "<PY>")
            .replace(&server, "<SERVER>")
    };
    let steps = fixture("steps.txt").expect("steps.txt");
    for line in steps.lines() {
        let mut parts = line.split('\t');
        let name = parts.next().expect("step name");
        let args: Vec<String> = parts.map(|a| a.replace("<PY>", &python).replace("<SERVER>", &server)).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_pi"))
            .arg("mcp")
            .args(&args)
            .current_dir(&proj)
            .env("PI_CODING_AGENT_DIR", &agent)
            .stdin(Stdio::null())
            .output()
            .expect("run pi mcp");
        let stdout = mask(&String::from_utf8_lossy(&out.stdout));
        let mut stderr = mask(&String::from_utf8_lossy(&out.stderr));
        let mut expected_stdout = fixture(&format!("{name}.stdout")).unwrap_or_default();
        let expected_stderr = fixture(&format!("{name}.stderr")).unwrap_or_default();
        // The refused connection's text is Node's `fetch failed` there and the HTTP client's here.
        let mut stdout = stdout;
        for text in [&mut stdout, &mut expected_stdout, &mut stderr] {
            *text = mask_http_error(text);
        }
        assert_eq!(stdout, expected_stdout, "{name}: stdout");
        assert_eq!(stderr, expected_stderr, "{name}: stderr");
        let rc = fixture(&format!("{name}.rc")).expect("rc");
        assert_eq!(out.status.code().map(|c| c.to_string()), Some(rc.trim().to_owned()), "{name}: exit code");
        if let Some(expected) = fixture(&format!("{name}.mcp.json")) {
            let written = std::fs::read_to_string(agent.join("mcp.json")).expect("mcp.json");
            assert_eq!(mask(&written), expected, "{name}: mcp.json");
        }
    }
}

/// The error line of the unreachable `web` server, as `<HTTP ERROR>`.
fn mask_http_error(text: &str) -> String {
    let mut out = Vec::new();
    let mut after_web_transport = false;
    for line in text.split('\n') {
        if after_web_transport && line.starts_with("  ") && !line.starts_with("  tools") {
            out.push("  <HTTP ERROR>".to_owned());
            after_web_transport = false;
            continue;
        }
        after_web_transport = line == "  http://127.0.0.1:9/mcp";
        let line = match line.find("\"error\": \"") {
            Some(i) if line.contains("\"error\"") => format!("{}\"error\": \"<HTTP ERROR>\"", &line[..i]),
            _ => line.to_owned(),
        };
        out.push(line);
    }
    out.join("\n")
}

#[test]
fn pi_p_declares_mcp_tools_unless_no_mcp() {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping");
        return;
    }
    let python =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(python.exists(), "{} is missing: run scripts/mcp-servers/install.sh", python.display());
    let server = ScriptedServer::start(Vec::new());
    let work = tempfile::tempdir().expect("work dir");
    let (agent, proj) = (work.path().join("agent"), work.path().join("proj"));
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(agent.join("models.json"), models_json(&server.base_url, "openai-completions").to_string()).unwrap();
    let script = repo_root().join("scripts/mcp-servers/test_server.py");
    let config = json!({"mcpServers": {"t": {"command": python, "args": [script], "exposure": "direct"}}});
    std::fs::write(agent.join("mcp.json"), config.to_string()).unwrap();
    for no_mcp in [false, true] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi"));
        cmd.args(["-p", "hello", "--model", "local/smollm2-135m"]);
        if no_mcp {
            cmd.arg("--no-mcp");
        }
        let out = cmd.current_dir(&proj).env("PI_CODING_AGENT_DIR", &agent).stdin(Stdio::null()).output().expect("pi");
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let body = server.requests.lock().unwrap().last().cloned().expect("a request");
        let mcp: Vec<String> = tool_names(&body).into_iter().filter(|n| n.starts_with("mcp__")).collect();
        assert_eq!(mcp.is_empty(), no_mcp, "--no-mcp {no_mcp}: {mcp:?}");
    }
}
