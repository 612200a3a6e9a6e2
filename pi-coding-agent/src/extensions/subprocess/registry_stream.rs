//! `ctx.modelRegistry.stream` / `ctx.modelRegistry.abort` (pi's `ModelRegistry.stream`,
//! `streamSimple`, `complete`) for out-of-process extensions: the request's options as they cross
//! the protocol, its events as `modelRegistry.event` notifications before the call's answer, and
//! cancellation. A subprocess extension's request goes through its `ctx.modelRegistry` (a virtual
//! model routed with reason `direct`); the JavaScript host passes its own dispatch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use futures::StreamExt;
use pi_ai::options::{CacheRetention, StreamOptions, ToolChoice};
use pi_ai::{AssistantMessageEvent, AssistantMessageEventStream, Context, Model};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::protocol::{ERROR_INVALID_PARAMS, RpcError};
use crate::extensions::runtime::{ExtensionContext, Runtime, lock};

const METHOD_STREAM: &str = "ctx.modelRegistry.stream";
const METHOD_ABORT: &str = "ctx.modelRegistry.abort";
/// The notification carrying one event of a request.
pub(crate) const EVENT_NOTIFICATION: &str = "modelRegistry.event";

type Running = Mutex<HashMap<u64, CancellationToken>>;

fn running() -> &'static Running {
    static RUNNING: OnceLock<Running> = OnceLock::new();
    RUNNING.get_or_init(Default::default)
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError { code: ERROR_INVALID_PARAMS, message: message.into(), data: None }
}

/// Whether `method` is one of these calls.
pub(crate) fn is_request_call(method: &str) -> bool {
    method == METHOD_STREAM || method == METHOD_ABORT
}

/// Lets `ctx.modelRegistry.abort` cancel the request `id` (a `classify` / `generateImages` call).
pub(crate) fn track(id: u64, cancel: CancellationToken) {
    lock(running()).insert(id, cancel);
}

/// Forgets the request `id` once it ended.
pub(crate) fn untrack(id: u64) {
    lock(running()).remove(&id);
}

/// Cancels the request `{"requestId"}`.
pub(crate) fn abort(params: &Value) {
    let id = params.get("requestId").and_then(Value::as_u64).unwrap_or_default();
    if let Some(token) = lock(running()).get(&id) {
        token.cancel();
    }
}

/// One call of a subprocess extension: the request runs through `ctx.modelRegistry`, each event
/// handed to `on_event` as the params of a `modelRegistry.event` notification.
pub(crate) async fn subprocess_request<F, Fut>(
    runtime: &Arc<Runtime>,
    method: &str,
    params: &Value,
    on_event: F,
) -> Result<Value, RpcError>
where
    F: FnMut(Value) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    if method == METHOD_ABORT {
        abort(params);
        return Ok(Value::Null);
    }
    let registry = ExtensionContext { runtime: runtime.clone(), command: false }.model_registry();
    let dispatch = |model: Model, context: Context, options: StreamOptions, simple: bool| {
        Ok(if simple {
            registry.stream_simple(&model, context, options)
        } else {
            registry.stream(&model, context, options)
        })
    };
    run_request(params, dispatch, on_event).await
}

/// Runs one request (`{"requestId","simple","model","context","options","aborted"}`) made by
/// `dispatch`, handing each event, as `{"requestId","event"}`, to `on_event` before answering
/// `null`.
pub(crate) async fn run_request<D, F, Fut>(params: &Value, dispatch: D, mut on_event: F) -> Result<Value, RpcError>
where
    D: FnOnce(Model, Context, StreamOptions, bool) -> Result<AssistantMessageEventStream, RpcError>,
    F: FnMut(Value) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let id = params.get("requestId").and_then(Value::as_u64).ok_or_else(|| invalid("invalid \"requestId\""))?;
    let model: Model = params
        .get("model")
        .and_then(|m| serde_json::from_value(m.clone()).ok())
        .ok_or_else(|| invalid("invalid \"model\""))?;
    let context: Context = serde_json::from_value(params.get("context").cloned().unwrap_or(Value::Null))
        .map_err(|e| invalid(format!("invalid \"context\": {e}")))?;
    let cancel = CancellationToken::new();
    if params.get("aborted").and_then(Value::as_bool) == Some(true) {
        cancel.cancel();
    }
    let options = stream_options(params.get("options").unwrap_or(&Value::Null), cancel.clone());
    let simple = params.get("simple").and_then(Value::as_bool) != Some(false);
    let mut events = dispatch(model, context, options, simple)?;
    lock(running()).insert(id, cancel);
    while let Some(event) = events.next().await {
        on_event(json!({"requestId": id, "event": wire(&event)})).await;
    }
    lock(running()).remove(&id);
    Ok(Value::Null)
}

/// pi's request options from the host (what can cross the protocol).
pub(crate) fn stream_options(o: &Value, cancel: CancellationToken) -> StreamOptions {
    let text = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
    let millis = |k: &str| o.get(k).and_then(Value::as_u64).map(std::time::Duration::from_millis);
    StreamOptions {
        cancel: Some(cancel),
        api_key: text("apiKey"),
        headers: o
            .get("headers")
            .and_then(Value::as_object)
            .map(|h| h.iter().map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned))).collect())
            .unwrap_or_default(),
        temperature: o.get("temperature").and_then(Value::as_f64),
        max_tokens: o.get("maxTokens").and_then(Value::as_u64),
        session_id: text("sessionId"),
        timeout: millis("timeoutMs"),
        max_retries: o.get("maxRetries").and_then(Value::as_u64).unwrap_or(0) as u32,
        max_retry_delay: millis("maxRetryDelayMs"),
        cache_retention: text("cacheRetention").and_then(|c| match c.as_str() {
            "none" => Some(CacheRetention::None),
            "short" => Some(CacheRetention::Short),
            "long" => Some(CacheRetention::Long),
            _ => None,
        }),
        metadata: o.get("metadata").and_then(Value::as_object).cloned(),
        reasoning: o.get("reasoning").and_then(|r| serde_json::from_value(r.clone()).ok()),
        tool_choice: text("toolChoice").and_then(|c| match c.as_str() {
            "auto" => Some(ToolChoice::Auto),
            "none" => Some(ToolChoice::None),
            _ => None,
        }),
        transport: text("transport").as_deref().and_then(pi_ai::options::Transport::parse),
        ..Default::default()
    }
}

/// pi-ai's event as the host rebuilds it (`block`: the block at `contentIndex`).
fn wire(event: &AssistantMessageEvent) -> Value {
    use AssistantMessageEvent as E;
    let kind = event.kind();
    match event {
        E::Start { partial } => json!({"type": kind, "partial": partial}),
        E::TextStart { content_index, block } | E::TextEnd { content_index, block } => {
            json!({"type": kind, "contentIndex": content_index, "block": block})
        }
        E::ThinkingStart { content_index, block } | E::ThinkingEnd { content_index, block } => {
            json!({"type": kind, "contentIndex": content_index, "block": block})
        }
        E::ToolCallStart { content_index, tool_call } | E::ToolCallEnd { content_index, tool_call } => {
            json!({"type": kind, "contentIndex": content_index, "block": tool_call})
        }
        E::TextDelta { content_index, delta }
        | E::ThinkingDelta { content_index, delta }
        | E::ToolCallDelta { content_index, delta } => {
            json!({"type": kind, "contentIndex": content_index, "delta": delta})
        }
        E::Done { reason, message } => json!({"type": kind, "reason": reason, "message": message}),
        E::Error { reason, error } => json!({"type": kind, "reason": reason, "error": error}),
    }
}
