//! Branching operations of [`SessionManager`]: summaries of abandoned branches, extracting one
//! branch into a new session, and forking a session file into another project.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pi_ai::Usage;
use serde_json::Value;

use super::{NewSessionOptions, SessionManager, path_string};
use crate::session::SessionError;
use crate::session::entries::*;
use crate::session::ids::{new_entry_id, new_session_id, validate_session_id};
use crate::session::load::{ReadOutcome, read_session_file};
use crate::session::paths::{default_session_dir_path, get_agent_dir, resolve_path, session_file_name};
use crate::session::time::iso_now;
use crate::session::tree::ResolvedLabel;
use crate::session::writer::JsonlWriter;

impl SessionManager {
    /// Copies every entry of `source` into a new session of `target_cwd` (header `parentSession` =
    /// the source) and opens it.
    pub fn fork_from(
        source: impl AsRef<Path>,
        target_cwd: impl AsRef<Path>,
        session_dir: Option<&Path>,
        options: NewSessionOptions,
    ) -> Result<Self, SessionError> {
        let source = resolve_path(source);
        let target_cwd = resolve_path(target_cwd);
        let loaded = match read_session_file(&source) {
            Ok(ReadOutcome::Session(l)) => l,
            _ => return Err(SessionError::ForkSourceInvalid(source)),
        };
        let dir =
            session_dir.map(resolve_path).unwrap_or_else(|| default_session_dir_path(&target_cwd, get_agent_dir()));
        Self::make_dir(&dir)?;
        if let Some(id) = &options.id {
            validate_session_id(id)?;
        }
        let id = options.id.unwrap_or_else(new_session_id);
        let timestamp = iso_now();
        let file = dir.join(session_file_name(&timestamp, &id));
        let header = SessionHeader {
            version: Some(CURRENT_SESSION_VERSION),
            id,
            timestamp: Some(timestamp),
            cwd: Some(path_string(&target_cwd)),
            parent_session: Some(path_string(&source)),
            ..Default::default()
        };
        let lines: Vec<FileEntry> = std::iter::once(FileEntry::Header(header))
            .chain(loaded.entries.into_iter().map(FileEntry::Entry))
            .collect();
        drop(JsonlWriter::create_new(&file, &lines)?);
        let mut s = Self::blank(&target_cwd, dir, true);
        s.set_session_file(&file)?;
        Ok(s)
    }

    /// Moves the leaf to `branch_from_id` (or the root) and appends a `branch_summary` of the
    /// branch being left (`fromId` = the old leaf, or `"root"`).
    pub fn branch_with_summary(
        &mut self,
        branch_from_id: Option<&str>,
        summary: &str,
        details: Option<Value>,
        from_hook: Option<bool>,
        usage: Option<Usage>,
    ) -> Result<String, SessionError> {
        if let Some(id) = branch_from_id
            && !self.index.contains_key(id)
        {
            return Err(SessionError::EntryNotFound(id.to_owned()));
        }
        let from_id = self.leaf_id.clone().unwrap_or_else(|| "root".to_owned());
        let previous_leaf = std::mem::replace(&mut self.leaf_id, branch_from_id.map(str::to_owned));
        let entry = BranchSummaryEntry {
            id: self.next_id(),
            parent_id: branch_from_id.map(str::to_owned),
            timestamp: iso_now(),
            from_id,
            summary: summary.to_owned(),
            details,
            usage,
            from_hook,
            ..Default::default()
        };
        self.append_entry(SessionEntry::BranchSummary(Box::new(entry))).inspect_err(|_| self.leaf_id = previous_leaf)
    }

    /// Replaces this session by a new one holding only the path root → `leaf_id` (labels
    /// re-created at the end). Persistent: a new file whose header names the old one as parent;
    /// returns its path.
    pub fn create_branched_session(&mut self, leaf_id: &str) -> Result<Option<PathBuf>, SessionError> {
        let previous_file = self.session_file.clone();
        let path: Vec<SessionEntry> = self.get_branch(Some(leaf_id)).into_iter().cloned().collect();
        if path.is_empty() {
            return Err(SessionError::EntryNotFound(leaf_id.to_owned()));
        }
        let mut kept: Vec<SessionEntry> = Vec::with_capacity(path.len());
        let mut replacement: HashMap<String, String> = HashMap::new();
        let mut pending: Vec<String> = Vec::new();
        let mut parent: Option<String> = None;
        for mut e in path {
            if let SessionEntry::Label(_) = e {
                pending.push(e.id().to_owned());
                continue;
            }
            for l in pending.drain(..) {
                replacement.insert(l, e.id().to_owned());
            }
            if let SessionEntry::Compaction(c) = &mut e
                && c.first_kept_entry_id != c.id
                && let Some(r) = replacement.get(&c.first_kept_entry_id)
            {
                c.first_kept_entry_id = r.clone();
            }
            e.set_parent_id(parent.take());
            parent = Some(e.id().to_owned());
            kept.push(e);
        }
        let new_id = new_session_id();
        let timestamp = iso_now();
        let ids: HashMap<String, ()> = kept.iter().map(|e| (e.id().to_owned(), ())).collect();
        let mut taken = ids.clone();
        let labels: Vec<(String, ResolvedLabel)> =
            self.labels.iter().filter(|(t, _)| ids.contains_key(*t)).map(|(t, l)| (t.clone(), l.clone())).collect();
        for (target, l) in labels {
            let id = new_entry_id(&taken);
            taken.insert(id.clone(), ());
            kept.push(SessionEntry::Label(LabelEntry {
                id: id.clone(),
                parent_id: parent.replace(id),
                timestamp: l.timestamp,
                target_id: target,
                label: Some(l.label),
                ..Default::default()
            }));
        }
        self.header = SessionHeader {
            version: Some(CURRENT_SESSION_VERSION),
            id: new_id.clone(),
            timestamp: Some(timestamp.clone()),
            cwd: Some(self.cwd.clone()),
            parent_session: if self.persist { previous_file.as_deref().map(path_string) } else { None },
            ..Default::default()
        };
        self.session_id = new_id.clone();
        self.entries = kept;
        self.rebuild_index();
        self.writer = None;
        self.needs_newline = false;
        self.warnings.clear();
        if !self.persist {
            return Ok(None);
        }
        let file = self.session_dir.join(session_file_name(&timestamp, &new_id));
        self.session_file = Some(file.clone());
        self.flushed = false;
        if self.has_conversation {
            let lines: Vec<FileEntry> = self.file_lines().collect();
            self.writer = Some(JsonlWriter::create_new(&file, &lines)?);
            self.flushed = true;
        }
        Ok(Some(file))
    }
}
