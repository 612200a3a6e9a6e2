//! The same `mcp.json` given to the reference pi 1.6.0 and to ours yields the same MCP tool
//! declarations and the same `mcp_servers` system-prompt section in the first request body, for
//! each exposure. The reference bodies were recorded by `scripts/fixtures/mcp_request_bodies.sh`
//! (one stdio server, `scripts/mcp-servers/test_server.py`, on PyPI `mcp`). `tool_search` is loaded
//! as the CLI loads it: inactive until a deferred server activates it. The codemode tool itself is
//! not compared.
//!
//! Needs the MCP test server's Python (see `mcp_servers.rs`); `PI_SKIP_MCP_SERVERS=1` skips.

mod http_support;

use std::path::PathBuf;
use std::sync::Arc;

use http_support::{Setup, system_text, text_reply};
use pi_coding_agent::builtin_extensions::tool_search::ToolSearchExtension;
use pi_coding_agent::extensions::Extension;
use pi_coding_agent::mcp::extension::{McpExtension, McpExtensionOptions};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> Option<String> {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping the MCP reference comparison");
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

fn is_mcp_tool(tool: &Value) -> bool {
    let name = tool["function"]["name"].as_str().unwrap_or("");
    name == "tool_search"
        || name.starts_with("mcp__")
        || name.ends_with("_mcp_resources")
        || name.ends_with("_mcp_resource_templates")
        || name == "read_mcp_resource"
}

fn mcp_tools(body: &Value) -> Vec<Value> {
    body["tools"].as_array().map(|a| a.iter().filter(|t| is_mcp_tool(t)).cloned().collect()).unwrap_or_default()
}

fn section(system: &str) -> Option<String> {
    let start = system.find("<mcp_servers>")?;
    let end = system.find("</mcp_servers>")? + "</mcp_servers>".len();
    Some(system[start..end].to_owned())
}

async fn compare(exposure: &str) {
    let Some(python) = python() else { return };
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join(format!("pi-coding-agent/tests/fixtures/mcp/{exposure}.json")))
            .expect("fixture"),
    )
    .expect("fixture JSON");
    let script = repo_root().join("scripts/mcp-servers/test_server.py").canonicalize().expect("server script");
    let agent = tempfile::tempdir().expect("agent dir");
    let config = json!({"mcpServers": {"test": {"command": python, "args": [script.display().to_string()],
        "exposure": exposure, "description": "Tools for testing pi", "toolExposure": {"picture": "hidden"}}}});
    std::fs::write(agent.path().join("mcp.json"), config.to_string()).expect("mcp.json");
    let ext = Arc::new(McpExtension::new(McpExtensionOptions {
        agent_dir: agent.path().to_path_buf(),
        project_trusted: Some(false),
        startup_wait: std::time::Duration::from_secs(60),
        tools: None,
        exclude_tools: None,
    }));
    let tool_search = Arc::new(ToolSearchExtension::new(vec![ext.catalog()], false));
    let extensions = vec![tool_search as Arc<dyn Extension>, ext.clone() as Arc<dyn Extension>];
    let h = Setup { replies: vec![text_reply("ok")], extensions, ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("hello").await.expect("prompt");
    let body = h.server.last();
    let ours = mcp_tools(&body);
    let theirs = mcp_tools(&json!({"tools": fixture["tools"]}));
    assert_eq!(ours, theirs, "{exposure}: MCP tool declarations");
    let their_section = section(fixture["system"].as_str().expect("system"));
    assert_eq!(section(&system_text(&body)), their_section, "{exposure}: mcp_servers section");
    let tools_section = |system: &str| {
        system[system.find("<tools>").expect("tools")..system.find("</tools>").expect("/tools")].to_owned()
    };
    let their_tools = tools_section(fixture["system"].as_str().expect("system")).replace("- codemode: ", "");
    if exposure != "codemode" {
        assert_eq!(tools_section(&system_text(&body)), their_tools, "{exposure}: tools section");
    }
    ext.manager().expect("manager").close_all().await;
}

#[tokio::test]
async fn direct_exposure_matches_the_reference() {
    compare("direct").await;
}

#[tokio::test]
async fn codemode_exposure_matches_the_reference() {
    compare("codemode").await;
}

#[tokio::test]
async fn deferred_exposure_matches_the_reference() {
    compare("deferred").await;
}

#[tokio::test]
async fn hidden_exposure_matches_the_reference() {
    compare("hidden").await;
}
