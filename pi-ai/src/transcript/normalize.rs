//! From the public [`Context`] to the [`TranscriptContext`] providers receive.

use serde::Serialize;

use crate::transcript::replay::{TranscriptEntry, current_system_message};
use crate::types::{Content, Context, Message, SystemMessage, Tool};

/// The normalized request context a provider receives: the prompt and tool declarations are
/// carried by the transcript's system messages.
///
/// Only [`normalize_context`] (and the transforms in this module that start from a
/// `TranscriptContext`) can build one, so a loose system prompt or tool list can never reach
/// provider code.
///
/// ```compile_fail
/// // There is no public constructor:
/// let tc = pi_ai::transcript::TranscriptContext { messages: vec![] };
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TranscriptContext {
    messages: Vec<Message>,
}

impl TranscriptContext {
    /// The messages, leading system message first when there is one.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Consumes the context, returning its messages.
    pub fn into_messages(self) -> Vec<Message> {
        self.messages
    }

    /// Applies `f` to the messages, keeping the normalized guarantee (system messages stay the
    /// transcript's; callers may drop or rewrite messages, e.g. for cross-provider handoff).
    pub fn map_messages(self, f: impl FnOnce(Vec<Message>) -> Vec<Message>) -> Self {
        TranscriptContext { messages: f(self.messages) }
    }
}

/// Builds the leading system message for a prompt and tool set, or `None` when both are empty
/// (`createInitialSystemMessage`). Its timestamp is 0.
///
/// ```
/// use pi_ai::transcript::create_initial_system_message;
/// assert!(create_initial_system_message(None, &[]).is_none());
/// assert_eq!(create_initial_system_message(Some("S"), &[]).unwrap().timestamp, 0);
/// ```
pub fn create_initial_system_message(system_prompt: Option<&str>, tools: &[Tool]) -> Option<SystemMessage> {
    let has_prompt = system_prompt.is_some_and(|p| !p.is_empty());
    if !has_prompt && tools.is_empty() {
        return None;
    }
    Some(SystemMessage {
        content: Content::Text(system_prompt.unwrap_or_default().to_owned()),
        tools_added: (!tools.is_empty()).then(|| tools.to_vec()),
        timestamp: 0,
        ..Default::default()
    })
}

/// Folds `system_prompt` and `tools` into a leading system message placed before the messages
/// (`normalizeContext`). It never merges with a system message already at the front.
///
/// ```
/// use pi_ai::{Context, Message, UserMessage};
/// use pi_ai::transcript::normalize_context;
/// let tc = normalize_context(Context {
///     system_prompt: Some("S".into()),
///     messages: vec![Message::User(UserMessage::new("hi").into())],
///     tools: None,
/// });
/// assert_eq!(tc.messages().len(), 2);
/// assert_eq!(tc.messages()[0].role(), "system");
/// ```
pub fn normalize_context(context: Context) -> TranscriptContext {
    let initial =
        create_initial_system_message(context.system_prompt.as_deref(), context.tools.as_deref().unwrap_or(&[]));
    let messages = match initial {
        Some(head) => {
            let mut messages = Vec::with_capacity(context.messages.len() + 1);
            messages.push(Message::System(head.into()));
            messages.extend(context.messages);
            messages
        }
        None => context.messages,
    };
    TranscriptContext { messages }
}

/// The leading system message, if the transcript starts with one (`getInitialSystemMessage`).
///
/// ```
/// use pi_ai::{Message, SystemMessage, UserMessage};
/// use pi_ai::transcript::initial_system_message;
/// let t = [Message::User(UserMessage::new("u").into()), Message::System(SystemMessage::new("s").into())];
/// assert!(initial_system_message(&t).is_none());
/// ```
pub fn initial_system_message<M: TranscriptEntry>(messages: &[M]) -> Option<&SystemMessage> {
    messages.first().and_then(TranscriptEntry::as_system_message)
}

/// The messages without the leading system message (`withoutInitialSystemMessage`), for APIs that
/// carry the prompt outside the message list.
pub fn without_initial_system_message<M: TranscriptEntry>(messages: &[M]) -> &[M] {
    if initial_system_message(messages).is_some() { &messages[1..] } else { messages }
}

/// Rebuilds the transcript for an API without mid-conversation system messages: the replayed head
/// leads and every system message is dropped from the rest (`collapseSystemMessages`).
///
/// ```
/// use pi_ai::{Context, Message, SystemMessage, UserMessage};
/// use pi_ai::transcript::{collapse_system_messages, normalize_context};
/// let tc = normalize_context(Context {
///     system_prompt: Some("S".into()),
///     messages: vec![
///         Message::User(UserMessage::new("u1").into()),
///         Message::System(SystemMessage::new("more").at(9).into()),
///         Message::User(UserMessage::new("u2").into()),
///     ],
///     tools: None,
/// });
/// let collapsed = collapse_system_messages(tc);
/// let roles: Vec<_> = collapsed.messages().iter().map(|m| m.role()).collect();
/// assert_eq!(roles, ["system", "user", "user"]);
/// ```
pub fn collapse_system_messages(context: TranscriptContext) -> TranscriptContext {
    let head = current_system_message(&context.messages);
    let mut messages = Vec::with_capacity(context.messages.len() + 1);
    if let Some(head) = head {
        messages.push(Message::System(head.into()));
    }
    messages.extend(context.messages.into_iter().filter(|m| !matches!(m, Message::System(_))));
    TranscriptContext { messages }
}

/// The transcript unchanged when the model takes mid-conversation system messages, otherwise
/// [`collapse_system_messages`] (`resolveTranscript`).
pub fn resolve_transcript(context: TranscriptContext, supports_mid_convo_system_messages: bool) -> TranscriptContext {
    if supports_mid_convo_system_messages { context } else { collapse_system_messages(context) }
}
