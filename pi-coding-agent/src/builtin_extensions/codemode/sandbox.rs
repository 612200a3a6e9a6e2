//! The QuickJS sandbox (pi-codemode's `CodemodeSandbox`): each script runs in its own QuickJS
//! runtime on its own thread (the reference's worker), with no file system, network, timers or
//! modules. The prelude (`prelude.js`) builds the script's globals on a string-only bridge; tool
//! and global calls run here on the async runtime, concurrently, and settle the script's promises.
//! A deadline, an abort, or the end of the script stops the VM through QuickJS's interrupt handler
//! and cancels the calls still running.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Function, Object, Runtime, context::EvalOptions};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Largest JSON text of one `store()` value.
pub const MAX_STORE_VALUE_CHARS: usize = 256 * 1024;
/// Largest JSON text of all stored values.
pub const MAX_STORE_TOTAL_CHARS: usize = 1024 * 1024;
/// Characters of text and base64 image data one script may output.
pub const MAX_OUTPUT_CHARS: usize = 16 * 1024 * 1024;
/// `text()`, `image()` and `console` calls one script may make.
pub const MAX_OUTPUT_ITEMS: usize = 100_000;
/// Heap of a script's VM.
pub const MEMORY_LIMIT_BYTES: usize = 256 * 1024 * 1024;

const IMAGE_HELPER_EXPECTS: &str = "image expects a non-empty image URL string, an object with image_url, or an image block { type: \"image\", data, mimeType }";

fn prelude_source() -> String {
    include_str!("prelude.js")
        .replace("__MAX_STORE_VALUE_CHARS__", &MAX_STORE_VALUE_CHARS.to_string())
        .replace("__MAX_STORE_TOTAL_CHARS__", &MAX_STORE_TOTAL_CHARS.to_string())
        .replace("__MAX_OUTPUT_CHARS__", &MAX_OUTPUT_CHARS.to_string())
        .replace("__MAX_OUTPUT_ITEMS__", &MAX_OUTPUT_ITEMS.to_string())
        .replace("__IMAGE_EXPECTS__", &Value::String(IMAGE_HELPER_EXPECTS.into()).to_string())
}

/// A tool the script can call: `tools[js_name]` and `tools[name]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SandboxTool {
    /// The tool's name.
    pub name: String,
    /// Its identifier in scripts.
    pub js_name: String,
    /// Its `ALL_TOOLS` description.
    pub description: String,
}

/// A global function (`searchTools`, `models.classify`, …); `spread` passes all arguments as an array.
#[derive(Clone, Debug, PartialEq)]
pub struct SandboxGlobal {
    /// Its name; `a.b` puts `b` on a frozen `a` object.
    pub name: String,
    /// Whether the host receives every argument as an array.
    pub spread: bool,
}

/// One output item, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputItem {
    /// `text()` or a `console` line (`console: true`).
    Text {
        /// The text.
        text: String,
        /// Whether it came from `console`.
        console: bool,
    },
    /// `image()`: base64 data and the detected MIME type.
    Image {
        /// Base64 data.
        data: String,
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        mime_type: String,
    },
}

/// Why a script failed.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptError {
    /// The script threw (or rejected).
    Script {
        /// The error's name.
        name: Option<String>,
        /// Its message.
        message: String,
        /// `Name: message` and the script's frames.
        stack: Option<String>,
    },
    /// The deadline passed.
    Timeout(String),
    /// The run was aborted.
    Aborted(String),
    /// The sandbox itself failed.
    Sandbox(String),
}

/// A finished script.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScriptOutcome {
    /// `None` when the script succeeded.
    pub error: Option<ScriptError>,
    /// The returned value (successful scripts).
    pub value: Option<Value>,
    /// Output items in order.
    pub output: Vec<OutputItem>,
    /// `store()` writes of a successful script: key and JSON text, `None` deletes.
    pub writes: Vec<(String, Option<String>)>,
}

/// What the sandbox calls for the script's tool and global calls.
#[async_trait]
pub trait SandboxHost: Send + Sync {
    /// Runs tool `name`. `Err` rejects the script's promise with an `Error` of that message.
    async fn call_tool(&self, name: &str, args: Option<Value>, cancel: CancellationToken) -> Result<Value, String>;
    /// Runs global `name`; `Ok(None)` resolves to `undefined`.
    async fn call_global(
        &self,
        name: &str,
        args: Option<Value>,
        cancel: CancellationToken,
    ) -> Result<Option<Value>, String>;
}

/// One script to run.
#[derive(Clone, Debug, Default)]
pub struct ScriptRequest {
    /// The script body (without the options line).
    pub code: String,
    /// Callable tools.
    pub tools: Vec<SandboxTool>,
    /// Global functions.
    pub globals: Vec<SandboxGlobal>,
    /// `load()` values: key to JSON text.
    pub store: serde_json::Map<String, Value>,
    /// The deadline, if any.
    pub timeout: Option<Duration>,
}

enum ToHost {
    Call { id: u64, global: bool, name: String, args: Option<String> },
    Output(OutputItem),
    Done { ok: bool, payload: Option<String>, writes: Option<String> },
    Crash(String),
}

struct Settle {
    id: u64,
    ok: bool,
    payload: String,
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

fn bridge_message(kind: &str, a: String, b: String, c: String) -> Option<ToHost> {
    Some(match kind {
        "call" | "global" => {
            ToHost::Call { id: a.parse().ok()?, global: kind == "global", name: b, args: non_empty(c) }
        }
        "output" => ToHost::Output(match a.as_str() {
            "image" => OutputItem::Image { data: b, mime_type: c },
            "console" => OutputItem::Text { text: b, console: true },
            _ => OutputItem::Text { text: b, console: false },
        }),
        "done" => ToHost::Done { ok: a == "1", payload: non_empty(b), writes: non_empty(c) },
        _ => return None,
    })
}

/// The JSON the prelude's `describeError` makes, for an exception thrown outside it (a syntax error).
fn describe_caught(error: CaughtError<'_>) -> String {
    match error {
        CaughtError::Exception(e) => {
            let name: String = e.get("name").unwrap_or_else(|_| "Error".into());
            let message = e.message().unwrap_or_default();
            let head = if message.is_empty() { name.clone() } else { format!("{name}: {message}") };
            let frames: Vec<String> = e
                .stack()
                .unwrap_or_default()
                .split('\n')
                .filter(|l| !l.trim().is_empty() && !l.contains("codemode-prelude.js"))
                .map(str::to_owned)
                .collect();
            let stack = std::iter::once(head).chain(frames).collect::<Vec<_>>().join("\n");
            json!({"name": name, "message": message, "stack": stack}).to_string()
        }
        CaughtError::Value(v) => {
            let text = v.as_string().and_then(|s| s.to_string().ok()).unwrap_or_else(|| format!("{v:?}"));
            json!({"message": text}).to_string()
        }
        CaughtError::Error(e) => json!({"message": e.to_string()}).to_string(),
    }
}

fn eval_options(filename: &str) -> EvalOptions {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.filename = Some(filename.to_owned());
    options
}

struct WorkerInput {
    code: String,
    tools_json: String,
    globals_json: String,
    store_json: String,
}

/// The worker thread: builds the VM, runs the script and settles calls until it is done.
fn run_worker(
    input: WorkerInput,
    to_host: mpsc::UnboundedSender<ToHost>,
    settles: std::sync::mpsc::Receiver<Settle>,
    stop: Arc<AtomicBool>,
) {
    let crash = to_host.clone();
    let result = (|| -> Result<(), String> {
        let runtime = Runtime::new().map_err(|e| e.to_string())?;
        runtime.set_memory_limit(MEMORY_LIMIT_BYTES);
        runtime.set_max_stack_size(4 * 1024 * 1024);
        let interrupt = stop.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || interrupt.load(Ordering::Acquire))));
        let context = Context::full(&runtime).map_err(|e| e.to_string())?;
        context.with(|ctx| worker_loop(&ctx, input, &to_host, &settles, &stop))
    })();
    if let Err(message) = result
        && !stop.load(Ordering::Acquire)
    {
        let _ = crash.send(ToHost::Crash(message));
    }
}

fn worker_loop(
    ctx: &Ctx<'_>,
    input: WorkerInput,
    to_host: &mpsc::UnboundedSender<ToHost>,
    settles: &std::sync::mpsc::Receiver<Settle>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let finished = Arc::new(AtomicBool::new(false));
    let (tx, done) = (to_host.clone(), finished.clone());
    let bridge = Function::new(ctx.clone(), move |kind: String, a: String, b: String, c: String| {
        if let Some(message) = bridge_message(&kind, a, b, c) {
            if matches!(message, ToHost::Done { .. }) {
                done.store(true, Ordering::Release);
            }
            let _ = tx.send(message);
        }
    })
    .map_err(|e| e.to_string())?;
    let factory: Function<'_> = ctx
        .eval_with_options(prelude_source(), eval_options("codemode-prelude.js"))
        .catch(ctx)
        .map_err(|e| format!("prelude: {e}"))?;
    let api: Object<'_> = factory
        .call((bridge, input.tools_json, input.globals_json, input.store_json))
        .catch(ctx)
        .map_err(|e| format!("prelude: {e}"))?;
    let settle: Function<'_> = api.get("settle").map_err(|e| e.to_string())?;
    let run: Function<'_> = api.get("run").map_err(|e| e.to_string())?;
    let stalled: Function<'_> = api.get("stalled").map_err(|e| e.to_string())?;
    // The prefix shares the first line with the script, so line numbers match the script.
    let source = format!("(async (tools, console) => {{{}\n}})", input.code);
    let script: Function<'_> = match ctx.eval_with_options(source, eval_options("codemode.js")).catch(ctx) {
        Ok(f) => f,
        Err(e) => {
            let _ = to_host.send(ToHost::Done { ok: false, payload: Some(describe_caught(e)), writes: None });
            return Ok(());
        }
    };
    let _: () = run.call((script,)).catch(ctx).map_err(|e| e.to_string())?;
    loop {
        while ctx.execute_pending_job() {
            if stop.load(Ordering::Acquire) {
                return Ok(());
            }
        }
        if finished.load(Ordering::Acquire) || stop.load(Ordering::Acquire) {
            return Ok(());
        }
        let is_stalled: bool = stalled.call(()).catch(ctx).map_err(|e| e.to_string())?;
        if is_stalled {
            return Ok(());
        }
        let next = loop {
            match settles.recv_timeout(Duration::from_millis(50)) {
                Ok(next) => break next,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if !stop.load(Ordering::Acquire) => {}
                Err(_) => return Ok(()),
            }
        };
        let _: () = settle.call((next.id as f64, next.ok, next.payload)).catch(ctx).map_err(|e| e.to_string())?;
    }
}

fn parse_error(payload: Option<String>) -> ScriptError {
    let value: Value = payload.as_deref().and_then(|p| serde_json::from_str(p).ok()).unwrap_or(Value::Null);
    match value.get("message").and_then(Value::as_str) {
        Some(message) => ScriptError::Script {
            name: value.get("name").and_then(Value::as_str).map(str::to_owned),
            message: message.to_owned(),
            stack: value.get("stack").and_then(Value::as_str).map(str::to_owned),
        },
        None => ScriptError::Sandbox("Sandbox bridge broken: script error is malformed. The script may have modified built-ins such as a prototype's toJSON.".into()),
    }
}

fn parse_writes(writes: Option<String>) -> Result<Vec<(String, Option<String>)>, String> {
    let entries: Vec<Vec<String>> = serde_json::from_str(writes.as_deref().unwrap_or("[]"))
        .map_err(|_| "Sandbox bridge broken: store writes are not an array. The script may have modified built-ins such as a prototype's toJSON.".to_owned())?;
    Ok(entries
        .into_iter()
        .filter_map(|mut e| match e.len() {
            1 => Some((e.remove(0), None)),
            2 => {
                let json = e.remove(1);
                Some((e.remove(0), Some(json)))
            }
            _ => None,
        })
        .collect())
}

fn spawn_call(
    host: Arc<dyn SandboxHost>,
    settles: std::sync::mpsc::Sender<Settle>,
    cancel: CancellationToken,
    (id, global, name, args): (u64, bool, String, Option<String>),
) {
    tokio::spawn(async move {
        let args = match args.as_deref().map(serde_json::from_str::<Value>).transpose() {
            Ok(a) => a,
            Err(e) => {
                let _ = settles.send(Settle { id, ok: false, payload: e.to_string() });
                return;
            }
        };
        let outcome = if global {
            host.call_global(&name, args, cancel.clone()).await.map(|v| v.map(|v| v.to_string()).unwrap_or_default())
        } else {
            host.call_tool(&name, args, cancel.clone()).await.map(|v| v.to_string())
        };
        if cancel.is_cancelled() {
            return;
        }
        let settle = match outcome {
            Ok(payload) => Settle { id, ok: true, payload },
            Err(message) => Settle { id, ok: false, payload: message },
        };
        let _ = settles.send(settle);
    });
}

/// Runs one script to its end, its deadline, or `cancel`; calls still running are then cancelled.
pub async fn run_script(
    request: ScriptRequest,
    host: Arc<dyn SandboxHost>,
    cancel: CancellationToken,
) -> ScriptOutcome {
    let tools_json = Value::Array(
        request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "jsName": t.js_name, "description": t.description}))
            .collect(),
    )
    .to_string();
    let globals_json =
        Value::Array(request.globals.iter().map(|g| json!({"name": g.name, "spread": g.spread})).collect()).to_string();
    let store_json = Value::Object(request.store.clone()).to_string();
    let input = WorkerInput { code: request.code, tools_json, globals_json, store_json };
    let (to_host, mut from_worker) = mpsc::unbounded_channel();
    let (settle_tx, settle_rx) = std::sync::mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let worker_stop = stop.clone();
    let spawned = std::thread::Builder::new()
        .name("codemode".into())
        .stack_size(16 * 1024 * 1024)
        .spawn(move || run_worker(input, to_host, settle_rx, worker_stop));
    let mut outcome = ScriptOutcome::default();
    if let Err(e) = spawned {
        outcome.error = Some(ScriptError::Sandbox(e.to_string()));
        return outcome;
    }
    let calls = CancellationToken::new();
    let deadline = request.timeout.map(|t| tokio::time::Instant::now() + t);
    let timeout_ms = request.timeout.map(|t| t.as_millis()).unwrap_or(0);
    loop {
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            message = from_worker.recv() => match message {
                Some(ToHost::Call { id, global, name, args }) => {
                    spawn_call(host.clone(), settle_tx.clone(), calls.child_token(), (id, global, name, args));
                }
                Some(ToHost::Output(item)) => outcome.output.push(item),
                Some(ToHost::Done { ok: true, payload, writes }) => {
                    match parse_writes(writes) {
                        Ok(w) => outcome.writes = w,
                        Err(e) => outcome.error = Some(ScriptError::Sandbox(e)),
                    }
                    outcome.value = payload.as_deref().and_then(|p| serde_json::from_str(p).ok());
                    break;
                }
                Some(ToHost::Done { ok: false, payload, .. }) => {
                    outcome.error = Some(parse_error(payload));
                    break;
                }
                Some(ToHost::Crash(message)) => {
                    outcome.error = Some(ScriptError::Sandbox(message));
                    break;
                }
                None => {
                    outcome.error = Some(ScriptError::Sandbox("The codemode worker exited without a result".into()));
                    break;
                }
            },
            _ = cancel.cancelled() => {
                outcome.error = Some(ScriptError::Aborted("This operation was aborted".into()));
                break;
            }
            _ = sleep => {
                outcome.error = Some(ScriptError::Timeout(format!("Execution timed out after {timeout_ms} ms")));
                break;
            }
        }
    }
    stop.store(true, Ordering::Release);
    calls.cancel();
    drop(settle_tx);
    outcome
}
