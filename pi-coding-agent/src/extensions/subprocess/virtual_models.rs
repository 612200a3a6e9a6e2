//! Virtual models of out-of-process extensions (protocol version 3; the JavaScript host speaks
//! the same messages): `pi.registerVirtualModel {"model":{provider,id,name?,thinkingLevels?,
//! contextWindow?,maxTokens?,input?}}`, `pi.unregisterVirtualModel {"provider","id"}` (or a
//! `virtualModels` array in the `initialize` answer), and for every request routed through one the
//! host asks the extension `virtualModel.route {"extensionPath","provider","id","request","ctx"}`
//! → `{"model":{"provider","id"},"thinkingLevel","hasState"?,"state"?}`.

use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use super::link::{Link, context_snapshot};
use super::protocol::{ERROR_INVALID_PARAMS, RpcError};
use crate::extensions::runtime::{ExtensionContext, Runtime};
use crate::extensions::virtual_models::{
    RegisteredVirtualModel, Route, RouteRequest, RoutedPair, VirtualModelDefinition, VirtualModelRouter,
    create_virtual_model, remove, store,
};

/// The method the host calls to run a router.
pub(crate) const METHOD_ROUTE: &str = "virtualModel.route";

/// Whether `method` is one of the registrations.
pub(crate) fn handles(method: &str) -> bool {
    matches!(method, "pi.registerVirtualModel" | "pi.unregisterVirtualModel")
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError { code: ERROR_INVALID_PARAMS, message: message.into(), data: None }
}

/// Runs a registration call: `make_router(provider, id)` builds the router that asks the
/// extension. Registrations are allowed while loading (pi queues them like `registerProvider`).
pub(crate) fn handle_call(
    runtime: &Runtime,
    method: &str,
    params: &Value,
    path: &str,
    make_router: impl FnOnce(&str, &str) -> VirtualModelRouter,
) -> Result<Value, RpcError> {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    if method == "pi.unregisterVirtualModel" {
        remove(runtime, &text(params, "provider"), &text(params, "id"));
        return Ok(Value::Null);
    }
    register(runtime, params.get("model").unwrap_or(&Value::Null), path, make_router)?;
    Ok(Value::Null)
}

/// Registers one virtual model declared as pi's `VirtualModelDefinition` (without `route`).
pub(crate) fn register(
    runtime: &Runtime,
    model: &Value,
    path: &str,
    make_router: impl FnOnce(&str, &str) -> VirtualModelRouter,
) -> Result<(), RpcError> {
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
        route: make_router(&provider, &id),
        provider,
        id,
        name,
        thinking_levels: levels,
        context_window: model.get("contextWindow").and_then(Value::as_u64),
        max_tokens: model.get("maxTokens").and_then(Value::as_u64),
        input,
    };
    let entry = RegisteredVirtualModel {
        model: create_virtual_model(&definition),
        definition,
        extension_path: path.to_owned(),
    };
    store(runtime, entry);
    Ok(())
}

fn pair(pair: &RoutedPair) -> Value {
    let mut value = json!({"model": pair.model, "thinkingLevel": pair.thinking_level});
    if let (Some(obj), Some(message)) = (value.as_object_mut(), &pair.message) {
        obj.insert("message".into(), json!(message));
    }
    value
}

/// pi's route request as the extension's router sees it (without `signal`).
pub(crate) fn request_json(request: &RouteRequest) -> Value {
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

/// The `virtualModel.route` params: the request and a context whose `models` are the session's.
pub(crate) fn route_params(
    path: &str,
    provider: &str,
    id: &str,
    request: &RouteRequest,
    ctx: &ExtensionContext,
) -> Value {
    let mut snapshot = context_snapshot(ctx, false);
    if let Some(obj) = snapshot.as_object_mut() {
        obj.insert("models".into(), json!(ctx.model_registry().get_all()));
    }
    json!({"extensionPath": path, "provider": provider, "id": id, "request": request_json(request), "ctx": snapshot})
}

/// The router's answer: the model it picked (looked up by the caller), its level, new state when
/// `hasState` is true.
pub(crate) fn parse_route(answer: &Value) -> Result<Route, String> {
    let model = answer.get("model").filter(|m| m.is_object()).ok_or("The router returned no model")?;
    let text = |key: &str| model.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let model = pi_ai::Model { provider: text("provider"), id: text("id"), ..Default::default() };
    let level = answer.get("thinkingLevel").and_then(Value::as_str).and_then(pi_ai::ThinkingLevel::parse);
    let state = answer.get("hasState").and_then(Value::as_bool).unwrap_or(false).then(|| answer["state"].clone());
    Ok(Route { model, thinking_level: level.unwrap_or(pi_ai::ThinkingLevel::Off), state })
}

/// A router that asks an extension process of its own over its link.
pub(crate) fn link_router(link: Weak<dyn Link>, path: String, provider: String, id: String) -> VirtualModelRouter {
    Arc::new(move |request: RouteRequest, ctx: ExtensionContext| {
        let (link, path, provider, id) = (link.clone(), path.clone(), provider.clone(), id.clone());
        Box::pin(async move {
            let link = link.upgrade().ok_or_else(|| super::register::NOT_RUNNING.to_owned())?;
            let params = route_params(&path, &provider, &id, &request, &ctx);
            let answer = link.call(METHOD_ROUTE, METHOD_ROUTE, params, link.options().call_timeout).await?;
            parse_route(&answer)
        })
    })
}
