//! `pi.registerVirtualModel` / `pi.unregisterVirtualModel` from a JavaScript extension: the
//! catalog entry is registered here, and its router stays in the host: every request routed
//! through it asks the host (`virtualModel.route`) with pi's route request and a context whose
//! `ctx.modelRegistry` knows the session's models. The host answers the model it picked, the
//! thinking level and, when the router returned a new object, the new state.

use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use super::NodeHost;
use crate::extensions::runtime::{ExtensionContext, Runtime, lock};
use crate::extensions::subprocess::link::context_snapshot;
use crate::extensions::subprocess::protocol::{ERROR_INVALID_PARAMS, RpcError};
use crate::extensions::virtual_models::{
    RegisteredVirtualModel, Route, RouteRequest, RoutedPair, VirtualModelDefinition, VirtualModelRouter,
    create_virtual_model, remove, store,
};

/// The host method that runs a router.
pub(crate) const METHOD_ROUTE: &str = "virtualModel.route";

/// Whether `method` is one of these registrations (they run in call order).
pub(crate) fn handles(method: &str) -> bool {
    matches!(method, "pi.registerVirtualModel" | "pi.unregisterVirtualModel")
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError { code: ERROR_INVALID_PARAMS, message: message.into(), data: None }
}

/// Runs a registration call of the host; `None` for any other method.
pub(crate) fn host_call(runtime: &Arc<Runtime>, method: &str, params: &Value) -> Option<Result<Value, RpcError>> {
    if !handles(method) {
        return None;
    }
    let path = params.get("extensionPath").and_then(Value::as_str).unwrap_or_default().to_owned();
    if method == "pi.unregisterVirtualModel" {
        let provider = params.get("provider").and_then(Value::as_str).unwrap_or_default();
        let id = params.get("id").and_then(Value::as_str).unwrap_or_default();
        remove(runtime, provider, id);
        return Some(Ok(Value::Null));
    }
    Some(register(runtime, path, params.get("model").unwrap_or(&Value::Null)).map(|()| Value::Null))
}

fn register(runtime: &Arc<Runtime>, path: String, model: &Value) -> Result<(), RpcError> {
    let text = |key: &str| model.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let (provider, id) = (text("provider"), text("id"));
    if provider.trim().is_empty() || id.trim().is_empty() {
        return Err(invalid("Virtual model provider and id must not be empty."));
    }
    let levels = model.get("thinkingLevels").and_then(Value::as_array).map(|levels| {
        levels.iter().filter_map(|l| l.as_str().and_then(pi_ai::ThinkingLevel::parse)).collect::<Vec<_>>()
    });
    let input = model
        .get("input")
        .and_then(Value::as_array)
        .map(|input| input.iter().filter_map(|i| i.as_str().map(str::to_owned)).collect());
    let name = model.get("name").and_then(Value::as_str).map_or_else(|| id.clone(), str::to_owned);
    let definition = VirtualModelDefinition {
        route: router(Arc::downgrade(runtime), path.clone(), provider.clone(), id.clone()),
        provider,
        id,
        name,
        thinking_levels: levels,
        context_window: model.get("contextWindow").and_then(Value::as_u64),
        max_tokens: model.get("maxTokens").and_then(Value::as_u64),
        input,
    };
    store(
        runtime,
        RegisteredVirtualModel { model: create_virtual_model(&definition), definition, extension_path: path },
    );
    Ok(())
}

fn pair(pair: &RoutedPair) -> Value {
    let mut value = json!({"model": pair.model, "thinkingLevel": pair.thinking_level});
    if let (Some(obj), Some(message)) = (value.as_object_mut(), &pair.message) {
        obj.insert("message".into(), json!(message));
    }
    value
}

/// pi's route request as the host's router sees it (without `signal`, which the host adds).
fn request_json(request: &RouteRequest) -> Value {
    let mut value = json!({
        "model": request.model,
        "thinkingLevel": request.thinking_level,
        "reason": request.reason.as_str(),
        "messages": request.messages,
    });
    if let Some(obj) = value.as_object_mut() {
        if let Some(previous) = &request.previous {
            obj.insert("previous".into(), pair(previous));
        }
        if let Some(failed) = &request.failed {
            obj.insert("failed".into(), pair(failed));
        }
        if let Some(state) = &request.state {
            obj.insert("state".into(), state.clone());
        }
    }
    value
}

/// A router that asks the host.
fn router(runtime: Weak<Runtime>, path: String, provider: String, id: String) -> VirtualModelRouter {
    Arc::new(move |request: RouteRequest, ctx: ExtensionContext| {
        let (runtime, path, provider, id) = (runtime.clone(), path.clone(), provider.clone(), id.clone());
        Box::pin(async move {
            let runtime = runtime.upgrade().ok_or_else(|| "The session was disposed".to_owned())?;
            let host = lock(&runtime.node_host).upgrade().and_then(|h| h.downcast::<NodeHost>().ok());
            let host = host.ok_or_else(|| "The JavaScript extension host is not running".to_owned())?;
            let conn = host.connection().await?;
            let mut snapshot = context_snapshot(&ctx, false);
            if let Some(obj) = snapshot.as_object_mut() {
                obj.insert("models".into(), json!(ctx.model_registry().get_all()));
            }
            let params = json!({"extensionPath": path, "provider": provider, "id": id,
                "request": request_json(&request), "ctx": snapshot});
            let answer = conn.call(METHOD_ROUTE, METHOD_ROUTE, params, host.options.call_timeout).await?;
            parse_route(&answer)
        })
    })
}

fn parse_route(answer: &Value) -> Result<Route, String> {
    let model = answer.get("model").filter(|m| m.is_object()).ok_or("The router returned no model")?;
    let text = |key: &str| model.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let model = pi_ai::Model { provider: text("provider"), id: text("id"), ..Default::default() };
    let level = answer.get("thinkingLevel").and_then(Value::as_str).and_then(pi_ai::ThinkingLevel::parse);
    let state = answer.get("hasState").and_then(Value::as_bool).unwrap_or(false).then(|| answer["state"].clone());
    Ok(Route { model, thinking_level: level.unwrap_or(pi_ai::ThinkingLevel::Off), state })
}
