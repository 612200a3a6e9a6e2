//! The MCP servers of one session (pi's server list in `extensions/mcp/index.ts` and
//! `McpServerConnection`): background connections, readiness, lazy reconnects, tool names that
//! stay unique and stable, tool-list changes, and the server log.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use serde_json::Value;

use super::client::{ConnectionEvents, McpClient};
use super::config::{Exposure, McpServerEntry};
use super::naming::create_mcp_tool_name;
use super::oauth::{OAuthSettings, oauth_url};
use super::oauth_client::McpAuthProvider;
use super::oauth_store::McpOAuthCredentialStore;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A connection's state (pi's `connection.state`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnState {
    /// Not started yet.
    Starting,
    /// Connecting.
    Connecting,
    /// Connected.
    Connected,
    /// The connection failed (the error).
    Failed(String),
    /// The connection dropped; the next call reconnects (the reason).
    Disconnected(String),
    /// Closed with the session.
    Closed,
    /// The server needs the user to sign in (pi's `needs-auth`).
    NeedsAuth,
}

/// One MCP tool as registered: its pi name, server, MCP definition and exposure.
#[derive(Clone, Debug, PartialEq)]
pub struct RegisteredMcpTool {
    /// `mcp__<server>__<tool>` (with a hash suffix on collisions).
    pub name: String,
    /// The server.
    pub server: String,
    /// The MCP `Tool` object.
    pub tool: Value,
    /// Its effective exposure.
    pub exposure: Exposure,
}

impl RegisteredMcpTool {
    /// The server's tool name.
    pub fn tool_name(&self) -> &str {
        self.tool.get("name").and_then(Value::as_str).unwrap_or("")
    }
}

/// One configured server of the session.
pub struct ServerHandle {
    name: String,
    /// Its entry; `/mcp` replaces it when it saves a change (pi's `server.entry = …`).
    entry: Mutex<Arc<McpServerEntry>>,
    state: Mutex<ConnState>,
    client: Mutex<Option<Arc<McpClient>>>,
    tools: Mutex<Vec<Value>>,
    instructions: Mutex<Option<String>>,
    has_resources: AtomicBool,
    /// `true` once the latest connection attempt settled.
    settled: tokio::sync::watch::Sender<bool>,
    connecting: tokio::sync::Mutex<()>,
    oauth: Mutex<Option<Arc<McpAuthProvider>>>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle").field("name", &self.name).field("state", &self.state()).finish()
    }
}

impl ServerHandle {
    fn new(entry: McpServerEntry) -> Arc<Self> {
        let (settled, _) = tokio::sync::watch::channel(!entry.enabled());
        Arc::new(ServerHandle {
            name: entry.name.clone(),
            entry: Mutex::new(Arc::new(entry)),
            state: Mutex::new(ConnState::Starting),
            client: Mutex::new(None),
            tools: Mutex::new(Vec::new()),
            instructions: Mutex::new(None),
            has_resources: AtomicBool::new(false),
            settled,
            connecting: tokio::sync::Mutex::new(()),
            oauth: Mutex::new(None),
        })
    }

    /// The server name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its current entry.
    pub fn entry(&self) -> Arc<McpServerEntry> {
        lock(&self.entry).clone()
    }

    /// Replaces its entry (a change saved by `/mcp`; the name stays).
    pub fn set_entry(&self, entry: McpServerEntry) {
        *lock(&self.entry) = Arc::new(entry);
    }

    /// The current state (a dropped connection shows as disconnected).
    pub fn state(&self) -> ConnState {
        let state = lock(&self.state).clone();
        if matches!(state, ConnState::Connected | ConnState::Disconnected(_))
            && lock(&self.oauth).as_ref().is_some_and(|o| o.needs_sign_in())
        {
            return ConnState::NeedsAuth;
        }
        if state == ConnState::Connected
            && let Some(client) = lock(&self.client).clone()
            && client.is_closed()
        {
            let stderr = client.stderr_tail();
            let reason =
                if stderr.is_empty() { "Connection closed".to_owned() } else { format!("Connection closed\n{stderr}") };
            return ConnState::Disconnected(reason);
        }
        state
    }

    /// The tools the server offers.
    pub fn tools(&self) -> Vec<Value> {
        lock(&self.tools).clone()
    }

    /// The server instructions.
    pub fn instructions(&self) -> Option<String> {
        lock(&self.instructions).clone()
    }

    /// Whether it offers resources.
    pub fn has_resources(&self) -> bool {
        self.has_resources.load(Ordering::Acquire)
    }

    /// Waits until the latest connection attempt settled.
    pub async fn ready(&self) {
        let mut rx = self.settled.subscribe();
        let _ = rx.wait_for(|settled| *settled).await;
    }
}

/// Called after a server's tools were (re)registered.
pub type ToolsListener = Arc<dyn Fn(&Arc<ServerHandle>) + Send + Sync>;

/// A change `/mcp` applied to a server during the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerChange {
    /// It was enabled; its connection started.
    Enabled,
    /// It was disabled: its connection closed and its tools became unreachable.
    Disabled,
    /// Its exposure changed; its tools were registered again with the new exposure.
    Exposure,
}

/// Called after `/mcp` applied a change to a server (pi's `setEnabled` / `setExposure` follow-ups).
pub type ChangeListener = Arc<dyn Fn(&Arc<ServerHandle>, ServerChange) + Send + Sync>;

/// The servers of a session.
pub struct McpManager {
    cwd: PathBuf,
    log_path: Option<PathBuf>,
    servers: Vec<Arc<ServerHandle>>,
    /// pi tool name → `server\0tool`, so names stay unique and stable.
    owners: Mutex<HashMap<String, String>>,
    registered: Mutex<Vec<RegisteredMcpTool>>,
    listener: Mutex<Option<ToolsListener>>,
    change_listener: Mutex<Option<ChangeListener>>,
    weak: Weak<McpManager>,
    credentials: Mutex<Option<McpOAuthCredentialStore>>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager").field("servers", &self.servers).finish()
    }
}

impl McpManager {
    /// A manager of `entries` for a session in `cwd`; server log lines go to `log_path`.
    pub fn new(entries: Vec<McpServerEntry>, cwd: &Path, log_path: Option<PathBuf>) -> Arc<Self> {
        Arc::new_cyclic(|weak| McpManager {
            cwd: cwd.to_path_buf(),
            log_path,
            servers: entries.into_iter().map(ServerHandle::new).collect(),
            owners: Mutex::new(HashMap::new()),
            registered: Mutex::new(Vec::new()),
            listener: Mutex::new(None),
            change_listener: Mutex::new(None),
            weak: weak.clone(),
            credentials: Mutex::new(None),
        })
    }

    /// Sets the OAuth credential store (`mcp-auth.json`) the connections of OAuth servers use.
    pub fn set_credentials(&self, store: McpOAuthCredentialStore) {
        *lock(&self.credentials) = Some(store);
    }

    /// The credential store, when set.
    pub fn credentials(&self) -> Option<McpOAuthCredentialStore> {
        lock(&self.credentials).clone()
    }

    /// The OAuth state of `server`'s connections, made on first use; `None` for servers without
    /// OAuth or without a credential store.
    pub fn oauth_for(&self, server: &ServerHandle) -> Result<Option<Arc<McpAuthProvider>>, String> {
        let entry = server.entry();
        let Some(url) = oauth_url(&entry) else { return Ok(None) };
        let Some(store) = self.credentials() else { return Ok(None) };
        let mut slot = lock(&server.oauth);
        if let Some(existing) = slot.as_ref() {
            return Ok(Some(existing.clone()));
        }
        let settings = OAuthSettings::of(&entry)?;
        let provider = Arc::new(McpAuthProvider::new(url, store.for_server(server.name(), url), settings));
        *slot = Some(provider.clone());
        Ok(Some(provider))
    }

    /// Sets the listener told when a server's tools change.
    pub fn set_tools_listener(&self, listener: ToolsListener) {
        *lock(&self.listener) = Some(listener);
    }

    /// Sets the listener told when `/mcp` changed a server.
    pub fn set_change_listener(&self, listener: ChangeListener) {
        *lock(&self.change_listener) = Some(listener);
    }

    fn changed(&self, server: &Arc<ServerHandle>, change: ServerChange) {
        let listener = lock(&self.change_listener).clone();
        if let Some(listener) = listener {
            listener(server, change);
        }
    }

    /// Applies an `enabled` change already saved to the server's entry (pi's `setEnabled`):
    /// disabling closes the connection and makes its tools unreachable; enabling connects.
    pub async fn apply_enabled(self: &Arc<Self>, server: &Arc<ServerHandle>) {
        if server.entry().enabled() {
            self.changed(server, ServerChange::Enabled);
            let _ = self.connect(server).await;
            return;
        }
        let old = lock(&server.client).take();
        {
            let mut registered = lock(&self.registered);
            for tool in registered.iter_mut().filter(|t| t.server == server.name()) {
                tool.exposure = Exposure::Hidden;
            }
        }
        *lock(&server.state) = ConnState::Starting;
        server.settled.send_replace(true);
        self.changed(server, ServerChange::Disabled);
        if let Some(old) = old {
            old.close().await;
        }
    }

    /// Applies an exposure change already saved to the server's entry (pi's `setExposure`): its
    /// offered tools are registered again with their new exposure.
    pub fn apply_exposure(&self, server: &Arc<ServerHandle>) {
        if server.state() == ConnState::Connected {
            self.register_tools(server);
        }
        self.changed(server, ServerChange::Exposure);
    }

    /// Every configured server, enabled or not.
    pub fn servers(&self) -> &[Arc<ServerHandle>] {
        &self.servers
    }

    /// The server named `name`.
    pub fn server(&self, name: &str) -> Option<&Arc<ServerHandle>> {
        self.servers.iter().find(|s| s.name() == name)
    }

    /// Every registered MCP tool (hidden ones included).
    pub fn registered_tools(&self) -> Vec<RegisteredMcpTool> {
        lock(&self.registered).clone()
    }

    /// Starts connecting every enabled server in the background.
    pub fn start_all(self: &Arc<Self>) {
        for server in self.servers.iter().filter(|s| s.entry().enabled()) {
            server.settled.send_replace(false);
            let (manager, server) = (self.clone(), server.clone());
            tokio::spawn(async move {
                let _ = manager.connect(&server).await;
            });
        }
    }

    /// Waits for `servers` to settle, at most `timeout`; true when all did.
    pub async fn wait_for(&self, servers: &[Arc<ServerHandle>], timeout: Option<Duration>) -> bool {
        let all = futures::future::join_all(servers.iter().map(|s| s.ready()));
        match timeout {
            Some(t) => tokio::time::timeout(t, all).await.is_ok(),
            None => {
                all.await;
                true
            }
        }
    }

    /// Waits for every enabled server to settle.
    pub async fn wait_for_all(&self) {
        self.wait_for(&self.servers, None).await;
    }

    fn events_for(&self, server: &Arc<ServerHandle>) -> Result<ConnectionEvents, String> {
        let weak = self.weak.clone();
        let name = server.name().to_owned();
        let log_path = self.log_path.clone();
        let log_name = name.clone();
        let oauth = self.oauth_for(server)?;
        if let Some(o) = &oauth {
            o.reset();
        }
        Ok(ConnectionEvents {
            oauth,
            on_tools_changed: Some(Arc::new(move || {
                let (weak, name) = (weak.clone(), name.clone());
                tokio::spawn(async move {
                    if let Some(manager) = weak.upgrade() {
                        manager.refresh_tools(&name).await;
                    }
                });
            })),
            on_log: log_path.map(|path| {
                Arc::new(move |level: &str, logger: Option<&str>, message: &str| {
                    write_log_line(&path, &log_name, level, logger, message)
                }) as super::client::LogSink
            }),
        })
    }

    /// Connects `server` unless it is connected; pi's `McpServerConnection.getClient`.
    pub async fn connect(&self, server: &Arc<ServerHandle>) -> Result<Arc<McpClient>, String> {
        let _guard = server.connecting.lock().await;
        let existing = lock(&server.client).clone();
        if let Some(client) = existing.filter(|c| !c.is_closed()) {
            return Ok(client);
        }
        let old = lock(&server.client).take();
        if let Some(old) = old {
            old.close().await;
        }
        server.settled.send_replace(false);
        *lock(&server.state) = ConnState::Connecting;
        let result = match self.events_for(server) {
            Ok(events) => McpClient::connect(&server.entry(), &self.cwd, events).await,
            Err(message) => Err(super::client::ConnectError { message, needs_auth: false }),
        };
        let out = match result {
            Ok(client) => {
                let client = Arc::new(client);
                *lock(&server.tools) = client.tools.clone();
                *lock(&server.instructions) = client.instructions.clone();
                server.has_resources.store(client.has_resources, Ordering::Release);
                *lock(&server.client) = Some(client.clone());
                *lock(&server.state) = ConnState::Connected;
                self.register_tools(server);
                Ok(client)
            }
            Err(e) if e.needs_auth => {
                *lock(&server.state) = ConnState::NeedsAuth;
                Err(e.message)
            }
            Err(e) => {
                *lock(&server.state) = ConnState::Failed(e.message.clone());
                Err(format!("MCP server \"{}\" failed to connect: {}", server.name(), e.message))
            }
        };
        server.settled.send_replace(true);
        out
    }

    /// Closes `server`'s connection and connects again (pi's `connection.reconnect()`).
    pub async fn reconnect(&self, server: &Arc<ServerHandle>) -> Result<Arc<McpClient>, String> {
        let old = lock(&server.client).take();
        if let Some(old) = old {
            old.close().await;
        }
        self.connect(server).await
    }

    /// Disconnects `server` after its stored credentials were removed (pi's `connection.signOut()`).
    pub async fn sign_out(&self, server: &Arc<ServerHandle>) {
        let old = lock(&server.client).take();
        if let Some(old) = old {
            old.close().await;
        }
        if let Some(oauth) = lock(&server.oauth).as_ref() {
            oauth.mark_needs_sign_in();
        }
        *lock(&server.state) = ConnState::NeedsAuth;
    }

    /// The connected client of `server`, reconnecting a dropped connection.
    pub async fn client_for(&self, name: &str) -> Result<Arc<McpClient>, String> {
        let Some(server) = self.server(name).cloned() else {
            return Err(format!("MCP server \"{name}\" is disabled."));
        };
        if !server.entry().enabled() {
            return Err(format!("MCP server \"{name}\" is disabled."));
        }
        self.connect(&server).await
    }

    async fn refresh_tools(&self, name: &str) {
        let Some(server) = self.server(name).cloned() else { return };
        let client = lock(&server.client).clone();
        let Some(client) = client else { return };
        match client.list_tools().await {
            Ok(tools) => {
                *lock(&server.tools) = tools;
                self.register_tools(&server);
            }
            Err(e) => *lock(&server.state) = ConnState::Failed(format!("Failed to refresh tools: {e}")),
        }
    }

    /// Names `server`'s tools (pi's `registerTools`): tools whose sanitised names collide all get
    /// the hash suffix; names stay with the tool they were first given to. Tools the server no
    /// longer offers become hidden.
    fn register_tools(&self, server: &Arc<ServerHandle>) {
        let name = server.name().to_owned();
        let tools = server.tools();
        let tool_names: Vec<String> =
            tools.iter().map(|t| t.get("name").and_then(Value::as_str).unwrap_or("").to_owned()).collect();
        let mut unique: Vec<&String> = Vec::new();
        for t in &tool_names {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        let plain: Vec<String> = unique.iter().map(|t| create_mcp_tool_name(&name, t, |_| false)).collect();
        let mut current: Vec<String> = Vec::new();
        let mut out: Vec<RegisteredMcpTool> = Vec::new();
        {
            let mut owners = lock(&self.owners);
            for (tool, tool_name) in tools.iter().zip(&tool_names) {
                let owner = format!("{name}\0{tool_name}");
                let pi_name = create_mcp_tool_name(&name, tool_name, |candidate| {
                    owners.get(candidate).is_some_and(|o| o != &owner)
                        || current.iter().any(|c| c == candidate)
                        || plain.iter().filter(|p| p.as_str() == candidate).count() > 1
                });
                owners.insert(pi_name.clone(), owner);
                current.push(pi_name.clone());
                out.push(RegisteredMcpTool {
                    name: pi_name,
                    server: name.clone(),
                    tool: tool.clone(),
                    exposure: server.entry().tool_exposure(tool_name),
                });
            }
        }
        {
            let mut registered = lock(&self.registered);
            for r in registered.iter_mut().filter(|r| r.server == name) {
                if !current.contains(&r.name) {
                    r.exposure = Exposure::Hidden;
                }
            }
            for tool in out {
                match registered.iter_mut().find(|r| r.name == tool.name) {
                    Some(existing) => *existing = tool,
                    None => registered.push(tool),
                }
            }
        }
        let listener = lock(&self.listener).clone();
        if let Some(listener) = listener {
            listener(server);
        }
    }

    /// The server that owns a pi tool name.
    pub fn owner_of(&self, tool: &str) -> Option<String> {
        lock(&self.owners).get(tool).and_then(|o| o.split('\0').next()).map(str::to_owned)
    }

    /// Closes every connection (stdio servers: stdin closed, SIGTERM, SIGKILL to the group).
    pub async fn close_all(&self) {
        let clients: Vec<Arc<McpClient>> = self.servers.iter().filter_map(|s| lock(&s.client).take()).collect();
        for server in &self.servers {
            *lock(&server.state) = ConnState::Closed;
        }
        futures::future::join_all(clients.iter().map(|c| c.close())).await;
    }
}

const MAX_LOG_BYTES: u64 = 5 * 1024 * 1024;

/// Appends `<time> [<server>] <level> <logger>: <message>` to the MCP log, moving a log over 5 MB
/// to `mcp.log.1` first (best effort, as pi).
fn write_log_line(path: &Path, server: &str, level: &str, logger: Option<&str>, message: &str) {
    use std::io::Write;
    let logger = logger.filter(|l| !l.is_empty()).map(|l| format!(" {l}:")).unwrap_or_default();
    let text = message.replace("\r\n", "\n").replace('\n', "\n    ");
    let line = format!("{} [{server}] {level}{logger} {text}\n", crate::session::iso_now());
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) > MAX_LOG_BYTES {
        let _ = std::fs::rename(path, path.with_extension("log.1"));
    }
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = file.write_all(line.as_bytes());
    }
}
