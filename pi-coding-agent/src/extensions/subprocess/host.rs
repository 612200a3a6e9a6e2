//! [`SubprocessExtension`]: an executable loaded from `additional_extension_paths`, driven over
//! JSON-RPC (see [`super::protocol`]).
//!
//! The process is started when the runner loads it; `initialize` tells what it registers, and the
//! host registers forwarding handlers, tools, commands and flags on the extension's API. Faults are
//! isolated: a line that is not JSON-RPC is reported (event `protocol`) and skipped; a request
//! that gets no answer within the timeout is reported as the handler's error and the process is
//! killed; a process that exits is reported once (event `process`), after which its handlers
//! answer nothing (except `tool_call`, which fails closed) and its tools return errors. The process
//! is killed when the runner (the last handle) is dropped.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::oneshot;

use super::link::Link;
use super::pi_calls::handle_pi_call;
use super::protocol::{
    self, Incoming, InitializeParams, InitializeResult, METHOD_INITIALIZE, PROTOCOL_VERSION, RpcError,
    SUPPORTED_VERSIONS,
};
use super::register::{NOT_RUNNING, register_all};
use super::registry_stream as registry_calls;
use super::virtual_models;
use crate::extensions::api::ExtensionApi;
use crate::extensions::errors::{BoxError, ExtensionError};
use crate::extensions::runtime::{Runtime, lock};

/// Timeouts of a [`SubprocessExtension`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubprocessOptions {
    /// How long `initialize` may take.
    pub init_timeout: Duration,
    /// How long an awaited event or a command may take.
    pub call_timeout: Duration,
    /// How long a tool execution may take.
    pub tool_timeout: Duration,
}

impl Default for SubprocessOptions {
    fn default() -> Self {
        SubprocessOptions {
            init_timeout: Duration::from_secs(10),
            call_timeout: Duration::from_secs(30),
            tool_timeout: Duration::from_secs(600),
        }
    }
}

/// An extension in another process (any language), loaded from a path.
///
/// `*.py` files run with `python3`, `*.js`/`*.mjs` with `node`; anything else is executed directly.
#[derive(Clone, Debug)]
pub struct SubprocessExtension {
    path: String,
    options: SubprocessOptions,
}

impl SubprocessExtension {
    /// The extension at `path`, with default timeouts.
    pub fn new(path: impl Into<String>) -> Self {
        SubprocessExtension { path: path.into(), options: SubprocessOptions::default() }
    }

    /// With these timeouts.
    pub fn with_options(mut self, options: SubprocessOptions) -> Self {
        self.options = options;
        self
    }

    fn command(&self, cwd: &str) -> tokio::process::Command {
        let program = if self.path.ends_with(".py") {
            Some("python3")
        } else if self.path.ends_with(".js") || self.path.ends_with(".mjs") {
            Some("node")
        } else {
            None
        };
        let mut cmd = match program {
            Some(p) => {
                let mut c = tokio::process::Command::new(p);
                c.arg(&self.path);
                c
            }
            None => tokio::process::Command::new(&self.path),
        };
        cmd.current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        cmd
    }
}

type Pending = Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>;

/// The running process and its request bookkeeping.
pub(crate) struct Host {
    path: String,
    child: Mutex<Option<Child>>,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    pending: Arc<Pending>,
    dead: Arc<AtomicBool>,
    next_id: AtomicU64,
    options: SubprocessOptions,
    /// The protocol version the extension answered (version 4 takes `message_update` patches).
    version: AtomicU64,
}

impl Host {
    fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Acquire)
    }

    fn kill(&self) {
        self.dead.store(true, Ordering::Release);
        if let Some(child) = lock(&self.child).as_mut() {
            let _ = child.start_kill();
        }
    }

    async fn notify(&self, method: &str, params: Value) {
        if self.is_dead() {
            return;
        }
        let line = protocol::notification(method, params);
        let _ = write_line(&self.stdin, &line).await;
    }

    /// Sends a request and awaits its answer; a timeout kills the process.
    async fn call(&self, method: &str, label: &str, params: Value, timeout: Duration) -> Result<Value, String> {
        if self.is_dead() {
            return Err(NOT_RUNNING.to_owned());
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        if write_line(&self.stdin, &protocol::request(id, method, params)).await.is_err() {
            lock(&self.pending).remove(&id);
            return Err(NOT_RUNNING.to_owned());
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(e))) => Err(e.message),
            Ok(Err(_)) => Err(NOT_RUNNING.to_owned()),
            Err(_) => {
                lock(&self.pending).remove(&id);
                self.kill();
                Err(format!(
                    "Extension did not answer \"{label}\" within {} ms; the process was stopped",
                    timeout.as_millis()
                ))
            }
        }
    }
}

async fn write_line(stdin: &tokio::sync::Mutex<Option<ChildStdin>>, line: &str) -> std::io::Result<()> {
    let mut guard = stdin.lock().await;
    let Some(w) = guard.as_mut() else {
        return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, NOT_RUNNING));
    };
    w.write_all(line.as_bytes()).await?;
    w.write_all(b"\n").await?;
    w.flush().await
}

/// Reads the extension's stdout until it closes: answers, `pi.*` calls, garbage.
fn spawn_reader(
    stdout: tokio::process::ChildStdout,
    host: Weak<Host>,
    shared: (Arc<tokio::sync::Mutex<Option<ChildStdin>>>, Arc<Pending>, Arc<AtomicBool>),
    runtime: Arc<Runtime>,
    path: String,
    flags: Arc<Mutex<HashMap<String, Value>>>,
) {
    let (stdin, pending, dead) = shared;
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        loop {
            let line = match lines.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => break,
            };
            if line.trim().is_empty() {
                continue;
            }
            match protocol::parse_line(&line) {
                Err(error) => runtime.report(ExtensionError::new(&path, "protocol", error)),
                Ok(Incoming::Response { id, outcome }) => {
                    if let Some(tx) = lock(&pending).remove(&id) {
                        let _ = tx.send(outcome);
                    }
                }
                Ok(Incoming::Call { id, method, params }) if virtual_models::handles(&method) => {
                    let link: Weak<dyn Link> = host.clone();
                    let make = |provider: &str, id: &str| {
                        virtual_models::link_router(link, path.clone(), provider.to_owned(), id.to_owned())
                    };
                    let outcome = virtual_models::handle_call(&runtime, &method, &params, &path, make);
                    if let Some(id) = id {
                        let _ = write_line(&stdin, &protocol::response(id, outcome)).await;
                    }
                }
                Ok(Incoming::Call { id, method, params }) if registry_calls::is_request_call(&method) => {
                    let (runtime, stdin) = (runtime.clone(), stdin.clone());
                    tokio::spawn(async move {
                        let events = stdin.clone();
                        let outcome = registry_calls::subprocess_request(&runtime, &method, &params, |event| {
                            let events = events.clone();
                            async move {
                                let line = protocol::notification(registry_calls::EVENT_NOTIFICATION, event);
                                let _ = write_line(&events, &line).await;
                            }
                        })
                        .await;
                        if let Some(id) = id {
                            let _ = write_line(&stdin, &protocol::response(id, outcome)).await;
                        }
                    });
                }
                Ok(Incoming::Call { id, method, mut params }) => {
                    let (runtime, stdin, flags) = (runtime.clone(), stdin.clone(), flags.clone());
                    // A registration is this extension's (its errors and providers name it).
                    if super::registry_calls::handles(&method)
                        && let Some(object) = params.as_object_mut()
                    {
                        object.entry("extensionPath").or_insert_with(|| Value::String(path.clone()));
                    }
                    tokio::spawn(async move {
                        let outcome = handle_pi_call(&runtime, &flags, &method, params).await;
                        if let Some(id) = id {
                            let _ = write_line(&stdin, &protocol::response(id, outcome)).await;
                        }
                    });
                }
            }
        }
        let was_dead = dead.swap(true, Ordering::AcqRel);
        lock(&pending).clear();
        let status = match host.upgrade() {
            Some(h) => {
                let waited = lock(&h.child).as_mut().and_then(|c| c.try_wait().ok().flatten());
                waited.map(|s| s.to_string())
            }
            None => return,
        };
        if !was_dead {
            let how = status.map(|s| format!(" ({s})")).unwrap_or_default();
            runtime.report(ExtensionError::new(&path, "process", format!("Extension process exited{how}")));
        }
    });
}

/// How many of the last stderr lines a start failure shows.
const STDERR_TAIL_LINES: usize = 10;

/// Logs the extension's stderr; keeps its last lines for a start failure's message.
fn spawn_stderr(
    stderr: tokio::process::ChildStderr,
    path: String,
) -> (Arc<Mutex<std::collections::VecDeque<String>>>, tokio::task::JoinHandle<()>) {
    let tail = Arc::new(Mutex::new(std::collections::VecDeque::new()));
    let kept = tail.clone();
    let task = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!(extension = %path, "{line}");
            let mut kept = lock(&kept);
            if kept.len() == STDERR_TAIL_LINES {
                kept.pop_front();
            }
            kept.push_back(line);
        }
    });
    (tail, task)
}

/// The reason a process that ended during the handshake gives: its exit status and the tail of
/// its stderr (read to its end, briefly waited for).
async fn start_failure(
    host: &Host,
    stderr: (Arc<Mutex<std::collections::VecDeque<String>>>, tokio::task::JoinHandle<()>),
) -> String {
    let grace = Duration::from_secs(2);
    let child = lock(&host.child).take();
    let status = match child {
        Some(mut child) => match tokio::time::timeout(grace, child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            _ => "still running".to_owned(),
        },
        None => "status unknown".to_owned(),
    };
    let (tail, task) = stderr;
    let _ = tokio::time::timeout(grace, task).await;
    let tail: Vec<String> = lock(&tail).iter().cloned().collect();
    if tail.is_empty() {
        format!("Extension process exited during startup ({status}); it wrote nothing to stderr")
    } else {
        format!("Extension process exited during startup ({status}); the end of its stderr:\n{}", tail.join("\n"))
    }
}

#[async_trait]
impl Link for Host {
    async fn call(&self, method: &str, label: &str, params: Value, timeout: Duration) -> Result<Value, String> {
        Host::call(self, method, label, params, timeout).await
    }

    async fn notify(&self, method: &str, params: Value) {
        Host::notify(self, method, params).await;
    }

    fn is_dead(&self) -> bool {
        Host::is_dead(self)
    }

    fn options(&self) -> SubprocessOptions {
        self.options
    }

    fn patches_updates(&self) -> bool {
        self.version.load(Ordering::Acquire) >= 4
    }

    /// A notification, as `message_update` is to every subprocess extension.
    async fn send_update(&self, params: Value) -> Vec<String> {
        Host::notify(self, super::protocol::METHOD_EVENT, params).await;
        Vec::new()
    }
}

impl SubprocessExtension {
    /// The extension's path.
    pub(crate) fn file(&self) -> &str {
        &self.path
    }

    /// The timeouts.
    pub(crate) fn timeouts(&self) -> SubprocessOptions {
        self.options
    }

    /// Starts the extension as a process of its own (not JavaScript) and registers what it
    /// declares. (The `Extension` impl, which sends JavaScript to the shared host, is in
    /// `extensions/node/`.)
    pub(crate) async fn setup_process(&self, api: &ExtensionApi) -> Result<(), BoxError> {
        let runtime = api.runtime.clone();
        let mut child = self.command(&runtime.cwd).spawn().map_err(|e| format!("{}: {e}", self.path))?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("could not open the extension's stdio".into());
        };
        let stderr = spawn_stderr(stderr, self.path.clone());
        let host = Arc::new(Host {
            path: self.path.clone(),
            child: Mutex::new(Some(child)),
            stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
            pending: Arc::new(Mutex::new(HashMap::new())),
            dead: Arc::new(AtomicBool::new(false)),
            next_id: AtomicU64::new(1),
            options: self.options,
            version: AtomicU64::new(0),
        });
        let flag_defaults = Arc::new(Mutex::new(HashMap::new()));
        spawn_reader(
            stdout,
            Arc::downgrade(&host),
            (host.stdin.clone(), host.pending.clone(), host.dead.clone()),
            runtime.clone(),
            self.path.clone(),
            flag_defaults.clone(),
        );
        let params = serde_json::to_value(InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            extension_path: self.path.clone(),
            cwd: runtime.cwd.clone(),
        })?;
        let answer = match host.call(METHOD_INITIALIZE, METHOD_INITIALIZE, params, self.options.init_timeout).await {
            Ok(answer) => answer,
            Err(e) if e == NOT_RUNNING => return Err(start_failure(&host, stderr).await.into()),
            Err(e) => return Err(e.into()),
        };
        let version = answer.get("protocolVersion").and_then(Value::as_u64);
        if !version.is_some_and(|v| SUPPORTED_VERSIONS.iter().any(|s| u64::from(*s) == v)) {
            host.kill();
            let got = version.map(|v| v.to_string()).unwrap_or_else(|| "none".to_owned());
            return Err(
                format!("Unsupported extension protocol version {got} (this host speaks {PROTOCOL_VERSION})").into()
            );
        }
        host.version.store(version.unwrap_or_default(), Ordering::Release);
        let init: InitializeResult = serde_json::from_value(answer).map_err(|e| {
            host.kill();
            format!("Invalid initialize result: {e}")
        })?;
        let link: Arc<dyn Link> = host.clone();
        // Virtual-model routers reach the process through a weak link: the extension keeps it.
        lock(&api.record.keep_alive).push(host.clone() as Arc<dyn std::any::Any + Send + Sync>);
        for model in &init.virtual_models {
            let weak = Arc::downgrade(&link);
            let make = |provider: &str, id: &str| {
                virtual_models::link_router(weak, self.path.clone(), provider.to_owned(), id.to_owned())
            };
            virtual_models::register(&runtime, model, &self.path, make).map_err(|e| {
                host.kill();
                e.message
            })?;
        }
        register_all(api, &link, init, &flag_defaults)?;
        tracing::debug!(extension = %host.path, "subprocess extension initialized");
        Ok(())
    }
}
