//! `ctx.sessionManager` and `newSession({setup})` across the process boundary.
//!
//! Every context snapshot names the session (`session: {sessionId, sessionFile, sessionDir, cwd,
//! leafId, count}`, cheap); the extension keeps the entries it fetched and asks only for those
//! appended since (`ctx.sessionEntries {sessionId, from}`), so its `ctx.sessionManager` reads the
//! whole session, synchronously, in every handler. `ctx.setupSession {ops}` replays the appends
//! a `setup` function made on its copy of a new session, mapping the ids it saw to the real ones.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::protocol::{ERROR_ACTION_FAILED, ERROR_INVALID_PARAMS, RpcError};
use crate::extensions::actions::ExtensionActions;
use crate::extensions::runtime::Runtime;
use crate::session::SessionManager;

/// A call of the JavaScript host: `(runtime, method, params)` → its answer.
pub(crate) type HostCall =
    fn(std::sync::Arc<Runtime>, String, Value) -> futures::future::BoxFuture<'static, Result<Value, String>>;

/// What the session's JavaScript host offers this module (set by `extensions::node` when a host
/// starts, so this module does not depend on it): wait for a run's abort to tell the host, and
/// call the host.
pub(crate) struct HostHooks {
    /// Tells the host when the run is aborted (`signal.abort`).
    pub(crate) watch_signal: fn(&std::sync::Arc<Runtime>, u64, tokio_util::sync::CancellationToken),
    /// Calls the host.
    pub(crate) call: HostCall,
}

static HOST_HOOKS: std::sync::OnceLock<HostHooks> = std::sync::OnceLock::new();

/// Installs the JavaScript host's hooks (once).
pub(crate) fn set_host_hooks(hooks: HostHooks) {
    let _ = HOST_HOOKS.set(hooks);
}

/// Tells the JavaScript host, if one runs, when the run `run` is aborted.
pub(crate) fn watch_signal(runtime: &std::sync::Arc<Runtime>, run: u64, token: tokio_util::sync::CancellationToken) {
    if let Some(hooks) = HOST_HOOKS.get() {
        (hooks.watch_signal)(runtime, run, token);
    }
}

fn failed(e: impl std::fmt::Display) -> RpcError {
    RpcError { code: ERROR_ACTION_FAILED, message: e.to_string(), data: None }
}

fn invalid(e: impl std::fmt::Display) -> RpcError {
    RpcError { code: ERROR_INVALID_PARAMS, message: e.to_string(), data: None }
}

/// The `session` field of a context snapshot (`None` without a session or while it is busy).
pub(crate) fn session_summary(actions: &dyn ExtensionActions) -> Option<Value> {
    let mut out = None;
    actions.read_session(&mut |sm| {
        out = Some(json!({
            "sessionId": sm.session_id(),
            "sessionFile": sm.session_file(),
            "sessionDir": sm.session_dir(),
            "cwd": sm.cwd(),
            "leafId": sm.leaf_id(),
            "count": sm.entries().len(),
        }));
    });
    out
}

/// `ctx.sessionEntries {sessionId?, from}`: the entries from `from` on (all of them when the
/// session is another one), with the header and the leaf.
pub(crate) fn session_entries(actions: &dyn ExtensionActions, params: &Value) -> Result<Value, RpcError> {
    let wanted = params.get("sessionId").and_then(Value::as_str);
    let from = params.get("from").and_then(Value::as_u64).unwrap_or(0) as usize;
    let mut out = None;
    actions.read_session(&mut |sm| {
        let all = sm.entries();
        let from = if wanted == Some(sm.session_id()) && from <= all.len() { from } else { 0 };
        out = Some(json!({
            "sessionId": sm.session_id(),
            "sessionFile": sm.session_file(),
            "sessionDir": sm.session_dir(),
            "cwd": sm.cwd(),
            "header": sm.header(),
            "leafId": sm.leaf_id(),
            "from": from,
            "entries": &all[from..],
        }));
    });
    out.ok_or_else(|| failed("The session is not available"))
}

/// `ctx.newSession {parentSession, setupId}`: the extension's `setup` runs in its process once the
/// new session is installed (`session.setup {setupId}` answers the appends it made, `{ops}`),
/// and they are replayed on the session before `session_start`.
pub(crate) async fn new_session(
    runtime: &std::sync::Arc<Runtime>,
    actions: &dyn ExtensionActions,
    params: &Value,
) -> Result<Value, RpcError> {
    let parent = params.get("parentSession").and_then(Value::as_str).map(str::to_owned);
    let outcome = match params.get("setupId").filter(|id| !id.is_null()).cloned() {
        None => actions.new_session(parent).await,
        Some(setup_id) => {
            let runtime = runtime.clone();
            let setup: crate::extensions::SessionSetupFuture = Box::pin(async move {
                let call = HOST_HOOKS.get().map(|h| h.call).ok_or("The JavaScript extension host is not running")?;
                let answer = call(runtime, "session.setup".into(), json!({"setupId": setup_id})).await?;
                let ops: Vec<Value> = answer.get("ops").and_then(Value::as_array).cloned().unwrap_or_default();
                Ok(replay_ops(ops))
            });
            actions.new_session_with_setup(parent, setup).await
        }
    };
    outcome.map(|cancelled| json!({"cancelled": cancelled})).map_err(failed)
}

/// What replays the recorded appends `ops` on a session's manager.
pub(crate) fn replay_ops(ops: Vec<Value>) -> crate::extensions::SessionSetup {
    Box::new(move |sm| {
        let mut ids = HashMap::new();
        for op in &ops {
            replay(sm, op, &mut ids)?;
        }
        Ok(())
    })
}

fn text<'a>(op: &'a Value, name: &str) -> &'a str {
    op.get(name).and_then(Value::as_str).unwrap_or_default()
}

/// One recorded append; `ids` maps the ids the extension saw to the appended entries' ids.
fn replay(
    sm: &mut SessionManager,
    op: &Value,
    ids: &mut HashMap<String, String>,
) -> Result<(), crate::extensions::BoxError> {
    let real = |ids: &HashMap<String, String>, id: &str| ids.get(id).cloned().unwrap_or_else(|| id.to_owned());
    let id = match text(op, "op") {
        "message" => {
            let message = serde_json::from_value(op.get("message").cloned().unwrap_or(Value::Null))
                .map_err(|e| invalid(format!("invalid message: {e}")).message)?;
            sm.append_message(message)?
        }
        "thinkingLevel" => sm.append_thinking_level_change(text(op, "thinkingLevel"))?,
        "model" => sm.append_model_change(text(op, "provider"), text(op, "modelId"))?,
        "custom" => sm.append_custom_entry(text(op, "customType"), op.get("data").cloned().filter(|d| !d.is_null()))?,
        "sessionInfo" => sm.append_session_info(text(op, "name"))?,
        "customMessage" => {
            let content = serde_json::from_value(op.get("content").cloned().unwrap_or(Value::Null))
                .map_err(|e| invalid(format!("invalid content: {e}")).message)?;
            let display = op.get("display").and_then(Value::as_bool).unwrap_or(false);
            let details = op.get("details").cloned().filter(|d| !d.is_null());
            sm.append_custom_message_entry(text(op, "customType"), content, display, details)?
        }
        "label" => {
            let label = op.get("label").and_then(Value::as_str).filter(|l| !l.is_empty());
            sm.append_label_change(&real(ids, text(op, "targetId")), label)?
        }
        "branch" => {
            sm.branch(&real(ids, text(op, "targetId")))?;
            return Ok(());
        }
        "resetLeaf" => {
            sm.reset_leaf();
            return Ok(());
        }
        other => return Err(format!("Unknown session setup operation: {other}").into()),
    };
    if let Some(seen) = op.get("id").and_then(Value::as_str) {
        ids.insert(seen.to_owned(), id);
    }
    Ok(())
}
