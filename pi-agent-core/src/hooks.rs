//! The two context hooks, in their fixed order: [`TransformContext`] then [`ConvertToLlm`].
//!
//! Before every provider request the loop takes the transcript (a list of [`AgentMessage`]s, wider
//! than what a model understands) and passes it through exactly two points, always in this order,
//! in exactly one place ([`crate::agent_loop`]):
//!
//! ```text
//! AgentMessage[] → transform_context() → AgentMessage[] → convert_to_llm() → Vec<pi_ai::Message> → normalize_context → provider
//!                   (optional: prune, inject)               (required: filter, convert)
//! ```
//!
//! | | `transform_context` | `convert_to_llm` |
//! |---|---|---|
//! | in | `Vec<AgentMessage<C>>` | `Vec<AgentMessage<C>>` |
//! | out | `Vec<AgentMessage<C>>` | `Vec<pi_ai::Message>` |
//! | does | prune old messages, inject context | drop roles a model does not know, convert custom roles |
//! | optional? | yes | the default keeps the four LLM roles |
//! | empty output means | the context is empty | that message is not sent |
//!
//! A message injected by `transform_context` still passes `convert_to_llm`, and because
//! `convert_to_llm` returns `pi_ai::Message`, a custom role can never reach a provider: the type
//! system makes pi's "provider rejected the request" failure impossible to write.

use std::future::Future;

use async_trait::async_trait;
use pi_ai::Message;
use tokio_util::sync::CancellationToken;

use crate::message::{AgentMessage, CustomMessage};

/// Errors returned by hooks; they end the run through the failure path.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The optional first hook: prune or inject, still in `AgentMessage`s.
///
/// Its output is used for one request only; the transcript itself is not changed. Closures
/// `Fn(Vec<AgentMessage<C>>, CancellationToken) -> impl Future<Output = Result<Vec<AgentMessage<C>>, BoxError>>`
/// implement it.
///
/// ```
/// use pi_agent_core::{AgentMessage, BoxError, TransformContext};
/// use tokio_util::sync::CancellationToken;
///
/// // Keep only the last 20 messages for each request.
/// let prune = |mut messages: Vec<AgentMessage>, _cancel: CancellationToken| async move {
///     let cut = messages.len().saturating_sub(20);
///     Ok::<_, BoxError>(messages.split_off(cut))
/// };
/// fn takes(_: impl TransformContext) {}
/// takes(prune);
/// ```
#[async_trait]
pub trait TransformContext<C: CustomMessage = crate::UnknownMessage>: Send + Sync {
    /// Returns the messages to convert for this request.
    async fn transform_context(
        &self,
        messages: Vec<AgentMessage<C>>,
        cancel: &CancellationToken,
    ) -> Result<Vec<AgentMessage<C>>, BoxError>;
}

#[async_trait]
impl<C, F, Fut> TransformContext<C> for F
where
    C: CustomMessage,
    F: Fn(Vec<AgentMessage<C>>, CancellationToken) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<AgentMessage<C>>, BoxError>> + Send,
{
    async fn transform_context(
        &self,
        messages: Vec<AgentMessage<C>>,
        cancel: &CancellationToken,
    ) -> Result<Vec<AgentMessage<C>>, BoxError> {
        (self)(messages, cancel.clone()).await
    }
}

/// The required second hook: the only exit from the agent's world to the model's.
///
/// It filters roles a model does not understand and converts custom roles to model messages
/// (one message may become several, or none: return what should be sent). Closures
/// `Fn(Vec<AgentMessage<C>>) -> Result<Vec<Message>, BoxError>` implement it.
///
/// ```
/// use pi_agent_core::{AgentMessage, BoxError, ConvertToLlm, UnknownMessage};
/// use pi_ai::{Message, UserMessage};
///
/// // Turn `notification` messages into user text; drop every other custom role.
/// let convert = |messages: Vec<AgentMessage>| -> Result<Vec<Message>, BoxError> {
///     Ok(messages
///         .into_iter()
///         .flat_map(|m| match m.into_llm() {
///             Ok(llm) => vec![llm],
///             Err(custom) if custom.role() == "notification" => {
///                 let text = custom.0.get("text").and_then(|t| t.as_str()).unwrap_or_default();
///                 vec![Message::User(UserMessage::new(text).into())]
///             }
///             Err(_) => vec![],
///         })
///         .collect())
/// };
/// fn takes(_: impl ConvertToLlm) {}
/// takes(convert);
/// ```
pub trait ConvertToLlm<C: CustomMessage = crate::UnknownMessage>: Send + Sync {
    /// Converts the (transformed) transcript to the messages sent to the model.
    fn convert_to_llm(&self, messages: Vec<AgentMessage<C>>) -> Result<Vec<Message>, BoxError>;

    /// Converts a borrowed transcript. The loop calls this instead of
    /// [`convert_to_llm`](Self::convert_to_llm) when no [`TransformContext`] is set, so the
    /// transcript need not be copied first.
    ///
    /// The default copies the messages and calls `convert_to_llm`, so both always agree; override
    /// it only when the conversion can read from a borrow (as [`DefaultConvertToLlm`] does), and
    /// return exactly what `convert_to_llm` would.
    fn convert_to_llm_borrowed(&self, messages: &[AgentMessage<C>]) -> Result<Vec<Message>, BoxError> {
        self.convert_to_llm(messages.to_vec())
    }
}

impl<C, F> ConvertToLlm<C> for F
where
    C: CustomMessage,
    F: Fn(Vec<AgentMessage<C>>) -> Result<Vec<Message>, BoxError> + Send + Sync,
{
    fn convert_to_llm(&self, messages: Vec<AgentMessage<C>>) -> Result<Vec<Message>, BoxError> {
        (self)(messages)
    }
}

/// The default converter: keeps `system`, `user`, `assistant` and `toolResult`, and **silently
/// drops every other role**, exactly as pi's `defaultConvertToLlm`.
///
/// **Custom roles vanish without an error.** If your transcript holds roles of your own that the
/// model should see, pass your own [`ConvertToLlm`] that converts them; if you extend the message
/// type and forget, the content is simply gone.
///
/// ```
/// use pi_agent_core::{AgentMessage, DefaultConvertToLlm, ConvertToLlm};
/// let transcript: Vec<AgentMessage> = vec![
///     serde_json::from_str(r#"{"role":"user","content":"hi","timestamp":1}"#).unwrap(),
///     serde_json::from_str(r#"{"role":"auditNote","text":"skipped 3 files","timestamp":2}"#).unwrap(),
/// ];
/// let sent = DefaultConvertToLlm.convert_to_llm(transcript).unwrap();
/// assert_eq!(sent.len(), 1); // the auditNote was dropped, silently
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultConvertToLlm;

impl<C: CustomMessage> ConvertToLlm<C> for DefaultConvertToLlm {
    fn convert_to_llm(&self, messages: Vec<AgentMessage<C>>) -> Result<Vec<Message>, BoxError> {
        Ok(default_convert_to_llm(messages))
    }

    /// Copies only the four LLM roles; dropped roles are never copied.
    fn convert_to_llm_borrowed(&self, messages: &[AgentMessage<C>]) -> Result<Vec<Message>, BoxError> {
        Ok(messages.iter().filter_map(AgentMessage::to_llm).collect())
    }
}

/// [`DefaultConvertToLlm`] as a function.
pub fn default_convert_to_llm<C: CustomMessage>(messages: Vec<AgentMessage<C>>) -> Vec<Message> {
    messages.into_iter().filter_map(|m| m.into_llm().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UnknownMessage;

    fn transcript() -> Vec<AgentMessage> {
        [
            r#"{"role":"system","content":"S","timestamp":0}"#,
            r#"{"role":"user","content":"hi","timestamp":1}"#,
            r#"{"role":"auditNote","text":"x","timestamp":2}"#,
            r#"{"role":"toolResult","toolCallId":"t","toolName":"n","content":[],"isError":false,"timestamp":3}"#,
        ]
        .iter()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect()
    }

    #[test]
    fn default_converter_borrowed_matches_owned() {
        let messages = transcript();
        let borrowed =
            ConvertToLlm::<UnknownMessage>::convert_to_llm_borrowed(&DefaultConvertToLlm, &messages).unwrap();
        let owned = DefaultConvertToLlm.convert_to_llm(messages).unwrap();
        assert_eq!(borrowed, owned);
        assert_eq!(borrowed.iter().map(Message::role).collect::<Vec<_>>(), ["system", "user", "toolResult"]);
    }

    #[test]
    fn closure_converter_borrowed_calls_the_closure() {
        let keep_users = |messages: Vec<AgentMessage>| -> Result<Vec<Message>, BoxError> {
            Ok(messages.into_iter().filter(|m| m.role() == "user").filter_map(|m| m.into_llm().ok()).collect())
        };
        let out = keep_users.convert_to_llm_borrowed(&transcript()).unwrap();
        assert_eq!(out.iter().map(Message::role).collect::<Vec<_>>(), ["user"]);
    }
}
