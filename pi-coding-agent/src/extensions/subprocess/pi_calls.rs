//! `pi.*` calls from a subprocess extension, routed to the bound [`ExtensionActions`].
//!
//! [`ExtensionActions`]: crate::extensions::ExtensionActions

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pi_ai::{Content, UserBlock};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::protocol::{ERROR_ACTION_FAILED, ERROR_INVALID_PARAMS, ERROR_METHOD_NOT_FOUND, RpcError};
use crate::extensions::actions::{
    ExtensionMessage, ForkPosition, NavigateTreeRequest, SendMessageOptions, SendUserMessageOptions,
};
use crate::extensions::exec::{ExecOptions, exec_command};
use crate::extensions::runtime::{Runtime, lock};

fn invalid(e: impl std::fmt::Display) -> RpcError {
    RpcError { code: ERROR_INVALID_PARAMS, message: e.to_string(), data: None }
}

fn failed(e: impl std::fmt::Display) -> RpcError {
    RpcError { code: ERROR_ACTION_FAILED, message: e.to_string(), data: None }
}

fn field<T: DeserializeOwned>(params: &Value, name: &str) -> Result<T, RpcError> {
    serde_json::from_value(params.get(name).cloned().unwrap_or(Value::Null))
        .map_err(|e| invalid(format!("invalid \"{name}\": {e}")))
}

fn opt_field<T: DeserializeOwned>(params: &Value, name: &str) -> Result<Option<T>, RpcError> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|e| invalid(format!("invalid \"{name}\": {e}"))),
    }
}

/// Runs one `pi.*` method. Actions fail with pi's "not initialized" text before binding.
pub(crate) async fn handle_pi_call(
    runtime: &Arc<Runtime>,
    flags: &Mutex<HashMap<String, Value>>,
    method: &str,
    params: Value,
) -> Result<Value, RpcError> {
    match method {
        "pi.exec" => {
            let command: String = field(&params, "command")?;
            let args: Vec<String> = opt_field(&params, "args")?.unwrap_or_default();
            let options = params.get("options").cloned().unwrap_or(Value::Null);
            let cwd: Option<String> = opt_field(&options, "cwd")?;
            let exec = ExecOptions {
                cancel: None,
                timeout_ms: opt_field(&options, "timeout")?,
                cwd: cwd.clone(),
                max_buffer: opt_field(&options, "maxBuffer")?,
            };
            let result = exec_command(&command, &args, &cwd.unwrap_or_else(|| runtime.cwd.clone()), exec).await;
            return serde_json::to_value(result).map_err(failed);
        }
        // `pi.events.emit` in the JavaScript host: the Rust extensions' handlers.
        "events.emit" => {
            let channel: String = field(&params, "channel")?;
            let data = params.get("data").cloned().unwrap_or(Value::Null);
            runtime.bus.emit_local(&channel, &data, &runtime.error_sink());
            return Ok(Value::Null);
        }
        "pi.reportError" => {
            let path: String = opt_field(&params, "extensionPath")?.unwrap_or_default();
            let event: String = opt_field(&params, "event")?.unwrap_or_default();
            let error: String = field(&params, "error")?;
            runtime.report(crate::extensions::ExtensionError::new(path, event, error));
            return Ok(Value::Null);
        }
        m if m.starts_with("ui.") => return super::ui_calls::handle_ui_call(runtime, m, &params).await,
        "tool.update" => {
            let id: String = field(&params, "toolCallId")?;
            let partial = params.get("partial").cloned().unwrap_or(Value::Null);
            let ctx = lock(&runtime.tool_updates).get(&id).cloned();
            if let Some(ctx) = ctx {
                ctx.update(pi_agent_core::AgentToolResult {
                    content: serde_json::from_value(partial.get("content").cloned().unwrap_or(json!([])))
                        .map_err(invalid)?,
                    details: partial.get("details").cloned().unwrap_or_else(|| json!({})),
                    ..Default::default()
                });
            }
            return Ok(Value::Null);
        }
        "pi.runBuiltinTool" => return run_builtin_tool(runtime, &params).await,
        // A fresh context after a session control (`withSession(ctx)`).
        "ctx.snapshot" => {
            let ctx = crate::extensions::runtime::ExtensionContext { runtime: runtime.clone(), command: true };
            return Ok(super::link::context_snapshot(&ctx, true));
        }
        m if super::registry_calls::handles(m) => return super::registry_calls::handle(runtime, m, &params),
        "pi.getFlag" => {
            let name: String = field(&params, "name")?;
            let value = lock(&runtime.flag_values).get(&name).map(serde_json::to_value).transpose().map_err(failed)?;
            return Ok(value.or_else(|| lock(flags).get(&name).cloned()).unwrap_or(Value::Null));
        }
        _ => {}
    }
    let actions = runtime.actions().map_err(failed)?;
    let done = |r: Result<(), crate::extensions::BoxError>| r.map(|()| Value::Null).map_err(failed);
    match method {
        "pi.appendEntry" => {
            let custom_type: String = field(&params, "customType")?;
            done(actions.append_entry(&custom_type, opt_field(&params, "data")?))
        }
        "pi.sendMessage" => {
            let message: ExtensionMessage = field(&params, "message")?;
            let options: SendMessageOptions = opt_field(&params, "options")?.unwrap_or_default();
            done(actions.send_message(message, options))
        }
        "pi.sendUserMessage" => {
            let content: Content<UserBlock> = field(&params, "content")?;
            let options: SendUserMessageOptions = opt_field(&params, "options")?.unwrap_or_default();
            done(actions.send_user_message(content, options))
        }
        "pi.setSessionName" => done(actions.set_session_name(&field::<String>(&params, "name")?)),
        "pi.getSessionName" => Ok(actions.get_session_name().map(Value::String).unwrap_or(Value::Null)),
        "pi.setLabel" => {
            let entry_id: String = field(&params, "entryId")?;
            let label: Option<String> = opt_field(&params, "label")?;
            done(actions.set_label(&entry_id, label.as_deref()))
        }
        "pi.getActiveTools" => Ok(json!(actions.get_active_tools())),
        "pi.getAllTools" => serde_json::to_value(actions.get_all_tools()).map_err(failed),
        "pi.setActiveTools" => done(actions.set_active_tools(&field::<Vec<String>>(&params, "toolNames")?)),
        "pi.setThinkingLevel" => done(actions.set_thinking_level(&field::<String>(&params, "level")?)),
        "ctx.compact" => done(actions.compact(opt_field(&params, "customInstructions")?)),
        "ctx.waitForIdle" => actions.wait_for_idle().await.map(|()| Value::Null).map_err(failed),
        "pi.setModel" => {
            let provider: String = field(&params, "provider")?;
            let id: String = field(&params, "id")?;
            actions.set_model(&provider, &id).await.map(Value::Bool).map_err(failed)
        }
        "ctx.newSession" => super::session_calls::new_session(runtime, &*actions, &params).await,
        "ctx.fork" => {
            let entry_id: String = field(&params, "entryId")?;
            let position: ForkPosition = opt_field(&params, "position")?.unwrap_or_default();
            cancelled(actions.fork(&entry_id, position).await)
        }
        "ctx.navigateTree" => {
            let target_id: String = field(&params, "targetId")?;
            let options: NavigateTreeRequest = serde_json::from_value(params.clone()).map_err(invalid)?;
            cancelled(actions.navigate_tree(&target_id, options).await)
        }
        "ctx.switchSession" => cancelled(actions.switch_session(&field::<String>(&params, "sessionPath")?).await),
        "ctx.reload" => actions.reload().await.map(|()| Value::Null).map_err(failed),
        "ctx.abort" => {
            actions.abort();
            Ok(Value::Null)
        }
        "ctx.shutdown" => {
            actions.shutdown();
            Ok(Value::Null)
        }
        // `ctx.modelRegistry` of an out-of-process extension: the registry as the session sees
        // it now.
        "ctx.modelRegistry" => {
            let mut snapshot = super::link::model_registry_snapshot(&*actions);
            super::typed_calls::add_typed_models(&*actions, &mut snapshot);
            Ok(snapshot)
        }
        super::typed_calls::METHOD_CLASSIFY | super::typed_calls::METHOD_GENERATE_IMAGES => {
            let cancel = tokio_util::sync::CancellationToken::new();
            super::typed_calls::typed_call(&*actions, method, params, cancel).await.map_err(failed)
        }
        "ctx.sessionEntries" => super::session_calls::session_entries(&*actions, &params),
        other => {
            Err(RpcError { code: ERROR_METHOD_NOT_FOUND, message: format!("Unknown method: {other}"), data: None })
        }
    }
}

/// The `{cancelled}` answer of a session control.
fn cancelled(outcome: Result<bool, crate::extensions::BoxError>) -> Result<Value, RpcError> {
    outcome.map(|cancelled| json!({"cancelled": cancelled})).map_err(failed)
}

/// A built-in tool run for an extension (`createBashTool(cwd)` and friends in JavaScript).
async fn run_builtin_tool(runtime: &Runtime, params: &Value) -> Result<Value, RpcError> {
    let name: String = field(params, "name")?;
    let cwd: Option<String> = opt_field(params, "cwd")?;
    let tool_call_id: String = opt_field(params, "toolCallId")?.unwrap_or_default();
    let args: serde_json::Map<String, Value> = opt_field(params, "args")?.unwrap_or_default();
    let cwd = cwd.unwrap_or_else(|| runtime.cwd.clone());
    let tool = crate::tools::all_tools(&cwd, &crate::tools::ToolsOptions::default())
        .into_iter()
        .find(|t| t.name() == name)
        .ok_or_else(|| invalid(format!("Unknown built-in tool: {name}")))?;
    let ctx = pi_agent_core::ToolContext::detached();
    let result = tool.execute(&tool_call_id, args, ctx).await.map_err(failed)?;
    Ok(json!({"content": result.content, "details": result.details, "isError": result.is_error}))
}
