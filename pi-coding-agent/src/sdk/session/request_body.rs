//! The exact request a provider would receive, offline: for snapshot tests of conversions
//! (custom roles, `context` handlers, the system head) without a server.

use pi_agent_core::AgentMessage;
use pi_ai::transcript::TranscriptContext;
use serde_json::Value;

use super::AgentSession;
use crate::messages::CodingMessage;
use crate::sdk::error::SdkError;

impl AgentSession {
    /// The context the next request would hand the provider for `messages` (the session's
    /// transcript when `None`): both hooks — the extensions' `context` handlers
    /// (`transform_context`) and the coding roles' `convert_to_llm` — then `normalize_context`,
    /// by the same code a real request runs. No request is made.
    pub async fn request_context(
        &self,
        messages: Option<Vec<AgentMessage<CodingMessage>>>,
    ) -> Result<TranscriptContext, SdkError> {
        let messages = messages.unwrap_or_else(|| self.session_messages());
        self.agent.request_context(&messages).await.map_err(|e| SdkError::Failed(e.to_string()))
    }

    /// The exact JSON body the session's model's built-in provider would receive for `messages`
    /// (the session's transcript when `None`): [`AgentSession::request_context`], then the
    /// provider's request builder with the session's stream options, extensions'
    /// `before_provider_request` included. Offline: nothing is sent.
    ///
    /// ```no_run
    /// # async fn demo(session: pi_coding_agent::sdk::AgentSession) -> Result<(), pi_coding_agent::sdk::SdkError> {
    /// let body = session.request_body(None).await?;
    /// println!("{}", serde_json::to_string_pretty(&body).unwrap_or_default());
    /// # Ok(()) }
    /// ```
    pub async fn request_body(&self, messages: Option<Vec<AgentMessage<CodingMessage>>>) -> Result<Value, SdkError> {
        let context = self.request_context(messages).await?;
        let model = self.model();
        let mut options = self.agent.stream_options();
        let level = self.thinking_level();
        options.reasoning = (level != pi_ai::ThinkingLevel::Off).then_some(level);
        // The registry clamps as `stream_simple` does before a real request.
        let requested = options.max_tokens.unwrap_or(model.max_tokens);
        options.max_tokens = Some(pi_ai::models::clamp_max_tokens_to_context(&model, context.messages(), requested));
        options.reasoning = options.reasoning.map(|l| pi_ai::models::clamp_thinking_level(&model, l));
        pi_ai::providers::request_body(&model, &context, &options).await.map_err(SdkError::Failed)
    }
}
