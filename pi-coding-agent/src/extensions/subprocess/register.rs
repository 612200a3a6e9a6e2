//! Registering what an out-of-process extension declared (its `initialize` answer) on its
//! [`ExtensionApi`]: forwarding handlers with pi's result semantics, tools, commands, flags,
//! shortcuts and renderers. Every call goes through a [`Link`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_agent_core::{AgentTool, AgentToolResult, ToolContext, ToolError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::link::{Link, context_snapshot};
use super::protocol::{InitializeResult, METHOD_COMMAND_RUN, METHOD_EVENT, METHOD_TOOL_EXECUTE, ToolRegistration};
use super::update_patch::UpdatePatcher;
use crate::extensions::ContextMessages;
use crate::extensions::api::{ExtensionApi, ToolDefinition};
use crate::extensions::errors::{BoxError, INVALID_USER_BASH_RESULT};
use crate::extensions::events::{
    BashResult, BeforeAgentStartEvent, BeforeProviderRequestEvent, ContextEvent, ContextWithSystemEvent,
    ExtensionEvent, InputEvent, MessageEndEvent, NotifyEvent, ToolCallEvent, ToolResultEvent, UserBashEvent,
    UserBashResult,
};
use crate::extensions::lifecycle_events::{CacheWarmingDecisionEvent, ResourcesDiscoverEvent};
use crate::extensions::provider_events::BeforeProviderHeadersEvent;
use crate::extensions::runtime::{ExtensionContext, lock};
use crate::messages::CodingAgentMessage;

/// The text of calls to an extension whose process is gone.
pub(crate) const NOT_RUNNING: &str = "Extension process is not running";

/// Serializes an event as pi does, with `type` first.
pub(crate) fn event_payload<E: Serialize>(name: &str, event: &E) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), Value::String(name.to_owned()));
    if let Ok(Value::Object(fields)) = serde_json::to_value(event) {
        for (k, v) in fields {
            if k != "type" {
                out.insert(k, v);
            }
        }
    }
    Value::Object(out)
}

fn event_params(name: &str, payload: Value, handler_id: Option<u64>, ctx: &ExtensionContext) -> Value {
    let with_session = name.starts_with("session_") || name == "before_agent_start";
    let mut params = json!({"event": name, "payload": payload, "ctx": context_snapshot(ctx, with_session)});
    if let (Some(id), Some(obj)) = (handler_id, params.as_object_mut()) {
        obj.insert("handlerId".into(), json!(id));
    }
    params
}

fn decode<T: DeserializeOwned>(value: Value, what: &str) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| format!("Invalid {what} result from extension: {e}"))
}

fn messages_field(value: &mut Value) -> Option<Value> {
    value.as_object_mut().and_then(|o| o.remove("messages")).filter(|v| !v.is_null())
}

/// Turns an extension's answer into a handler result (may update the event in place).
type Apply<E> = fn(Value, &mut E) -> Result<Option<<E as ExtensionEvent>::Output>, String>;

/// What a handler answers once the process is gone.
type DeadAnswer<E> = fn() -> Result<Option<<E as ExtensionEvent>::Output>, BoxError>;

/// Registers a forwarding handler of `E`; `apply` turns the answer into the handler's result.
fn forward<E>(api: &ExtensionApi, link: &Arc<dyn Link>, id: Option<u64>, apply: Apply<E>, dead: DeadAnswer<E>)
where
    E: ExtensionEvent + Serialize + Sync,
{
    let link = link.clone();
    api.on::<E>(move |event, ctx| {
        let link = link.clone();
        Box::pin(async move {
            if link.is_dead() {
                return dead();
            }
            let mut payload = event_payload(E::NAME, &*event);
            if let (Some(options), Some(obj)) = (prompt_options(&*event, ctx), payload.as_object_mut()) {
                obj.insert("systemPromptOptions".into(), options);
            }
            let params = event_params(E::NAME, payload, id, ctx);
            let answer = link.call(METHOD_EVENT, E::NAME, params, link.options().call_timeout).await?;
            if answer.is_null() {
                return Ok(None);
            }
            apply(answer, event).map_err(BoxError::from)
        })
    });
}

/// `before_agent_start`'s `systemPromptOptions`: the run's custom `sections` (handlers edit them
/// in place; the host answers the edited ones as `sections`), the active tools as
/// `selectedTools`, and `cwd`.
fn prompt_options(event: &dyn std::any::Any, ctx: &ExtensionContext) -> Option<Value> {
    let event = event.downcast_ref::<BeforeAgentStartEvent>()?;
    let tools = ctx.runtime.actions().map(|a| a.get_active_tools()).unwrap_or_default();
    Some(json!({"cwd": ctx.cwd(), "selectedTools": tools, "sections": event.sections}))
}

fn apply_before_agent_start(
    mut v: Value,
    e: &mut BeforeAgentStartEvent,
) -> Result<Option<<BeforeAgentStartEvent as ExtensionEvent>::Output>, String> {
    if let Some(sections) = v.as_object_mut().and_then(|o| o.remove("sections")).filter(|s| !s.is_null()) {
        e.sections = decode(sections, "before_agent_start")?;
    }
    decode(v, "before_agent_start").map(Some)
}

fn quiet<T>() -> Result<Option<T>, BoxError> {
    Ok(None)
}

fn apply_context(mut v: Value, e: &mut ContextEvent) -> Result<Option<ContextMessages>, String> {
    let Some(list) = messages_field(&mut v) else { return Ok(None) };
    let list: Vec<CodingAgentMessage> = decode(list, "context")?;
    // No identity across a process boundary: an equal list counts as unchanged.
    if list.len() == e.messages.len() && list.iter().zip(e.messages.iter()).all(|(a, b)| a == b) {
        return Ok(None);
    }
    Ok(Some(ContextMessages::from(list)))
}

fn apply_tool_call(
    mut v: Value,
    e: &mut ToolCallEvent,
) -> Result<Option<<ToolCallEvent as ExtensionEvent>::Output>, String> {
    if let Some(Value::Object(input)) = v.as_object_mut().and_then(|o| o.remove("input")) {
        e.input = input;
    }
    decode(v, "tool_call").map(Some)
}

fn apply_user_bash(v: Value, _: &mut UserBashEvent) -> Result<Option<UserBashResult>, String> {
    let result = v.get("result").cloned().ok_or(INVALID_USER_BASH_RESULT)?;
    let result: BashResult = serde_json::from_value(result).map_err(|_| INVALID_USER_BASH_RESULT)?;
    Ok(Some(UserBashResult::Result(result)))
}

/// `before_provider_headers`: the host answers the headers its handlers edited in place.
fn apply_headers(mut v: Value, e: &mut BeforeProviderHeadersEvent) -> Result<Option<()>, String> {
    if let Some(headers) = v.as_object_mut().and_then(|o| o.remove("headers")).filter(|h| !h.is_null()) {
        e.headers = decode(headers, "before_provider_headers")?;
    }
    Ok(None)
}

/// Registers one forwarding handler per declared handler (`(event, handler id)`).
pub(crate) fn register_events(api: &ExtensionApi, link: &Arc<dyn Link>, handlers: &[(String, Option<u64>)]) {
    for (name, id) in handlers {
        let id = *id;
        match name.as_str() {
            "context" => forward::<ContextEvent>(api, link, id, apply_context, quiet),
            "context_with_system" => forward::<ContextWithSystemEvent>(
                api,
                link,
                id,
                |mut v, _| match messages_field(&mut v) {
                    Some(list) => decode(list, "context_with_system").map(Some),
                    None => Ok(None),
                },
                quiet,
            ),
            "tool_call" => forward::<ToolCallEvent>(api, link, id, apply_tool_call, || Err(NOT_RUNNING.into())),
            "tool_result" => {
                forward::<ToolResultEvent>(api, link, id, |v, _| decode(v, "tool_result").map(Some), quiet)
            }
            "message_end" => forward::<MessageEndEvent>(
                api,
                link,
                id,
                |v, _| match v.get("message") {
                    Some(m) if !m.is_null() => decode(m.clone(), "message_end").map(Some),
                    _ => Ok(None),
                },
                quiet,
            ),
            "input" => forward::<InputEvent>(api, link, id, |v, _| decode(v, "input").map(Some), quiet),
            "before_agent_start" => forward::<BeforeAgentStartEvent>(api, link, id, apply_before_agent_start, quiet),
            "user_bash" => forward::<UserBashEvent>(api, link, id, apply_user_bash, quiet),
            "before_provider_request" => {
                forward::<BeforeProviderRequestEvent>(api, link, id, |v, _| Ok(Some(v)), quiet)
            }
            "before_provider_headers" => forward::<BeforeProviderHeadersEvent>(api, link, id, apply_headers, quiet),
            "resources_discover" => forward::<ResourcesDiscoverEvent>(
                api,
                link,
                id,
                |v, _| decode(v, "resources_discover").map(Some),
                quiet,
            ),
            "cache_warming_decision" => forward::<CacheWarmingDecisionEvent>(
                api,
                link,
                id,
                |v, _| decode(v, "cache_warming_decision").map(Some),
                quiet,
            ),
            "message_update" if link.patches_updates() => register_update(api, link, id),
            other => register_notify(api, link, other, id),
        }
    }
}

/// Events without a typed result: awaited (their answer is the result) when pi awaits them,
/// notifications otherwise.
fn register_notify(api: &ExtensionApi, link: &Arc<dyn Link>, name: &str, id: Option<u64>) {
    let link = link.clone();
    let name = name.to_owned();
    let event_name = name.clone();
    api.on_notify(&event_name, move |event, ctx| {
        let link = link.clone();
        let name = name.clone();
        let params = event_params(&name, event_payload(&name, &*event), id, ctx);
        Box::pin(async move {
            if link.awaits_every_event() || awaited(&name) {
                if link.is_dead() {
                    return Ok(None);
                }
                let answer = link.call(METHOD_EVENT, &name, params, link.options().call_timeout).await?;
                return Ok((!answer.is_null()).then_some(answer));
            }
            link.notify(METHOD_EVENT, params).await;
            Ok(None)
        })
    });
}

/// `message_update` to a process that holds the streaming message: a patch per delta
/// ([`super::update_patch`]), the message whole at its first event, after a failure and after
/// the process was started again. The updates are settled before the message's end (the
/// JavaScript host does not answer each before the next is sent: `node::update_queue`).
fn register_update(api: &ExtensionApi, link: &Arc<dyn Link>, id: Option<u64>) {
    let patcher = Arc::new(UpdatePatcher::default());
    let path: Arc<str> = api.path().into();
    let (sender, reported) = (link.clone(), path.clone());
    let forget = patcher.clone();
    api.on_notify("message_update", move |event, ctx| {
        let NotifyEvent::MessageUpdate { message, assistant_message_event } = &*event else {
            return Box::pin(async { Ok(None) });
        };
        let Some(message) = message.as_assistant() else {
            return Box::pin(async { Ok(None) });
        };
        let (link, patcher, path, runtime) = (sender.clone(), forget.clone(), reported.clone(), ctx.runtime.clone());
        let (payload, snapshot) = patcher.params(message, assistant_message_event, ctx, link.generation());
        let mut params = json!({"event": "message_update", "payload": payload, "ctx": snapshot});
        if let (Some(id), Some(obj)) = (id, params.as_object_mut()) {
            obj.insert("handlerId".into(), json!(id));
        }
        Box::pin(async move {
            let failures = link.send_update(params).await;
            report_update_failures(&runtime, &path, &patcher, failures);
            Ok(None)
        })
    });
    let link = link.clone();
    api.on::<MessageEndEvent>(move |_, ctx| {
        let (link, patcher, path, runtime) = (link.clone(), patcher.clone(), path.clone(), ctx.runtime.clone());
        Box::pin(async move {
            let failures = link.settle_updates().await;
            report_update_failures(&runtime, &path, &patcher, failures);
            Ok(None)
        })
    });
}

/// Reports the failed `message_update` handlers (a run of the same failure once: a host that
/// died fails every update it had not answered); after a failure the next update goes whole.
fn report_update_failures(
    runtime: &crate::extensions::runtime::Runtime,
    path: &str,
    patcher: &UpdatePatcher,
    mut failures: Vec<String>,
) {
    if failures.is_empty() {
        return;
    }
    failures.dedup();
    patcher.forget();
    for failure in failures {
        runtime.report(crate::extensions::errors::ExtensionError::new(path, "message_update", failure));
    }
}

/// Whether pi awaits an event's handlers (their answer matters, or their side effects must land
/// before pi goes on).
fn awaited(name: &str) -> bool {
    name.starts_with("session_before_")
        || matches!(
            name,
            "project_trust"
                | "resources_discover"
                | "before_provider_headers"
                | "after_provider_response"
                | "cache_warming_decision"
                | "turn_end"
                | "agent_before_settle"
                | "session_start"
                | "session_shutdown"
                | "agent_end"
                | "model_select"
                | "thinking_level_select"
        )
}

/// A tool that runs in the extension's process.
struct RemoteTool {
    link: Arc<dyn Link>,
    reg: ToolRegistration,
    runtime: std::sync::Weak<crate::extensions::runtime::Runtime>,
}

/// Removes a running tool's update route when its call ends.
struct UpdateRoute {
    runtime: std::sync::Weak<crate::extensions::runtime::Runtime>,
    id: String,
}

impl Drop for UpdateRoute {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.upgrade() {
            lock(&runtime.tool_updates).remove(&self.id);
        }
    }
}

#[async_trait]
impl AgentTool for RemoteTool {
    fn name(&self) -> &str {
        &self.reg.name
    }

    fn label(&self) -> &str {
        self.reg.label.as_deref().unwrap_or(&self.reg.name)
    }

    fn description(&self) -> &str {
        &self.reg.description
    }

    fn parameters(&self) -> &Value {
        &self.reg.parameters
    }

    fn constrained_sampling(&self) -> Option<Value> {
        self.reg.constrained_sampling.clone()
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<AgentToolResult, ToolError> {
        let mut params = json!({"toolName": self.reg.name, "toolCallId": tool_call_id, "args": args});
        if let Some(runtime) = self.runtime.upgrade() {
            lock(&runtime.tool_updates).insert(tool_call_id.to_owned(), ctx.clone());
            // The tool's `ctx` (its `mode`, `hasUI`, …) as of this call.
            let snapshot =
                context_snapshot(&crate::extensions::runtime::ExtensionContext { runtime, command: false }, false);
            params["ctx"] = snapshot;
        }
        let _route = UpdateRoute { runtime: self.runtime.clone(), id: tool_call_id.to_owned() };
        let call = self.link.call(METHOD_TOOL_EXECUTE, &self.reg.name, params, self.link.options().tool_timeout);
        let answer = tokio::select! {
            r = call => r.map_err(ToolError::new)?,
            _ = ctx.cancel_token().cancelled() => {
                self.link.notify("tool.cancel", json!({"toolCallId": tool_call_id})).await;
                return Err(ToolError::new("Tool execution was aborted"));
            }
        };
        let content = answer.get("content").cloned().unwrap_or(Value::Array(Vec::new()));
        let content =
            serde_json::from_value(content).map_err(|e| ToolError::new(format!("Invalid tool result: {e}")))?;
        Ok(AgentToolResult {
            content,
            details: answer.get("details").cloned().unwrap_or_else(|| json!({})),
            is_error: answer.get("isError").and_then(Value::as_bool).unwrap_or(false),
            // pi's `terminate: true`: the run ends after this batch.
            terminate: answer.get("terminate").and_then(Value::as_bool).unwrap_or(false),
            ..Default::default()
        })
    }
}

/// Registers everything `init` declares. Flag defaults are kept in `flag_defaults` for `pi.getFlag`.
pub(crate) fn register_all(
    api: &ExtensionApi,
    link: &Arc<dyn Link>,
    init: InitializeResult,
    flag_defaults: &Mutex<HashMap<String, Value>>,
) -> Result<(), BoxError> {
    for flag in &init.flags {
        api.register_flag(&flag.name, flag.kind, flag.default.clone(), flag.description.as_deref())?;
        if let Some(d) = &flag.default {
            lock(flag_defaults).insert(flag.name.clone(), serde_json::to_value(d)?);
        }
    }
    super::remote_render::register_tool_renderers(api, link, &init);
    for reg in init.tools {
        let definition = ToolDefinition {
            prompt_snippet: reg.prompt_snippet.clone(),
            prompt_guidelines: reg.prompt_guidelines.clone(),
            tool: Arc::new(RemoteTool { link: link.clone(), reg, runtime: Arc::downgrade(&api.runtime) }),
        };
        api.register_tool(definition)?;
    }
    for cmd in init.commands {
        let link = link.clone();
        let name = cmd.name.clone();
        api.register_command(&cmd.name, cmd.description.as_deref(), move |args, ctx| {
            let link = link.clone();
            let name = name.clone();
            Box::pin(async move {
                let params = json!({"name": name, "args": args, "ctx": context_snapshot(&ctx, true)});
                link.call(METHOD_COMMAND_RUN, &name, params, link.options().call_timeout).await?;
                Ok(())
            })
        })?;
    }
    for shortcut in init.shortcuts {
        let link = link.clone();
        let key = shortcut.shortcut.clone();
        api.register_shortcut(&shortcut.shortcut, shortcut.description.as_deref(), move |ctx| {
            let link = link.clone();
            let key = key.clone();
            Box::pin(async move {
                let params = json!({"shortcut": key, "ctx": context_snapshot(&ctx, true)});
                link.call("shortcut.run", &key, params, link.options().call_timeout).await?;
                Ok(())
            })
        })?;
    }
    let handlers: Vec<(String, Option<u64>)> = if init.handlers.is_empty() {
        init.events.iter().map(|e| (e.clone(), None)).collect()
    } else {
        init.handlers.iter().map(|h| (h.event.clone(), Some(h.id))).collect()
    };
    register_events(api, link, &handlers);
    super::remote_render::register_renderers(api, link, &init.entry_renderers, &init.message_renderers);
    Ok(())
}
