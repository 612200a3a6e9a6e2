//! `pi.registerVirtualModel` / `pi.unregisterVirtualModel` from a JavaScript extension: the
//! catalog entry is registered here, and its router stays in the host: every request routed
//! through it asks the host (`virtualModel.route`, the protocol's message, see
//! [`crate::extensions::subprocess`]) with pi's route request and a context whose
//! `ctx.modelRegistry` knows the session's models. The host answers the model it picked, the
//! thinking level and, when the router returned a new object, the new state.

use std::sync::{Arc, Weak};

use serde_json::Value;

use super::NodeHost;
use crate::extensions::runtime::{ExtensionContext, Runtime, lock};
use crate::extensions::subprocess::protocol::RpcError;
use crate::extensions::subprocess::virtual_models::{METHOD_ROUTE, handle_call, parse_route, route_params};
use crate::extensions::virtual_models::{RouteRequest, VirtualModelRouter};

pub(crate) use crate::extensions::subprocess::virtual_models::handles;

/// Runs a registration call of the host; `None` for any other method.
pub(crate) fn host_call(runtime: &Arc<Runtime>, method: &str, params: &Value) -> Option<Result<Value, RpcError>> {
    if !handles(method) {
        return None;
    }
    let path = params.get("extensionPath").and_then(Value::as_str).unwrap_or_default().to_owned();
    let weak = Arc::downgrade(runtime);
    let make = |provider: &str, id: &str| router(weak, path.clone(), provider.to_owned(), id.to_owned());
    Some(handle_call(runtime, method, params, &path, make))
}

/// A router that asks the host (started again if it died).
fn router(runtime: Weak<Runtime>, path: String, provider: String, id: String) -> VirtualModelRouter {
    Arc::new(move |request: RouteRequest, ctx: ExtensionContext| {
        let (runtime, path, provider, id) = (runtime.clone(), path.clone(), provider.clone(), id.clone());
        Box::pin(async move {
            let runtime = runtime.upgrade().ok_or_else(|| "The session was disposed".to_owned())?;
            let host = lock(&runtime.node_host).upgrade().and_then(|h| h.downcast::<NodeHost>().ok());
            let host = host.ok_or_else(|| "The JavaScript extension host is not running".to_owned())?;
            let conn = host.connection().await?;
            let params = route_params(&path, &provider, &id, &request, &ctx);
            let answer = conn.call(METHOD_ROUTE, METHOD_ROUTE, params, host.options.call_timeout).await?;
            parse_route(&answer)
        })
    })
}
