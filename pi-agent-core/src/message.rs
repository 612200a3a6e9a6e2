//! `AgentMessage`: the transcript's message type, wider than what a model understands.
//!
//! pi's TypeScript `AgentMessage` is `Message | CustomAgentMessages[keyof CustomAgentMessages]`,
//! extended by declaration merging. Here it is generic: [`AgentMessage<C>`] holds the four roles a
//! model understands plus `Custom(C)`, where `C` is the application's own set of roles.
//!
//! - An application with typed roles defines an enum tagged by `role` and implements
//!   [`CustomMessage`] for it; the compiler then checks every conversion (see the seed's
//!   `auditNote` example in the crate docs).
//! - The default `C` is [`UnknownMessage`]: any other role is kept as raw JSON, so a transcript
//!   written by someone else's extension survives a read/write round trip.
//! - Both at once: give your enum an `#[serde(untagged)] Other(UnknownMessage)` variant.
//!
//! No custom message can reach a provider: `convert_to_llm` returns
//! `Vec<pi_ai::Message>`.

use std::fmt;

use pi_ai::transcript::TranscriptEntry;
use pi_ai::{AssistantMessage, Message, Shared, SystemMessage, ToolResultMessage, UserMessage};
use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An application-defined message role. Its JSON must be an object with a `role` key that is not
/// one of `system`, `user`, `assistant`, `toolResult`.
pub trait CustomMessage: Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static {
    /// The role name (`"notification"`, `"bashExecution"`, …).
    fn role(&self) -> &str;

    /// The timestamp, if the message has one.
    fn timestamp(&self) -> Option<u64> {
        None
    }
}

/// A message of a role this program does not know, kept as raw JSON (key order included).
///
/// ```
/// use pi_agent_core::UnknownMessage;
/// let m: UnknownMessage = serde_json::from_str(r#"{"role":"auditNote","text":"hi","timestamp":1}"#).unwrap();
/// assert_eq!(m.role(), "auditNote");
/// assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"role":"auditNote","text":"hi","timestamp":1}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UnknownMessage(pub Shared<Map<String, Value>>);

impl UnknownMessage {
    /// The `role` value, or `""`.
    pub fn role(&self) -> &str {
        self.0.get("role").and_then(Value::as_str).unwrap_or_default()
    }
}

impl CustomMessage for UnknownMessage {
    fn role(&self) -> &str {
        UnknownMessage::role(self)
    }

    fn timestamp(&self) -> Option<u64> {
        self.0.get("timestamp").and_then(Value::as_u64)
    }
}

/// A transcript message: one of the four roles a model understands, or an application role.
///
/// The four LLM roles are held as [`Shared`] (a reference count, copied on write), exactly as in
/// [`pi_ai::Message`]: copying a transcript, converting it for the model and handing it to the
/// stream function copy one pointer per message, never the messages. Read them as plain
/// structs; build them with `.into()`:
///
/// ```
/// use pi_agent_core::AgentMessage;
/// use pi_ai::UserMessage;
/// let m: AgentMessage = AgentMessage::User(UserMessage::new("hi").into());
/// if let AgentMessage::User(u) = &m {
///     assert_eq!(u.timestamp, m.timestamp());
/// }
/// let same: AgentMessage = UserMessage::new("hi").into();
/// assert_eq!(same.role(), "user");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum AgentMessage<C = UnknownMessage> {
    /// System prompt or a delta of it.
    System(Shared<SystemMessage>),
    /// A user turn.
    User(Shared<UserMessage>),
    /// A model response.
    Assistant(Shared<AssistantMessage>),
    /// A tool result.
    ToolResult(Shared<ToolResultMessage>),
    /// An application-defined role.
    Custom(C),
}

impl<C: CustomMessage> AgentMessage<C> {
    /// Whether `other` is this very message (the same shared allocation); custom messages, held
    /// inline, only by their role.
    pub(crate) fn is_same(&self, other: &Self) -> bool {
        match (self, other) {
            (AgentMessage::System(a), AgentMessage::System(b)) => Shared::ptr_eq(a, b),
            (AgentMessage::User(a), AgentMessage::User(b)) => Shared::ptr_eq(a, b),
            (AgentMessage::Assistant(a), AgentMessage::Assistant(b)) => Shared::ptr_eq(a, b),
            (AgentMessage::ToolResult(a), AgentMessage::ToolResult(b)) => Shared::ptr_eq(a, b),
            (AgentMessage::Custom(a), AgentMessage::Custom(b)) => a.role() == b.role(),
            _ => false,
        }
    }

    /// The `role` value.
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::System(_) => "system",
            AgentMessage::User(_) => "user",
            AgentMessage::Assistant(_) => "assistant",
            AgentMessage::ToolResult(_) => "toolResult",
            AgentMessage::Custom(c) => c.role(),
        }
    }

    /// The timestamp (custom roles without one answer 0).
    pub fn timestamp(&self) -> u64 {
        match self {
            AgentMessage::System(m) => m.timestamp,
            AgentMessage::User(m) => m.timestamp,
            AgentMessage::Assistant(m) => m.timestamp,
            AgentMessage::ToolResult(m) => m.timestamp,
            AgentMessage::Custom(c) => c.timestamp().unwrap_or(0),
        }
    }

    /// The model-facing message if this is one of the four LLM roles: shares the message (one
    /// reference count), never copies it.
    pub fn to_llm(&self) -> Option<Message> {
        match self {
            AgentMessage::System(m) => Some(Message::System(m.clone())),
            AgentMessage::User(m) => Some(Message::User(m.clone())),
            AgentMessage::Assistant(m) => Some(Message::Assistant(m.clone())),
            AgentMessage::ToolResult(m) => Some(Message::ToolResult(m.clone())),
            AgentMessage::Custom(_) => None,
        }
    }

    /// The model-facing message, if this is one of the four LLM roles; otherwise the custom one.
    pub fn into_llm(self) -> Result<Message, C> {
        match self {
            AgentMessage::System(m) => Ok(Message::System(m)),
            AgentMessage::User(m) => Ok(Message::User(m)),
            AgentMessage::Assistant(m) => Ok(Message::Assistant(m)),
            AgentMessage::ToolResult(m) => Ok(Message::ToolResult(m)),
            AgentMessage::Custom(c) => Err(c),
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            AgentMessage::Assistant(m) => Some(m),
            _ => None,
        }
    }

    /// The custom message, if this is one.
    pub fn as_custom(&self) -> Option<&C> {
        match self {
            AgentMessage::Custom(c) => Some(c),
            _ => None,
        }
    }
}

impl<C> From<Message> for AgentMessage<C> {
    fn from(m: Message) -> Self {
        match m {
            Message::System(m) => AgentMessage::System(m),
            Message::User(m) => AgentMessage::User(m),
            Message::Assistant(m) => AgentMessage::Assistant(m),
            Message::ToolResult(m) => AgentMessage::ToolResult(m),
        }
    }
}

impl<C> From<SystemMessage> for AgentMessage<C> {
    fn from(m: SystemMessage) -> Self {
        AgentMessage::System(m.into())
    }
}

impl<C> From<Shared<SystemMessage>> for AgentMessage<C> {
    fn from(m: Shared<SystemMessage>) -> Self {
        AgentMessage::System(m)
    }
}

impl<C> From<UserMessage> for AgentMessage<C> {
    fn from(m: UserMessage) -> Self {
        AgentMessage::User(m.into())
    }
}

impl<C> From<Shared<UserMessage>> for AgentMessage<C> {
    fn from(m: Shared<UserMessage>) -> Self {
        AgentMessage::User(m)
    }
}

impl<C> From<AssistantMessage> for AgentMessage<C> {
    fn from(m: AssistantMessage) -> Self {
        AgentMessage::Assistant(m.into())
    }
}

impl<C> From<Shared<AssistantMessage>> for AgentMessage<C> {
    fn from(m: Shared<AssistantMessage>) -> Self {
        AgentMessage::Assistant(m)
    }
}

impl<C> From<ToolResultMessage> for AgentMessage<C> {
    fn from(m: ToolResultMessage) -> Self {
        AgentMessage::ToolResult(m.into())
    }
}

impl<C> From<Shared<ToolResultMessage>> for AgentMessage<C> {
    fn from(m: Shared<ToolResultMessage>) -> Self {
        AgentMessage::ToolResult(m)
    }
}

impl<C> TranscriptEntry for AgentMessage<C> {
    fn as_system_message(&self) -> Option<&SystemMessage> {
        match self {
            AgentMessage::System(m) => Some(m),
            _ => None,
        }
    }
}

impl<C: Serialize> Serialize for AgentMessage<C> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            AgentMessage::System(m) => m.serialize(serializer),
            AgentMessage::User(m) => m.serialize(serializer),
            AgentMessage::Assistant(m) => m.serialize(serializer),
            AgentMessage::ToolResult(m) => m.serialize(serializer),
            AgentMessage::Custom(c) => c.serialize(serializer),
        }
    }
}

const LLM_ROLES: [&str; 4] = ["system", "user", "assistant", "toolResult"];

impl<'de, C: DeserializeOwned> Deserialize<'de> for AgentMessage<C> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<C>(std::marker::PhantomData<C>);
        impl<'de, C: DeserializeOwned> Visitor<'de> for V<C> {
            type Value = AgentMessage<C>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message object with a \"role\"")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                use serde::de::Error as _;
                let mut prefix: Vec<(String, Value)> = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "role" {
                        let role: String = map.next_value()?;
                        if LLM_ROLES.contains(&role.as_str()) {
                            return Message::__json_dispatch(&role, prefix, map).map(AgentMessage::from);
                        }
                        // A custom role: rebuild the object in its original order, then let C parse it.
                        let mut obj = Map::with_capacity(prefix.len() + 8);
                        obj.extend(prefix);
                        obj.insert(key, Value::String(role));
                        while let Some((k, v)) = map.next_entry::<String, Value>()? {
                            obj.insert(k, v);
                        }
                        return C::deserialize(Value::Object(obj)).map(AgentMessage::Custom).map_err(A::Error::custom);
                    }
                    let value: Value = map.next_value()?;
                    prefix.push((key, value));
                }
                Err(A::Error::missing_field("role"))
            }
        }
        deserializer.deserialize_map(V(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "role", rename_all = "camelCase")]
    enum Notes {
        #[serde(rename_all = "camelCase")]
        AuditNote { text: String, timestamp: u64 },
        #[serde(untagged)]
        Other(UnknownMessage),
    }

    impl CustomMessage for Notes {
        fn role(&self) -> &str {
            match self {
                Notes::AuditNote { .. } => "auditNote",
                Notes::Other(u) => u.role(),
            }
        }
    }

    #[test]
    fn llm_roles_and_unknown_roles_round_trip() {
        let lines = [
            r#"{"role":"user","content":"hi","timestamp":1}"#,
            r#"{"role":"auditNote","text":"x","level":"info","timestamp":2}"#,
            r#"{"timestamp":3,"role":"notification","text":"y"}"#,
            r#"{"content":[],"role":"system","timestamp":4}"#,
        ];
        for line in lines {
            let m: AgentMessage = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&m).unwrap(), line);
        }
        let m: AgentMessage = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(m.role(), "notification");
        assert!(m.to_llm().is_none());
    }

    #[test]
    fn typed_custom_roles_and_fallback() {
        let m: AgentMessage<Notes> = serde_json::from_str(r#"{"role":"auditNote","text":"x","timestamp":2}"#).unwrap();
        assert_eq!(m, AgentMessage::Custom(Notes::AuditNote { text: "x".into(), timestamp: 2 }));
        let m: AgentMessage<Notes> = serde_json::from_str(r#"{"role":"other","a":1}"#).unwrap();
        assert_eq!(m.role(), "other");
        let m: AgentMessage<Notes> = serde_json::from_str(r#"{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":5}"#).unwrap();
        assert!(m.as_assistant().is_some());
    }

    #[test]
    fn missing_role_is_an_error() {
        let err = serde_json::from_str::<AgentMessage>(r#"{"text":"x"}"#).unwrap_err();
        assert!(err.to_string().contains("role"), "{err}");
    }
}
