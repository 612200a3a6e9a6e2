//! From entries to model context: the active path, compaction, context edits, model and level.
//!
//! - [`build_session_path`]: root → leaf.
//! - [`build_context_entries`]: the path with the latest compaction applied (the compaction entry,
//!   then the kept entries from its `firstKeptEntryId` minus system messages, then everything after
//!   it).
//! - [`build_session_projection`]: each selected entry with the messages it contributes, the
//!   latest `context_edit` per target applied; plus thinking level and model from the whole path.
//! - [`build_session_context`]: the messages only, owned.
//!
//! Projections borrow the entries: only synthesized or edited messages are allocated.

use std::borrow::Cow;
use std::collections::HashMap;

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantBlock, Content, UserBlock};
use serde::Serialize;
use serde_json::Value;
use smallvec::{SmallVec, smallvec};

use crate::messages::{
    CodingAgentMessage, CodingMessage, create_branch_summary_message, create_compaction_summary_message,
    create_custom_message,
};
use crate::session::entries::{ContextEditEntry, SessionEntry};
use crate::session::time::parse_iso;

/// Which leaf to build from (pi's `leafId`: `undefined`, `null` or an id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf<'a> {
    /// The last entry of the file (`undefined`).
    Last,
    /// No leaf: the empty path (`null`).
    Empty,
    /// This entry; an unknown id falls back to the last entry, as in pi.
    Id(&'a str),
}

impl<'a> From<Option<&'a str>> for Leaf<'a> {
    /// `None` is [`Leaf::Empty`] (a manager whose leaf was reset).
    fn from(id: Option<&'a str>) -> Self {
        id.map_or(Leaf::Empty, Leaf::Id)
    }
}

/// The model a branch uses: `{provider, modelId}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub model_id: String,
}

/// What the model sees from a session: messages, thinking level and model.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContext {
    /// The context messages (coding roles included; convert them with
    /// [`convert_to_llm`](crate::messages::convert_to_llm)).
    pub messages: Vec<CodingAgentMessage>,
    /// The thinking level (`"off"` unless the path changed it).
    pub thinking_level: String,
    /// The model, if the path names one.
    pub model: Option<ModelRef>,
}

/// One selected entry and the messages it contributes.
#[derive(Clone, Debug)]
pub struct ProjectedEntry<'a> {
    /// The entry.
    pub source: &'a SessionEntry,
    /// Its messages (none for metadata entries).
    pub messages: EntryMessages<'a>,
}

/// A compaction-aware, edit-aware view of one branch.
#[derive(Clone, Debug)]
pub struct SessionProjection<'a> {
    /// Selected entries in order.
    pub entries: Vec<ProjectedEntry<'a>>,
    /// The thinking level.
    pub thinking_level: String,
    /// The model.
    pub model: Option<ModelRef>,
}

impl<'a> SessionProjection<'a> {
    /// All messages, in order.
    pub fn messages(&self) -> impl Iterator<Item = &CodingAgentMessage> {
        self.entries.iter().flat_map(|e| e.messages.iter().map(|m| m.as_ref()))
    }

    /// The owned context.
    pub fn into_context(self) -> SessionContext {
        SessionContext {
            messages: self.entries.into_iter().flat_map(|e| e.messages).map(Cow::into_owned).collect(),
            thinking_level: self.thinking_level,
            model: self.model,
        }
    }
}

/// An index from entry id to position (hashed with `foldhash`: a session's tens of thousands of
/// ids are hashed at every load, where SipHash was a visible part of the time).
pub type EntryIndex = HashMap<String, usize, foldhash::fast::RandomState>;

/// Builds the id index of `entries` (the last entry wins on duplicate ids, as in pi).
pub fn index_entries(entries: &[SessionEntry]) -> EntryIndex {
    entries.iter().enumerate().map(|(i, e)| (e.id().to_owned(), i)).collect()
}

/// The position of the parent of the entry at `i`, resolved through `index` (the index of
/// `entries`: the last entry with an id wins). When every id is distinct (`index` holds one per
/// entry), a parent that is the entry just before (every entry of a linear session) is known
/// without hashing its id.
#[inline]
pub(crate) fn parent_position(entries: &[SessionEntry], index: &EntryIndex, i: usize) -> Option<usize> {
    let parent = entries[i].parent_id()?;
    if index.len() == entries.len() && i > 0 && entries[i - 1].id() == parent {
        return Some(i - 1);
    }
    index.get(parent).copied()
}

/// The path root → leaf. Includes every entry type.
pub fn build_session_path<'a>(
    entries: &'a [SessionEntry],
    leaf: Leaf<'_>,
    index: &EntryIndex,
) -> Vec<&'a SessionEntry> {
    let start = match leaf {
        Leaf::Empty => return Vec::new(),
        Leaf::Last => entries.len().checked_sub(1),
        Leaf::Id(id) => index.get(id).copied().or_else(|| entries.len().checked_sub(1)),
    };
    let mut path = Vec::new();
    let mut seen = vec![false; entries.len()];
    let mut current = start;
    while let Some(i) = current {
        // A parent cycle (a corrupt file, reported when it was read): stop at the first repeat,
        // so every entry is in the path once.
        if std::mem::replace(&mut seen[i], true) {
            break;
        }
        path.push(&entries[i]);
        current = parent_position(entries, index, i);
    }
    path.reverse();
    path
}

/// Thinking level and model of a path: each `thinking_level_change` sets the level; each
/// `model_change` and each assistant message sets the model; the last one wins.
pub fn session_context_settings(path: &[&SessionEntry]) -> (String, Option<ModelRef>) {
    let mut level = "off".to_owned();
    let mut model = None;
    for e in path {
        match e {
            SessionEntry::ThinkingLevelChange(t) => level = t.thinking_level.clone(),
            SessionEntry::ModelChange(m) => {
                model = Some(ModelRef { provider: m.provider.clone(), model_id: m.model_id.clone() })
            }
            SessionEntry::Message(m) => {
                if let AgentMessage::Assistant(a) = &m.message {
                    model = Some(ModelRef { provider: a.provider.clone(), model_id: a.model.clone() });
                }
            }
            _ => {}
        }
    }
    (level, model)
}

/// The active entries with the latest compaction applied.
pub fn build_context_entries<'a>(
    entries: &'a [SessionEntry],
    leaf: Leaf<'_>,
    index: &EntryIndex,
) -> Vec<&'a SessionEntry> {
    context_entries_of_path(build_session_path(entries, leaf, index))
}

/// The context entries of a path: the path with its latest compaction applied.
pub(crate) fn context_entries_of_path(path: Vec<&SessionEntry>) -> Vec<&SessionEntry> {
    let Some(ci) = path.iter().rposition(|e| matches!(e, SessionEntry::Compaction(_))) else {
        return path;
    };
    let SessionEntry::Compaction(c) = path[ci] else { return path };
    let mut out = Vec::with_capacity(path.len() - ci);
    out.push(path[ci]);
    let mut found = false;
    for e in &path[..ci] {
        if e.id() == c.first_kept_entry_id {
            found = true;
        }
        if found && !e.is_system_message() {
            out.push(e);
        }
    }
    out.extend_from_slice(&path[ci + 1..]);
    out
}

fn iso_ms(iso: &str) -> u64 {
    parse_iso(iso).map_or(0, |ms| ms.max(0) as u64)
}

/// The messages of one entry: at most two, held inline (one per entry is the rule, and a
/// session's tens of thousands of entries are projected at every load and request).
pub type EntryMessages<'a> = SmallVec<[Cow<'a, CodingAgentMessage>; 2]>;

/// The messages one entry contributes (pi's `sessionEntryToContextMessages`).
pub fn entry_context_messages(entry: &SessionEntry) -> EntryMessages<'_> {
    match entry {
        SessionEntry::Message(m) => smallvec![Cow::Borrowed(&m.message)],
        SessionEntry::CustomMessage(c) => smallvec![Cow::Owned(create_custom_message(
            &c.custom_type,
            c.content.clone(),
            c.display,
            c.details.clone(),
            iso_ms(&c.timestamp),
        ))],
        SessionEntry::BranchSummary(b) if !b.summary.is_empty() => {
            smallvec![Cow::Owned(create_branch_summary_message(&b.summary, &b.from_id, iso_ms(&b.timestamp)))]
        }
        SessionEntry::Compaction(c) => {
            let summary = create_compaction_summary_message(&c.summary, c.tokens_before, iso_ms(&c.timestamp));
            match &c.system_message {
                Some(s) => smallvec![Cow::Owned(AgentMessage::System(s.clone().into())), Cow::Owned(summary)],
                None => smallvec![Cow::Owned(summary)],
            }
        }
        SessionEntry::Raw(r) => match r.lenient() {
            Some(e) => entry_context_messages(&e).into_iter().map(|m| Cow::Owned(m.into_owned())).collect(),
            None => SmallVec::new(),
        },
        _ => SmallVec::new(),
    }
}

fn replaced<'a>(message: Cow<'a, CodingAgentMessage>, content: &Value) -> Cow<'a, CodingAgentMessage> {
    let as_blocks = |v: &Value| -> Value {
        match v {
            Value::String(s) => serde_json::json!([{"type": "text", "text": s}]),
            other => other.clone(),
        }
    };
    let mut m = message.into_owned();
    let ok = match &mut m {
        AgentMessage::User(u) => serde_json::from_value::<Content<UserBlock>>(content.clone()).map(|c| u.content = c),
        AgentMessage::Assistant(a) => {
            serde_json::from_value::<Vec<AssistantBlock>>(as_blocks(content)).map(|c| a.content = c)
        }
        AgentMessage::ToolResult(t) => {
            serde_json::from_value::<Vec<UserBlock>>(as_blocks(content)).map(|c| t.content = c)
        }
        AgentMessage::Custom(CodingMessage::Custom(c)) => {
            serde_json::from_value::<Content<UserBlock>>(content.clone()).map(|x| c.content = x)
        }
        _ => Ok(()),
    };
    if let Err(e) = ok {
        tracing::warn!(target: "pi_coding_agent::session", "context edit content does not fit its target: {e}");
    }
    Cow::Owned(m)
}

/// One entry's messages with its latest context edit applied (pi's `projectContextEntry`).
pub fn project_context_entry<'a>(entry: &'a SessionEntry, edit: Option<&ContextEditEntry>) -> EntryMessages<'a> {
    let messages = entry_context_messages(entry);
    let Some(edit) = edit else { return messages };
    let Some(replacement) = &edit.replacement else { return SmallVec::new() };
    messages
        .into_iter()
        .map(|m| match m.role() {
            "user" | "assistant" | "toolResult" | "custom" => replaced(m, &replacement.content),
            _ => m,
        })
        .collect()
}

/// The projection of a path's context entries.
pub fn project_path<'a>(path: Vec<&'a SessionEntry>) -> SessionProjection<'a> {
    let (thinking_level, model) = session_context_settings(&path);
    project_path_with(path, thinking_level, model)
}

/// [`project_path`] with the path's settings already known.
pub(crate) fn project_path_with<'a>(
    path: Vec<&'a SessionEntry>,
    thinking_level: String,
    model: Option<ModelRef>,
) -> SessionProjection<'a> {
    let entries = project_entries(context_entries_of_path(path)).collect();
    SessionProjection { entries, thinking_level, model }
}

/// The projected entries of a path's context entries (`selected`, from [`context_entries_of_path`]),
/// one at a time: a caller that looks at each once (a comparison, a search) holds none of them.
pub(crate) fn project_entries<'a>(selected: Vec<&'a SessionEntry>) -> impl Iterator<Item = ProjectedEntry<'a>> {
    let mut edits: HashMap<&str, &ContextEditEntry> = HashMap::new();
    for e in &selected {
        if let SessionEntry::ContextEdit(c) = e {
            edits.insert(&c.target_id, c);
        }
    }
    selected.into_iter().enumerate().map(move |(i, source)| {
        // Only the newest compaction (index 0) contributes; older ones in the kept range do not.
        let messages = if i > 0 && matches!(source, SessionEntry::Compaction(_)) {
            SmallVec::new()
        } else {
            // Most sessions have no context edits: no lookup per entry then.
            let edit = if edits.is_empty() { None } else { edits.get(source.id()).copied() };
            project_context_entry(source, edit)
        };
        ProjectedEntry { source, messages }
    })
}

/// The provenance-preserving, compaction-aware projection of one branch.
pub fn build_session_projection<'a>(
    entries: &'a [SessionEntry],
    leaf: Leaf<'_>,
    index: &EntryIndex,
) -> SessionProjection<'a> {
    project_path(build_session_path(entries, leaf, index))
}

/// The model context of one branch (owned).
///
/// ```
/// use pi_coding_agent::session::{build_session_context, index_entries, Leaf, SessionEntry};
/// let entries: Vec<SessionEntry> = [
///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
///     r#"{"type":"thinking_level_change","id":"b","parentId":"a","timestamp":"2024-01-01T00:00:00.000Z","thinkingLevel":"high"}"#,
/// ].iter().map(|l| serde_json::from_str(l).unwrap()).collect();
/// let ctx = build_session_context(&entries, Leaf::Last, &index_entries(&entries));
/// assert_eq!(ctx.messages.len(), 1);
/// assert_eq!(ctx.thinking_level, "high");
/// ```
pub fn build_session_context(entries: &[SessionEntry], leaf: Leaf<'_>, index: &EntryIndex) -> SessionContext {
    build_session_projection(entries, leaf, index).into_context()
}
