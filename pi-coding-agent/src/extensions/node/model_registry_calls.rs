//! The host's `ctx.modelRegistry` calls: the snapshot its synchronous members answer from
//! (`ctx.modelRegistry`: models, those with auth, providers' names, auth status and whether they
//! use OAuth), request-time auth (`ctx.modelRegistry.auth`), and requests
//! (`ctx.modelRegistry.stream`) run through the session's providers, whose events go back as
//! `modelRegistry.event` notifications before the call's answer; `ctx.modelRegistry.abort`
//! cancels one.

use std::sync::{Arc, Weak};

use pi_ai::options::StreamOptions;
use pi_ai::transcript::normalize_context;
use pi_ai::{AssistantMessageEventStream, Context, Model};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::process::Connection;
use super::request_auth;
use crate::extensions::runtime::{Runtime, lock};
use crate::extensions::subprocess::protocol::{ERROR_INVALID_PARAMS, RpcError};
use crate::extensions::subprocess::{registry_stream, typed_calls};

const METHOD_SNAPSHOT: &str = "ctx.modelRegistry";
const METHOD_AUTH: &str = "ctx.modelRegistry.auth";
const METHOD_STREAM: &str = "ctx.modelRegistry.stream";
const METHOD_ABORT: &str = "ctx.modelRegistry.abort";
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
            registry_stream::abort(params);
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

/// Runs one request, its events sent to the host as they come.
async fn stream(runtime: &Arc<Runtime>, conn: &Weak<Connection>, params: &Value) -> Result<Value, RpcError> {
    let on_event = |event| {
        if let Some(conn) = conn.upgrade() {
            conn.notify(registry_stream::EVENT_NOTIFICATION, event);
        }
        std::future::ready(())
    };
    registry_stream::run_request(
        params,
        |model, context, options, simple| dispatch(runtime, model, context, options, simple),
        on_event,
    )
    .await
}

/// The host's request: a virtual model is routed (`streamSimple`) or refused (`stream`), as pi;
/// pi's `stream` of a native JavaScript provider is its own `stream`; any other request runs
/// through the session's providers.
fn dispatch(
    runtime: &Arc<Runtime>,
    model: Model,
    context: Context,
    options: StreamOptions,
    simple: bool,
) -> Result<AssistantMessageEventStream, RpcError> {
    if crate::extensions::is_virtual_model(&model) {
        return Ok(super::registry_request::registry_request(runtime, &model, context, options, simple));
    }
    match request_auth::registered(runtime, &model.provider).filter(super::provider_stream::is_js_provider) {
        Some(provider) if !simple => Ok(super::provider_stream::js_stream(
            runtime.clone(),
            &provider,
            &model,
            normalize_context(context),
            options,
            false,
        )),
        _ => {
            let actions = runtime.actions().map_err(|e| invalid(e.to_string()))?;
            actions
                .stream_request(&model, normalize_context(context), options)
                .ok_or_else(|| invalid("The model registry has no session to run requests"))
        }
    }
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
        registry_stream::track(id, cancel.clone());
    }
    let actions = runtime.actions().map_err(|e| invalid(e.to_string()));
    let answer = match actions {
        Ok(actions) => typed_calls::typed_call(&*actions, method, params.clone(), cancel).await.map_err(invalid),
        Err(error) => Err(error),
    };
    if let Some(id) = id {
        registry_stream::untrack(id);
    }
    answer
}
