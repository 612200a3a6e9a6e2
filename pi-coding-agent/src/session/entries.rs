//! Session file lines: the header and every entry type of pi's v3 JSONL format.
//!
//! Each struct keeps the key order it was read in and its unknown fields, so a file written by the
//! TypeScript pi is written back byte for byte. Built in Rust, the fields are written in the order
//! pi writes them (`type, id, parentId, timestamp, …`; `custom` and `custom_message` put
//! `customType` and their payload first).
//!
//! An entry of a type this version does not know, or a known type with fields it cannot read, is a
//! [`SessionEntry::Raw`]: it keeps its place in the tree and its exact JSON, and adds nothing to the
//! model context.

use std::fmt;

use pi_ai::{Content, SystemMessage, Usage, UserBlock, json_object};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::messages::CodingAgentMessage;

/// The format version this crate writes.
pub const CURRENT_SESSION_VERSION: u64 = 3;

json_object! {
    /// Line 1 of a session file.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SessionHeader tag("type" = "session") {
        /// Format version; absent in v1 files.
        version: opt u64 = "version",
        /// Session id (a UUIDv7 unless chosen).
        id: req String = "id",
        /// Creation time, ISO.
        timestamp: opt String = "timestamp",
        /// Working directory of the session.
        cwd: opt String = "cwd",
        /// The session file this one was branched or forked from.
        parent_session: opt String = "parentSession",
    }
}

json_object! {
    /// A transcript message.
    #[derive(Clone, Debug, PartialEq)]
    pub struct MessageEntry tag("type" = "message") {
        /// Entry id (8 hex chars).
        id: req String = "id",
        /// Parent entry id; `None` for a root.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
        /// The message.
        message: req CodingAgentMessage = "message",
    }
}

impl MessageEntry {
    /// A message entry with the canonical key order.
    pub fn new(id: String, parent_id: Option<String>, timestamp: String, message: CodingAgentMessage) -> Self {
        MessageEntry { id, parent_id, timestamp, message, extra: Default::default(), key_order: Default::default() }
    }
}

json_object! {
    /// The thinking level changed.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ThinkingLevelChangeEntry tag("type" = "thinking_level_change") {
        /// Entry id.
        id: req String = "id",
        /// Parent entry id.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
        /// The new level (`off`, `minimal`, …, `max`).
        thinking_level: req String = "thinkingLevel",
    }
}

json_object! {
    /// The model changed.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ModelChangeEntry tag("type" = "model_change") {
        /// Entry id.
        id: req String = "id",
        /// Parent entry id.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
        /// Provider id.
        provider: req String = "provider",
        /// Model id.
        model_id: req String = "modelId",
    }
}

json_object! {
    /// Model-attributed usage outside the conversation (billing only; no context).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct UsageEntry tag("type" = "usage") {
        /// Entry id.
        id: req String = "id",
        /// Parent entry id.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
        /// Usage category, e.g. `cache_warm`.
        kind: req String = "kind",
        /// Provider id.
        provider: req String = "provider",
        /// Model id.
        model: req String = "model",
        /// The usage.
        usage: req Usage = "usage",
        /// Human-readable qualifier.
        note: opt String = "note",
    }
}

json_object! {
    /// Older context was summarized; the model sees the summary, then the kept entries.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CompactionEntry tag("type" = "compaction") {
        /// Entry id.
        id: req String = "id",
        /// Parent entry id.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
        /// The summary.
        summary: req String = "summary",
        /// First entry kept after the summary (this entry's own id: keep none).
        first_kept_entry_id: req String = "firstKeptEntryId",
        /// Estimated context tokens before compaction.
        tokens_before: num f64 = "tokensBefore",
        /// Extension- or pi-specific data (pi: `{readFiles, modifiedFiles}`).
        details: opt Value = "details",
        /// Usage of the summarization call(s).
        usage: opt Usage = "usage",
        /// Generated by an extension.
        from_hook: opt bool = "fromHook",
        /// The replayed prompt and tool state at this boundary.
        system_message: opt SystemMessage = "systemMessage",
    }
}

json_object! {
    /// The user came back from another branch; its summary becomes context.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct BranchSummaryEntry tag("type" = "branch_summary") {
        /// Entry id.
        id: req String = "id",
        /// Parent entry id (the entry branched from).
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
        /// The leaf the user left (or `"root"`).
        from_id: req String = "fromId",
        /// The summary (an empty one adds no context).
        summary: req String = "summary",
        /// Extension- or pi-specific data (pi: `{readFiles, modifiedFiles}`).
        details: opt Value = "details",
        /// Usage of the summarization call.
        usage: opt Usage = "usage",
        /// Generated by an extension.
        from_hook: opt bool = "fromHook",
    }
}

json_object! {
    /// Extension state. Never sent to the model.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CustomEntry tag("type" = "custom") {
        /// Which extension wrote it.
        custom_type: req String = "customType",
        /// The state.
        data: opt Value = "data",
        /// Entry id.
        id: req String = "id",
        /// Parent entry id.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
    }
}

json_object! {
    /// An extension message that joins the model context as a `custom` message.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CustomMessageEntry tag("type" = "custom_message") {
        /// Which extension wrote it.
        custom_type: req String = "customType",
        /// What the model sees.
        content: req Content<UserBlock> = "content",
        /// Whether the terminal renders it.
        display: req bool = "display",
        /// Extension data (never sent to the model).
        details: opt Value = "details",
        /// Entry id.
        id: req String = "id",
        /// Parent entry id.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
    }
}

json_object! {
    /// The new content of an edited entry.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ContextReplacement {
        /// A string or an array of blocks of the target's role.
        content: req Value = "content",
    }
}

json_object! {
    /// A branch-local edit of an earlier entry's contribution to the model context.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ContextEditEntry tag("type" = "context_edit") {
        /// Entry id.
        id: req String = "id",
        /// Parent entry id.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
        /// The edited entry.
        target_id: req String = "targetId",
        /// `None` omits the target; otherwise only its content is replaced.
        replacement: req Option<ContextReplacement> = "replacement",
    }
}

json_object! {
    /// A user bookmark on an entry (`None` or empty clears it).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct LabelEntry tag("type" = "label") {
        /// Entry id.
        id: req String = "id",
        /// Parent entry id.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
        /// The labelled entry.
        target_id: req String = "targetId",
        /// The label.
        label: opt String = "label",
    }
}

json_object! {
    /// Session metadata: the display name.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SessionInfoEntry tag("type" = "session_info") {
        /// Entry id.
        id: req String = "id",
        /// Parent entry id.
        parent_id: req Option<String> = "parentId",
        /// ISO time.
        timestamp: req String = "timestamp",
        /// The name.
        name: opt String = "name",
    }
}

/// An entry kept as raw JSON: an unknown type, or a known type this version cannot read.
///
/// It keeps its place in the tree (`id`, `parentId`) and is written back unchanged; it adds
/// nothing to the model context, except that a `message` or `custom_message` whose only defect is
/// a missing or `null` content is read the way pi reads it (see [`RawEntry::lenient`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawEntry(pub Map<String, Value>);

impl RawEntry {
    fn str_field(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    /// The `type` value, or `""`.
    pub fn entry_type(&self) -> &str {
        self.str_field("type").unwrap_or_default()
    }

    /// The entry as pi reads it when it is a known type with a missing or `null` content:
    /// `message` content becomes `""` (system) or `[]`, `custom_message` content `[]` and a missing
    /// `display` `false`. `None` when that does not make it readable.
    pub fn lenient(&self) -> Option<SessionEntry> {
        let mut obj = self.0.clone();
        match self.entry_type() {
            "message" => {
                let msg = obj.get_mut("message")?.as_object_mut()?;
                let role = msg.get("role").and_then(Value::as_str)?.to_owned();
                if msg.get("content").is_none_or(Value::is_null) {
                    let empty = if role == "system" { Value::String(String::new()) } else { Value::Array(vec![]) };
                    msg.insert("content".into(), empty);
                }
            }
            "custom_message" => {
                if obj.get("content").is_none_or(Value::is_null) {
                    obj.insert("content".into(), Value::Array(vec![]));
                }
                if obj.get("display").is_none_or(Value::is_null) {
                    obj.insert("display".into(), Value::Bool(false));
                }
            }
            _ => return None,
        }
        match SessionEntry::deserialize(&Value::Object(obj)) {
            Ok(SessionEntry::Raw(_)) | Err(_) => None,
            Ok(e) => Some(e),
        }
    }
}

/// One session entry (every line after the header).
#[derive(Clone, Debug, PartialEq)]
pub enum SessionEntry {
    /// `message`.
    Message(MessageEntry),
    /// `thinking_level_change`.
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    /// `model_change`.
    ModelChange(ModelChangeEntry),
    /// `usage` (boxed, as the other large and rare kinds: a long session is mostly messages,
    /// and every entry takes the size of the largest kind).
    Usage(Box<UsageEntry>),
    /// `compaction`.
    Compaction(Box<CompactionEntry>),
    /// `branch_summary`.
    BranchSummary(Box<BranchSummaryEntry>),
    /// `custom`.
    Custom(CustomEntry),
    /// `custom_message`.
    CustomMessage(CustomMessageEntry),
    /// `context_edit`.
    ContextEdit(ContextEditEntry),
    /// `label`.
    Label(LabelEntry),
    /// `session_info`.
    SessionInfo(SessionInfoEntry),
    /// Any other entry, kept verbatim.
    Raw(RawEntry),
}

macro_rules! each_typed {
    ($self:expr, $e:ident => $body:expr, $raw:ident => $raw_body:expr) => {
        match $self {
            SessionEntry::Message($e) => $body,
            SessionEntry::ThinkingLevelChange($e) => $body,
            SessionEntry::ModelChange($e) => $body,
            SessionEntry::Usage($e) => $body,
            SessionEntry::Compaction($e) => $body,
            SessionEntry::BranchSummary($e) => $body,
            SessionEntry::Custom($e) => $body,
            SessionEntry::CustomMessage($e) => $body,
            SessionEntry::ContextEdit($e) => $body,
            SessionEntry::Label($e) => $body,
            SessionEntry::SessionInfo($e) => $body,
            SessionEntry::Raw($raw) => $raw_body,
        }
    };
}

impl SessionEntry {
    /// The entry id (`""` for a raw entry without one; such entries are never loaded).
    pub fn id(&self) -> &str {
        each_typed!(self, e => &e.id, r => r.str_field("id").unwrap_or_default())
    }

    /// The parent id; `None` for a root.
    pub fn parent_id(&self) -> Option<&str> {
        each_typed!(self, e => e.parent_id.as_deref(), r => r.str_field("parentId"))
    }

    /// The ISO timestamp (`""` if a raw entry has none).
    pub fn timestamp(&self) -> &str {
        each_typed!(self, e => &e.timestamp, r => r.str_field("timestamp").unwrap_or_default())
    }

    /// The `type` value.
    pub fn entry_type(&self) -> &str {
        match self {
            SessionEntry::Message(_) => "message",
            SessionEntry::ThinkingLevelChange(_) => "thinking_level_change",
            SessionEntry::ModelChange(_) => "model_change",
            SessionEntry::Usage(_) => "usage",
            SessionEntry::Compaction(_) => "compaction",
            SessionEntry::BranchSummary(_) => "branch_summary",
            SessionEntry::Custom(_) => "custom",
            SessionEntry::CustomMessage(_) => "custom_message",
            SessionEntry::ContextEdit(_) => "context_edit",
            SessionEntry::Label(_) => "label",
            SessionEntry::SessionInfo(_) => "session_info",
            SessionEntry::Raw(r) => r.entry_type(),
        }
    }

    /// The message, if this is a `message` entry.
    pub fn as_message(&self) -> Option<&CodingAgentMessage> {
        match self {
            SessionEntry::Message(m) => Some(&m.message),
            _ => None,
        }
    }

    /// Whether this is a `message` entry holding a system message.
    pub fn is_system_message(&self) -> bool {
        matches!(self, SessionEntry::Message(m) if m.message.role() == "system")
    }

    pub(crate) fn set_parent_id(&mut self, parent: Option<String>) {
        match self {
            SessionEntry::Raw(r) => {
                r.0.insert("parentId".into(), parent.map_or(Value::Null, Value::String));
            }
            _ => each_typed!(self, e => e.parent_id = parent, _r => {}),
        }
    }
}

impl Serialize for SessionEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        each_typed!(self, e => e.serialize(serializer), r => r.0.serialize(serializer))
    }
}

/// A line of a session file: the header or an entry.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)] // one per line while reading; entries are moved out unboxed
pub enum FileEntry {
    /// The header.
    Header(SessionHeader),
    /// An entry.
    Entry(SessionEntry),
}

impl Serialize for FileEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            FileEntry::Header(h) => h.serialize(serializer),
            FileEntry::Entry(e) => e.serialize(serializer),
        }
    }
}

fn visit_file_entry<'de, A: MapAccess<'de>>(mut map: A) -> Result<FileEntry, A::Error> {
    use std::borrow::Cow;
    let mut prefix: Vec<(String, Value)> = Vec::new();
    while let Some(key) = map.next_key::<Cow<'de, str>>()? {
        if key == "type" {
            let tag: Cow<'de, str> = map.next_value()?;
            let e = |x: SessionEntry| FileEntry::Entry(x);
            return Ok(match tag.as_ref() {
                "session" => FileEntry::Header(SessionHeader::__json_visit(prefix, true, map)?),
                "message" => e(SessionEntry::Message(MessageEntry::__json_visit(prefix, true, map)?)),
                "thinking_level_change" => {
                    e(SessionEntry::ThinkingLevelChange(ThinkingLevelChangeEntry::__json_visit(prefix, true, map)?))
                }
                "model_change" => e(SessionEntry::ModelChange(ModelChangeEntry::__json_visit(prefix, true, map)?)),
                "usage" => e(SessionEntry::Usage(Box::new(UsageEntry::__json_visit(prefix, true, map)?))),
                "compaction" => {
                    e(SessionEntry::Compaction(Box::new(CompactionEntry::__json_visit(prefix, true, map)?)))
                }
                "branch_summary" => {
                    e(SessionEntry::BranchSummary(Box::new(BranchSummaryEntry::__json_visit(prefix, true, map)?)))
                }
                "custom" => e(SessionEntry::Custom(CustomEntry::__json_visit(prefix, true, map)?)),
                "custom_message" => {
                    e(SessionEntry::CustomMessage(CustomMessageEntry::__json_visit(prefix, true, map)?))
                }
                "context_edit" => e(SessionEntry::ContextEdit(ContextEditEntry::__json_visit(prefix, true, map)?)),
                "label" => e(SessionEntry::Label(LabelEntry::__json_visit(prefix, true, map)?)),
                "session_info" => e(SessionEntry::SessionInfo(SessionInfoEntry::__json_visit(prefix, true, map)?)),
                other => {
                    let mut obj: Map<String, Value> = prefix.into_iter().collect();
                    obj.insert("type".into(), Value::String(other.to_owned()));
                    while let Some((k, v)) = map.next_entry::<String, Value>()? {
                        obj.insert(k, v);
                    }
                    e(SessionEntry::Raw(RawEntry(obj)))
                }
            });
        }
        prefix.push((key.into_owned(), map.next_value()?));
    }
    Ok(FileEntry::Entry(SessionEntry::Raw(RawEntry(prefix.into_iter().collect()))))
}

impl<'de> Deserialize<'de> for FileEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FileEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a session file entry (a JSON object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<FileEntry, A::Error> {
                visit_file_entry(map)
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for SessionEntry {
    /// A header line is rejected; an unknown type becomes [`SessionEntry::Raw`].
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        match FileEntry::deserialize(deserializer)? {
            FileEntry::Entry(e) => Ok(e),
            FileEntry::Header(_) => Err(D::Error::custom("a session header is not an entry")),
        }
    }
}
