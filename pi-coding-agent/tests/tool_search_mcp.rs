//! `tool_search` over a real MCP server with `deferred` exposure: the model searches, the matches
//! are declared from the next call (recorded in the session as a tool change) and then called.
//!
//! Needs the MCP test server's Python (see `mcp_servers.rs`); `PI_SKIP_MCP_SERVERS=1` skips.

mod http_support;

use std::path::PathBuf;
use std::sync::Arc;

use http_support::{Setup, text_reply, tool_names, tool_reply};
use pi_coding_agent::builtin_extensions::tool_search::ToolSearchExtension;
use pi_coding_agent::extensions::Extension;
use pi_coding_agent::mcp::extension::{McpExtension, McpExtensionOptions};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[tokio::test]
async fn tool_search_loads_deferred_tools_for_the_next_call() {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping");
        return;
    }
    let python =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(python.exists(), "{} is missing: run scripts/mcp-servers/install.sh", python.display());
    let script = repo_root().join("scripts/mcp-servers/test_server.py").canonicalize().expect("script");
    let agent = tempfile::tempdir().expect("agent");
    let config = json!({"mcpServers": {"test": {"command": python, "args": [script], "exposure": "deferred"}}});
    std::fs::write(agent.path().join("mcp.json"), config.to_string()).expect("mcp.json");
    let mcp = Arc::new(McpExtension::new(McpExtensionOptions {
        agent_dir: agent.path().to_path_buf(),
        project_trusted: Some(false),
        startup_wait: std::time::Duration::from_secs(30),
        tools: None,
        exclude_tools: None,
    }));
    let search = Arc::new(ToolSearchExtension::new(vec![mcp.catalog()], false));
    let replies = vec![
        tool_reply("c1", "tool_search", json!({"query": "echo the text back", "limit": 1})),
        tool_reply("c2", "mcp__test__echo", json!({"text": "found"})),
        text_reply("done"),
    ];
    let extensions = vec![search as Arc<dyn Extension>, mcp.clone() as Arc<dyn Extension>];
    let h = Setup { replies, extensions, ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("find a tool").await.expect("prompt");
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 3);
    let first = tool_names(&bodies[0]);
    assert!(first.contains(&"tool_search".to_owned()), "{first:?}");
    assert!(!first.iter().any(|n| n.starts_with("mcp__")), "{first:?}");
    let second = tool_names(&bodies[1]);
    assert!(second.contains(&"mcp__test__echo".to_owned()), "{second:?}");
    let results: Vec<String> = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().map(str::to_owned).unwrap_or_else(|| m["content"].to_string()))
        .collect();
    assert_eq!(
        results[0],
        "Loaded 1 tool. They are available from your next call:\n- mcp__test__echo: Echo the text back."
    );
    assert_eq!(results[1], "echo: found");
    // The load is a tool change in the session: a system message that adds the tool.
    let added = h
        .entries()
        .into_iter()
        .any(|e: Value| e["message"]["role"] == "system" && e["message"].to_string().contains("mcp__test__echo"));
    assert!(added, "a tool change adds mcp__test__echo: {:#?}", h.entries());
    mcp.manager().expect("manager").close_all().await;
}
