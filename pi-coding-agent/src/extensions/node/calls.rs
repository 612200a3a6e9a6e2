//! Calls from the JavaScript host (`pi.*`, `ui.*`, `ctx.*`), routed like a subprocess
//! extension's; while a dialog (or a custom component) is open the host's handlers are waiting
//! for the user, so their timeouts do not run. The component bridge's calls are answered here:
//! `ui.custom`, `ui.customDone`, `ui.requestRender`, and `ui.setWidget` / `ui.setFooter` /
//! `ui.setHeader` naming a host component (`componentId`).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

use serde_json::{Value, json};

use super::component::ComponentHandle;
use super::process::Connection;
use crate::extensions::runtime::{Runtime, lock};
use crate::extensions::subprocess::pi_calls::handle_pi_call;
use crate::extensions::subprocess::protocol::{ERROR_INVALID_PARAMS, RpcError};
use crate::extensions::subprocess::ui_calls::is_dialog;
use crate::ui::{CustomDone, CustomFactory, CustomOptions, WidgetContent, WidgetPlacement};

/// `ctx.ui.custom()`: answered when the component is finished or dismissed.
pub(crate) const UI_CUSTOM: &str = "ui.custom";

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
    // Flags are answered inside the host; this map only serves `pi.getFlag` of other clients.
    let flags = Mutex::new(HashMap::new());
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

fn component_id(params: &Value) -> Option<u64> {
    params.get("componentId").or_else(|| params.get("id")).and_then(Value::as_u64)
}

/// The component named by `params`, as the UI draws it.
fn handle_of(runtime: &Arc<Runtime>, conn: &Weak<Connection>, params: &Value, id: u64) -> ComponentHandle {
    ComponentHandle {
        conn: conn.clone(),
        runtime: Arc::downgrade(runtime),
        path: params.get("extensionPath").and_then(Value::as_str).unwrap_or_default().to_owned(),
        id,
        timeout: conn.upgrade().map(|c| c.render_timeout).unwrap_or_default(),
    }
}

/// The bridge's calls; `None` for every other call.
async fn component_call(
    runtime: &Arc<Runtime>,
    conn: &Weak<Connection>,
    method: &str,
    params: &Value,
) -> Option<Result<Value, RpcError>> {
    let ui = runtime.ui();
    match method {
        "ui.requestRender" => {
            if let Some(c) = conn.upgrade() {
                c.render_generation.fetch_add(1, Ordering::AcqRel);
            }
            ui.request_render();
        }
        "ui.setWidget" => {
            let id = component_id(params)?;
            let placement = match params.get("placement").and_then(Value::as_str) {
                Some("belowEditor") => WidgetPlacement::BelowEditor,
                _ => WidgetPlacement::AboveEditor,
            };
            let key = params.get("key").and_then(Value::as_str).unwrap_or_default();
            let factory = handle_of(runtime, conn, params, id).factory();
            ui.set_widget(key, Some(WidgetContent::Component(factory)), placement);
        }
        "ui.setFooter" => ui.set_footer(component_id(params).map(|id| handle_of(runtime, conn, params, id).factory())),
        "ui.setHeader" => ui.set_header(component_id(params).map(|id| handle_of(runtime, conn, params, id).factory())),
        "ui.customDone" => {
            let (Some(id), Some(c)) = (component_id(params), conn.upgrade()) else { return Some(Ok(Value::Null)) };
            let done = lock(&c.customs).entry(id).or_insert(None).clone();
            if let Some(done) = done {
                done.done(None);
            }
        }
        UI_CUSTOM => return Some(custom(runtime, conn, params).await),
        _ => return None,
    }
    Some(Ok(Value::Null))
}

/// Shows a host component with focus until the extension finishes it (`ui.customDone`) or the UI
/// dismisses it.
async fn custom(runtime: &Arc<Runtime>, conn: &Weak<Connection>, params: &Value) -> Result<Value, RpcError> {
    let Some(id) = component_id(params) else {
        return Err(RpcError { code: ERROR_INVALID_PARAMS, message: "ui.custom needs an id".into(), data: None });
    };
    let handle = handle_of(runtime, conn, params, id);
    let weak = conn.clone();
    let factory: CustomFactory = Box::new(move |theme, done: Arc<CustomDone>| {
        if let Some(c) = weak.upgrade() {
            let mut customs = lock(&c.customs);
            match customs.get(&id) {
                // Finished before it was shown.
                Some(None) => done.done(None),
                _ => {
                    customs.insert(id, Some(done));
                }
            }
        }
        Box::new(super::component::JsComponent::new(handle, theme))
    });
    let opts = CustomOptions {
        overlay: params.get("overlay").and_then(Value::as_bool).unwrap_or(false),
        overlay_options: params.get("overlayOptions").filter(|o| o.is_object()).cloned(),
    };
    let open = conn.upgrade();
    if let Some(c) = &open {
        c.dialogs.fetch_add(1, Ordering::AcqRel);
    }
    runtime.ui().custom(factory, opts).await;
    if let Some(c) = &open {
        c.dialogs.fetch_sub(1, Ordering::AcqRel);
        lock(&c.customs).remove(&id);
    }
    Ok(json!(null))
}
