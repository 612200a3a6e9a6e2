//! [`PromptInput`]: what `Agent::prompt` accepts.

use pi_ai::{ImageContent, UserMessage};

use crate::message::AgentMessage;

/// What `Agent::prompt` accepts: text (with optional images), one message, or several.
#[derive(Clone, Debug)]
pub enum PromptInput<C> {
    /// A user text and images, sent as `[{type:"text"}, …images]`.
    Text(String, Vec<ImageContent>),
    /// Messages used as they are (may include system and custom messages; may be empty).
    Messages(Vec<AgentMessage<C>>),
}

impl<C> From<&str> for PromptInput<C> {
    fn from(text: &str) -> Self {
        PromptInput::Text(text.to_owned(), Vec::new())
    }
}

impl<C> From<String> for PromptInput<C> {
    fn from(text: String) -> Self {
        PromptInput::Text(text, Vec::new())
    }
}

impl<C> From<AgentMessage<C>> for PromptInput<C> {
    fn from(m: AgentMessage<C>) -> Self {
        PromptInput::Messages(vec![m])
    }
}

impl<C> From<Vec<AgentMessage<C>>> for PromptInput<C> {
    fn from(m: Vec<AgentMessage<C>>) -> Self {
        PromptInput::Messages(m)
    }
}

impl<C> From<UserMessage> for PromptInput<C> {
    fn from(m: UserMessage) -> Self {
        PromptInput::Messages(vec![AgentMessage::User(m.into())])
    }
}
