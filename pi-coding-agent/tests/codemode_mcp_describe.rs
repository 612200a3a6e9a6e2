//! What a codemode script learns about MCP tools' results, compared with the reference pi 1.6.0
//! (`tests/fixtures/codemode/mcp_describe.json`, recorded by
//! `scripts/fixtures/codemode_mcp_describe.sh` with the script of `mcp_describe_script.json`):
//! every MCP tool resolves to its `CallToolResult`, with the tool's own output schema as
//! `structuredContent`, in `describeTool()` and `ALL_TOOLS`.
//!
//! Needs the MCP test server's Python (see `mcp_servers.rs`); `PI_SKIP_MCP_SERVERS=1` skips it.

mod http_support;

use std::path::PathBuf;
use std::sync::Arc;

use http_support::{Setup, text_reply, tool_reply};
use pi_coding_agent::builtin_extensions::codemode::CodemodeExtension;
use pi_coding_agent::extensions::Extension;
use pi_coding_agent::mcp::extension::{McpExtension, McpExtensionOptions};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture(name: &str) -> Value {
    let path = repo_root().join("pi-coding-agent/tests/fixtures/codemode").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("fixture JSON")
}

fn strip_wall_time(text: &str) -> String {
    text.split('\n')
        .map(|l| if l.starts_with("Wall time ") { "Wall time <T> seconds" } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn mcp_tools_resolve_to_their_call_tool_result_as_in_the_reference() {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping");
        return;
    }
    let python =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(python.exists(), "{} is missing: run scripts/mcp-servers/install.sh", python.display());
    let server = repo_root().join("scripts/mcp-servers/test_server.py").canonicalize().expect("server");
    let agent = tempfile::tempdir().expect("agent");
    let config = json!({"mcpServers": {"t": {"command": python, "args": [server]}}});
    std::fs::write(agent.path().join("mcp.json"), config.to_string()).expect("mcp.json");
    let mcp = Arc::new(McpExtension::new(McpExtensionOptions {
        agent_dir: agent.path().to_path_buf(),
        project_trusted: Some(false),
        startup_wait: std::time::Duration::from_secs(30),
        tools: None,
        exclude_tools: None,
    }));
    let cm = Arc::new(CodemodeExtension::new(vec![mcp.catalog()], true, None));
    let code = fixture("mcp_describe_script.json")["script"].as_str().expect("script").to_owned();
    let replies = vec![tool_reply("call_1", "codemode", json!({ "code": code })), text_reply("ok")];
    let extensions = vec![cm as Arc<dyn Extension>, mcp.clone() as Arc<dyn Extension>];
    let h = Setup { replies, extensions, ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("go").await.expect("prompt");
    let bodies = h.server.bodies();
    let tool = bodies[1]["messages"].as_array().expect("messages").iter().find(|m| m["role"] == "tool").cloned();
    let ours = strip_wall_time(tool.expect("tool message")["content"].as_str().expect("content"));
    let reference = strip_wall_time(fixture("mcp_describe.json")["result"].as_str().expect("result"));
    mcp.manager().expect("manager").close_all().await;
    assert_eq!(ours, reference);
}
