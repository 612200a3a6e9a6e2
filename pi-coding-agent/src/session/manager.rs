//! [`SessionManager`]: an append-only tree of entries, in memory or in a JSONL file.

use std::path::{Path, PathBuf};

use pi_agent_core::AgentMessage;
use pi_ai::{Content, Usage, UserBlock};
use serde_json::Value;

use crate::messages::CodingAgentMessage;
use crate::session::background::{BackgroundWriter, PendingWrites};
use crate::session::context::{EntryIndex, index_entries};
use crate::session::entries::*;
use crate::session::ids::{new_entry_id, new_session_id, validate_session_id};
use crate::session::load::{LoadWarning, LoadedFile, ReadOutcome, read_session_file, read_session_header};
use crate::session::paths::{default_session_dir_path, get_agent_dir, resolve_path, session_file_name};
use crate::session::time::{iso_now, parse_iso};
use crate::session::tree::{Labels, SessionTreeNode, apply_label, build_tree};
use crate::session::writer::{JsonlWriter, lines_of};
use crate::session::{SessionError, SessionInfo, list};

mod branching;
mod path_cache;

/// Options of a new session.
#[derive(Clone, Debug, Default)]
pub struct NewSessionOptions {
    /// A chosen session id (validated); default a UUIDv7.
    pub id: Option<String>,
    /// The session this one derives from (written to the header).
    pub parent_session: Option<String>,
}

/// Manages one conversation session: an append-only tree of entries with a movable leaf.
///
/// Every append creates a child of the current leaf and moves the leaf to it; [`branch`](Self::branch)
/// moves the leaf back to start a new branch without touching history. A persistent manager writes
/// nothing until the session holds a user or assistant message, then creates the file exclusively
/// and appends (and syncs) one line per entry.
///
/// ```
/// use pi_coding_agent::session::SessionManager;
/// use pi_ai::UserMessage;
/// let mut s = SessionManager::in_memory("/tmp/project");
/// let first = s.append_message(UserMessage::new("hello").into()).unwrap();
/// s.append_thinking_level_change("high").unwrap();
/// assert_eq!(s.get_branch(None).len(), 2);
/// s.branch(&first).unwrap();
/// assert_eq!(s.build_session_context().thinking_level, "off");
/// ```
#[derive(Debug)]
pub struct SessionManager {
    session_id: String,
    session_file: Option<PathBuf>,
    session_dir: PathBuf,
    cwd: String,
    persist: bool,
    flushed: bool,
    header: SessionHeader,
    entries: Vec<SessionEntry>,
    index: EntryIndex,
    labels: Labels,
    leaf_id: Option<String>,
    has_conversation: bool,
    writer: Option<JsonlWriter>,
    background: Option<BackgroundWriter>,
    needs_newline: bool,
    warnings: Vec<LoadWarning>,
    path: path_cache::PathCache,
}

fn is_conversation(e: &SessionEntry) -> bool {
    matches!(e.as_message(), Some(AgentMessage::User(_) | AgentMessage::Assistant(_)))
}

fn path_string(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl SessionManager {
    fn blank(cwd: &Path, session_dir: PathBuf, persist: bool) -> Self {
        SessionManager {
            session_id: String::new(),
            session_file: None,
            session_dir,
            cwd: path_string(&resolve_path(cwd)),
            persist,
            flushed: false,
            header: SessionHeader::default(),
            entries: Vec::new(),
            index: EntryIndex::default(),
            labels: Labels::new(),
            leaf_id: None,
            has_conversation: false,
            writer: None,
            background: None,
            needs_newline: false,
            warnings: Vec::new(),
            path: Default::default(),
        }
    }

    fn make_dir(dir: &Path) -> Result<(), SessionError> {
        std::fs::create_dir_all(dir).map_err(|e| SessionError::io(format!("creating {}", dir.display()), e))
    }

    /// A session that is never written to disk.
    pub fn in_memory(cwd: impl AsRef<Path>) -> Self {
        let mut s = Self::blank(cwd.as_ref(), PathBuf::new(), false);
        s.reset_to_new(None, None);
        s
    }

    /// An in-memory session with a chosen id or parent, optionally seeded with entries (a header
    /// among them is used as the header).
    pub fn in_memory_with(
        cwd: impl AsRef<Path>,
        options: NewSessionOptions,
        entries: Vec<FileEntry>,
    ) -> Result<Self, SessionError> {
        if let Some(id) = &options.id {
            validate_session_id(id)?;
        }
        let mut s = Self::blank(cwd.as_ref(), PathBuf::new(), false);
        let mut header = None;
        let mut body = Vec::new();
        for e in entries {
            match e {
                FileEntry::Header(h) if header.is_none() => header = Some(h),
                FileEntry::Header(_) => {}
                FileEntry::Entry(e) => body.push(e),
            }
        }
        match header {
            Some(h) => {
                s.session_id = h.id.clone();
                s.header = h;
            }
            None => s.reset_to_new(options.id, options.parent_session),
        }
        s.entries = body;
        s.rebuild_index();
        Ok(s)
    }

    /// A new persistent session for `cwd`, in `session_dir` or the default per-cwd directory
    /// (created if missing).
    pub fn create(
        cwd: impl AsRef<Path>,
        session_dir: Option<&Path>,
        options: NewSessionOptions,
    ) -> Result<Self, SessionError> {
        if let Some(id) = &options.id {
            validate_session_id(id)?;
        }
        let dir = match session_dir {
            Some(d) => resolve_path(d),
            None => default_session_dir_path(cwd.as_ref(), get_agent_dir()),
        };
        Self::make_dir(&dir)?;
        let mut s = Self::blank(cwd.as_ref(), dir, true);
        s.reset_to_new(options.id, options.parent_session);
        Ok(s)
    }

    /// Opens a session file. The cwd comes from its header (else the process cwd) unless
    /// overridden; the session dir defaults to the file's directory. A missing file starts a new
    /// session that will be written at exactly `path`; an empty file is re-initialized; a non-empty
    /// file that is not a session is an error and is left untouched.
    pub fn open(
        path: impl AsRef<Path>,
        session_dir: Option<&Path>,
        cwd_override: Option<&Path>,
    ) -> Result<Self, SessionError> {
        let path = resolve_path(path);
        let cwd = match cwd_override {
            Some(c) => c.to_path_buf(),
            None => read_session_header(&path)
                .and_then(|h| h.cwd)
                .map(PathBuf::from)
                .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))),
        };
        let dir = match session_dir {
            Some(d) => resolve_path(d),
            None => path.parent().map(Path::to_path_buf).unwrap_or_default(),
        };
        if !dir.as_os_str().is_empty() {
            Self::make_dir(&dir)?;
        }
        let mut s = Self::blank(&cwd, dir, true);
        s.set_session_file(&path)?;
        Ok(s)
    }

    /// Switches this manager to another session file (resume). See [`open`](Self::open).
    pub fn set_session_file(&mut self, path: &Path) -> Result<(), SessionError> {
        let path = resolve_path(path);
        self.writer = None;
        self.warnings.clear();
        if !path.exists() {
            self.reset_to_new(None, None);
            self.session_file = Some(path);
            return Ok(());
        }
        let outcome =
            read_session_file(&path).map_err(|e| SessionError::io(format!("reading {}", path.display()), e))?;
        match outcome {
            ReadOutcome::Session(loaded) => self.load(path, loaded),
            ReadOutcome::NotASession => Err(SessionError::NotASession(path)),
            ReadOutcome::Empty => {
                let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                if size > 0 {
                    return Err(SessionError::NotASession(path));
                }
                self.reset_to_new(None, None);
                self.session_file = Some(path.clone());
                JsonlWriter::rewrite(&path, [&FileEntry::Header(self.header.clone())])?;
                self.flushed = true;
                Ok(())
            }
        }
    }

    fn load(&mut self, path: PathBuf, loaded: LoadedFile) -> Result<(), SessionError> {
        let LoadedFile { header, entries, warnings, needs_newline, migrated, index } = loaded;
        self.session_id = header.id.clone();
        self.header = header;
        self.entries = entries;
        self.needs_newline = needs_newline;
        self.rebuild_index_with(Some(index));
        self.session_file = Some(path.clone());
        self.flushed = true;
        self.warnings = warnings;
        if migrated {
            let lost_lines = self.warnings.iter().any(|w| {
                matches!(
                    w,
                    LoadWarning::MalformedLine { .. }
                        | LoadWarning::TornLastLine { .. }
                        | LoadWarning::NotAnObject { .. }
                        | LoadWarning::MissingId { .. }
                        | LoadWarning::ExtraHeader { .. }
                )
            });
            if lost_lines {
                // The rewrite would drop lines we could not read: keep the original bytes.
                let backup = path.with_extension("jsonl.pre-v3.bak");
                std::fs::copy(&path, &backup)
                    .map_err(|e| SessionError::io(format!("backing up {}", path.display()), e))?;
                self.warnings.push(LoadWarning::MigrationBackup { path: path_string(&backup) });
            }
            self.rewrite_file()?;
            self.needs_newline = false;
        }
        Ok(())
    }

    /// Continues the newest session (by mtime) of `cwd`'s directory, or starts a new one. With a
    /// custom directory only sessions whose header cwd is `cwd` count.
    pub fn continue_recent(cwd: impl AsRef<Path>, session_dir: Option<&Path>) -> Result<Self, SessionError> {
        let default_dir = default_session_dir_path(cwd.as_ref(), get_agent_dir());
        let dir = session_dir.map(resolve_path).unwrap_or_else(|| default_dir.clone());
        let filter = session_dir.is_some() && dir != default_dir;
        Self::make_dir(&dir)?;
        let recent = list::find_most_recent_session(&dir, filter.then(|| resolve_path(cwd.as_ref())).as_deref());
        let mut s = Self::blank(cwd.as_ref(), dir, true);
        match recent {
            Some(path) => s.set_session_file(&path)?,
            None => s.reset_to_new(None, None),
        }
        Ok(s)
    }

    /// Lists the sessions of `cwd` (see [`list::list_sessions`]), newest activity first.
    pub fn list(cwd: impl AsRef<Path>, session_dir: Option<&Path>) -> Vec<SessionInfo> {
        list::list_sessions(cwd.as_ref(), session_dir)
    }

    /// Finds the file of session `id` among the sessions of `cwd`.
    pub fn find_by_id(cwd: impl AsRef<Path>, id: &str, session_dir: Option<&Path>) -> Option<PathBuf> {
        list::find_by_id(cwd.as_ref(), id, session_dir)
    }

    fn reset_to_new(&mut self, id: Option<String>, parent_session: Option<String>) {
        self.session_id = id.unwrap_or_else(new_session_id);
        let timestamp = iso_now();
        self.header = SessionHeader {
            version: Some(CURRENT_SESSION_VERSION),
            id: self.session_id.clone(),
            timestamp: Some(timestamp.clone()),
            cwd: Some(self.cwd.clone()),
            parent_session,
            ..Default::default()
        };
        self.entries.clear();
        self.path.clear();
        self.index.clear();
        self.labels.clear();
        self.leaf_id = None;
        self.flushed = false;
        self.has_conversation = false;
        self.writer = None;
        self.needs_newline = false;
        if self.persist {
            self.session_file = Some(self.session_dir.join(session_file_name(&timestamp, &self.session_id)));
        }
    }

    /// Starts a new session in this manager (same cwd and directory). Returns the new file path
    /// (persistent managers).
    pub fn new_session(&mut self, options: NewSessionOptions) -> Result<Option<PathBuf>, SessionError> {
        if let Some(id) = &options.id {
            validate_session_id(id)?;
        }
        self.warnings.clear();
        self.reset_to_new(options.id, options.parent_session);
        Ok(self.session_file.clone())
    }

    fn rebuild_index(&mut self) {
        self.rebuild_index_with(None);
    }

    /// [`rebuild_index`](Self::rebuild_index) taking `index` (the entries' index, built while
    /// they were read) instead of hashing every id again.
    fn rebuild_index_with(&mut self, index: Option<EntryIndex>) {
        self.path.clear();
        self.labels.clear();
        self.leaf_id = None;
        self.has_conversation = false;
        self.index = index.unwrap_or_else(|| index_entries(&self.entries));
        for e in &self.entries {
            apply_label(&mut self.labels, e);
            self.has_conversation |= is_conversation(e);
        }
        self.leaf_id = self.entries.last().map(|e| e.id().to_owned());
    }

    fn file_lines(&self) -> impl Iterator<Item = FileEntry> + '_ {
        std::iter::once(FileEntry::Header(self.header.clone()))
            .chain(self.entries.iter().cloned().map(FileEntry::Entry))
    }

    fn rewrite_file(&mut self) -> Result<(), SessionError> {
        let (true, Some(path)) = (self.persist, self.session_file.clone()) else { return Ok(()) };
        let lines: Vec<FileEntry> = self.file_lines().collect();
        self.writer = None;
        if let Some(background) = self.background.as_mut() {
            background.rewrite(path, lines_of(&lines, 1 << 16)?);
            return Ok(());
        }
        JsonlWriter::rewrite(&path, &lines)
    }

    /// Background mode: from now on every write and fsync of this manager runs on its own writer
    /// thread, in order, instead of the caller's thread (an async runtime's worker must not wait
    /// for the disk). Appends return as soon as the entry is in memory and queued; await
    /// [`take_pending_writes`](Self::take_pending_writes) before emitting anything that needs the
    /// entry on disk, and call [`stop_persisting`](Self::stop_persisting) if that reports a failure.
    pub fn write_in_background(&mut self) -> Result<(), SessionError> {
        if self.background.is_none() {
            self.background = Some(BackgroundWriter::start()?);
            self.writer = None;
        }
        Ok(())
    }

    /// The writes queued in background mode since the last call (empty otherwise).
    pub fn take_pending_writes(&mut self) -> PendingWrites {
        self.background.as_mut().map(BackgroundWriter::take_pending).unwrap_or_default()
    }

    /// A background write failed: nothing more is written (the file stays a valid prefix of the
    /// session); the session goes on in memory, as after a failed synchronous append.
    pub fn stop_persisting(&mut self) {
        self.persist = false;
        self.writer = None;
    }

    /// The last entry (after the pending newline, if any) as a complete line, for the writer thread.
    fn last_line(&mut self) -> Result<Vec<u8>, SessionError> {
        let mut bytes = Vec::with_capacity(512);
        if std::mem::take(&mut self.needs_newline) {
            bytes.push(b'\n');
        }
        bytes.extend(lines_of(self.entries.last(), 512)?);
        Ok(bytes)
    }

    fn persist_last(&mut self) -> Result<(), SessionError> {
        let (true, Some(path)) = (self.persist, self.session_file.clone()) else { return Ok(()) };
        if !self.flushed {
            if !self.has_conversation {
                return Ok(());
            }
            let lines: Vec<FileEntry> = self.file_lines().collect();
            if let Some(background) = self.background.as_mut() {
                background.create(path, lines_of(&lines, 4096)?);
            } else {
                self.writer = Some(JsonlWriter::create_new(&path, &lines)?);
            }
            self.flushed = true;
            return Ok(());
        }
        if self.background.is_some() {
            let bytes = self.last_line()?;
            if let Some(background) = self.background.as_mut() {
                background.append(path, bytes);
            }
            return Ok(());
        }
        if self.writer.is_none() {
            self.writer = Some(JsonlWriter::open_append(&path)?);
        }
        let Some(writer) = self.writer.as_mut() else { return Ok(()) };
        if self.needs_newline {
            writer.append_bytes(b"\n")?;
            self.needs_newline = false;
        }
        match self.entries.last() {
            Some(entry) => writer.append(entry),
            None => Ok(()),
        }
    }

    fn append_entry(&mut self, entry: SessionEntry) -> Result<String, SessionError> {
        let id = entry.id().to_owned();
        let parent = entry.parent_id().and_then(|p| self.index.get(p)).copied();
        self.path.appended(&entry, self.entries.len(), parent);
        self.leaf_id = Some(id.clone());
        self.has_conversation |= is_conversation(&entry);
        self.index.insert(id.clone(), self.entries.len());
        if self.entries.len() == self.entries.capacity() {
            // A loaded list is exactly its size: the first append grows it by an eighth, not
            // double (a 100 MB session's list is about 11 MB; issue 20).
            self.entries.reserve_exact(self.entries.len() / 8 + 16);
        }
        self.entries.push(entry);
        if let Err(e) = self.persist_last() {
            // The file cannot take this entry (an unwritable directory, a full disk): the session
            // goes on in memory with it, and nothing more is written, so the file stays a valid
            // prefix of the session (no later entry with a missing parent). The caller reports it.
            self.persist = false;
            self.writer = None;
            return Err(e);
        }
        Ok(id)
    }

    fn next_id(&self) -> String {
        new_entry_id(&self.index)
    }

    /// Appends a message (child of the leaf) and returns its id. Compaction and branch summaries
    /// are entries of their own: use [`append_compaction`](Self::append_compaction) and
    /// [`branch_with_summary`](Self::branch_with_summary).
    pub fn append_message(&mut self, message: CodingAgentMessage) -> Result<String, SessionError> {
        let entry = MessageEntry::new(self.next_id(), self.leaf_id.clone(), iso_now(), message);
        self.append_entry(SessionEntry::Message(entry))
    }

    /// Appends a thinking-level change.
    pub fn append_thinking_level_change(&mut self, thinking_level: &str) -> Result<String, SessionError> {
        let entry = ThinkingLevelChangeEntry {
            id: self.next_id(),
            parent_id: self.leaf_id.clone(),
            timestamp: iso_now(),
            thinking_level: thinking_level.to_owned(),
            ..Default::default()
        };
        self.append_entry(SessionEntry::ThinkingLevelChange(entry))
    }

    /// Appends a model change.
    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> Result<String, SessionError> {
        let entry = ModelChangeEntry {
            id: self.next_id(),
            parent_id: self.leaf_id.clone(),
            timestamp: iso_now(),
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
            ..Default::default()
        };
        self.append_entry(SessionEntry::ModelChange(entry))
    }

    /// Appends model-attributed usage outside the conversation (no context).
    pub fn append_usage(
        &mut self,
        kind: &str,
        provider: &str,
        model: &str,
        usage: Usage,
        note: Option<&str>,
    ) -> Result<String, SessionError> {
        let entry = UsageEntry {
            id: self.next_id(),
            parent_id: self.leaf_id.clone(),
            timestamp: iso_now(),
            kind: kind.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            usage,
            note: note.filter(|n| !n.is_empty()).map(str::to_owned),
            ..Default::default()
        };
        self.append_entry(SessionEntry::Usage(Box::new(entry)))
    }

    /// Appends a compaction. `first_kept_entry_id` `None` keeps nothing (the entry's own id). The
    /// current replayed system message is stored with it, stamped with the entry's time.
    pub fn append_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: Option<&str>,
        tokens_before: f64,
        details: Option<Value>,
        from_hook: Option<bool>,
        usage: Option<Usage>,
    ) -> Result<String, SessionError> {
        let timestamp = iso_now();
        let system_message = self.context_system_message().map(|mut s| {
            s.timestamp = parse_iso(&timestamp).map_or(0, |t| t.max(0) as u64);
            s
        });
        let id = self.next_id();
        let entry = CompactionEntry {
            parent_id: self.leaf_id.clone(),
            timestamp,
            summary: summary.to_owned(),
            first_kept_entry_id: first_kept_entry_id.map_or_else(|| id.clone(), str::to_owned),
            tokens_before,
            details,
            usage,
            from_hook,
            system_message,
            id,
            ..Default::default()
        };
        self.append_entry(SessionEntry::Compaction(Box::new(entry)))
    }

    /// Appends extension state (`custom`): stored, never sent to the model.
    pub fn append_custom_entry(&mut self, custom_type: &str, data: Option<Value>) -> Result<String, SessionError> {
        let entry = CustomEntry {
            custom_type: custom_type.to_owned(),
            data,
            id: self.next_id(),
            parent_id: self.leaf_id.clone(),
            timestamp: iso_now(),
            ..Default::default()
        };
        self.append_entry(SessionEntry::Custom(entry))
    }

    /// Appends the session's display name (newlines become a space; trimmed).
    pub fn append_session_info(&mut self, name: &str) -> Result<String, SessionError> {
        let mut sanitized = String::with_capacity(name.len());
        let mut in_break = false;
        for c in name.chars() {
            if c == '\r' || c == '\n' {
                if !in_break {
                    sanitized.push(' ');
                }
                in_break = true;
            } else {
                in_break = false;
                sanitized.push(c);
            }
        }
        let entry = SessionInfoEntry {
            id: self.next_id(),
            parent_id: self.leaf_id.clone(),
            timestamp: iso_now(),
            name: Some(sanitized.trim().to_owned()),
            ..Default::default()
        };
        self.append_entry(SessionEntry::SessionInfo(entry))
    }

    /// The latest `session_info` name; an empty one clears.
    pub fn session_name(&self) -> Option<String> {
        self.entries.iter().rev().find_map(|e| match e {
            SessionEntry::SessionInfo(i) => {
                Some(i.name.as_deref().map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned))
            }
            _ => None,
        })?
    }

    /// Appends an extension message that joins the model context as a `custom` message.
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: Content<UserBlock>,
        display: bool,
        details: Option<Value>,
    ) -> Result<String, SessionError> {
        let entry = CustomMessageEntry {
            custom_type: custom_type.to_owned(),
            content,
            display,
            details,
            id: self.next_id(),
            parent_id: self.leaf_id.clone(),
            timestamp: iso_now(),
            ..Default::default()
        };
        self.append_entry(SessionEntry::CustomMessage(entry))
    }

    /// Appends a branch-local edit of an earlier entry's model content. `None` omits the target;
    /// `Some(content)` (a JSON string or array) replaces its content. The target must be on the
    /// active branch and be a `custom_message` or a user/assistant/toolResult message.
    pub fn append_context_edit(&mut self, target_id: &str, replacement: Option<Value>) -> Result<String, SessionError> {
        if let Some(c) = &replacement
            && !(c.is_string() || c.is_array())
        {
            return Err(SessionError::InvalidReplacement);
        }
        let target = self.entry(target_id).ok_or_else(|| SessionError::EntryNotFound(target_id.to_owned()))?;
        if !self.get_branch(None).iter().any(|e| e.id() == target_id) {
            return Err(SessionError::NotOnActiveBranch(target_id.to_owned()));
        }
        let role = match target {
            SessionEntry::CustomMessage(_) => "custom",
            SessionEntry::Message(m) => m.message.role(),
            _ => "",
        };
        if !matches!(role, "custom" | "user" | "assistant" | "toolResult") {
            return Err(SessionError::NotEditable(target_id.to_owned()));
        }
        let replacement = replacement.map(|content| {
            let content = match content {
                Value::String(s) if role == "assistant" || role == "toolResult" => {
                    serde_json::json!([{"type": "text", "text": s}])
                }
                other => other,
            };
            ContextReplacement { content, ..Default::default() }
        });
        let entry = ContextEditEntry {
            id: self.next_id(),
            parent_id: self.leaf_id.clone(),
            timestamp: iso_now(),
            target_id: target_id.to_owned(),
            replacement,
            ..Default::default()
        };
        self.append_entry(SessionEntry::ContextEdit(entry))
    }

    /// Sets (or with `None`/empty clears) the label of an entry.
    pub fn append_label_change(&mut self, target_id: &str, label: Option<&str>) -> Result<String, SessionError> {
        if !self.index.contains_key(target_id) {
            return Err(SessionError::EntryNotFound(target_id.to_owned()));
        }
        let entry = LabelEntry {
            id: self.next_id(),
            parent_id: self.leaf_id.clone(),
            timestamp: iso_now(),
            target_id: target_id.to_owned(),
            label: label.map(str::to_owned),
            ..Default::default()
        };
        let id = self.append_entry(SessionEntry::Label(entry))?;
        if let Some(e) = self.entries.last() {
            apply_label(&mut self.labels, e);
        }
        Ok(id)
    }

    // ---- tree navigation ----

    /// The current leaf id (`None` before the first entry or after [`reset_leaf`](Self::reset_leaf)).
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf_id.as_deref()
    }

    /// The current leaf entry.
    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.leaf_id.as_deref().and_then(|id| self.entry(id))
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&SessionEntry> {
        self.index.get(id).map(|&i| &self.entries[i])
    }

    /// The direct children of an entry, in file order.
    pub fn children(&self, parent_id: &str) -> Vec<&SessionEntry> {
        self.entries.iter().filter(|e| e.parent_id() == Some(parent_id)).collect()
    }

    /// The label of an entry.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(|l| l.label.as_str())
    }

    /// Every resolved label, in the order they were last set.
    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    /// All entries in file order (header excluded).
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// The number of entries.
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    /// The session as a tree.
    pub fn tree(&self) -> Vec<SessionTreeNode<'_>> {
        build_tree(&self.entries, &self.labels)
    }

    /// Moves the leaf to `id`; the next append starts a new branch there.
    pub fn branch(&mut self, id: &str) -> Result<(), SessionError> {
        if !self.index.contains_key(id) {
            return Err(SessionError::EntryNotFound(id.to_owned()));
        }
        if self.leaf_id.as_deref() != Some(id) {
            self.path.clear();
        }
        self.leaf_id = Some(id.to_owned());
        Ok(())
    }

    /// Clears the leaf: the next append is a new root.
    pub fn reset_leaf(&mut self) {
        self.path.clear();
        self.leaf_id = None;
    }

    // ---- getters ----

    /// Whether this manager writes a file.
    pub fn is_persisted(&self) -> bool {
        self.persist
    }

    /// The session's working directory (absolute).
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The directory new session files go to (empty for in-memory sessions).
    pub fn session_dir(&self) -> &Path {
        &self.session_dir
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The session file (`None` in memory). It may not exist yet: see the type docs.
    pub fn session_file(&self) -> Option<&Path> {
        self.session_file.as_deref()
    }

    /// The header.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// What was skipped or kept raw when the file was loaded.
    pub fn load_warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }
}
