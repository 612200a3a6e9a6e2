//! The host's `ctx.modelRegistry` calls: the snapshot its synchronous members answer from
//! (`ctx.modelRegistry`: models, those with auth, providers' names, auth status and whether they
//! use OAuth), request-time auth (`ctx.modelRegistry.auth`), and requests
//! (`ctx.modelRegistry.stream`) run through the session's providers, whose events go back as
//! `modelRegistry.event` notifications before the call's answer; `ctx.modelRegistry.abort`
//! cancels one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use futures::StreamExt;
use pi_ai::options::{CacheRetention, StreamOptions, ToolChoice};
use pi_ai::transcript::normalize_context;
use pi_ai::{AssistantMessageEvent, Context, Model};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::process::Connection;
use super::request_auth;
use crate::extensions::runtime::{Runtime, lock};
use crate::extensions::subprocess::protocol::{ERROR_INVALID_PARAMS, RpcError};
use crate::extensions::subprocess::typed_calls;

const METHOD_SNAPSHOT: &str = "ctx.modelRegistry";
const METHOD_AUTH: &str = "ctx.modelRegistry.auth";
const METHOD_STREAM: &str = "ctx.modelRegistry.stream";
const METHOD_ABORT: &str = "ctx.modelRegistry.abort";
/// The notification carrying one event of a request.
const METHOD_EVENT: &str = "modelRegistry.event";

type Running = Mutex<HashMap<u64, CancellationToken>>;

fn running() -> &'static Running {
    static RUNNING: OnceLock<Running> = OnceLock::new();
    RUNNING.get_or_init(Default::default)
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError { code: ERROR_INVALID_PARAMS, message: message.into(), data: None }
}

/// Runs one `ctx.modelRegistry*` call; `None` for any other method.
pub(crate) async fn host_call(
    runtime: &Arc<Runtime>,
    conn: &Weak<Connection>,
    method: &str,
    params: &Value,
) -> Option<Result<Value, RpcError>> {
    Some(match method {
        METHOD_SNAPSHOT => snapshot(runtime),
        METHOD_AUTH => auth(runtime, params).await,
        METHOD_STREAM => stream(runtime, conn, params).await,
        typed @ (typed_calls::METHOD_CLASSIFY | typed_calls::METHOD_GENERATE_IMAGES) => {
            typed_request(runtime, typed, params).await
        }
        METHOD_ABORT => {
            let id = params.get("requestId").and_then(Value::as_u64).unwrap_or_default();
            if let Some(token) = lock(running()).get(&id) {
                token.cancel();
            }
            Ok(Value::Null)
        }
        _ => return None,
    })
}

/// The registry as the session sees it now, with what the synchronous members need.
fn snapshot(runtime: &Runtime) -> Result<Value, RpcError> {
    let actions = runtime.actions().map_err(|e| invalid(e.to_string()))?;
    let mut answer = crate::extensions::subprocess::link::model_registry_snapshot(&*actions);
    let mut ids: Vec<String> = Vec::new();
    let models = actions.models(false);
    for id in models.iter().map(|m| &m.provider).chain(lock(&runtime.providers).iter().map(|p| &p.name)) {
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    let mut providers = Map::new();
    let mut oauth = Vec::new();
    for id in ids {
        let registered = request_auth::registered(runtime, &id);
        let mut info = json!({
            "name": request_auth::display_name(runtime, &id),
            "status": request_auth::auth_status(runtime, &id),
            "registered": registered.is_some(),
        });
        if let Some(p) = registered {
            info["config"] = p.config;
        }
        if request_auth::is_using_oauth(runtime, &id) {
            oauth.push(id.clone());
        }
        providers.insert(id, info);
    }
    typed_calls::add_typed_models(&*actions, &mut answer);
    answer["providers"] = Value::Object(providers);
    answer["oauth"] = json!(oauth);
    Ok(answer)
}

/// `{result: ResolvedRequestAuth, auth: AuthResult | null}` for `provider`.
async fn auth(runtime: &Arc<Runtime>, params: &Value) -> Result<Value, RpcError> {
    let provider = params.get("provider").and_then(Value::as_str).ok_or_else(|| invalid("invalid \"provider\""))?;
    let result = request_auth::api_key_and_headers(runtime, provider).await;
    let auth = request_auth::resolve(runtime, provider).await.map_err(invalid)?;
    Ok(json!({"result": result, "auth": auth.map(|a| a.to_json())}))
}

/// pi's request options from the host (what can cross the protocol).
fn stream_options(o: &Value, cancel: CancellationToken) -> StreamOptions {
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

/// Runs one request, its events sent to the host as they come.
async fn stream(runtime: &Arc<Runtime>, conn: &Weak<Connection>, params: &Value) -> Result<Value, RpcError> {
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
    let mut events =
        match request_auth::registered(runtime, &model.provider).filter(super::provider_stream::is_js_provider) {
            // pi's `stream` of a native provider is its own `stream`.
            Some(provider) if !simple => super::provider_stream::js_stream(
                runtime.clone(),
                &provider,
                &model,
                normalize_context(context),
                options,
                false,
            ),
            _ => {
                let actions = runtime.actions().map_err(|e| invalid(e.to_string()))?;
                actions
                    .stream_request(&model, normalize_context(context), options)
                    .ok_or_else(|| invalid("The model registry has no session to run requests"))?
            }
        };
    lock(running()).insert(id, cancel);
    while let Some(event) = events.next().await {
        if let Some(conn) = conn.upgrade() {
            conn.notify(METHOD_EVENT, json!({"requestId": id, "event": wire(&event)}));
        }
    }
    lock(running()).remove(&id);
    Ok(Value::Null)
}

/// `ctx.modelRegistry.classify` / `generateImages`: pi's result, errors included; a `requestId`
/// lets `ctx.modelRegistry.abort` cancel it.
async fn typed_request(runtime: &Arc<Runtime>, method: &str, params: &Value) -> Result<Value, RpcError> {
    let cancel = CancellationToken::new();
    if params.get("aborted").and_then(Value::as_bool) == Some(true) {
        cancel.cancel();
    }
    let id = params.get("requestId").and_then(Value::as_u64);
    if let Some(id) = id {
        lock(running()).insert(id, cancel.clone());
    }
    let actions = runtime.actions().map_err(|e| invalid(e.to_string()));
    let answer = match actions {
        Ok(actions) => typed_calls::typed_call(&*actions, method, params.clone(), cancel).await.map_err(invalid),
        Err(error) => Err(error),
    };
    if let Some(id) = id {
        lock(running()).remove(&id);
    }
    answer
}
