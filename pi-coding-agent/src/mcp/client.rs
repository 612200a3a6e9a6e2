//! One connection to an MCP server on the official Rust SDK (`rmcp`): a stdio server in its own
//! process group, or a streamable-HTTP server with its headers (pi's `McpServerConnection`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, JsonObject, PaginatedRequestParams,
    ReadResourceRequestParams, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use super::config::McpServerEntry;
use super::oauth_client::{McpAuthProvider, OAuthHttpClient};
use super::values::{expand_home, resolve_config_value};

/// Characters of stderr kept for error messages.
const STDERR_TAIL_CHARS: usize = 2_000;

/// Receives `(level, logger, message)` of server logging notifications.
pub type LogSink = Arc<dyn Fn(&str, Option<&str>, &str) + Send + Sync>;

/// What the handler tells the owner of the connection.
#[derive(Clone, Default)]
pub struct ConnectionEvents {
    /// Called when the server announces a changed tool list.
    pub on_tools_changed: Option<Arc<dyn Fn() + Send + Sync>>,
    /// Called with `(level, logger, message)` for server logging notifications.
    pub on_log: Option<LogSink>,
    /// The OAuth state of an OAuth server (HTTP without an `Authorization` header).
    pub oauth: Option<Arc<McpAuthProvider>>,
}

/// pi's client handler: identifies as `pi`, forwards tool-list changes and log messages.
#[derive(Clone)]
pub struct PiClientHandler {
    events: ConnectionEvents,
}

impl ClientHandler for PiClientHandler {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.client_info = rmcp::model::Implementation::new("pi", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(f) = &self.events.on_tools_changed {
            f();
        }
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(f) = &self.events.on_log {
            let level = serde_json::to_value(params.level).ok().and_then(|v| v.as_str().map(str::to_owned));
            let message = match &params.data {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            f(level.as_deref().unwrap_or("info"), params.logger.as_deref(), &message);
        }
    }
}

/// A connected server.
pub struct McpClient {
    service: Mutex<Option<RunningService<RoleClient, PiClientHandler>>>,
    peer: rmcp::service::Peer<RoleClient>,
    /// The tools it offers (`tools/list`), as JSON.
    pub tools: Vec<Value>,
    /// Its instructions from `initialize`, trimmed; `None` when empty.
    pub instructions: Option<String>,
    /// Whether it offers resources.
    pub has_resources: bool,
    /// Whether it offers tools.
    pub has_tools: bool,
    timeout: Duration,
    process_group: Option<i32>,
    stderr: Arc<Mutex<String>>,
    oauth: Option<Arc<McpAuthProvider>>,
    name: String,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient").field("tools", &self.tools.len()).finish()
    }
}

fn service_error(e: ServiceError, timeout: Duration) -> String {
    match e {
        ServiceError::Timeout { .. } => format!("MCP request timed out after {}ms", timeout.as_millis()),
        ServiceError::McpError(e) => e.message.to_string(),
        ServiceError::TransportClosed => "MCP connection closed".to_owned(),
        other => other.to_string(),
    }
}

fn tail(text: &str) -> String {
    let trimmed = text.trim();
    let count = trimmed.chars().count();
    trimmed.chars().skip(count.saturating_sub(STDERR_TAIL_CHARS)).collect()
}

/// Installs the process-wide TLS crypto provider the HTTP transport needs (ring), once.
fn ensure_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A connect failure, with the stderr tail of a stdio server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectError {
    /// The message (pi's `connection.error`).
    pub message: String,
    /// The server needs the user to sign in (pi's `needs-auth` state).
    pub needs_auth: bool,
}

/// pi's `signInRequiredMessage`.
pub fn sign_in_required_message(name: &str) -> String {
    format!("MCP server \"{name}\" requires sign-in. Run /mcp to sign in.")
}

impl McpClient {
    /// Connects to `entry` (stdio servers start in `cwd` unless the entry sets `cwd`), initializes
    /// and lists the tools.
    pub async fn connect(entry: &McpServerEntry, cwd: &Path, events: ConnectionEvents) -> Result<Self, ConnectError> {
        let timeout = Duration::from_millis(entry.timeout_ms());
        let oauth = events.oauth.clone();
        let handler = PiClientHandler { events };
        let stderr = Arc::new(Mutex::new(String::new()));
        let fail = |message: String, stderr: &Arc<Mutex<String>>| {
            let t = tail(&stderr.lock().unwrap_or_else(|e| e.into_inner()));
            ConnectError { message: if t.is_empty() { message } else { format!("{message}\n{t}") }, needs_auth: false }
        };
        let needs_auth = |oauth: &Option<Arc<McpAuthProvider>>| oauth.as_ref().is_some_and(|o| o.needs_sign_in());
        let (service, process_group) = if let Some(url) = entry.url() {
            let service = match Self::connect_http(entry, url, handler, timeout, oauth.clone()).await {
                Ok(s) => s,
                Err(_) if needs_auth(&oauth) => {
                    return Err(ConnectError { message: sign_in_required_message(&entry.name), needs_auth: true });
                }
                Err(m) => return Err(fail(m, &stderr)),
            };
            (service, None)
        } else {
            let (transport, pid) = Self::spawn_stdio(entry, cwd, &stderr).map_err(|m| fail(m, &stderr))?;
            let served = tokio::time::timeout(timeout, handler.serve(transport)).await;
            match served {
                Ok(Ok(service)) => (service, pid),
                Ok(Err(e)) => {
                    kill_group(pid, nix::sys::signal::Signal::SIGKILL);
                    // Let the stderr pump collect what the server printed before it died.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    return Err(fail(e.to_string(), &stderr));
                }
                Err(_) => {
                    kill_group(pid, nix::sys::signal::Signal::SIGKILL);
                    return Err(fail(format!("MCP request timed out after {}ms", timeout.as_millis()), &stderr));
                }
            }
        };
        let peer = service.peer().clone();
        let mut client = McpClient {
            service: Mutex::new(Some(service)),
            peer,
            tools: Vec::new(),
            instructions: None,
            has_resources: false,
            has_tools: false,
            timeout,
            process_group,
            stderr,
            oauth,
            name: entry.name.clone(),
        };
        if let Some(info) = client.peer.peer_info() {
            client.instructions =
                info.instructions.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
            client.has_tools = info.capabilities.tools.is_some();
            client.has_resources = info.capabilities.resources.is_some();
        }
        if client.has_tools {
            match client.list_tools().await {
                Ok(tools) => client.tools = tools,
                Err(e) => {
                    let mut message = fail(e, &client.stderr);
                    if needs_auth(&client.oauth) {
                        message = ConnectError { message: sign_in_required_message(&entry.name), needs_auth: true };
                    }
                    client.close().await;
                    return Err(message);
                }
            }
        }
        Ok(client)
    }

    async fn connect_http(
        entry: &McpServerEntry,
        url: &str,
        handler: PiClientHandler,
        timeout: Duration,
        oauth: Option<Arc<McpAuthProvider>>,
    ) -> Result<RunningService<RoleClient, PiClientHandler>, String> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        ensure_crypto_provider();
        let mut headers = HashMap::new();
        let mut auth = None;
        for (key, value) in entry.string_map("headers") {
            let value = resolve_config_value(&value, &format!("MCP server \"{}\" header \"{key}\"", entry.name))?;
            if key.eq_ignore_ascii_case("authorization") {
                // rmcp sends `Authorization: Bearer <auth_header>`.
                match value.strip_prefix("Bearer ") {
                    Some(token) => auth = Some(token.to_owned()),
                    None => {
                        let v = http::HeaderValue::from_str(&value).map_err(|e| e.to_string())?;
                        headers.insert(http::header::AUTHORIZATION, v);
                    }
                }
                continue;
            }
            let name = http::HeaderName::from_bytes(key.as_bytes()).map_err(|e| e.to_string())?;
            let value = http::HeaderValue::from_str(&value).map_err(|e| e.to_string())?;
            headers.insert(name, value);
        }
        let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
        if let Some(token) = auth {
            config = config.auth_header(token);
        }
        let served = match oauth {
            Some(oauth) => {
                let transport = StreamableHttpClientTransport::with_client(OAuthHttpClient::new(oauth), config);
                tokio::time::timeout(timeout, handler.serve(transport)).await
            }
            None => {
                let transport = StreamableHttpClientTransport::from_config(config);
                tokio::time::timeout(timeout, handler.serve(transport)).await
            }
        };
        match served {
            Ok(Ok(service)) => Ok(service),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("MCP request timed out after {}ms", timeout.as_millis())),
        }
    }

    fn spawn_stdio(
        entry: &McpServerEntry,
        cwd: &Path,
        stderr: &Arc<Mutex<String>>,
    ) -> Result<(rmcp::transport::TokioChildProcess, Option<i32>), String> {
        let command = entry.command().unwrap_or_default();
        let mut cmd = tokio::process::Command::new(expand_home(command));
        cmd.args(entry.args().iter().map(|a| expand_home(a)));
        let dir = cwd.join(expand_home(entry.cwd().unwrap_or(".")));
        cmd.current_dir(dir);
        for (key, value) in entry.string_map("env") {
            let value = resolve_config_value(&value, &format!("MCP server \"{}\" env \"{key}\"", entry.name))?;
            cmd.env(key, value);
        }
        #[cfg(unix)]
        cmd.process_group(0);
        let (transport, child_stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => format!("spawn {command} ENOENT"),
                _ => format!("spawn {command}: {e}"),
            })?;
        let pid = transport.id().and_then(|p| i32::try_from(p).ok());
        if let Some(pid) = pid {
            LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
        }
        if let Some(mut pipe) = child_stderr {
            let sink = stderr.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                    s.push_str(&String::from_utf8_lossy(&buf[..n]));
                    let len = s.len();
                    if len > 4 * STDERR_TAIL_CHARS {
                        let mut cut = len - 2 * STDERR_TAIL_CHARS;
                        while !s.is_char_boundary(cut) {
                            cut += 1;
                        }
                        s.drain(..cut);
                    }
                }
            });
        }
        Ok((transport, pid))
    }

    /// The tail of the stdio server's stderr.
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether the transport closed (the server exited or the connection dropped).
    pub fn is_closed(&self) -> bool {
        self.peer.is_transport_closed()
    }

    /// Whether a request failed because the user has to sign in (an OAuth server whose tokens were
    /// rejected and could not be refreshed).
    pub fn needs_sign_in(&self) -> bool {
        self.oauth.as_ref().is_some_and(|o| o.needs_sign_in())
    }

    /// `error`, or pi's sign-in message when the server needs sign-in.
    fn failure(&self, error: String) -> String {
        if self.needs_sign_in() { sign_in_required_message(&self.name) } else { error }
    }

    async fn request(&self, request: ClientRequest) -> Result<ServerResult, String> {
        let mut options = PeerRequestOptions::with_timeout(self.timeout);
        options.reset_timeout_on_progress = true;
        let handle = self
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.failure(service_error(e, self.timeout)))?;
        handle.await_response().await.map_err(|e| self.failure(service_error(e, self.timeout)))
    }

    /// `tools/list`, every page.
    pub async fn list_tools(&self) -> Result<Vec<Value>, String> {
        let tools = tokio::time::timeout(self.timeout, self.peer.list_all_tools())
            .await
            .map_err(|_| format!("MCP request timed out after {}ms", self.timeout.as_millis()))?
            .map_err(|e| self.failure(service_error(e, self.timeout)))?;
        Ok(tools.into_iter().filter_map(|t| serde_json::to_value(t).ok()).collect())
    }

    /// `tools/call`: the `CallToolResult` as JSON.
    pub async fn call_tool(&self, name: &str, arguments: JsonObject) -> Result<Value, String> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = Some(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let result = self.request(request).await?;
        serde_json::to_value(result).map_err(|e| e.to_string())
    }

    /// `resources/list` (one page).
    pub async fn list_resources(&self, cursor: Option<String>) -> Result<Value, String> {
        let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let result = tokio::time::timeout(self.timeout, self.peer.list_resources(params))
            .await
            .map_err(|_| format!("MCP request timed out after {}ms", self.timeout.as_millis()))?
            .map_err(|e| self.failure(service_error(e, self.timeout)))?;
        serde_json::to_value(result).map_err(|e| e.to_string())
    }

    /// `resources/templates/list` (one page); servers without it have none.
    pub async fn list_resource_templates(&self, cursor: Option<String>) -> Result<Value, String> {
        let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let result = tokio::time::timeout(self.timeout, self.peer.list_resource_templates(params)).await;
        match result {
            Err(_) => Err(format!("MCP request timed out after {}ms", self.timeout.as_millis())),
            Ok(Err(ServiceError::McpError(e))) if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND => {
                Ok(serde_json::json!({"resourceTemplates": []}))
            }
            Ok(Err(e)) => Err(self.failure(service_error(e, self.timeout))),
            Ok(Ok(r)) => serde_json::to_value(r).map_err(|e| e.to_string()),
        }
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, String> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let result = tokio::time::timeout(self.timeout, self.peer.read_resource(params))
            .await
            .map_err(|_| format!("MCP request timed out after {}ms", self.timeout.as_millis()))?
            .map_err(|e| self.failure(service_error(e, self.timeout)))?;
        serde_json::to_value(result).map_err(|e| e.to_string())
    }

    /// Closes the connection: for a stdio server, closes its stdin, then SIGTERM and finally
    /// SIGKILL to its process group.
    pub async fn close(&self) {
        let group = self.process_group;
        let service = self.service.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(service) = service {
            let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
        }
        if group.is_some() {
            kill_group(group, nix::sys::signal::Signal::SIGTERM);
            tokio::time::sleep(Duration::from_millis(100)).await;
            kill_group(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        // A connection dropped without `close` (the session ended) still stops the server's group.
        kill_group(self.process_group, nix::sys::signal::Signal::SIGKILL);
    }
}

/// Process groups of the stdio servers that are running.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn kill_group(group: Option<i32>, signal: nix::sys::signal::Signal) {
    if let Some(pid) = group.filter(|p| *p > 0) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
        if signal == nix::sys::signal::Signal::SIGKILL {
            LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).retain(|g| *g != pid);
        }
    }
}

/// Kills the process group of every stdio server still running (for a process that exits without
/// dropping its sessions, as `pi` does with `std::process::exit`).
pub fn kill_all_server_groups() {
    let groups = std::mem::take(&mut *LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for group in groups {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group), nix::sys::signal::Signal::SIGKILL);
    }
}
