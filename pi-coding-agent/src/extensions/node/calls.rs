//! Calls from the JavaScript host (`pi.*`, `ui.*`, `ctx.*`), routed like a subprocess
//! extension's; while a dialog (or a custom component) is open the host's handlers are waiting
//! for the user, so their timeouts do not run. The component bridge's calls are answered by
//! `component_calls`.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use super::component_calls::component_call;
use super::process::Connection;
use crate::extensions::runtime::Runtime;
use crate::extensions::subprocess::pi_calls::handle_pi_call;
use crate::extensions::subprocess::protocol::RpcError;
use crate::extensions::subprocess::ui_calls::is_dialog;

pub(crate) use super::component_calls::UI_CUSTOM;

/// Runs one call of the host.
pub(crate) async fn handle_host_call(
    runtime: &Arc<Runtime>,
    conn: &Weak<Connection>,
    method: &str,
    params: Value,
) -> Result<Value, RpcError> {
    if let Some(answer) = component_call(runtime, conn, method, &params).await {
        return answer;
    }
    if let Some(answer) = super::virtual_models::host_call(runtime, method, &params) {
        return answer;
    }
    if let Some(answer) = super::provider_stream::host_call(method, &params) {
        return answer;
    }
    if let Some(answer) = super::provider_options::host_call(method, &params).await {
        return answer;
    }
    if let Some(answer) = super::provider_oauth::host_call(method, &params).await {
        return answer;
    }
    if let Some(answer) = super::model_registry_calls::host_call(runtime, conn, method, &params).await {
        return answer;
    }
    // Flags are answered inside the host; this map only serves `pi.getFlag` of other clients.
    let flags = Mutex::new(HashMap::new());
    if crate::extensions::subprocess::registry_calls::handles(method) {
        let result = handle_pi_call(runtime, &flags, method, params.clone()).await;
        if result.is_ok() {
            // A provider's `oauth` is offered by `/login`.
            super::provider_oauth::after_registry_call(runtime, method, &params);
            // Its `refreshModels` / `oauth.modifyModels` make its models.
            super::provider_models::after_registry_call(runtime, &params);
        }
        return result;
    }
    if !is_dialog(method) {
        return handle_pi_call(runtime, &flags, method, params).await;
    }
    let open = conn.upgrade();
    if let Some(c) = &open {
        c.dialogs.fetch_add(1, Ordering::AcqRel);
    }
    let result = handle_pi_call(runtime, &flags, method, params).await;
    if let Some(c) = &open {
        c.dialogs.fetch_sub(1, Ordering::AcqRel);
    }
    result
}
