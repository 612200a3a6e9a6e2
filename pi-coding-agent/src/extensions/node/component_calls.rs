//! The component bridge's calls from the JavaScript host: `ui.custom`, `ui.customDone`,
//! `ui.requestRender`, `ui.componentLines` (lines the host pushed), `ui.setWidget` /
//! `ui.setFooter` / `ui.setHeader` / `ui.setEditorComponent` naming a host component
//! (`componentId`), `ui.showOverlay` and `ui.overlay` (pi-tui's `tui.showOverlay` and its
//! handle), `ui.overlayVisible` (an overlay's `visible` answer changed), `ui.terminalInput`
//! (`onTerminalInput` listeners there or not) and `ui.addAutocompleteProvider`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use super::component::{ComponentHandle, JsComponent, overlay_visibility};
use super::component_input::{completions_wrapper, input_listener};
use super::process::Connection;
use crate::extensions::runtime::{Runtime, lock};
use crate::extensions::subprocess::protocol::{ERROR_INVALID_PARAMS, RpcError};
use crate::ui::{CustomDone, CustomFactory, CustomOptions, OverlayOp, WidgetContent, WidgetPlacement};

/// `ctx.ui.custom()`: answered when the component is finished or dismissed.
pub(crate) const UI_CUSTOM: &str = "ui.custom";

/// The name of the host's raw input listener in the UI.
const INPUT_LISTENER: &str = "javascript-host";

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
        footer: false,
    }
}

fn str_of<'a>(params: &'a Value, key: &str) -> &'a str {
    params.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// An overlay handle's call (`{key, op, hidden?}`).
fn overlay_op(params: &Value) -> Option<OverlayOp> {
    Some(match str_of(params, "op") {
        "hide" => OverlayOp::Hide,
        "setHidden" => OverlayOp::SetHidden(params.get("hidden").and_then(Value::as_bool).unwrap_or(false)),
        "focus" => OverlayOp::Focus,
        "unfocus" => OverlayOp::Unfocus,
        _ => return None,
    })
}

/// The bridge's calls; `None` for every other call.
pub(crate) async fn component_call(
    runtime: &Arc<Runtime>,
    conn: &Weak<Connection>,
    method: &str,
    params: &Value,
) -> Option<Result<Value, RpcError>> {
    let ui = runtime.ui();
    match method {
        // The host pushed what changed before asking (`sweep`): nothing to forget here.
        "ui.requestRender" => ui.request_render(),
        "ui.componentLines" => {
            let (Some(id), Some(c)) = (component_id(params), conn.upgrade()) else { return Some(Ok(Value::Null)) };
            let width = params.get("width").and_then(Value::as_u64).unwrap_or(0) as usize;
            c.bridge.push(id, width, params.clone());
        }
        "ui.setWidget" => {
            let id = component_id(params)?;
            let placement = match params.get("placement").and_then(Value::as_str) {
                Some("belowEditor") => WidgetPlacement::BelowEditor,
                _ => WidgetPlacement::AboveEditor,
            };
            let factory = handle_of(runtime, conn, params, id).factory();
            ui.set_widget(str_of(params, "key"), Some(WidgetContent::Component(factory)), placement);
        }
        "ui.setFooter" => ui.set_footer(component_id(params).map(|id| {
            let mut handle = handle_of(runtime, conn, params, id);
            handle.footer = true;
            handle.factory()
        })),
        "ui.setHeader" => ui.set_header(component_id(params).map(|id| handle_of(runtime, conn, params, id).factory())),
        "ui.setEditorComponent" => ui
            .set_editor_component(component_id(params).map(|id| handle_of(runtime, conn, params, id).editor_factory())),
        "ui.showOverlay" => {
            let id = component_id(params)?;
            let options = params.get("overlayOptions").filter(|o| o.is_object()).cloned();
            let key = str_of(params, "key");
            ui.set_overlay_visible(key, Some(overlay_visibility(conn.clone(), key.to_owned())));
            ui.show_overlay(key, handle_of(runtime, conn, params, id).factory(), options);
        }
        "ui.overlayVisible" => {
            let Some(c) = conn.upgrade() else { return Some(Ok(Value::Null)) };
            let size = |k: &str| params.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
            let visible = params.get("visible").and_then(Value::as_bool).unwrap_or(true);
            c.bridge.set_visible(str_of(params, "key"), size("columns"), size("rows"), visible);
        }
        "ui.overlay" => {
            if let Some(op) = overlay_op(params) {
                ui.overlay(str_of(params, "key"), op);
            }
        }
        "ui.terminalInput" => {
            let active = params.get("active").and_then(Value::as_bool).unwrap_or(false);
            let listener = active.then(|| input_listener(conn.clone()));
            ui.set_terminal_input_listener(INPUT_LISTENER, listener);
        }
        "ui.addAutocompleteProvider" => {
            // The host chains its providers itself: the UI wraps its own once.
            if let Some(c) = conn.upgrade()
                && !c.bridge.autocomplete.swap(true, Ordering::AcqRel)
            {
                ui.add_autocomplete_provider(completions_wrapper(conn.clone()));
            }
        }
        "ui.customDone" => {
            let (Some(id), Some(c)) = (component_id(params), conn.upgrade()) else { return Some(Ok(Value::Null)) };
            let done = lock(&c.customs).entry(id).or_insert(None).clone();
            if let Some(done) = done {
                done.done(None);
            }
        }
        "ui.renderMarkdown" => return Some(Ok(markdown_lines(ui.theme(), params))),
        UI_CUSTOM => return Some(custom(runtime, conn, params).await),
        _ => return None,
    }
    Some(Ok(Value::Null))
}

/// `ui.renderMarkdown`: a host Markdown's lines, drawn with the theme in force.
fn markdown_lines(theme: Option<pi_tui::Theme>, params: &Value) -> Value {
    match theme {
        Some(theme) => crate::extensions::subprocess::remote_markdown::render_markdown(params, &theme),
        None => json!({ "lines": [] }),
    }
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
        Box::new(JsComponent::new(handle, theme))
    });
    let opts = CustomOptions {
        overlay: params.get("overlay").and_then(Value::as_bool).unwrap_or(false),
        overlay_options: params.get("overlayOptions").filter(|o| o.is_object()).cloned(),
        handle_key: params.get("handleKey").and_then(Value::as_str).map(str::to_owned),
        blocked: params.get("blocked").and_then(blocked_status),
    };
    if let Some(key) = &opts.handle_key {
        runtime.ui().set_overlay_visible(key, Some(overlay_visibility(conn.clone(), key.clone())));
    }
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

/// pi's `blocked` option (`{ kind, message }`); anything else is no option.
fn blocked_status(value: &Value) -> Option<crate::ui::BlockedStatus> {
    let kind = pi_tui::program_status::BlockedKind::parse(value.get("kind")?.as_str()?)?;
    let message = value.get("message")?.as_str()?;
    Some(crate::ui::BlockedStatus::new(kind, message))
}
