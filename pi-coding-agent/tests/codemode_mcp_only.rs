//! `codemode.mode: "only"` with a `direct` MCP server, as pi 1.6.0 presents it: the server's
//! declared tools are listed in the `codemode` description under the server's `## mcp__<server>`
//! heading, after the tools without a server, and left out of the request's tools; and `codemode.mode` is read
//! again from the settings at the next loadout change, so switching it to `on` declares the MCP
//! tools again with how scripts call them. With a `codemode` server, the MCP resource tools are
//! callable from scripts (pi registers them with the servers' exposure) though never declared.
//!
//! Needs the MCP test server's Python (see `mcp_servers.rs`); `PI_SKIP_MCP_SERVERS=1` skips it.

mod http_support;

use std::path::PathBuf;
use std::sync::Arc;

use http_support::{Setup, text_reply, tool_names, tool_reply};
use pi_coding_agent::builtin_extensions::codemode::CodemodeExtension;
use pi_coding_agent::extensions::Extension;
use pi_coding_agent::mcp::extension::{McpExtension, McpExtensionOptions};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> Option<PathBuf> {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping");
        return None;
    }
    let python =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(python.exists(), "{} is missing: run scripts/mcp-servers/install.sh", python.display());
    Some(python)
}

fn mcp_for(exposure: &str, python: &PathBuf, agent: &std::path::Path) -> Arc<McpExtension> {
    let server = repo_root().join("scripts/mcp-servers/test_server.py").canonicalize().expect("server");
    let config = json!({"mcpServers": {"t": {"command": python, "args": [server], "exposure": exposure}}});
    std::fs::write(agent.join("mcp.json"), config.to_string()).expect("mcp.json");
    Arc::new(McpExtension::new(McpExtensionOptions {
        agent_dir: agent.to_path_buf(),
        project_trusted: Some(false),
        startup_wait: std::time::Duration::from_secs(60),
        tools: None,
        exclude_tools: None,
    }))
}

fn description<'a>(body: &'a Value, name: &str) -> &'a str {
    body["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["function"]["name"] == name))
        .and_then(|t| t["function"]["description"].as_str())
        .unwrap_or_else(|| panic!("{name} is not declared: {:?}", tool_names(body)))
}

#[tokio::test]
async fn only_mode_groups_direct_mcp_tools_under_their_server_and_is_read_at_each_loadout() {
    let Some(python) = python() else { return };
    let agent = tempfile::tempdir().expect("agent");
    let mcp = mcp_for("direct", &python, agent.path());
    let codemode = Arc::new(CodemodeExtension::new(vec![mcp.catalog()], true, None));
    let extensions = vec![codemode as Arc<dyn Extension>, mcp.clone() as Arc<dyn Extension>];
    let replies = vec![text_reply("one"), text_reply("two")];
    let h = Setup { replies, extensions, ..Default::default() }.start().await;
    h.session.settings_manager().set_global_nested("codemode", "mode", Some(json!("only"))).expect("settings");
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("first").await.expect("prompt");
    let first = h.server.bodies()[0].clone();
    let names = tool_names(&first);
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    let listing = description(&first, "codemode");
    let heading = listing.find("\n## mcp__t").unwrap_or_else(|| panic!("no server heading:\n{listing}"));
    let echo = listing.find("### `mcp__t__echo`").unwrap_or_else(|| panic!("echo is not listed:\n{listing}"));
    assert!(heading < echo, "echo is listed before its server's heading:\n{listing}");
    let read = listing.find("### `read`").unwrap_or_else(|| panic!("read is not listed:\n{listing}"));
    assert!(read < heading, "tools without a server come first:\n{listing}");

    // `on` from now: the next loadout change declares the MCP tools with how scripts call them.
    h.session.settings_manager().set_global_nested("codemode", "mode", Some(json!("on"))).expect("settings");
    let mut active = h.session.active_tool_names();
    active.push("read".to_owned());
    let active: Vec<&str> = active.iter().map(String::as_str).collect();
    h.session.set_active_tools_by_name(&active);
    h.session.prompt("second").await.expect("prompt");
    let second = h.server.bodies()[1].clone();
    let echo = description(&second, "mcp__t__echo");
    assert!(echo.contains("Codemode: `tools.mcp__t__echo(args)` resolves to"), "{echo}");
    assert!(!description(&second, "codemode").contains("## mcp__t"));
    mcp.manager().expect("manager").close_all().await;
}

#[tokio::test]
async fn resource_tools_are_callable_from_scripts_when_their_servers_are_not_direct() {
    let Some(python) = python() else { return };
    let agent = tempfile::tempdir().expect("agent");
    let mcp = mcp_for("codemode", &python, agent.path());
    let codemode = Arc::new(CodemodeExtension::new(vec![mcp.catalog()], true, None));
    let extensions = vec![codemode as Arc<dyn Extension>, mcp.clone() as Arc<dyn Extension>];
    let script = "const r = await tools.read_mcp_resource({ server: 't', uri: 'note://hello' }); \
        const l = await tools.list_mcp_resources({}); return JSON.stringify([r, l.resources.map((x) => x.uri)]);";
    let replies = vec![tool_reply("call_1", "codemode", json!({ "code": script })), text_reply("ok")];
    let h = Setup { replies, extensions, ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    // The script names no server, so it does not wait for one (as pi's `reachesTools`): connect first.
    mcp.manager().expect("manager").wait_for_all().await;
    h.session.prompt("go").await.expect("prompt");
    let bodies = h.server.bodies();
    let names = tool_names(&bodies[0]);
    assert!(!names.iter().any(|n| n.contains("mcp_resource")), "{names:?}");
    let result = bodies[1]["messages"].as_array().expect("messages").iter().find(|m| m["role"] == "tool").cloned();
    let text = result.expect("the result")["content"].to_string();
    assert!(text.contains("Hello from the resource") && text.contains("note://hello"), "{text}");
    assert!(!text.contains("Script failed"), "{text}");
    mcp.manager().expect("manager").close_all().await;
}
