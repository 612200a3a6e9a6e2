//! `/mcp` changes apply to the running session, as pi 1.6.0 applies them: changing a server's
//! exposure registers its tools again (direct tools leave the declared set, codemode becomes
//! active), enabling a server connects it and disabling one disconnects it, and the next request
//! of the same session declares the new tools and carries the new `<mcp_servers>` section. The
//! resource tools follow their servers' exposure: declared while one is `direct`, callable from
//! codemode scripts otherwise. Driven in a pty (100×30) against a scripted model server.
//!
//! Servers: `scripts/mcp-servers/test_server.py` on the official Python SDK; the interpreter is
//! `PI_MCP_PYTHON`, else `.mcp-venv/bin/python`; `PI_SKIP_MCP_SERVERS=1` skips.

mod cli_support;
mod interactive_support;

use std::path::PathBuf;

use cli_support::{Env, ScriptedServer, text_reply};
use interactive_support::*;
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repo root")
}

fn python() -> Option<String> {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping the live /mcp test");
        return None;
    }
    let path =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(path.exists(), "{} is missing: run scripts/mcp-servers/install.sh", path.display());
    Some(path.display().to_string())
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// Every system (or developer) message's text, in order.
fn system_text(body: &Value) -> String {
    let mut out = String::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        if !matches!(message["role"].as_str(), Some("system" | "developer")) {
            continue;
        }
        match &message["content"] {
            Value::String(s) => out.push_str(s),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).for_each(|t| out.push_str(t)),
            _ => {}
        }
        out.push('\n');
    }
    out
}

/// The last `<mcp_servers>` section of the request's system messages.
fn last_section(body: &Value) -> Option<String> {
    let text = system_text(body);
    let start = text.rfind("<mcp_servers>")?;
    let end = text[start..].find("</mcp_servers>")? + start + "</mcp_servers>".len();
    Some(text[start..end].to_owned())
}

fn open_server_menu(pty: &mut Pty, name: &str) {
    pty.send("/mcp");
    pty.wait_for("the command", |s| s.contains("/mcp"));
    pty.send("\r");
    pty.wait_for("the servers", |s| s.contains("enter manage"));
    for _ in 0..4 {
        if pty.screen().contains(&format!("→ {name}")) {
            break;
        }
        pty.send("\x1b[B");
        pty.wait_for("the next server", |_| true);
    }
    pty.wait_for("the server selected", |s| s.contains(&format!("→ {name}")));
    pty.send("\r");
    pty.wait_for("the server's menu", |s| s.contains(&format!("MCP server {name}")));
}

fn select(pty: &mut Pty, label: &str) {
    for _ in 0..8 {
        if pty.screen().contains(&format!("→ {label}")) {
            break;
        }
        pty.send("\x1b[B");
        pty.wait_for("the next item", |_| true);
    }
    pty.wait_for(label, |s| s.contains(&format!("→ {label}")));
    pty.send("\r");
}

fn close_manager(pty: &mut Pty) {
    pty.send("\x1b");
    pty.wait_for("the servers", |s| s.contains("enter manage"));
    pty.send("\x1b");
    pty.wait_for("the editor", |s| !s.contains("enter manage"));
}

fn prompt(pty: &mut Pty, server: &ScriptedServer, text: &str, requests: usize, answer: &str) {
    pty.send(text);
    pty.send("\r");
    pty.wait_for(answer, |s| s.contains(answer));
    pty.wait_for("the requests", |_| server.requests.lock().unwrap().len() >= requests);
}

#[test]
fn mcp_manager_changes_apply_to_the_next_request() {
    let Some(python) = python() else { return };
    let script = "const r = await tools.list_mcp_resources({}); return r.resources.map((x) => x.uri).join(' ');";
    let server = ScriptedServer::start(vec![
        text_reply(&["first answer"]),
        tool_reply("call_1", "codemode", json!({"code": script})),
        text_reply(&["second answer"]),
        text_reply(&["third answer"]),
    ]);
    let env = Env::new(&server.base_url);
    dark_theme(&env);
    let server_script = repo_root().join("scripts/mcp-servers/test_server.py").display().to_string();
    let config = json!({"mcpServers": {
        "tools": {"command": python, "args": [server_script], "exposure": "direct"},
        "off": {"command": python, "args": [server_script], "enabled": false}
    }});
    std::fs::write(env.agent().join("mcp.json"), config.to_string()).unwrap();
    let mut pty = Pty::spawn(&env, &[]);
    pty.wait_for("the footer", |s| s.contains("smollm2-135m"));
    // The first prompt waits at most 10 s for direct servers; a loaded machine may start Python
    // slower than that, so the test waits for the connection in `/mcp` first.
    pty.send("/mcp");
    pty.wait_for("the command", |s| s.contains("/mcp"));
    pty.send("\r");
    pty.wait_for("tools connected", |s| s.contains("connected · 14 tools"));
    pty.send("\x1b");
    pty.wait_for("the editor", |s| !s.contains("enter manage"));

    // 1. `tools` is direct: its tools and the resource tools are declared, no section.
    prompt(&mut pty, &server, "one", 1, "first answer");
    let first = server.requests.lock().unwrap()[0].clone();
    let names = tool_names(&first);
    assert!(names.contains(&"mcp__tools__echo".to_owned()), "{names:?}");
    assert!(names.contains(&"list_mcp_resources".to_owned()), "{names:?}");
    assert!(!names.contains(&"codemode".to_owned()), "{names:?}");
    assert_eq!(last_section(&first), None);

    // 2. `tools` becomes codemode, `off` is enabled.
    open_server_menu(&mut pty, "tools");
    select(&mut pty, "Exposure");
    pty.wait_for("the exposure menu", |s| s.contains("Exposure of tools"));
    pty.send("\x1b[A\x1b[A");
    pty.wait_for("codemode selected", |s| s.contains("→   codemode"));
    pty.send("\r");
    let screen = pty.wait_for("tools' menu", |s| s.contains("MCP server tools") && s.contains("codemode"));
    assert!(!screen.contains("next session"), "{screen}");
    pty.send("\x1b");
    pty.wait_for("the servers", |s| s.contains("enter manage"));
    pty.send("\x1b");
    pty.wait_for("the editor", |s| !s.contains("enter manage"));
    open_server_menu(&mut pty, "off");
    select(&mut pty, "Enable");
    pty.wait_for("off connected", |s| s.contains("State: connected"));
    close_manager(&mut pty);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(env.agent().join("mcp.json")).unwrap()).unwrap();
    // Both are the defaults now, which pi saves by removing the keys.
    assert!(saved["mcpServers"]["tools"].get("exposure").is_none(), "{saved}");
    assert!(saved["mcpServers"]["off"].get("enabled").is_none(), "{saved}");

    // The next request: no MCP tool declared, codemode is, and the section lists both servers;
    // the resource tools are callable from a script.
    prompt(&mut pty, &server, "two", 3, "second answer");
    let (second, third) = {
        let requests = server.requests.lock().unwrap();
        (requests[1].clone(), requests[2].clone())
    };
    let names = tool_names(&second);
    assert!(names.contains(&"codemode".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__") || n.contains("mcp_resource")), "{names:?}");
    let section = last_section(&second).expect("the mcp_servers section");
    assert!(section.contains("- mcp__off (codemode)") && section.contains("- mcp__tools (codemode)"), "{section}");
    let result = third["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").expect("the result");
    assert!(result.to_string().contains("note://hello"), "{result}");

    // 3. `off` is disabled again: the section no longer lists it.
    open_server_menu(&mut pty, "off");
    select(&mut pty, "Disable");
    pty.wait_for("off disabled", |s| s.contains("State: disabled"));
    close_manager(&mut pty);
    prompt(&mut pty, &server, "three", 4, "third answer");
    let fourth = server.requests.lock().unwrap()[3].clone();
    let section = last_section(&fourth).expect("the mcp_servers section");
    assert!(!section.contains("mcp__off") && section.contains("- mcp__tools (codemode)"), "{section}");
    assert_eq!(pty.quit(), 0);

    // The session file records the declared tools' changes as system messages.
    let files = env.session_files();
    let text = std::fs::read_to_string(files.last().expect("a session file")).unwrap();
    let changes: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["message"]["role"] == "system")
        .collect();
    let removed_echo = changes.iter().any(|e| e["message"].to_string().contains("mcp__tools__echo"));
    assert!(removed_echo && changes.len() >= 2, "{changes:#?}");
}
