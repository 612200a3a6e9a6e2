//! [`Connection`]: one running JavaScript host process. A reader thread (not a task, so a
//! renderer can wait for an answer synchronously on any thread) dispatches answers to their
//! waiters and runs the host's calls (`pi.*`, `ui.*`, `ctx.*`) on the session's tokio runtime.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use super::binary::NodeBinary;
use super::calls::handle_host_call;
use crate::extensions::errors::ExtensionError;
use crate::extensions::runtime::{Runtime, lock};
use crate::extensions::subprocess::protocol::{self, Incoming, RpcError};
use crate::extensions::subprocess::register::NOT_RUNNING;

/// The path errors of the host itself are reported under.
pub const HOST_PATH: &str = "<javascript extension host>";

type Waiter = Box<dyn FnOnce(Result<Value, RpcError>) + Send>;

/// Where the answer of a request sent with [`Connection::send`] arrives.
pub(crate) type Answer = oneshot::Receiver<Result<Value, RpcError>>;

/// A running host process.
pub(crate) struct Connection {
    child: Mutex<Child>,
    stdin: Mutex<Option<ChildStdin>>,
    pending: Mutex<HashMap<u64, Waiter>>,
    dead: AtomicBool,
    stopped: AtomicBool,
    next_id: AtomicU64,
    /// Dialogs the host is waiting on: a handler waiting for the user is not hanging.
    pub(crate) dialogs: AtomicUsize,
    /// Bumped when the host asks for a frame (`tui.requestRender()`): the host's components are
    /// drawn again.
    /// The custom components on screen (`None`: the extension finished it before pi-rs showed it).
    pub(crate) customs: Mutex<HashMap<u64, Option<Arc<crate::ui::CustomDone>>>>,
    /// How long a component's `render` may take.
    pub(crate) render_timeout: Duration,
    /// What the component bridge keeps per connection (pushed lines, completion providers).
    pub(crate) bridge: super::component::BridgeState,
}

impl Connection {
    /// Starts `node host.mjs` in `cwd`.
    pub(crate) fn spawn(
        node: &NodeBinary,
        entry: &Path,
        cwd: &str,
        runtime: Weak<Runtime>,
        handle: tokio::runtime::Handle,
        render_timeout: Duration,
    ) -> std::io::Result<Arc<Connection>> {
        let mut cmd = Command::new(&node.path);
        cmd.args(node.flags()).arg(entry).current_dir(cwd);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            return Err(std::io::Error::other("could not open the JavaScript host's stdio"));
        };
        let conn = Arc::new(Connection {
            child: Mutex::new(child),
            stdin: Mutex::new(Some(stdin)),
            pending: Mutex::new(HashMap::new()),
            dead: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            next_id: AtomicU64::new(1),
            dialogs: AtomicUsize::new(0),
            customs: Mutex::new(HashMap::new()),
            render_timeout,
            bridge: Default::default(),
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        spawn_stderr(stderr, tail.clone());
        let reader = Reader { conn: Arc::downgrade(&conn), runtime, handle, tail };
        std::thread::Builder::new().name("pi-js-host-reader".into()).spawn(move || reader.run(stdout))?;
        Ok(conn)
    }

    pub(crate) fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Acquire)
    }

    /// Stops the process (its exit is not reported).
    pub(crate) fn kill(&self) {
        self.stopped.store(true, Ordering::Release);
        self.dead.store(true, Ordering::Release);
        let _ = lock(&self.child).kill();
    }

    fn write(&self, line: &str) -> Result<(), String> {
        let mut guard = lock(&self.stdin);
        let Some(w) = guard.as_mut() else { return Err(NOT_RUNNING.to_owned()) };
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        w.write_all(buf.as_bytes()).and_then(|()| w.flush()).map_err(|_| NOT_RUNNING.to_owned())
    }

    fn request(&self, method: &str, params: Value, waiter: Waiter) -> Result<u64, String> {
        if self.is_dead() {
            return Err(NOT_RUNNING.to_owned());
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.pending).insert(id, waiter);
        if let Err(e) = self.write(&protocol::request(id, method, params)) {
            lock(&self.pending).remove(&id);
            return Err(e);
        }
        Ok(id)
    }

    /// A request awaited with `timeout`; the clock stops while the host waits on a dialog. A
    /// timeout stops the process.
    pub(crate) async fn call(
        &self,
        method: &str,
        label: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let (id, rx) = self.send(method, params)?;
        self.answer(id, rx, label, timeout).await
    }

    /// Sends a request; its answer arrives on the receiver ([`answer`](Self::answer) awaits it).
    pub(crate) fn send(&self, method: &str, params: Value) -> Result<(u64, Answer), String> {
        let (tx, rx) = oneshot::channel();
        let id = self.request(method, params, Box::new(move |r| drop(tx.send(r))))?;
        Ok((id, rx))
    }

    /// The answer of the request `id` ([`send`](Self::send)), awaited with `timeout`; the clock
    /// stops while the host waits on a dialog. A timeout stops the process.
    pub(crate) async fn answer(
        &self,
        id: u64,
        mut rx: Answer,
        label: &str,
        timeout: Duration,
    ) -> Result<Value, String> {
        // An answer already there needs no timer.
        match rx.try_recv() {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => return Err(e.message),
            Err(oneshot::error::TryRecvError::Closed) => return Err(NOT_RUNNING.to_owned()),
            Err(oneshot::error::TryRecvError::Empty) => {}
        }
        loop {
            match tokio::time::timeout(timeout, &mut rx).await {
                Ok(Ok(Ok(v))) => return Ok(v),
                Ok(Ok(Err(e))) => return Err(e.message),
                Ok(Err(_)) => return Err(NOT_RUNNING.to_owned()),
                Err(_) if self.dialogs.load(Ordering::Acquire) > 0 => continue,
                Err(_) => {
                    lock(&self.pending).remove(&id);
                    self.kill();
                    return Err(format!(
                        "Extension did not answer \"{label}\" within {} ms; the process was stopped",
                        timeout.as_millis()
                    ));
                }
            }
        }
    }

    /// A request answered on this thread (renderers are synchronous).
    pub(crate) fn call_blocking(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, String> {
        let (tx, rx) = std::sync::mpsc::channel();
        let id = self.request(method, params, Box::new(move |r| drop(tx.send(r))))?;
        match rx.recv_timeout(timeout) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(e.message),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(NOT_RUNNING.to_owned()),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                lock(&self.pending).remove(&id);
                self.kill();
                Err(format!(
                    "Extension did not answer \"{method}\" within {} ms; the process was stopped",
                    timeout.as_millis()
                ))
            }
        }
    }

    /// A notification (errors are the reader's to report).
    pub(crate) fn notify(&self, method: &str, params: Value) {
        if !self.is_dead() {
            let _ = self.write(&protocol::notification(method, params));
        }
    }

    fn respond(&self, id: Value, outcome: Result<Value, RpcError>) {
        let _ = self.write(&protocol::response(id, outcome));
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::Release);
        let child = self.child.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Node's own stderr (a crash's trace, a warning): logged, the last lines kept for the message of
/// a host that dies. What extensions print arrives over the protocol ([`OUTPUT_METHOD`]).
fn spawn_stderr(stderr: std::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let _ = std::thread::Builder::new().name("pi-js-host-stderr".into()).spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            tracing::debug!(target: "pi_coding_agent::extensions::node", "{line}");
            let mut tail = lock(&tail);
            if tail.len() == 5 {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    });
}

/// The host's notification carrying what an extension printed (its stdout and stderr writes).
const OUTPUT_METHOD: &str = "host.output";

/// Session actions that answer without waiting (synchronous in pi-rs).
const IMMEDIATE_ACTIONS: &[&str] = &[
    "pi.appendEntry",
    "pi.sendMessage",
    "pi.sendUserMessage",
    "pi.setSessionName",
    "pi.setLabel",
    "pi.setActiveTools",
    "pi.setThinkingLevel",
    "ctx.compact",
    "ctx.abort",
    "ctx.shutdown",
    "events.emit",
];

/// Whether a call of the host runs on the reader thread, in the order it arrived.
fn in_order(method: &str) -> bool {
    (method.starts_with("ui.")
        && !crate::extensions::subprocess::ui_calls::is_dialog(method)
        && method != super::calls::UI_CUSTOM)
        || crate::extensions::subprocess::registry_calls::handles(method)
        || super::virtual_models::handles(method)
        || super::provider_stream::handles(method)
        || super::provider_oauth::in_order(method)
        || IMMEDIATE_ACTIONS.contains(&method)
}

struct Reader {
    conn: Weak<Connection>,
    runtime: Weak<Runtime>,
    handle: tokio::runtime::Handle,
    tail: Arc<Mutex<VecDeque<String>>>,
}

impl Reader {
    /// What an extension printed (`{"text": …}`): as pi, which takes over stdout outside the
    /// interactive mode, it goes to stderr in print, json and rpc modes, in the order it was
    /// printed relative to everything else the host sends; in the interactive mode it would garble
    /// the screen, so it goes to the log (`PI_LOG=debug`).
    fn output(&self, params: &Value) {
        let Some(text) = params.get("text").and_then(Value::as_str) else { return };
        {
            let mut tail = lock(&self.tail);
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                if tail.len() == 5 {
                    tail.pop_front();
                }
                tail.push_back(line.to_owned());
            }
        }
        if self.runtime.upgrade().is_some_and(|r| r.forwards_extension_output()) {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
        } else {
            tracing::debug!(target: "pi_coding_agent::extensions::node", "{}", text.trim_end());
        }
    }

    fn report(&self, event: &str, error: String) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.report(ExtensionError::new(HOST_PATH, event, error));
        }
    }

    fn run(self, stdout: std::process::ChildStdout) {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let Some(conn) = self.conn.upgrade() else { return };
            match protocol::parse_line(&line) {
                Err(error) => self.report("protocol", error),
                Ok(Incoming::Call { id: None, method, params }) if method == OUTPUT_METHOD => {
                    self.output(&params);
                }
                Ok(Incoming::Response { id, outcome }) => {
                    let waiter = lock(&conn.pending).remove(&id);
                    if let Some(waiter) = waiter {
                        waiter(outcome);
                    }
                }
                // The UI's setters (status, notify, widgets, …) and the session actions that answer
                // at once (setActiveTools, appendEntry, sendMessage, …) must take effect in the
                // order the extension called them: run them on this thread, in order. So are the
                // registry changes (a `registerProvider` must land before the `setModel` that
                // follows it).
                Ok(Incoming::Call { id, method, params }) if in_order(&method) => {
                    let Some(runtime) = self.runtime.upgrade() else { continue };
                    let weak = self.conn.clone();
                    let outcome = self.handle.block_on(handle_host_call(&runtime, &weak, &method, params));
                    if let Some(id) = id {
                        conn.respond(id, outcome);
                    }
                }
                Ok(Incoming::Call { id, method, params }) => {
                    let Some(runtime) = self.runtime.upgrade() else { continue };
                    let weak = self.conn.clone();
                    self.handle.spawn(async move {
                        let outcome = handle_host_call(&runtime, &weak, &method, params).await;
                        if let (Some(id), Some(conn)) = (id, weak.upgrade()) {
                            conn.respond(id, outcome);
                        }
                    });
                }
            }
        }
        let Some(conn) = self.conn.upgrade() else { return };
        conn.dead.store(true, Ordering::Release);
        let waiters: Vec<Waiter> = lock(&conn.pending).drain().map(|(_, w)| w).collect();
        for waiter in waiters {
            waiter(Err(RpcError { code: protocol::ERROR_ACTION_FAILED, message: NOT_RUNNING.to_owned(), data: None }));
        }
        if conn.stopped.load(Ordering::Acquire) {
            return;
        }
        let status = lock(&conn.child).wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
        let tail: Vec<String> = lock(&self.tail).iter().cloned().collect();
        let detail = if tail.is_empty() { String::new() } else { format!(": {}", tail.join("\n")) };
        self.report("process", format!("JavaScript extension host exited ({status}){detail}"));
    }
}
