//! `ui.*` calls from an out-of-process extension (protocol version 2), answered by the session's
//! [`UiHost`](crate::ui::UiHost): dialogs resolve to the user's answer (`null` when dismissed or
//! without a UI, as pi's no-UI context), the other methods answer `null`.

use std::time::Duration;

use serde_json::{Value, json};

use super::protocol::{ERROR_ACTION_FAILED, ERROR_METHOD_NOT_FOUND, RpcError};
use crate::extensions::runtime::Runtime;
use crate::ui::{DialogOptions, NotifyKind, WidgetContent, WidgetPlacement, WorkingIndicator};

fn text(params: &Value, key: &str) -> Option<String> {
    params.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Theme colors written by a JavaScript extension (`ctx.ui.theme.fg(…)`) in the UI's theme.
fn styled(theme: Option<&pi_tui::Theme>, params: &Value, key: &str) -> Option<String> {
    text(params, key).map(|t| super::remote_render::apply_theme_opt(&t, theme))
}

fn dialog_options(params: &Value) -> DialogOptions {
    let timeout = params.get("opts").and_then(|o| o.get("timeout")).and_then(Value::as_u64).map(Duration::from_millis);
    DialogOptions { cancel: None, timeout }
}

/// Whether `method` waits for the user.
pub(crate) fn is_dialog(method: &str) -> bool {
    matches!(method, "ui.select" | "ui.confirm" | "ui.input" | "ui.editor")
}

/// Runs one `ui.*` method.
pub(crate) async fn handle_ui_call(runtime: &Runtime, method: &str, params: &Value) -> Result<Value, RpcError> {
    let ui = runtime.ui();
    let theme = ui.theme();
    let theme = theme.as_ref();
    let title = styled(theme, params, "title").unwrap_or_default();
    let answer = match method {
        "ui.select" => {
            let options: Vec<String> = params
                .get("options")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|v| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())).collect())
                .unwrap_or_default();
            json!(ui.select(&title, &options, dialog_options(params)).await)
        }
        "ui.confirm" => {
            json!(ui.confirm(&title, &text(params, "message").unwrap_or_default(), dialog_options(params)).await)
        }
        "ui.input" => json!(ui.input(&title, text(params, "placeholder").as_deref(), dialog_options(params)).await),
        "ui.editor" => json!(ui.editor(&title, text(params, "prefill").as_deref()).await),
        "ui.notify" => {
            let kind = match params.get("type").and_then(Value::as_str) {
                Some("warning") => NotifyKind::Warning,
                Some("error") => NotifyKind::Error,
                _ => NotifyKind::Info,
            };
            ui.notify(&styled(theme, params, "message").unwrap_or_default(), kind);
            Value::Null
        }
        "ui.setStatus" => {
            ui.set_status(&text(params, "key").unwrap_or_default(), styled(theme, params, "text").as_deref());
            Value::Null
        }
        "ui.setWorkingMessage" => {
            ui.set_working_message(styled(theme, params, "message").as_deref());
            Value::Null
        }
        "ui.setWorkingVisible" => {
            ui.set_working_visible(params.get("visible").and_then(Value::as_bool).unwrap_or(true));
            Value::Null
        }
        "ui.setWorkingIndicator" => {
            let indicator = params.get("options").filter(|o| !o.is_null()).map(|o| WorkingIndicator {
                frames: o
                    .get("frames")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                    .unwrap_or_default(),
                interval_ms: o.get("intervalMs").and_then(Value::as_u64),
            });
            ui.set_working_indicator(indicator);
            Value::Null
        }
        "ui.setHiddenThinkingLabel" => {
            ui.set_hidden_thinking_label(styled(theme, params, "label").as_deref());
            Value::Null
        }
        "ui.setWidget" => {
            let content = params.get("content").and_then(Value::as_array).map(|a| {
                WidgetContent::Lines(
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(|l| super::remote_render::apply_theme_opt(l, theme))
                        .collect(),
                )
            });
            let placement = match params.get("placement").and_then(Value::as_str) {
                Some("belowEditor") => WidgetPlacement::BelowEditor,
                _ => WidgetPlacement::AboveEditor,
            };
            ui.set_widget(&text(params, "key").unwrap_or_default(), content, placement);
            Value::Null
        }
        "ui.setTitle" => {
            ui.set_title(&title);
            Value::Null
        }
        "ui.pasteToEditor" => {
            ui.paste_to_editor(&text(params, "text").unwrap_or_default());
            Value::Null
        }
        "ui.setEditorText" => {
            ui.set_editor_text(&text(params, "text").unwrap_or_default());
            Value::Null
        }
        "ui.getEditorText" => json!(ui.get_editor_text()),
        "ui.setTheme" => {
            return ui
                .set_theme(&text(params, "name").unwrap_or_default())
                .map(|()| Value::Null)
                .map_err(|message| RpcError { code: ERROR_ACTION_FAILED, message, data: None });
        }
        "ui.setToolsExpanded" => {
            ui.set_tools_expanded(params.get("expanded").and_then(Value::as_bool).unwrap_or(false));
            Value::Null
        }
        other => {
            return Err(RpcError {
                code: ERROR_METHOD_NOT_FOUND,
                message: format!("Unknown method: {other}"),
                data: None,
            });
        }
    };
    Ok(answer)
}
