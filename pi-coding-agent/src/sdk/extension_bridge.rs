//! Wiring of the extension runner into a session: the `context` events are the agent's
//! `transform_context`, `tool_call` / `tool_result` wrap every tool execution, agent events are
//! forwarded as notifications, and the session implements the actions extensions call.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use pi_agent_core::{
    AfterToolCallContext, AfterToolCallResult, AgentEvent, BeforeToolCallContext, BeforeToolCallResult, BoxError,
    ToolCallHooks, TransformContext,
};
use pi_ai::{Content, UserBlock};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::session::{AgentSession, SessionShared};
use crate::extensions::{
    DeliverAs, ExtensionActions, ExtensionMessage, ExtensionRunner, NotifyEvent, SendMessageOptions,
    SendUserMessageOptions, ToolCallEvent, ToolInfo, ToolResultEvent,
};
use crate::messages::{CodingAgentMessage, CodingMessage, CustomRoleMessage};

/// The runner as the agent's hooks.
pub(crate) struct ExtensionHooks {
    pub(crate) runner: Arc<ExtensionRunner>,
}

#[async_trait]
impl TransformContext<CodingMessage> for ExtensionHooks {
    async fn transform_context(
        &self,
        messages: Vec<CodingAgentMessage>,
        _cancel: &CancellationToken,
    ) -> Result<Vec<CodingAgentMessage>, BoxError> {
        // `context` handlers never see system messages (the head is restored after them);
        // `context_with_system` handlers own them.
        Ok(self.runner.emit_context(messages).await)
    }
}

#[async_trait]
impl ToolCallHooks<CodingMessage> for ExtensionHooks {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_, CodingMessage>,
        _cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCallResult>, BoxError> {
        let mut event = ToolCallEvent {
            tool_call_id: ctx.tool_call.id.clone(),
            tool_name: ctx.tool_call.name.clone(),
            input: ctx.args.clone(),
            parent_tool_call_id: None,
        };
        match self.runner.emit_tool_call(&mut event).await {
            // Fail closed: a failing `tool_call` handler blocks the call with its error text.
            Err(error) => Ok(Some(BeforeToolCallResult { block: true, reason: Some(error.error), terminate: false })),
            Ok(Some(r)) if r.block => {
                Ok(Some(BeforeToolCallResult { block: true, reason: r.reason, terminate: r.terminate }))
            }
            Ok(_) => Ok(None),
        }
    }

    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_, CodingMessage>,
        _cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCallResult>, BoxError> {
        let event = ToolResultEvent {
            tool_name: ctx.tool_call.name.clone(),
            tool_call_id: ctx.tool_call.id.clone(),
            input: ctx.args.clone(),
            content: ctx.result.content.clone(),
            details: ctx.result.details.clone(),
            structured_content: ctx.result.structured_content.clone(),
            is_error: ctx.is_error,
            usage: ctx.result.usage.clone(),
        };
        Ok(self.runner.emit_tool_result(event).await.map(|p| AfterToolCallResult {
            content: p.content,
            details: p.details,
            structured_content: p.structured_content,
            is_error: p.is_error,
            usage: p.usage,
            terminate: None,
        }))
    }
}

/// Agent events as extension notifications (`tool_execution_*` and `turn_*` keep their own hooks).
pub(crate) fn notify_event(event: &AgentEvent<CodingMessage>) -> Option<NotifyEvent> {
    Some(match event {
        AgentEvent::AgentStart => NotifyEvent::AgentStart,
        AgentEvent::AgentEnd { messages } => NotifyEvent::AgentEnd { messages: messages.clone() },
        AgentEvent::MessageStart { message } => NotifyEvent::MessageStart { message: message.clone() },
        _ => return None,
    })
}

/// The session as the runtime behind extension actions.
pub(crate) struct SessionActions {
    pub(crate) session: Weak<SessionShared>,
    pub(crate) handle: AgentSessionHandle,
}

/// What the actions need to reach the live session without keeping it alive.
#[derive(Clone)]
pub(crate) struct AgentSessionHandle {
    pub(crate) agent: pi_agent_core::Agent<CodingMessage>,
    pub(crate) cwd: String,
}

impl SessionActions {
    fn session(&self) -> Result<AgentSession, BoxError> {
        let shared = self.session.upgrade().ok_or("The session was disposed")?;
        Ok(AgentSession { agent: self.handle.agent.clone(), shared, cwd: self.handle.cwd.clone(), runner: None })
    }
}

impl ExtensionActions for SessionActions {
    fn send_message(&self, message: ExtensionMessage, options: SendMessageOptions) -> Result<(), BoxError> {
        let session = self.session()?;
        let custom = CustomRoleMessage {
            custom_type: message.custom_type,
            content: message.content,
            display: message.display,
            details: message.details,
            timestamp: pi_ai::now_ms(),
            ..Default::default()
        };
        let trigger = options.trigger_turn.unwrap_or(false);
        match options.deliver_as {
            Some(DeliverAs::FollowUp) if session.is_streaming() => {
                session.agent().follow_up(CodingAgentMessage::Custom(CodingMessage::Custom(custom)));
                Ok(())
            }
            _ => {
                tokio::spawn(async move {
                    if let Err(e) = session.send_custom_message(custom, trigger).await {
                        tracing::warn!(error = %e, "extension send_message failed");
                    }
                });
                Ok(())
            }
        }
    }

    fn send_user_message(&self, content: Content<UserBlock>, options: SendUserMessageOptions) -> Result<(), BoxError> {
        let session = self.session()?;
        let message = pi_ai::UserMessage::new(content);
        if session.is_streaming() {
            match options.deliver_as {
                Some(DeliverAs::FollowUp) => session.agent().follow_up(message),
                _ => session.agent().steer(message),
            }
            return Ok(());
        }
        tokio::spawn(async move {
            if let Err(e) = session.run_messages(vec![CodingAgentMessage::User(message)]).await {
                tracing::warn!(error = %e, "extension send_user_message failed");
            }
        });
        Ok(())
    }

    fn append_entry(&self, custom_type: &str, data: Option<Value>) -> Result<(), BoxError> {
        self.session()?.append_entry(custom_type, data)?;
        Ok(())
    }

    fn set_session_name(&self, name: &str) -> Result<(), BoxError> {
        self.session()?.session_manager().append_session_info(name)?;
        Ok(())
    }

    fn get_session_name(&self) -> Option<String> {
        self.session().ok()?.session_manager().session_name()
    }

    fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<(), BoxError> {
        self.session()?.session_manager().append_label_change(entry_id, label)?;
        Ok(())
    }

    fn get_active_tools(&self) -> Vec<String> {
        self.session().map(|s| s.active_tool_names()).unwrap_or_default()
    }

    fn get_all_tools(&self) -> Vec<ToolInfo> {
        let Ok(session) = self.session() else { return Vec::new() };
        session
            .shared
            .all_tools
            .lock()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| ToolInfo {
                        name: t.name().to_owned(),
                        description: t.description().to_owned(),
                        parameters: t.parameters().clone(),
                        prompt_guidelines: None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn set_active_tools(&self, names: &[String]) -> Result<(), BoxError> {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.session()?.set_active_tools_by_name(&names);
        Ok(())
    }

    fn is_idle(&self) -> bool {
        self.session().map(|s| !s.is_streaming()).unwrap_or(true)
    }

    fn abort(&self) {
        self.handle.agent.abort();
    }

    fn get_system_prompt(&self) -> String {
        self.session().map(|s| s.system_prompt()).unwrap_or_default()
    }
}
