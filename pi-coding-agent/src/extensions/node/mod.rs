//! JavaScript and TypeScript extensions, unmodified (DESIGN decision 7): `.ts`, `.mts`, `.js`,
//! `.mjs` files, or a folder with `index.ts` / `index.js` / a `package.json` naming its entry,
//! run in ONE Node.js host process per session, started when the first such
//! extension loads and restarted (its extensions loaded again) when a call finds it dead.
//!
//! The host's JavaScript lives in `pi-coding-agent/js-host/` (embedded, written to a cache folder); it speaks the
//! subprocess protocol, version 2 (`docs/extension-protocol.md`), where every message names its
//! extension with `extensionPath`. Imports of pi's packages (`@earendil-works/pi-*`,
//! `@mariozechner/pi-*`) and `typebox` resolve to the host's own modules; everything else resolves
//! as Node resolves it. TypeScript runs through Node's type stripping. Node.js comes from
//! `PI_NODE` or `PATH` (22.6 or newer); without it the extension fails to load with a message that
//! says what to install, and the session runs without it.

mod binary;
mod calls;
mod component;
mod component_calls;
mod component_input;
mod files;
mod markdown;
pub(crate) mod model_registry_calls;
mod process;
pub(crate) mod provider_models;
pub(crate) mod provider_oauth;
mod provider_options;
pub(crate) mod provider_stream;
pub(crate) mod registry_request;
pub(crate) mod request_auth;
mod update_queue;
mod virtual_models;

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use self::binary::find_node;
use self::process::Connection;
use crate::extensions::api::ExtensionApi;
use crate::extensions::errors::{BoxError, ExtensionError};
use crate::extensions::runtime::{Runtime, lock};
use crate::extensions::subprocess::SubprocessOptions;
use crate::extensions::subprocess::link::Link;
use crate::extensions::subprocess::protocol::{InitializeResult, METHOD_INITIALIZE, PROTOCOL_VERSION};
use crate::extensions::subprocess::register::register_all;

pub use self::binary::set_node_path;
pub(crate) use self::component::session_changed;
pub use self::process::HOST_PATH;

/// Whether `path` is an extension for the JavaScript host: a `.ts`, `.mts`, `.cts`, `.js`, `.mjs`
/// or `.cjs` file, or a folder.
pub fn is_js_extension(path: &str) -> bool {
    const EXTENSIONS: &[&str] = &[".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"];
    EXTENSIONS.iter().any(|e| path.ends_with(e)) || std::path::Path::new(path).is_dir()
}

/// The session's JavaScript host: the running process and what to load again after a restart.
pub(crate) struct NodeHost {
    runtime: Weak<Runtime>,
    cwd: String,
    handle: tokio::runtime::Handle,
    slot: tokio::sync::Mutex<Option<Arc<Connection>>>,
    current: Mutex<Option<Arc<Connection>>>,
    loaded: Mutex<Vec<String>>,
    options: SubprocessOptions,
    /// The run whose abort the host hears (`signal.abort`), and the task waiting for it.
    signal_watch: Mutex<Option<(u64, tokio::task::JoinHandle<()>)>>,
    /// How many times the process was started ([`Link::generation`]).
    starts: std::sync::atomic::AtomicU64,
}

impl NodeHost {
    /// The runtime's host, created on first use.
    fn of(runtime: &Arc<Runtime>, options: SubprocessOptions) -> Arc<NodeHost> {
        let mut slot = lock(&runtime.node_host);
        if let Some(host) = slot.upgrade().and_then(|h| h.downcast::<NodeHost>().ok()) {
            return host;
        }
        let host = Arc::new(NodeHost {
            runtime: Arc::downgrade(runtime),
            cwd: runtime.cwd.clone(),
            handle: tokio::runtime::Handle::current(),
            slot: tokio::sync::Mutex::new(None),
            current: Mutex::new(None),
            loaded: Mutex::new(Vec::new()),
            options,
            signal_watch: Mutex::new(None),
            starts: std::sync::atomic::AtomicU64::new(0),
        });
        let erased: Arc<dyn std::any::Any + Send + Sync> = host.clone();
        *slot = Arc::downgrade(&erased);
        crate::extensions::subprocess::session_calls::set_host_hooks(
            crate::extensions::subprocess::session_calls::HostHooks { watch_signal, call: call_host },
        );
        // One bus for the session: the Rust extensions' emits reach the host's listeners.
        let weak = Arc::downgrade(&host);
        let session = Arc::downgrade(runtime);
        runtime.bus.set_remote(Arc::new(move |channel, data| {
            let conn = weak.upgrade().and_then(|h| lock(&h.current).clone());
            // Listeners may act on the session (`appendEntry`): the host learns it is bound.
            let bound = session.upgrade().is_some_and(|r| r.actions().is_ok());
            if let Some(conn) = conn {
                conn.notify("events.emit", json!({"channel": channel, "data": data, "bound": bound}));
            }
        }));
        host
    }

    fn start(&self) -> Result<Arc<Connection>, String> {
        let node = find_node()?;
        let entry = files::install().map_err(|e| format!("Could not write the JavaScript extension host: {e}"))?;
        let conn = Connection::spawn(
            &node,
            &entry,
            &self.cwd,
            self.runtime.clone(),
            self.handle.clone(),
            self.options.call_timeout,
        )
        .map_err(|e| format!("Could not start {}: {e}", node.path.display()))?;
        *lock(&self.current) = Some(conn.clone());
        self.starts.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(conn)
    }

    fn init_params(&self, path: &str) -> Value {
        let agent_dir =
            self.runtime.upgrade().map(|r| request_auth::agent_dir(&r)).unwrap_or_else(crate::session::get_agent_dir);
        json!({
            "protocolVersion": PROTOCOL_VERSION,
            "extensionPath": path,
            "cwd": self.cwd,
            "builtinTools": builtin_tools(&self.cwd),
            "providerBases": crate::extensions::provider_validation::provider_bases(&agent_dir),
        })
    }

    /// The running process; a dead one is replaced and the loaded extensions load again.
    async fn connection(&self) -> Result<Arc<Connection>, String> {
        let mut slot = self.slot.lock().await;
        if let Some(conn) = slot.as_ref().filter(|c| !c.is_dead()) {
            return Ok(conn.clone());
        }
        let restarting = slot.is_some();
        let conn = self.start()?;
        *slot = Some(conn.clone());
        if restarting {
            let paths = lock(&self.loaded).clone();
            for path in paths {
                let params = self.init_params(&path);
                let loaded = conn.call(METHOD_INITIALIZE, METHOD_INITIALIZE, params, self.options.init_timeout).await;
                if let (Err(error), Some(runtime)) = (loaded, self.runtime.upgrade()) {
                    runtime.report(ExtensionError::new(&path, "restart", format!("Failed to load extension: {error}")));
                }
            }
        }
        Ok(conn)
    }
}

/// Calls the session's JavaScript host (the `setup` of a `newSession` runs there).
fn call_host(
    runtime: Arc<Runtime>,
    method: String,
    params: Value,
) -> futures::future::BoxFuture<'static, Result<Value, String>> {
    Box::pin(async move {
        let host = lock(&runtime.node_host).upgrade().and_then(|h| h.downcast::<NodeHost>().ok());
        let host = host.ok_or_else(|| "The JavaScript extension host is not running".to_owned())?;
        let conn = host.connection().await?;
        conn.call(&method, &method, params, host.options.call_timeout).await
    })
}

/// Tells the session's JavaScript host (if one runs) when the run `run` is aborted, so its
/// `ctx.signal` aborts (pi's `agent.signal`). One waiting task, for the latest run.
fn watch_signal(runtime: &Arc<Runtime>, run: u64, token: tokio_util::sync::CancellationToken) {
    let host = lock(&runtime.node_host).upgrade().and_then(|h| h.downcast::<NodeHost>().ok());
    let Some(host) = host else { return };
    let mut watch = lock(&host.signal_watch);
    if watch.as_ref().is_some_and(|(watched, _)| *watched >= run) {
        return;
    }
    let weak = Arc::downgrade(&host);
    let task = host.handle.spawn(async move {
        token.cancelled().await;
        let conn = weak.upgrade().and_then(|h| lock(&h.current).clone());
        if let Some(conn) = conn {
            conn.notify("signal.abort", json!({"run": run}));
        }
    });
    if let Some((_, previous)) = watch.replace((run, task)) {
        previous.abort();
    }
}

impl Drop for NodeHost {
    fn drop(&mut self) {
        if let Some((_, task)) = lock(&self.signal_watch).take() {
            task.abort();
        }
        if let Some(conn) = lock(&self.current).take() {
            conn.kill();
        }
    }
}

/// The built-in tools' definitions, for `createReadTool(cwd)` and friends.
fn builtin_tools(cwd: &str) -> Value {
    let tools = crate::tools::all_tools(cwd, &crate::tools::ToolsOptions::default());
    Value::Array(
        tools
            .iter()
            .map(|t| json!({"name": t.name(), "label": t.label(), "description": t.description(), "parameters": t.parameters()}))
            .collect(),
    )
}

/// One extension in the host: adds `extensionPath` to every message.
struct NodeLink {
    host: Arc<NodeHost>,
    path: String,
    /// Its `message_update`s sent and not yet answered.
    updates: update_queue::UpdateQueue,
}

impl NodeLink {
    fn route(&self, mut params: Value) -> Value {
        if let Some(obj) = params.as_object_mut() {
            obj.insert("extensionPath".into(), Value::String(self.path.clone()));
        }
        params
    }
}

#[async_trait]
impl Link for NodeLink {
    async fn call(&self, method: &str, label: &str, params: Value, timeout: Duration) -> Result<Value, String> {
        let conn = self.host.connection().await?;
        conn.call(method, label, self.route(params), timeout).await
    }

    async fn notify(&self, method: &str, params: Value) {
        if let Ok(conn) = self.host.connection().await {
            conn.notify(method, self.route(params));
        }
    }

    fn is_dead(&self) -> bool {
        false
    }

    fn awaits_every_event(&self) -> bool {
        true
    }

    fn patches_updates(&self) -> bool {
        true
    }

    async fn send_update(&self, params: Value) -> Vec<String> {
        let sent = match self.host.connection().await {
            Ok(conn) => self.updates.send(conn, self.route(params), self.host.options.call_timeout).await,
            Err(e) => Err(e),
        };
        sent.unwrap_or_else(|e| vec![e])
    }

    async fn settle_updates(&self) -> Vec<String> {
        self.updates.settle(self.host.options.call_timeout).await
    }

    fn generation(&self) -> u64 {
        self.host.starts.load(std::sync::atomic::Ordering::Acquire)
    }

    fn options(&self) -> SubprocessOptions {
        self.host.options
    }

    fn render_blocking(&self, params: Value) -> Result<Value, String> {
        let conn = lock(&self.host.current).clone().filter(|c| !c.is_dead());
        let conn = conn.ok_or_else(|| "The JavaScript extension host is not running".to_owned())?;
        conn.call_blocking("render", self.route(params), self.host.options.call_timeout)
    }
}

/// Loads the JavaScript or TypeScript extension at `path` into the session's host and registers
/// what it declares. The first extension's `options` set the host's timeouts.
pub(crate) async fn setup(api: &ExtensionApi, path: &str, options: SubprocessOptions) -> Result<(), BoxError> {
    let host = NodeHost::of(&api.runtime, options);
    let conn = host.connection().await?;
    let answer =
        conn.call(METHOD_INITIALIZE, METHOD_INITIALIZE, host.init_params(path), host.options.init_timeout).await?;
    let init: InitializeResult =
        serde_json::from_value(answer.clone()).map_err(|e| format!("Invalid initialize result: {e}"))?;
    {
        let mut loaded = lock(&host.loaded);
        if !loaded.iter().any(|p| p == path) {
            loaded.push(path.to_owned());
        }
    }
    let link: Arc<dyn Link> =
        Arc::new(NodeLink { host: host.clone(), path: path.to_owned(), updates: Default::default() });
    let flag_defaults = Mutex::new(std::collections::HashMap::new());
    register_all(api, &link, init, &flag_defaults)?;
    // The host serves the extension's routers, transformers and provider streams while it is
    // loaded, even when nothing else it registered holds the host.
    lock(&api.record.keep_alive).push(host.clone() as Arc<dyn std::any::Any + Send + Sync>);
    markdown::register(api, &host, path, &answer)?;
    // pi refreshes a provider's models at startup (its `refreshModels`, `oauth.modifyModels`).
    provider_models::after_load(&api.runtime, path).await;
    Ok(())
}

#[async_trait]
impl crate::extensions::Extension for crate::extensions::subprocess::SubprocessExtension {
    fn path(&self) -> &str {
        self.file()
    }

    /// JavaScript and TypeScript run in the session's host; anything else as its own process.
    async fn setup(&self, api: &ExtensionApi) -> Result<(), BoxError> {
        if is_js_extension(self.file()) {
            return setup(api, self.file(), self.timeouts()).await;
        }
        self.setup_process(api).await
    }
}
