//! System-head replay: the transcript owns the system prompt and the tool set.
//!
//! The leading system message is the prompt plus the initial tools; every later system message is
//! a delta. Replaying them in order gives the current head. Messages of any other role, including
//! roles this crate does not know, are skipped: replay reads only what
//! [`TranscriptEntry::as_system_message`] returns.

use indexmap::IndexMap;

use crate::transcript::text::{content_text, system_message_text};
use crate::types::{Content, Message, Sections, SystemMessage, Tool};

/// Anything that can stand in a transcript: replay only needs to recognise system messages.
///
/// Implemented for [`Message`] and [`SystemMessage`]; agent layers implement it for their wider
/// message types (custom roles answer `None`).
///
/// ```
/// use pi_ai::SystemMessage;
/// use pi_ai::transcript::{TranscriptEntry, current_system_prompt};
///
/// enum Entry { System(SystemMessage), Note(String) }
/// impl TranscriptEntry for Entry {
///     fn as_system_message(&self) -> Option<&SystemMessage> {
///         match self { Entry::System(m) => Some(m), Entry::Note(_) => None }
///     }
/// }
/// let t = [Entry::System(SystemMessage::new("Be brief.")), Entry::Note("ui only".into())];
/// assert_eq!(current_system_prompt(&t), "Be brief.");
/// ```
pub trait TranscriptEntry {
    /// The system message, if this entry is one.
    fn as_system_message(&self) -> Option<&SystemMessage>;
}

impl TranscriptEntry for Message {
    fn as_system_message(&self) -> Option<&SystemMessage> {
        self.as_system()
    }
}

impl TranscriptEntry for SystemMessage {
    fn as_system_message(&self) -> Option<&SystemMessage> {
        Some(self)
    }
}

impl<T: TranscriptEntry + ?Sized> TranscriptEntry for &T {
    fn as_system_message(&self) -> Option<&SystemMessage> {
        (**self).as_system_message()
    }
}

/// Whether `entry` is a system message (`isSystemMessage`).
///
/// ```
/// use pi_ai::{Message, SystemMessage, UserMessage};
/// use pi_ai::transcript::is_system_message;
/// assert!(is_system_message(&Message::System(SystemMessage::new("x").into())));
/// assert!(!is_system_message(&Message::User(UserMessage::new("hi").into())));
/// ```
pub fn is_system_message<M: TranscriptEntry + ?Sized>(entry: &M) -> bool {
    entry.as_system_message().is_some()
}

fn system_messages<M: TranscriptEntry>(messages: &[M]) -> impl Iterator<Item = &SystemMessage> {
    messages.iter().filter_map(TranscriptEntry::as_system_message)
}

/// Replays tool changes from system messages: the tools available at the end of `messages`
/// (`getCurrentTools`).
pub(crate) fn current_tools_of<'a>(systems: impl Iterator<Item = &'a SystemMessage>) -> Vec<Tool> {
    let mut tools: IndexMap<&str, &Tool> = IndexMap::new();
    for m in systems {
        for r in m.tools_removed.iter().flatten() {
            tools.shift_remove(r.name.as_str());
        }
        for t in m.tools_added.iter().flatten() {
            tools.insert(t.name.as_str(), t);
        }
    }
    tools.into_values().cloned().collect()
}

/// The tools available after replaying every system message in order (`getCurrentTools`).
///
/// Removals of a message apply before its additions. Re-adding an existing name keeps its slot;
/// removing and re-adding moves it to the end.
///
/// ```
/// use pi_ai::{SystemMessage, Tool};
/// use pi_ai::transcript::current_tools;
/// let t = |n: &str| Tool::new(n, "d", serde_json::json!({"type": "object"}));
/// let msgs = [
///     SystemMessage::new("").with_tools_added(vec![t("a"), t("b")]),
///     SystemMessage::new("").with_tools_removed(["a"]).with_tools_added(vec![t("a")]),
/// ];
/// let names: Vec<_> = current_tools(&msgs).into_iter().map(|t| t.name).collect();
/// assert_eq!(names, ["b", "a"]);
/// ```
pub fn current_tools<M: TranscriptEntry>(messages: &[M]) -> Vec<Tool> {
    current_tools_of(system_messages(messages))
}

/// Every tool definition the transcript declares, the last definition per name, in
/// first-declaration order; removals are ignored (`getDeclaredTools`).
///
/// ```
/// use pi_ai::{SystemMessage, Tool};
/// use pi_ai::transcript::declared_tools;
/// let t = |n: &str, d: &str| Tool::new(n, d, serde_json::json!({}));
/// let msgs = [
///     SystemMessage::new("").with_tools_added(vec![t("a", "1"), t("b", "d")]),
///     SystemMessage::new("").with_tools_removed(["a"]),
///     SystemMessage::new("").with_tools_added(vec![t("a", "2")]),
/// ];
/// let got: Vec<_> = declared_tools(&msgs).into_iter().map(|t| (t.name, t.description)).collect();
/// assert_eq!(got, [("a".into(), "2".into()), ("b".into(), "d".into())]);
/// ```
pub fn declared_tools<M: TranscriptEntry>(messages: &[M]) -> Vec<Tool> {
    let mut tools: IndexMap<&str, &Tool> = IndexMap::new();
    for m in system_messages(messages) {
        for t in m.tools_added.iter().flatten() {
            tools.insert(t.name.as_str(), t);
        }
    }
    tools.into_values().cloned().collect()
}

/// Replays every system message into one head holding the current prompt, sections and tools
/// (`getCurrentSystemMessage`).
///
/// - `content`: the non-empty texts of all system messages, joined with `"\n\n"` (append).
/// - `sections`: patched by name; `None` deletes, replacing keeps the slot.
/// - `tools_added`: [`current_tools`].
/// - `timestamp`: the first system message's, else 0.
///
/// Returns `None` only when there is no system message and no tool.
///
/// ```
/// use pi_ai::{Message, SystemMessage, UserMessage};
/// use pi_ai::transcript::current_system_message;
/// let t = vec![
///     Message::System(SystemMessage::new("Base.").with_sections([("skills", Some("<skills>a</skills>".to_owned()))]).into()),
///     Message::User(UserMessage::new("hi").into()),
///     Message::System(SystemMessage::new("").with_sections([("skills", Some("<skills>b</skills>".to_owned()))]).into()),
/// ];
/// let head = current_system_message(&t).unwrap();
/// assert_eq!(head.sections.unwrap().get("skills"), Some(Some("<skills>b</skills>")));
/// ```
pub fn current_system_message<M: TranscriptEntry>(messages: &[M]) -> Option<SystemMessage> {
    let mut content: Vec<String> = Vec::new();
    let mut sections = Sections::new();
    let mut timestamp: Option<u64> = None;
    for m in system_messages(messages) {
        timestamp.get_or_insert(m.timestamp);
        let text = content_text(&m.content);
        if !text.is_empty() {
            content.push(text);
        }
        if let Some(patch) = &m.sections {
            for (name, value) in patch.iter() {
                match value {
                    None => {
                        sections.remove(name);
                    }
                    Some(v) => sections.insert(name, Some(v.to_owned())),
                }
            }
        }
    }
    let tools = current_tools(messages);
    if timestamp.is_none() && tools.is_empty() {
        return None;
    }
    Some(SystemMessage {
        content: Content::Text(content.join("\n\n")),
        sections: (!sections.is_empty()).then_some(sections),
        tools_added: (!tools.is_empty()).then_some(tools),
        timestamp: timestamp.unwrap_or(0),
        ..Default::default()
    })
}

/// The current system prompt text: [`system_message_text`] of the replayed head, or `""`
/// (`getCurrentSystemPrompt`).
///
/// ```
/// use pi_ai::{Message, SystemMessage};
/// use pi_ai::transcript::current_system_prompt;
/// assert_eq!(current_system_prompt::<Message>(&[]), "");
/// assert_eq!(current_system_prompt(&[SystemMessage::new("A"), SystemMessage::new("B")]), "A\n\nB");
/// ```
pub fn current_system_prompt<M: TranscriptEntry>(messages: &[M]) -> String {
    current_system_message(messages).map(|m| system_message_text(&m)).unwrap_or_default()
}
