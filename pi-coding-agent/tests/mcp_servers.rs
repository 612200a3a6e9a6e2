//! MCP servers end to end: real servers on the official Python SDK (PyPI `mcp`,
//! `scripts/mcp-servers/test_server.py`, installed by `scripts/mcp-servers/install.sh`) over stdio
//! and streamable HTTP on 127.0.0.1, driven by scripted model turns over real HTTP.
//!
//! The interpreter is `PI_MCP_PYTHON`, else `.mcp-venv/bin/python` of the repository.
//! `PI_SKIP_MCP_SERVERS=1` skips these tests; otherwise a missing interpreter fails them.

mod http_support;

use std::path::PathBuf;
use std::sync::Arc;

use http_support::{Setup, system_text, text_reply, tool_names, tool_reply};
use pi_coding_agent::extensions::Extension;
use pi_coding_agent::mcp::extension::{McpExtension, McpExtensionOptions};
use pi_coding_agent::mcp::manager::ConnState;
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Python with `mcp` installed, or `None` when the tests are told to skip.
fn python() -> Option<String> {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping the MCP server tests");
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

fn server_script() -> String {
    repo_root().join("scripts/mcp-servers/test_server.py").canonicalize().expect("test server").display().to_string()
}

fn stdio_server(python: &str, extra: Value) -> Value {
    let mut entry = json!({"command": python, "args": [server_script()]});
    if let (Some(e), Some(x)) = (entry.as_object_mut(), extra.as_object()) {
        e.extend(x.clone());
    }
    entry
}

struct Mcp {
    ext: Arc<McpExtension>,
    agent: tempfile::TempDir,
}

fn mcp_with(config: Value) -> Mcp {
    mcp_filtered(config, None, None)
}

fn mcp_filtered(config: Value, tools: Option<Vec<String>>, exclude_tools: Option<Vec<String>>) -> Mcp {
    let agent = tempfile::tempdir().expect("agent dir");
    std::fs::write(agent.path().join("mcp.json"), config.to_string()).expect("mcp.json");
    let ext = Arc::new(McpExtension::new(McpExtensionOptions {
        agent_dir: agent.path().to_path_buf(),
        project_trusted: Some(false),
        startup_wait: std::time::Duration::from_secs(30),
        tools,
        exclude_tools,
    }));
    Mcp { ext, agent }
}

async fn start(mcp: &Mcp, replies: Vec<String>) -> http_support::HttpSession {
    let h =
        Setup { replies, extensions: vec![mcp.ext.clone() as Arc<dyn Extension>], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h
}

fn tool_result_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn direct_stdio_tools_are_declared_and_called() {
    let Some(python) = python() else { return };
    let mcp = mcp_with(json!({"mcpServers": {"test": stdio_server(&python, json!({
        "exposure": "direct", "env": {"PI_TEST_VALUE": "home=${HOME}"}, "cwd": "sub"
    }))}}));
    let replies = vec![
        tool_reply("call_1", "mcp__test__echo", json!({"text": "hi"})),
        tool_reply("call_2", "mcp__test__env", json!({"name": "PI_TEST_VALUE"})),
        tool_reply("call_3", "mcp__test__cwd", json!({})),
        text_reply("done"),
    ];
    let h =
        Setup { replies, extensions: vec![mcp.ext.clone() as Arc<dyn Extension>], ..Default::default() }.start().await;
    std::fs::create_dir_all(h.cwd.join("sub")).expect("sub dir");
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("use the tools").await.expect("prompt");
    let bodies = h.server.bodies();
    assert_eq!(bodies.len(), 4);
    let names = tool_names(&bodies[0]);
    for expected in
        ["read", "mcp__test__echo", "mcp__test__add", "mcp__test__cwd", "list_mcp_resources", "read_mcp_resource"]
    {
        assert!(names.iter().any(|n| n == expected), "{expected} in {names:?}");
    }
    // `a-b` and `a_b` sanitise to one name: both get the hash suffix.
    let ab: Vec<&String> = names.iter().filter(|n| n.starts_with("mcp__test__a_b")).collect();
    assert_eq!(ab.len(), 2);
    assert!(ab.iter().all(|n| n.len() == "mcp__test__a_b_".len() + 8), "{ab:?}");
    let echo =
        bodies[0]["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == "mcp__test__echo").unwrap();
    assert_eq!(echo["function"]["description"], "Echo the text back.");
    assert_eq!(echo["function"]["parameters"]["required"], json!(["text"]));
    let results = tool_result_texts(&bodies[3]);
    assert_eq!(results[0], "echo: hi");
    assert_eq!(results[1], format!("home={}", std::env::var("HOME").unwrap()));
    assert_eq!(results[2], h.cwd.join("sub").display().to_string());
    // Direct tools only: no codemode/tool_search servers, so no mcp_servers section.
    assert!(!system_text(&bodies[0]).contains("<mcp_servers>"));
}

#[tokio::test]
async fn results_convert_errors_images_structured_and_long_text() {
    let Some(python) = python() else { return };
    let mcp = mcp_with(json!({"mcpServers": {"test": stdio_server(&python, json!({"exposure": "direct"}))}}));
    let replies = vec![
        tool_reply("c1", "mcp__test__fail", json!({"reason": "nope"})),
        tool_reply("c2", "mcp__test__add", json!({"a": 2, "b": 3})),
        tool_reply("c3", "mcp__test__big", json!({"chars": 30000})),
        tool_reply("c4", "read_mcp_resource", json!({"server": "test", "uri": "note://hello"})),
        tool_reply("c5", "mcp__test__picture", json!({})),
        text_reply("done"),
    ];
    let h = start(&mcp, replies).await;
    h.session.prompt("go").await.expect("prompt");
    let bodies = h.server.bodies();
    let results = tool_result_texts(bodies.last().unwrap());
    assert_eq!(results[0], "Error executing tool fail");
    assert_eq!(results[1], "{\n  \"sum\": 5\n}");
    assert!(
        results[2].starts_with("Warning: truncated output (original token count: 7500)\nTotal output lines: 411\n\n"),
        "{}",
        &results[2][..200]
    );
    assert!(results[2].contains("chars truncated…"));
    assert!(results[2].contains("[Full output: "));
    assert_eq!(results[3], "Hello from the resource");
    let entries = h.entries();
    let fail = entries.iter().find(|e| e["message"]["toolCallId"] == "c1").expect("fail result");
    assert_eq!(fail["message"]["isError"], true);
    let picture = entries.iter().find(|e| e["message"]["toolCallId"] == "c5").expect("picture result");
    assert_eq!(picture["message"]["content"][0]["type"], "image");
    assert_eq!(picture["message"]["content"][0]["mimeType"], "image/png");
}

#[tokio::test]
async fn codemode_servers_are_listed_in_the_mcp_servers_section() {
    let Some(python) = python() else { return };
    let mcp = mcp_with(json!({"mcpServers": {
        "test": stdio_server(&python, json!({})),
        "docs-x": stdio_server(&python, json!({"exposure": "deferred", "description": "Search the docs\nmore"})),
        "off": stdio_server(&python, json!({"enabled": false})),
    }}));
    let h = start(&mcp, vec![text_reply("one"), text_reply("two")]).await;
    mcp.ext.manager().expect("manager").wait_for_all().await;
    h.session.prompt("hello").await.expect("prompt");
    let body = h.server.last();
    let names = tool_names(&body);
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    let system = system_text(&body);
    let expected = "<mcp_servers>\nMCP servers whose tools are not declared to you. Call the tools of `codemode` servers from codemode scripts. Load the tools of `tool_search` servers with `tool_search`.\n- mcp__docs_x (tool_search): Search the docs\n- mcp__test (codemode): Tools for testing pi.\n</mcp_servers>";
    assert!(system.contains(expected), "{system}");
}

#[tokio::test]
async fn http_server_gets_headers_and_bearer_token() {
    let Some(python) = python() else { return };
    let (mut child, port) = start_http_server(&python);
    let mcp = mcp_with(json!({"mcpServers": {"web": {
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"X-Pi-Test": "${HOME}", "Authorization": "Bearer secret-token"},
        "exposure": "direct"
    }}}));
    let h = start(&mcp, vec![tool_reply("c1", "mcp__web__headers", json!({})), text_reply("done")]).await;
    h.session.prompt("headers please").await.expect("prompt");
    let results = tool_result_texts(&h.server.last());
    let headers: Value = serde_json::from_str(&results[0]).expect("headers JSON");
    assert_eq!(headers["authorization"], "Bearer secret-token");
    assert_eq!(headers["x-pi-test"], std::env::var("HOME").unwrap().as_str());
    drop(h);
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn failing_servers_are_reported_and_do_not_block_the_prompt() {
    let Some(python) = python() else { return };
    let mcp = mcp_with(json!({"mcpServers": {
        "crash": stdio_server(&python, json!({"args": [server_script(), "--mode", "crash"], "exposure": "direct"})),
        "hang": stdio_server(&python, json!({"args": [server_script(), "--mode", "hang"], "exposure": "direct", "timeout": 1})),
        "bad": stdio_server(&python, json!({"args": [server_script(), "--mode", "badjson"], "exposure": "direct", "timeout": 1})),
        "missing": {"command": "/nonexistent/pi-mcp-server", "exposure": "direct"},
    }}));
    let h = start(&mcp, vec![text_reply("fine")]).await;
    h.session.prompt("hello").await.expect("prompt");
    assert!(!tool_names(&h.server.last()).iter().any(|n| n.starts_with("mcp__")));
    let manager = mcp.ext.manager().expect("manager");
    let state = |name: &str| manager.server(name).unwrap().state();
    match state("crash") {
        ConnState::Failed(e) => assert!(e.contains("boom: the server crashed on purpose"), "{e}"),
        other => panic!("crash: {other:?}"),
    }
    assert_eq!(state("hang"), ConnState::Failed("MCP request timed out after 1000ms".into()));
    assert!(matches!(state("bad"), ConnState::Failed(_)), "{:?}", state("bad"));
    match state("missing") {
        ConnState::Failed(e) => assert!(e.starts_with("spawn /nonexistent/pi-mcp-server ENOENT"), "{e}"),
        other => panic!("missing: {other:?}"),
    }
    let config = pi_coding_agent::mcp::load_mcp_config(mcp.agent.path(), &h.cwd, false);
    let status = pi_coding_agent::mcp::extension::format_status(&manager, &config, mcp.agent.path());
    assert!(status.contains("crash: failed (direct)\n    "), "{status}");
    assert!(status.contains("hang: failed (direct)\n    MCP request timed out after 1000ms"), "{status}");
    let report = pi_coding_agent::mcp::extension::problems_message(&config.errors, &manager).expect("problems");
    assert!(report.starts_with("MCP servers need attention:\n  "), "{report}");
    assert!(report.contains("\n  hang: failed: MCP request timed out after 1000ms\n"), "{report}");
    assert!(report.ends_with("\nRun /mcp to fix."), "{report}");
}

/// Starts the test server on streamable HTTP at a free port and waits until it accepts connections.
fn start_http_server(python: &str) -> (std::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = std::process::Command::new(python)
        .args([server_script(), "--transport".into(), "http".into(), "--port".into(), port.to_string()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("http server");
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "the HTTP MCP server exited");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (child, port)
}

#[tokio::test]
async fn a_call_past_its_timeout_fails() {
    let Some(python) = python() else { return };
    // Over HTTP to a server that already runs, so the timeout measures the call, not a start-up.
    let (mut child, port) = start_http_server(&python);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mcp = mcp_with(json!({"mcpServers": {"web": {"url": url, "exposure": "direct", "timeout": 3}}}));
    let replies = vec![tool_reply("c1", "mcp__web__slow", json!({"seconds": 3600})), text_reply("done")];
    let h = start(&mcp, replies).await;
    h.session.prompt("go").await.expect("prompt");
    let results = tool_result_texts(&h.server.last());
    assert_eq!(results[0], "MCP request timed out after 3000ms");
    drop(h);
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn stdio_servers_stop_with_their_process_group() {
    let Some(python) = python() else { return };
    let mcp = mcp_with(json!({"mcpServers": {"test": stdio_server(&python, json!({"exposure": "direct"}))}}));
    let h = start(&mcp, vec![tool_reply("c1", "mcp__test__pid", json!({})), text_reply("done")]).await;
    h.session.prompt("go").await.expect("prompt");
    let results = tool_result_texts(&h.server.last());
    let pid: i32 = results[0].parse().expect("pid");
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    mcp.ext.manager().expect("manager").close_all().await;
    // Gone, or a zombie until tokio reaps it: either way no longer running.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split(' ').nth(2).is_some_and(|st| st != "Z"))
    };
    for _ in 0..400 {
        if !alive() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert!(!alive(), "the server process {pid} still runs");
}

#[tokio::test]
async fn a_dropped_server_reconnects_and_announced_tools_appear() {
    let Some(python) = python() else { return };
    let mcp = mcp_with(json!({"mcpServers": {"test": stdio_server(&python, json!({"exposure": "direct"}))}}));
    let replies = vec![
        tool_reply("c1", "mcp__test__pid", json!({})),
        tool_reply("c2", "mcp__test__die", json!({})),
        tool_reply("c3", "mcp__test__pid", json!({})),
        tool_reply("c4", "mcp__test__grow", json!({})),
        text_reply("done"),
    ];
    let h = start(&mcp, replies).await;
    h.session.prompt("go").await.expect("prompt");
    let results = tool_result_texts(&h.server.last());
    assert_eq!(results[1], "MCP connection closed");
    // The next call reconnected: a new server process answered.
    assert_ne!(results[0], results[2]);
    assert!(results[2].parse::<u32>().is_ok(), "{}", results[2]);
    assert_eq!(results[3], "grown");
    // tools/list_changed: the new tool is registered (and, being direct, declared next time).
    let manager = mcp.ext.manager().expect("manager");
    for _ in 0..400 {
        if manager.registered_tools().iter().any(|t| t.name == "mcp__test__late") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(manager.registered_tools().iter().any(|t| t.name == "mcp__test__late"));
    h.server.push(text_reply("again"));
    h.session.prompt("again").await.expect("second prompt");
    assert!(tool_names(&h.server.last()).contains(&"mcp__test__late".to_owned()));
    manager.close_all().await;
}

#[tokio::test]
async fn tools_and_exclude_tools_patterns_filter_mcp_tools() {
    let Some(python) = python() else { return };
    let config = json!({"mcpServers": {"test": stdio_server(&python, json!({"exposure": "direct"}))}});
    let list = |v: &[&str]| Some(v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    let mcp = mcp_filtered(config, list(&["read", "mcp__test__e*"]), list(&["mcp__test__env"]));
    let h = start(&mcp, vec![text_reply("ok")]).await;
    h.session.prompt("hi").await.expect("prompt");
    let names: Vec<String> = tool_names(&h.server.last()).into_iter().filter(|n| n.starts_with("mcp__")).collect();
    assert_eq!(names, vec!["mcp__test__echo"]);
    mcp.ext.manager().expect("manager").close_all().await;
}

#[tokio::test]
async fn extensions_register_mcp_servers_and_mcp_json_wins() {
    let Some(python) = python() else { return };
    let mcp = mcp_with(json!({"mcpServers": {"file": stdio_server(&python, json!({"exposure": "direct"}))}}));
    let python2 = python.clone();
    let registrar = pi_coding_agent::extensions::FnExtension::new("<inline:mcp-registrar>", move |pi| {
        let direct = stdio_server(&python2, json!({"exposure": "direct"}));
        pi.register_mcp_server("ext-srv", direct.clone())?;
        pi.register_mcp_server("file", json!({"command": "/nonexistent"}))?;
        pi.register_mcp_server("gone", direct)?;
        pi.unregister_mcp_server("gone");
        assert_eq!(pi.get_mcp_servers().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["ext-srv", "file"]);
        Ok(())
    });
    let extensions = vec![Arc::new(registrar) as Arc<dyn Extension>, mcp.ext.clone() as Arc<dyn Extension>];
    let h = Setup { replies: vec![text_reply("ok")], extensions, ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    h.session.prompt("hi").await.expect("prompt");
    let names = tool_names(&h.server.last());
    assert!(names.contains(&"mcp__ext_srv__echo".to_owned()), "{names:?}");
    assert!(names.contains(&"mcp__file__echo".to_owned()), "{names:?}");
    let manager = mcp.ext.manager().expect("manager");
    assert_eq!(manager.server("file").unwrap().state(), ConnState::Connected);
    assert!(manager.server("gone").is_none());
    manager.close_all().await;
}
