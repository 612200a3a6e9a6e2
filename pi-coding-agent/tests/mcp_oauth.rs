//! OAuth for streamable-HTTP MCP servers, end to end against a real OAuth-protected MCP server on
//! the official Python SDK (`scripts/mcp-servers/oauth_server.py`: the SDK's authorization server
//! routes and a `/mcp` that answers 401 with a `WWW-Authenticate` challenge) on 127.0.0.1:
//! `pi mcp list|login|logout` on our binary (the browser step driven with HTTP GETs to the
//! authorization URL and the loopback redirect it answers with), the token on tool calls, refresh
//! after a 401 and before expiry, a revoked grant reported as pi reports it, and sign-out.
//!
//! Expected texts and the `mcp-auth.json` shape were recorded from pi 1.6.0 against the same server.
//! The interpreter is `PI_MCP_PYTHON`, else `.mcp-venv/bin/python`; `PI_SKIP_MCP_SERVERS=1` skips.

mod http_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use http_support::{Setup, text_reply, tool_reply};
use pi_coding_agent::extensions::Extension;
use pi_coding_agent::mcp::extension::{McpExtension, McpExtensionOptions, format_status};
use pi_coding_agent::mcp::manager::ConnState;
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> Option<String> {
    if std::env::var("PI_SKIP_MCP_SERVERS").as_deref() == Ok("1") {
        eprintln!("PI_SKIP_MCP_SERVERS=1: skipping the MCP OAuth tests");
        return None;
    }
    let path =
        std::env::var("PI_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".mcp-venv/bin/python"));
    assert!(path.exists(), "{} is missing: run scripts/mcp-servers/install.sh", path.display());
    Some(path.display().to_string())
}

/// The OAuth MCP server on a free port; killed on drop.
struct OAuthServer {
    child: Child,
    port: u16,
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl OAuthServer {
    fn start(python: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let script = repo_root().join("scripts/mcp-servers/oauth_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .args(["--port", &port.to_string()])
            .stderr(Stdio::null())
            .spawn()
            .expect("oauth server");
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(child.try_wait().unwrap().is_none(), "the OAuth MCP server exited");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        OAuthServer { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn stats(&self) -> Value {
        let (_, _, body) = http_request("GET", &format!("http://127.0.0.1:{}/test/stats", self.port));
        serde_json::from_str(&body).expect("stats JSON")
    }

    fn control(&self, what: &str) {
        let (status, _, _) = http_request("POST", &format!("http://127.0.0.1:{}/test/{what}", self.port));
        assert_eq!(status, 200, "/test/{what}");
    }
}

/// One HTTP/1.1 request without following redirects: `(status, location, body)`.
fn http_request(method: &str, url: &str) -> (u16, Option<String>, String) {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).expect("connect");
    write!(stream, "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .expect("write");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read");
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let location = head.lines().find_map(|l| {
        l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("location")).map(|(_, v)| v.trim().to_owned())
    });
    (status, location, body.to_owned())
}

fn pi_mcp(agent: &Path, proj: &Path, args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .arg("mcp")
        .args(args)
        .current_dir(proj)
        .env("PI_CODING_AGENT_DIR", agent)
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .expect("run pi mcp");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// `pi mcp login secure` with the browser step done by HTTP GETs: the authorization URL it prints,
/// then the loopback redirect the authorization server answers with.
fn login(agent: &Path, proj: &Path, port: u16) -> (String, String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["mcp", "login", "secure", "--timeout", "120"])
        .current_dir(proj)
        .env("PI_CODING_AGENT_DIR", agent)
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pi mcp login");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut printed = String::new();
    let authorize = format!("http://127.0.0.1:{port}/authorize?");
    let url = loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).expect("read") > 0, "no authorization URL in {printed:?}");
        printed.push_str(&line);
        if line.starts_with(&authorize) {
            break line.trim().to_owned();
        }
    };
    assert!(url.contains("code_challenge_method=S256") && url.contains("resource="), "{url}");
    let (status, location, _) = http_request("GET", &url);
    assert_eq!(status, 302, "authorize");
    let callback = location.expect("redirect to the callback");
    assert!(callback.starts_with("http://127.0.0.1:") && callback.contains("/callback?code="), "{callback}");
    let (status, _, page) = http_request("GET", &callback);
    assert_eq!(status, 200);
    assert!(page.contains("<title>Authentication successful</title>"), "{page}");
    assert!(page.contains("Signed in to the MCP server. You may now close this page."), "{page}");
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("read");
    printed.push_str(&rest);
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("stderr");
    let code = child.wait().expect("wait").code().unwrap_or(-1);
    (printed, stderr, code)
}

fn stored(agent: &Path, key: &str) -> Value {
    let text = std::fs::read_to_string(agent.join("mcp-auth.json")).expect("mcp-auth.json");
    let states: Value = serde_json::from_str(&text).expect("JSON");
    states[key].clone()
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn first_tool_result(body: &Value) -> String {
    let message = body["messages"].as_array().expect("messages").iter().rfind(|m| m["role"] == "tool").expect("tool");
    match &message["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn login_tool_calls_refresh_revocation_and_logout() {
    let Some(python) = python() else { return };
    let server = OAuthServer::start(&python);
    let work = tempfile::tempdir().expect("work dir");
    let (agent, proj) = (work.path().join("agent"), work.path().join("proj"));
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    let config = json!({"mcpServers": {"secure": {"url": server.url(), "exposure": "direct"}}});
    std::fs::write(agent.join("mcp.json"), config.to_string()).unwrap();
    let url = server.url();
    let needs_sign_in =
        format!("secure: needs sign-in (direct, global)\n  {url}\n  sign in with: pi mcp login secure\n");

    assert_eq!(pi_mcp(&agent, &proj, &["list"]), (needs_sign_in.clone(), String::new(), 1));

    let (out, err, code) = login(&agent, &proj, server.port);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Sign in to MCP server \"secure\" in your browser:\n"), "{out}");
    assert!(out.ends_with("Signed in to MCP server \"secure\" (2 tools).\n"), "{out}");
    let key = format!("mcp__secure|{url}");
    let state = stored(&agent, &key);
    assert_eq!(
        keys(&state),
        ["serverUrl", "discovery", "clientInformation", "oauthState", "codeVerifier", "tokens", "tokensExpireAt"]
    );
    assert_eq!(
        keys(&state["discovery"]),
        ["authorizationServerUrl", "authorizationServerMetadata", "resourceMetadata", "resourceMetadataUrl"]
    );
    assert_eq!(keys(&state["tokens"]), ["access_token", "token_type", "expires_in", "scope", "refresh_token"]);
    assert_eq!(state["clientInformation"]["client_name"], "pi");
    assert_eq!(state["clientInformation"]["application_type"], "native");
    assert_eq!(state["clientInformation"]["token_endpoint_auth_method"], "none");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(agent.join("mcp-auth.json")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(server.stats()["registrations"], 1);

    let already = pi_mcp(&agent, &proj, &["login", "secure"]);
    assert_eq!(already, ("Already signed in to MCP server \"secure\" (2 tools).\n".into(), String::new(), 0));

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(session_calls(&server, &agent, &key));

    assert_eq!(pi_mcp(&agent, &proj, &["list"]), (needs_sign_in, String::new(), 1));
    let signed_out = ("Signed out of MCP server \"secure\".\n".to_owned(), String::new(), 0);
    assert_eq!(pi_mcp(&agent, &proj, &["logout", "secure"]), signed_out);
    assert_eq!(std::fs::read_to_string(agent.join("mcp-auth.json")).unwrap(), "{}\n");
    let none = ("No stored credentials for MCP server \"secure\".\n".to_owned(), String::new(), 0);
    assert_eq!(pi_mcp(&agent, &proj, &["logout", "secure"]), none);
}

/// Tool calls in a session: the token is sent, refreshed after a 401 and before it expires, and
/// a revoked grant makes the server need sign-in.
async fn session_calls(server: &OAuthServer, agent: &Path, key: &str) {
    let ext = Arc::new(McpExtension::new(McpExtensionOptions {
        agent_dir: agent.to_path_buf(),
        project_trusted: Some(false),
        startup_wait: std::time::Duration::from_secs(30),
        tools: None,
        exclude_tools: None,
    }));
    let whoami = || tool_reply("c1", "mcp__secure__whoami", json!({}));
    let replies = (0..4).flat_map(|_| [whoami(), text_reply("done")]).collect();
    let h = Setup { replies, extensions: vec![ext.clone() as Arc<dyn Extension>], ..Default::default() }.start().await;
    h.session.bind_extensions(|_| {}).await;
    let client_id = stored(agent, key)["clientInformation"]["client_id"].clone();
    let expected = json!({"client_id": client_id, "scopes": ["mcp"]}).to_string().replace(",", ", ").replace(":", ": ");

    h.session.prompt("who am i").await.expect("prompt");
    assert_eq!(first_tool_result(&h.server.last()), expected);
    assert_eq!(server.stats()["refresh_grants"], 0);

    // The server forgets the access token: the call gets a 401, refreshes, and is retried.
    let before = stored(agent, key)["tokens"]["access_token"].clone();
    server.control("expire");
    h.session.prompt("again").await.expect("prompt");
    assert_eq!(first_tool_result(&h.server.last()), expected);
    assert_eq!(server.stats()["refresh_grants"], 1);
    let after = stored(agent, key);
    assert_ne!(after["tokens"]["access_token"], before);
    assert_eq!(keys(&after["tokens"])[0], "refresh_token", "a refresh keeps pi-mcp's key order");

    // A token past its expiry is refreshed before it is sent.
    let path = agent.join("mcp-auth.json");
    let mut states: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    states[key]["tokensExpireAt"] = json!(0);
    std::fs::write(&path, states.to_string()).unwrap();
    h.session.prompt("and again").await.expect("prompt");
    assert_eq!(first_tool_result(&h.server.last()), expected);
    assert_eq!(server.stats()["refresh_grants"], 2);
    assert!(stored(agent, key)["tokensExpireAt"].as_f64().unwrap() > 0.0);

    // The grant is revoked: the refresh fails and the server needs sign-in.
    server.control("revoke");
    h.session.prompt("once more").await.expect("prompt");
    assert_eq!(first_tool_result(&h.server.last()), "MCP server \"secure\" requires sign-in. Run /mcp to sign in.");
    let manager = ext.manager().expect("manager");
    let secure = manager.server("secure").expect("server").clone();
    assert_eq!(secure.state(), ConnState::NeedsAuth);
    let status = format_status(&manager, &ext.config(), agent);
    assert_eq!(status, "secure: needs sign-in, run /mcp login secure (direct)");
    assert!(stored(agent, key).get("tokens").is_none(), "the rejected grant is dropped");
    manager.close_all().await;
}
