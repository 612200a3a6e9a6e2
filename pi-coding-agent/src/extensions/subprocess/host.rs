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
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::oneshot;

use super::pi_calls::handle_pi_call;
use super::protocol::{
    self, Incoming, InitializeParams, InitializeResult, METHOD_COMMAND_RUN, METHOD_EVENT, METHOD_INITIALIZE,
    METHOD_TOOL_EXECUTE, PROTOCOL_VERSION, RpcError, ToolRegistration,
};
use crate::extensions::ContextMessages;
use crate::extensions::api::{Extension, ExtensionApi, ToolDefinition};
use crate::extensions::errors::{BoxError, ExtensionError, INVALID_USER_BASH_RESULT};
use crate::extensions::events::{
    BashResult, BeforeAgentStartEvent, BeforeProviderRequestEvent, ContextEvent, ContextWithSystemEvent,
    ExtensionEvent, InputEvent, MessageEndEvent, ToolCallEvent, ToolResultEvent, UserBashEvent, UserBashResult,
};
use crate::extensions::runtime::{Runtime, lock};
use crate::messages::CodingAgentMessage;

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
}

const NOT_RUNNING: &str = "Extension process is not running";

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
                Ok(Incoming::Call { id, method, params }) => {
                    let (runtime, stdin, flags) = (runtime.clone(), stdin.clone(), flags.clone());
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

/// Serializes an event as pi does, with `type` first.
fn event_payload<E: Serialize>(name: &str, event: &E) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), Value::String(name.to_owned()));
    if let Ok(Value::Object(fields)) = serde_json::to_value(event) {
        for (k, v) in fields {
            if k != "type" {
                out.insert(k, v);
            }
        }
    }
    Value::Object(out)
}

fn decode<T: DeserializeOwned>(value: Value, what: &str) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| format!("Invalid {what} result from extension: {e}"))
}

fn messages_field(value: &mut Value) -> Option<Value> {
    value.as_object_mut().and_then(|o| o.remove("messages")).filter(|v| !v.is_null())
}

/// Turns an extension's answer into a handler result (may update the event in place).
type Apply<E> = fn(Value, &mut E) -> Result<Option<<E as ExtensionEvent>::Output>, String>;

/// What a handler answers once the process is gone.
type DeadAnswer<E> = fn() -> Result<Option<<E as ExtensionEvent>::Output>, BoxError>;

/// Registers a forwarding handler of `E`; `apply` turns the answer into the handler's result.
fn forward<E>(api: &ExtensionApi, host: &Arc<Host>, apply: Apply<E>, dead_answer: DeadAnswer<E>)
where
    E: ExtensionEvent + Serialize + Sync,
{
    let host = host.clone();
    api.on::<E>(move |event, _ctx| {
        let host = host.clone();
        Box::pin(async move {
            if host.is_dead() {
                return dead_answer();
            }
            let params = json!({"event": E::NAME, "payload": event_payload(E::NAME, &*event)});
            let answer = host.call(METHOD_EVENT, E::NAME, params, host.options.call_timeout).await?;
            if answer.is_null() {
                return Ok(None);
            }
            apply(answer, event).map_err(BoxError::from)
        })
    });
}

fn quiet<T>() -> Result<Option<T>, BoxError> {
    Ok(None)
}

fn register_events(api: &ExtensionApi, host: &Arc<Host>, events: &[String]) {
    for name in events {
        match name.as_str() {
            "context" => forward::<ContextEvent>(
                api,
                host,
                |mut v, e| {
                    let Some(list) = messages_field(&mut v) else { return Ok(None) };
                    let list: Vec<CodingAgentMessage> = decode(list, "context")?;
                    // No identity across a process boundary: an equal list counts as unchanged.
                    if list.len() == e.messages.len() && list.iter().zip(e.messages.iter()).all(|(a, b)| a == b) {
                        return Ok(None);
                    }
                    Ok(Some(ContextMessages::from(list)))
                },
                quiet,
            ),
            "context_with_system" => forward::<ContextWithSystemEvent>(
                api,
                host,
                |mut v, _| match messages_field(&mut v) {
                    Some(list) => decode(list, "context_with_system").map(Some),
                    None => Ok(None),
                },
                quiet,
            ),
            "tool_call" => forward::<ToolCallEvent>(
                api,
                host,
                |mut v, e| {
                    if let Some(Value::Object(input)) = v.as_object_mut().and_then(|o| o.remove("input")) {
                        e.input = input;
                    }
                    decode(v, "tool_call").map(Some)
                },
                || Err(NOT_RUNNING.into()),
            ),
            "tool_result" => forward::<ToolResultEvent>(api, host, |v, _| decode(v, "tool_result").map(Some), quiet),
            "message_end" => forward::<MessageEndEvent>(
                api,
                host,
                |v, _| match v.get("message") {
                    Some(m) if !m.is_null() => decode(m.clone(), "message_end").map(Some),
                    _ => Ok(None),
                },
                quiet,
            ),
            "input" => forward::<InputEvent>(api, host, |v, _| decode(v, "input").map(Some), quiet),
            "before_agent_start" => {
                forward::<BeforeAgentStartEvent>(api, host, |v, _| decode(v, "before_agent_start").map(Some), quiet)
            }
            "user_bash" => forward::<UserBashEvent>(
                api,
                host,
                |v, _| {
                    let result = v.get("result").cloned().ok_or(INVALID_USER_BASH_RESULT)?;
                    let result: BashResult = serde_json::from_value(result).map_err(|_| INVALID_USER_BASH_RESULT)?;
                    Ok(Some(UserBashResult::Result(result)))
                },
                quiet,
            ),
            "before_provider_request" => forward::<BeforeProviderRequestEvent>(api, host, |v, _| Ok(Some(v)), quiet),
            other => {
                let host = host.clone();
                let name = other.to_owned();
                api.on_notify(other, move |event, _ctx| {
                    let host = host.clone();
                    let name = name.clone();
                    Box::pin(async move {
                        let params = json!({"event": name, "payload": event_payload(&name, &*event)});
                        if name.starts_with("session_before_") {
                            if host.is_dead() {
                                return Ok(None);
                            }
                            let answer = host.call(METHOD_EVENT, &name, params, host.options.call_timeout).await?;
                            return Ok((!answer.is_null()).then_some(answer));
                        }
                        host.notify(METHOD_EVENT, params).await;
                        Ok(None)
                    })
                });
            }
        }
    }
}

/// A tool that runs in the extension's process.
struct SubprocessTool {
    host: Arc<Host>,
    reg: ToolRegistration,
}

#[async_trait]
impl AgentTool for SubprocessTool {
    fn name(&self) -> &str {
        &self.reg.name
    }

    fn label(&self) -> &str {
        self.reg.label.as_deref().unwrap_or(&self.reg.name)
    }

    fn description(&self) -> &str {
        &self.reg.description
    }

    fn parameters(&self) -> &Value {
        &self.reg.parameters
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let params = json!({"toolName": self.reg.name, "toolCallId": tool_call_id, "args": args});
        let call = self.host.call(METHOD_TOOL_EXECUTE, &self.reg.name, params, self.host.options.tool_timeout);
        let answer = tokio::select! {
            r = call => r.map_err(ToolError::new)?,
            _ = ctx.cancel_token().cancelled() => return Err(ToolError::new("Tool execution was aborted")),
        };
        let content = answer.get("content").cloned().unwrap_or(Value::Array(Vec::new()));
        let content =
            serde_json::from_value(content).map_err(|e| ToolError::new(format!("Invalid tool result: {e}")))?;
        Ok(AgentToolResult {
            content,
            details: answer.get("details").cloned().unwrap_or_else(|| json!({})),
            is_error: answer.get("isError").and_then(Value::as_bool).unwrap_or(false),
            ..Default::default()
        })
    }
}

#[async_trait]
impl Extension for SubprocessExtension {
    fn path(&self) -> &str {
        &self.path
    }

    async fn setup(&self, api: &ExtensionApi) -> Result<(), BoxError> {
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
        if version != Some(u64::from(PROTOCOL_VERSION)) {
            host.kill();
            let got = version.map(|v| v.to_string()).unwrap_or_else(|| "none".to_owned());
            return Err(
                format!("Unsupported extension protocol version {got} (this host speaks {PROTOCOL_VERSION})").into()
            );
        }
        let init: InitializeResult = serde_json::from_value(answer).map_err(|e| {
            host.kill();
            format!("Invalid initialize result: {e}")
        })?;
        for flag in &init.flags {
            api.register_flag(&flag.name, flag.kind, flag.default.clone(), flag.description.as_deref())?;
            if let Some(d) = &flag.default {
                lock(&flag_defaults).insert(flag.name.clone(), serde_json::to_value(d)?);
            }
        }
        for reg in init.tools {
            let definition = ToolDefinition {
                prompt_snippet: reg.prompt_snippet.clone(),
                prompt_guidelines: reg.prompt_guidelines.clone(),
                tool: Arc::new(SubprocessTool { host: host.clone(), reg }),
            };
            api.register_tool(definition)?;
        }
        for cmd in init.commands {
            let host = host.clone();
            let name = cmd.name.clone();
            api.register_command(&cmd.name, cmd.description.as_deref(), move |args, _ctx| {
                let host = host.clone();
                let name = name.clone();
                Box::pin(async move {
                    let params = json!({"name": name, "args": args});
                    host.call(METHOD_COMMAND_RUN, &name, params, host.options.call_timeout).await?;
                    Ok(())
                })
            })?;
        }
        register_events(api, &host, &init.events);
        tracing::debug!(extension = %host.path, events = ?init.events, "subprocess extension initialized");
        Ok(())
    }
}
